// ZeRO-3 / FSDP in the step graph: a chunk's forward and backward run layer by layer, gather unit by
// gather unit (FSDP: one unit per layer; DeepSpeed: one per module, Zero3Rules in step_inputs.h), each
// unit gathered on the data-parallel communicator just ahead of its use and its gradients
// reduce-scattered right after its backward (docs/model.md §19, "ZeRO-3").
//
//  pieces of (stage, chunk, micro-batch), in stream order:
//    forward   F l0 u0, F l0 u1, …, F l(L−1) u(n−1)
//    backward  per layer L−1 … 0: R of its units in forward order (with recompute), then B of its
//              units in reverse order
//    weight    zb-h1: W of every unit, layers L−1 … 0, units in reverse order (deferred as a whole)
//  a piece that needs its unit's weights gathered (a consumer): every F and R; a B unless its layer's
//  R ran just before it on the same gathered weights (FSDP: the recompute runs inside the unit's
//  backward), or, after a regathering recompute (DeepSpeed), the unit is kept (reuse distance).
//  FSDP's SHARD_GRAD_OP (zero 2) keeps the forward's units for the backward: only the F pieces consume,
//  and with the gradient sync on the last micro-batch only, micro-batch 0's alone
//  gather of consumer n: may start once the pieces before consumer n − 1 have finished (prefetch one
//  unit ahead, overlapping the previous unit's compute); once the piece before consumer n has finished
//  when that piece's unit blocks prefetching (DeepSpeed's live-parameter limit) or without
//  overlap.param_gather
//  reduce-scatter after every unit's weight gradients (its B piece, or its W piece under zb-h1),
//  of every micro-batch (DeepSpeed) or only the chunk's last one; without overlap.grad_reduce, all
//  after the stage's last backward
// Gathers and reduce-scatters share the data-parallel communicator: one NCCL stream, run in the order
// they are issued (PyTorch ProcessGroupNCCL keeps one stream per device and communicator).
#pragma once

#include <cstdint>
#include <vector>

#include "step_inputs.h"
#include "task_graph.h"

namespace tp::sim {

struct Zero3Piece {
  int task = -1;
  bool consumer = false;  // needs its unit's weights gathered just before it
  int gradient = -1;      // B (or W) pieces: the task after which the unit's gradients are final, else -1
};

struct LayerPieces {
  std::vector<Zero3Piece> forward, backward, weight;  // in stream order; weight: zb-h1 only
};

// The per-micro-batch durations of one chunk of a stage (StageTiming / v), split over its layers.
struct ChunkWork {
  int stage = 0, chunk = 0, micro_batch = 0, layers = 1;
  double forward = 0, recompute = 0, backward = 0;  // backward: input + weight, or input only (zb-h1)
  double weight = 0;                                 // zb-h1: the weight-gradient pass W
  bool split_backward = false;                       // zb-h1: B is the input gradient, W follows
  // The chunk's exposed TP/CP/EP collectives per pass, run after each layer's pieces (a layer's share each):
  // the layer's own collectives, beside which the next layer's gather runs on the data-parallel link.
  double comm_forward = 0, comm_backward = 0;
};

// Layers of chunk c of a stage with `layers` layers split over v chunks (at least one).
int chunk_layers(int layers, int v, int c);

// Adds the compute pieces of one (stage, chunk, micro-batch) on `stream`, chained in stream order.
LayerPieces add_layer_pieces(TaskGraph& g, Placement stream, const Zero3Rules& z, const ChunkWork& w);

// Adds the stage's gathers (before the consumers among `sequence`, the stage's pieces in stream order)
// and its gradient reduce-scatters; returns the reduce-scatter tasks (the optimizer waits for them).
// `last_micro_batch[c]`: the micro-batch whose backward of chunk c runs last on the stage.
std::vector<int> add_zero3_transfers(TaskGraph& g, Placement dp, const StepInputs& in, int stage,
                                     const std::vector<Zero3Piece>& sequence,
                                     const std::vector<int>& last_micro_batch, int last_backward);

// Upper bound on the tasks of one (stage, chunk, micro-batch) under ZeRO-3: per layer and unit at most
// F, R, B, W, three gathers and a reduce-scatter; per layer its forward and backward collectives; the two sends.
std::uint64_t zero3_tasks_per_slot(const StepInputs& in);

}  // namespace tp::sim
