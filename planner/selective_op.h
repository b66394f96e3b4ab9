// torchtitan's op-level selective activation checkpointing (`parallel.recompute: selective_op`), read from
// the layer's op list: what a layer keeps from its forward for its backward, and the forward work its
// backward runs again. docs/model.md §6, "Op-level selective checkpointing".
//
// The policy (torchtitan parallelisms/parallelize_llama.py at 157a12c56, checkpoint_wrapper with
// selective_ac_option = 'op'; the same rule in torchtitan/distributed/activation_checkpoint.py today): every
// transformer block runs under torch.utils.checkpoint with a selective-checkpoint context that keeps the
// outputs of the ops in `no_recompute_list` (aten.mm, the SDPA flash and memory-efficient attention kernels,
// the functional reduce_scatter_tensor) except every second aten.mm of the block, counted in call order.
// Everything else is dropped after the forward and run again in the block's backward; the cached outputs
// are returned instead of running their ops again.
#pragma once

#include <vector>

#include "op_graph.h"
#include "specs.h"

namespace tp {

struct SelectiveOpCheckpoint {
  // Per sequence, before splits, as op-list entries (saved_bytes, saved_split): the block's input and the
  // outputs the policy caches.
  std::vector<Op> kept;
  // The forward work the backward runs again: the GEMM calls whose outputs were not cached (narrowed to
  // those calls), the memory-bound ops, the attention core when it is not a cached fused kernel, and the
  // collectives other than reduce-scatters.
  std::vector<Op> rerun;
};

// For the layer of `g` under scenario `s` (eager layer code, a dense model: model/checks.cpp).
SelectiveOpCheckpoint selective_op_checkpoint(const Scenario& s, const OpGraph& g);

}  // namespace tp
