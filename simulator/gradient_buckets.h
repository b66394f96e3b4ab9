// The data-parallel gradient reduce of one pipeline stage as bucket tasks on its link's data-parallel
// channel (not under ZeRO-3, which reduce-scatters unit by unit: zero3_graph.h). docs/model.md §19.
#pragma once

#include <vector>

#include "task_graph.h"

namespace tp::sim {

// The task whose run produces a chunk's gradients (its backward, or its weight-gradient pass when the
// schedule splits the backward) and, under layer recompute, the chunk's recompute task before it (-1: none).
struct GradientSource {
  int task = -1;
  int recompute = -1;
};

// One whole gradient reduce of `seconds` for stage `stage`: max(buckets, chunks) tasks on `on_dp`, split over
// the chunks (the last chunk's first, as the backward meets them), tagged with `micro_batch` (-1: the step's).
// Overlapped, bucket i of a chunk's k is ready once (i + 1)/k of the chunk's gradients are out; otherwise
// every bucket waits for all of `grads`. Returns the bucket tasks in channel order.
std::vector<int> add_gradient_reduce(TaskGraph& g, Placement on_dp, int stage, int micro_batch, double seconds,
                                     int buckets, const std::vector<GradientSource>& grads, bool overlapped);

// Where each backward waits for its reduce (StepInputs::reduce_waited_after_backward), or the reduce is not
// overlapped: the compute task after chunk c's backward pass of micro-batch j in the stream's `order` (its
// exposed collectives and recompute included) waits for the `reduces` tagged with chunk c and micro-batch j.
// Each chunk is a module of its own whose backward returns, and waits, by itself (torch.distributed.pipelining
// runs one backward per stage module; FSDP's post-backward callback ends each).
void hold_compute_after_each_backward(TaskGraph& g, const std::vector<int>& order, const std::vector<int>& reduces);

}  // namespace tp::sim
