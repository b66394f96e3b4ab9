// ZeRO-3 / FSDP: the parameter all-gathers and the gradient reduce-scatter of one step on the
// critical path (docs/model.md §15, "Sharded data parallelism"). Bounded overlap: what overlaps hides
// at most behind the compute it overlaps; DeepSpeed's live-parameter limit stops the prefetch of the
// next module's weights while a large module is gathered, so that gather waits in full.
#pragma once

#include <cstddef>
#include <span>

#include "specs.h"
#include "zero3_modules.h"

namespace tp {

// The modules come from zero3_modules() (planner/zero3_modules.h), the list the memory estimate reads too.

// A module's gather is prefetched while the module before it runs unless that module alone holds
// `live_limit` parameters or more (DeepSpeed's stage3_max_live_parameters, below).
bool zero3_prefetch_allowed(const Zero3Module& previous, double live_limit);
// The backward pass after a recompute pass: module k (forward order) is still gathered when the fetches
// between its two uses hold at most `reuse_limit` parameters, so it is not gathered again (DeepSpeed's
// stage3_max_reuse_distance; 0: every module is released). Those fetches are the modules behind it in
// forward order twice, for their recompute and for their backward: DeepSpeed walks its trace of module
// fetches from the release on and counts every entry (partitioned_param_coordinator.py
// __params_to_release, v0.6.2 and later).
bool zero3_kept_for_backward(std::span<const Zero3Module> modules, std::size_t k, double reuse_limit);

// The three gather passes of a micro-batch over one layer: the forward (modules in forward order), the
// recompute forward of DeepSpeed's full recompute (forward order, each layer's first module following
// the backward of the next layer's first module) and the backward (reversed order).
enum class GatherPass { forward, recompute, backward };

// One gather pass over a layer (the first module of a layer follows the last one of the previous layer
// in forward and backward order; in the recompute pass it follows the previous layer's backward of the
// first module, the piece that ran just before it), given one layer's whole gather time and its compute
// time in that pass. A module's gather is prefetched while the piece before it runs unless that piece's
// module alone holds `live_limit` parameters or more; a prefetched gather is exposed beyond the compute
// it overlaps: the previous module's share of the layer's compute (DeepSpeed: per module), or the
// previous layer's whole compute when there is no limit (FSDP prefetches a whole layer).
// `reuse_limit` (the backward pass after a recompute pass): module k is used again in the backward
// after the modules behind it in forward order were fetched for their recompute and their backward; it
// is gathered again only when those fetches exceed the limit (zero3_kept_for_backward; the last module,
// used twice in a row, never is).
// `layer_reduce` (backward and recompute passes of a reducing backward): one layer's gradient
// reduce-scatter. DeepSpeed issues gathers and reduce-scatters on the same data-parallel process group,
// whose NCCL stream runs them in issue order, so a gather issued only when the backward piece before it
// ends also waits for the reduce-scatter of that piece's gradients (runtime/zero/stage3.py:
// reduce-scatter launched from the gradient hook, before the next module's pre-backward fetch); a
// prefetched gather, issued when the piece two before it ends, shares the stream with that piece's
// reduce-scatter while the piece just before it runs (FSDP too: one NCCL stream per process group,
// PyTorch ProcessGroupNCCL), unless the piece between waited for it behind its own blocked gather.
struct GatherPassInputs {
  GatherPass pass = GatherPass::forward;
  double live_limit = 0;
  double layer_gather = 0;    // seconds: one layer's whole gather
  double layer_compute = 0;   // seconds: one layer's compute in this pass
  double reuse_limit = 0;     // recompute and backward passes: FrameworkRules::zero3_reuse_distance
  double layer_reduce = 0;    // seconds: one layer's reduce-scatter, when this pass's backward reduces
  double layer_backward = 0;  // recompute pass: one layer's backward compute (the first module's share runs before it)
  bool after_recompute = false;  // backward pass: a recompute pass ran each layer's modules just before
  double layer_recompute = 0;  // backward pass after a recompute pass: one layer's recompute forward
  bool whole_layers = false;  // Zero3Settings::whole_layers: one unit per layer, `modules` unused
  // Backward pass: a gather after a backward piece is prefetched before that piece (`pre`), issued when
  // it ends (`post`: waits in full), or issued behind that piece's reduce-scatter too (`none`).
  BackwardPrefetch backward_prefetch = BackwardPrefetch::pre;
  // false (parallel.overlap.param_gather off): no gather is prefetched; each is issued when its unit is about
  // to run, behind the reduce-scatter the piece before it issued (unless `post` orders the gather first).
  bool prefetch = true;
};
struct PassExposure {
  double blocked = 0;   // seconds per layer: gathers issued only when their module runs
  double reduce_waited = 0;  // seconds per layer of reduce-scatter a blocked gather waits behind
  // Of reduce_waited: the previous layer's last reduce-scatter (its first module's gradients), waited by
  // this layer's first gather of the pass. The step's last layer has no layer after it: that one is the
  // step's last reduce-scatter, exposed at the end rather than waited (zero3_exposed).
  double boundary_reduce_waited = 0;
  double excess = 0;    // seconds per layer: prefetched gathers longer than the GEMMs they overlap
  double prefetched = 0;  // seconds per layer of gathers that are prefetched (overlapped traffic)
};
PassExposure gather_pass_exposure(std::span<const Zero3Module> modules, const GatherPassInputs& in);

struct Zero3Inputs {
  double micro_batches = 1;
  double layers = 1;
  double gather_pass = 0;   // seconds: one all-gather of the stage's 16-bit weights over the dp group
  double reduce = 0;        // seconds: the gradient reduce-scatter of the step
  double forward = 0, backward = 0;          // per micro-batch compute of the stage (backward with recompute)
  bool overlap_gather = true, overlap_reduce = true;
  bool whole_layers = false;  // Zero3Settings::whole_layers
  double live_limit = 0;    // FrameworkRules::zero3_live_parameters
  // DeepSpeed with full recompute: the recompute forward fetches every module again through its
  // forward hooks (a third pass over the forward's share `forward`), and the backward pass fetches only
  // the modules released since (FrameworkRules::zero3_reuse_distance).
  bool recompute_pass = false;
  double reuse_limit = 0;
  BackwardPrefetch backward_prefetch = BackwardPrefetch::pre;  // Zero3Settings::backward_prefetch
  // DeepSpeed ZeRO-2/3 reduce-scatter after every backward, not once per step: each rank keeps only
  // its partition of the accumulated gradient (DeepSpeed issue #2252, maintainer's answer; engine.py
  // allreduce_gradients: "ZeRO stage >= 2 communicates during non gradient accumulation boundaries as
  // well"). `reduce` is then m times the one-backward reduce-scatter.
  bool reduce_every_micro_batch = false;
  // Each reducing backward returns only once its reduce-scatters are done (FrameworkRules::
  // waits_for_reduce_after_backward): what outlasts it is exposed at its end, not carried into the next
  // micro-batch.
  bool reduce_waited_each_backward = true;
  // The model chunks of the stage (interleaved schedule): where backwards wait, each chunk's backward returns
  // and waits by itself (torch.distributed.pipelining runs one backward per stage module).
  double chunks = 1;
  // false: the forward's gathered units are kept through the backward, which gathers nothing (FSDP's
  // SHARD_GRAD_OP, FrameworkRules::zero2_gathers_per_unit); its reduce-scatters alone hide behind it.
  bool gathers_in_backward = true;
  // false: only the first micro-batch's forward gathers; the units stay gathered to the step's last backward
  // (SHARD_GRAD_OP with the gradient sync on the last micro-batch only: FSDP1 _should_free_in_backward is
  // false without the sync, and an unsharded unit is not gathered again).
  bool gathers_every_micro_batch = true;
};

// Exposed seconds of the step's ZeRO-3 communication: gathers that cannot be prefetched wait in full;
// the overlapped gathers and the reduce-scatter hide at most behind m x (F + B) and each prefetched
// gather at most behind the module before it (with the reduce-scatter issued just before it, in a
// backward that reduce-scatters). At the ends of the step nothing overlaps: the first gather of the
// first micro-batch's forward has no compute before it, and the reduce-scatter of the last backward's
// last unit (the first module of the stage's first layer; FSDP: a whole layer's flat gradient,
// torch/distributed/fsdp/_runtime_utils.py _post_backward_hook) none after it; the optimizer waits for it.
// With the traffic those exposed seconds come from: every gather the passes issue (DeepSpeed's backward
// after a recompute re-gathers only the modules its reuse distance released) and the reduce-scatter,
// the traffic the overlap contention charges (planner/overlap_contention.h).
struct Zero3Communication {
  double exposed = 0;  // seconds on the critical path
  double traffic = 0;  // seconds of collectives issued, hidden or not
  // Seconds the first micro-batch's forwards wait for their gathers on a stage of the pipeline's fill, where
  // each of the stage's v chunks waits for its input first: the blocked gathers and the prefetched ones beyond
  // the compute they overlap, past those issued during that wait (simulator/zero3_graph.cpp, add_gathers):
  // a chunk's first layer's gather, issued when the task before it on the stream ends, and with prefetch the
  // second layer's behind it. (FSDP's pre-forward hook issues them only when the stage's forward is called,
  // after its input arrives, which neither model counts.)
  double first_forward = 0;
};
Zero3Communication zero3_communication(const Zero3Inputs& in, std::span<const Zero3Module> modules);
inline double zero3_exposed(const Zero3Inputs& in, std::span<const Zero3Module> modules) {
  return zero3_communication(in, modules).exposed;
}

}  // namespace tp
