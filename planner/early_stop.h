// The early stop of torch's non-reentrant checkpoint (`training.checkpoint_early_stop`), read from the
// layer's op list. docs/model.md §6, "Early stop".
//
// torch.utils.checkpoint without reentrant autograd (torch >= 2.1) counts the tensors a checkpointed region
// saved in its forward and, while recomputing it in the backward, stops as soon as as many have been saved
// again (torch/utils/checkpoint.py, set_checkpoint_early_stop: "Non-reentrant checkpoint stops recomputation
// as soon as all needed intermediate activations have been recomputed. This feature is enabled by default";
// the recompute's pack hook raises _StopRecomputationError when recomp_counter reaches the forward's holder
// count). An autograd op saves its inputs before it runs its kernel (tools/autograd/gen_variable_type.py: the
// grad_fn's inputs are saved in the derivative setup, before the redispatch), so a layer whose last save is a
// GEMM's input (the last MLP GEMM, with no dropout after it) never runs that GEMM again, nor what follows it:
// the residual add and the collectives after it. The reentrant checkpoint, torch < 2.1 and Megatron's and
// DeepSpeed's own checkpoint functions rerun the whole region.
#pragma once

#include <cstddef>
#include <vector>

#include "op_graph.h"
#include "specs.h"

namespace tp {

// Index of the first op of `layer` that a recompute stopping early does not run: the last op that saves a
// tensor if it is a GEMM (it saves its input before its kernel), else the op after it.
std::size_t early_stop_index(const std::vector<Op>& layer);

// The ops of `layer` a recompute stopping early runs: those before early_stop_index.
std::vector<Op> early_stop_rerun(const std::vector<Op>& layer);

// How the forward a layer-recompute mode (full, every, one_in) repeats splits, per layer of a model chunk (the
// model's layers over pp x ParallelSpec::chunks(), the unit the frameworks count checkpoints in, as the
// stage's activation memory does) on average: `whole` layers run their whole forward again, `stopped` layers
// (the last layer of each checkpointed region, when training.checkpoint_early_stop) run it up to the early
// stop. whole + stopped is checkpointed_layers / chunk layers; both 0 for the other modes.
struct LayerRecompute {
  double whole = 0;
  double stopped = 0;
};
LayerRecompute layer_recompute(const Scenario& s);

}  // namespace tp
