// Builds the task graph of one training step of one data-parallel replica from StepInputs:
//
//  per stage s, chunk c, micro-batch j (durations: the stage's per-micro-batch times / v)
//    F  forward                     → comm-F (exposed TP/SP/CP/EP collectives of the forward)
//    R  recompute (if any)          → B backward (input gradient only under zb-h1, then W)
//    B                              → comm-B (exposed collectives of the backward)
//    send-F / send-B  PP activation and gradient transfers to the next / previous virtual stage
//  per stage
//    reduce b0…  DP gradient reduce in dp_buckets buckets: with overlap_grad_reduce bucket i of chunk c
//                becomes ready when (i+1)/k_c of the chunk's last backward (or W) has run, else all
//                after the stage's last backward; they run in order on the DP communicator. With
//                reduce_every_micro_batch (ZeRO 0-2) a set follows every micro-batch's backward, and
//                without overlap the stream's next task waits for it
//    optimizer   after the stage's buckets
//    gather b0…  ZeRO-1/2 parameter all-gather: with overlap_param_gather it belongs to the step's
//                start (the previous step's gather, overlapped with this step's first forward: the
//                first task waits for bucket 0, the second for the last bucket); without, after
//                the optimizer
//    ZeRO-3      F, R and B run layer by layer and gather unit by gather unit, each unit gathered
//                (gather-F / gather-B) one unit ahead and reduce-scattered after its backward, in
//                place of the buckets above (zero3_graph.h)
//
// Resources: stage s has a compute stream (its F, R, B, W, exposed collectives and optimizer, in
// the schedule's order) and a network link (its sends, DP collectives and gathers; p2p and DP are
// two communicators that share the link's bandwidth), or two links where the DP collectives stay within
// the node and the sends cross it, or the reverse (dp_own_link). Zero-duration communication is left out.
#pragma once

#include <cstdint>
#include <vector>

#include "step_inputs.h"
#include "task_graph.h"

namespace tp::sim {

struct StepGraph {
  TaskGraph graph;
  int stages = 1, chunks = 1, micro_batches = 1;
  std::vector<int> stream;  // resource index of stage s's compute stream
  std::vector<int> link;    // resource index of stage s's link
  std::vector<int> dp_link;  // of the link its data-parallel collectives take: link[s], or its own (dp_own_link)
};

StepGraph build_step_graph(const StepInputs& in);

// An upper bound on the tasks build_step_graph(in) makes, computed without building it (and without
// 64-bit wrap): per (stage, chunk, micro-batch) at most 10 (F, its collective, recompute, B, its
// collective, W, two sends, two gathers), under ZeRO-3 the larger of 10 and zero3_tasks_per_slot()
// (eight per layer and gather unit); per stage at most max(buckets, chunks) reduces, `buckets`
// gathers, the optimizer and the end-of-step gradient sync.
std::uint64_t task_bound(const StepInputs& in);

}  // namespace tp::sim
