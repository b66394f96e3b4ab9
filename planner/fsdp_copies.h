// FSDP's copies around its collectives that run on the compute stream (docs/model.md §15, "FSDP's copies").
// They are memory-bound kernels the compute stream runs between the layer's own kernels, so they lengthen
// the forward and backward (and the windows the ZeRO-3 traffic hides behind). Per layer and micro-batch,
// with W one layer's gathered parameters on one GPU, e the gathered element bytes (parameter_bytes: the
// training precision's, fp32 under autocast) and g the reduce dtype's (training.grad_precision):
// - FSDP2 (torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py, wait_for_unshard ->
//   _fsdp_collectives.py foreach_all_gather_copy_out: torch.split_with_sizes_copy from the all-gather's
//   flat output into each parameter, on the current stream): every gather of a unit is copied out,
//   2 W e (read + write), in the forward, in the backward and in a recompute pass that gathers again;
//   every reducing backward copies the unsharded gradients into the reduce-scatter input in the reduce
//   dtype (foreach_reduce_scatter_copy_in: torch.cat / torch._chunk_cat into a reduce_dtype buffer; on the
//   current stream, or, in the 2024 tree, on the reduce-scatter stream with the current stream waiting on
//   its event): W (e + g); in the last micro-batch only when training.gradient_sync is last_micro_batch.
// - FSDP1 (torch/distributed/fsdp/_flat_param.py: the unsharded flat parameter is gathered in place and the
//   module uses views of it, split_with_sizes then view): nothing in the forward; in every backward autograd's
//   SplitWithSizesBackward concatenates the parameters' gradients into the flat gradient, 2 W e. Its cast to
//   the reduce dtype and its padding run on the post-backward stream (_runtime_utils.py _post_backward_hook)
//   and are not counted.
// Each unit's copy is one kernel, timed at the flat elementwise class (residual_add) like the optimizer's
// unfused passes. Only framework fsdp with ZeRO-3 or SHARD_GRAD_OP (zero 2, whose backward gathers nothing
// and so copies nothing out) has them: FSDP2 on any number of ranks, FSDP1 on more than one (on one it runs
// NO_SHARD).
#pragma once

#include "hardware_profile.h"
#include "specs.h"
#include "zero3_modules.h"

namespace tp {

struct FsdpCopies {
  double forward = 0;   // seconds per layer and micro-batch on the compute stream, in the forward
  double backward = 0;  // in the backward, with a recompute pass's copies
};

// `zero3`: the layer's units (zero3_layer); `sharding_ranks`: the size of the group the parameters are
// sharded over (the data-parallel group).
FsdpCopies fsdp_copies(const Scenario& s, const Zero3Layer& zero3, const HardwareProfile& hw, int sharding_ranks);

}  // namespace tp
