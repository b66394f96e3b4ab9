// Data-parallel gradient reduction and parameter gathers (ZeRO), with overlap windows.
#include <algorithm>
#include <cmath>

#include "framework_rules.h"
#include "sharded_time.h"
#include "step_time_parts.h"

namespace tp {
namespace {

// Gradient reduce traffic `reduce` overlapped with the backward work after each part of it is ready,
// returned as the work that hides it (exposed = reduce - window). 1F1B: the buckets fill during the last
// micro-batch's backward (window: one backward). Interleaved (Narayanan et al. 2021, Fig. 4): the last
// group of min(m, pp) micro-batches runs its backward chunk by chunk, v-1 down to 0, so chunk k's
// gradients are final (v-1-k) x group chunk-backwards before the stage's end and its 1/v of the traffic
// overlaps all of them; with the reduce channel serial, the exposed time is the larger of the last
// chunk's share and the whole traffic less everything after the first chunk (docs/model.md §15).
double reduce_overlap_window(const ParallelSpec& p, double micro_batches, double backward, double reduce) {
  const double v = p.chunks();
  if (v <= 1) return backward;
  const double unit = backward / v;  // one chunk's backward of one micro-batch
  const double group = std::min(micro_batches, static_cast<double>(p.pp));
  const double exposed = std::max(reduce / v - unit, reduce - ((v - 1) * group + 1) * unit);
  return reduce - exposed;
}

// Exposed time of `passes` gradient reduces of `reduce` seconds each, one after the backward of each of the
// last `passes` micro-batches (`period`: one micro-batch's path on the stage, its compute and the pipeline's
// wait). Overlapped: the last hides behind `window` but for its last bucket; the earlier ones behind the path
// that follows them, unless the channel falls behind: from the first bucket of the first pass, ready `window`
// x (1 - last_bucket / reduce) before that backward ends, it owes passes x reduce against the (passes - 1) x
// period left, of which `link_sends` a pass are the pipeline's sends on the channel's link where they share
// it (a link carries one transfer's bytes at a time; the simulator shares it alike, docs/model.md §19 (N8)).
// Where each backward waits for its reduce (FrameworkRules::waits_for_reduce_after_backward) every pass is
// the last: nothing runs on into the next micro-batch. Not overlapped (DeepSpeed's overlap_comm off: the
// reduce runs on the compute stream), every pass is exposed.
double grad_reduce_exposed(bool overlapped, bool waited_each_pass, double passes, double reduce, double last_bucket,
                           double window, double period, double link_sends = 0.0) {
  if (!overlapped) return passes * reduce;
  const double last = std::max(last_bucket, reduce - window);
  if (waited_each_pass) return passes * last;
  if (passes <= 1.0 || reduce <= 0.0) return last;
  const double early = window * (1.0 - last_bucket / reduce);
  return std::max(last, passes * reduce - (passes - 1.0) * (period - link_sends) - early);
}

// ZB-H1 (simulator/zb_h1.cpp, Qi et al. 2023's H1) defers its last stage's weight gradients W: p - 1 of them
// lag their B, so after that stage's last B come min(p, m) W passes, one after another. Reduced every
// micro-batch (overlapped, not waited for), those micro-batches' reduces chain on the link behind these W
// passes alone, from the end of that last B, after whatever backlog the earlier micro-batches' reduces left
// (each one's excess over a micro-batch's work F + B + W); the drain runs on meanwhile, a B on each of the
// p - 1 stages before it, then stage 0's last W. Returns what the chain leaves beyond the drain (0 for other
// schedules).
double zb_h1_deferred_reduces_exposed(const ParallelSpec& p, double m, double reduce, double last_bucket,
                                      const MicroBatchPasses& passes) {
  if (p.schedule != Schedule::zb_h1 || p.pp <= 1) return 0.0;
  const double deferred = std::min(static_cast<double>(p.pp), m);
  const double w = passes.weight_gradient;
  const double backlog = (m - deferred) * std::max(0.0, reduce - passes.forward - passes.backward);
  const double tail = grad_reduce_exposed(true, false, deferred, reduce, last_bucket, w, w);  // after the last W
  const double drain = (p.pp - 1) * std::max(0.0, passes.backward - w) + w;
  return std::max(0.0, backlog + tail + deferred * w - drain);
}

// The step entry over `group` that applies with `overlap` (nullptr when none does).
const Comm* step_entry(const OpGraph& g, const CommLayout& l, CommOverlap overlap, CommGroup group) {
  for (const Op& op : g.step) {
    if (op.kind == OpKind::collective && op.comm.group == group && op.comm.overlap == overlap && applies(op.comm, l)) {
      return &op.comm;
    }
  }
  return nullptr;
}

// The data-parallel entry that applies with `overlap`: over all of dp (the all-reduce without ZeRO), else
// over ZeRO's sharding group.
const Comm* dp_entry(const OpGraph& g, const CommLayout& l, CommOverlap overlap) {
  const Comm* whole = step_entry(g, l, overlap, CommGroup::dp);
  return whole != nullptr ? whole : step_entry(g, l, overlap, CommGroup::dp_shard);
}

// The gradient channel's time for `calls` units whose reduce-scatters take `scatter` seconds in all and whose
// shards are then all-reduced over the replicas in `replica` seconds (hybrid sharding; 0 without). In series
// on one stream (Megatron-Core) the sum; on two streams (FSDP, replica_all_reduce_own_stream) the units
// pipeline: the longer of the two, and the shorter one's last unit after it.
double hybrid_reduce_seconds(const FrameworkRules& fw, double scatter, double replica, double calls) {
  if (!fw.replica_all_reduce_own_stream) return scatter + replica;
  return std::max(scatter, replica) + std::min(scatter, replica) / std::max(1.0, calls);
}

// The share of a stage's forwards that run after its first backward, so that a reduce started after a
// micro-batch's backward can hide behind them. GPipe with pp > 1 runs every forward first (Huang et al. 2019):
// none. The interleaved schedule runs (p - s - 1) x 2 + (v - 1) x p chunk-forwards on stage s before its
// first backward (Megatron-Core schedules.py, forward_backward_pipelining_with_interleaving:
// num_warmup_microbatches, microbatch_group_size_per_vp_stage = p): the rest of the m x v. 1F1B and ZB-H1
// (whose stage-0 warm-up, p - 1 forwards, the reduce's backlog still covers): all.
double forward_share_after_first_backward(const ParallelSpec& p, int stage, double micro_batches) {
  if (p.pp <= 1) return 1.0;
  if (p.schedule == Schedule::gpipe) return 0.0;
  if (p.schedule != Schedule::interleaved) return 1.0;
  const double chunk_forwards = micro_batches * p.chunks();
  const double warmup = (p.pp - stage - 1) * 2.0 + (p.chunks() - 1.0) * p.pp;
  return std::max(0.0, chunk_forwards - warmup) / chunk_forwards;
}

// The gradient reduces' exposed time on stage `stage` (one pass of `reduce` seconds, after every micro-batch or
// once), and of it what they wait behind the pipeline's sends on a shared link (DataParallelComm::behind_sends).
struct GradientReduceExposure {
  double exposed = 0;
  double behind_sends = 0;
};
GradientReduceExposure gradient_reduce_exposure(const Scenario& s, const FrameworkRules& fw,
                                                const MicroBatchPasses& passes, double m, int stage, double reduce,
                                                double last_bucket, bool every_micro_batch) {
  const ParallelSpec& p = s.parallel;
  const double reduce_passes = every_micro_batch ? m : 1.0;
  // The stage's path between two micro-batches' gradients: a backward, the forwards that follow the first one
  // and the pipeline's wait.
  const double forward_share = forward_share_after_first_backward(p, stage, m);
  const double period = forward_share * passes.forward + passes.backward + passes.pipeline_wait;
  // The link time the sends of that path take where they share the reduces' link.
  const double link_sends = forward_share * passes.forward_sends + passes.backward_sends;
  // The work over which the last micro-batch's gradients come out: its backward, but under ZB-H1's pipeline
  // its weight-gradient pass W alone (Qi et al. 2023: B computes the input gradients, W the weights').
  const double gradient_pass = p.schedule == Schedule::zb_h1 && p.pp > 1 ? passes.weight_gradient : passes.backward;
  const bool waited = reduce_waited_after_each_backward(fw, s.training, p);
  // Where each backward waits for its reduce, each model chunk's backward is one of its own, waited for behind
  // that chunk's backward alone (a module whose backward returns by itself: torch.distributed.pipelining runs
  // one backward per stage module, and FSDP's post-backward callback ends each).
  const double chunks = waited ? p.chunks() : 1.0;
  const double window = waited ? gradient_pass / chunks : reduce_overlap_window(p, m, gradient_pass, reduce);
  const bool overlapped = grad_reduce_overlapped(fw, p);
  const double tail_bucket = std::min(last_bucket, reduce / chunks);
  const auto exposed_with_sends = [&](double sends) {
    const double passes_exposed = grad_reduce_exposed(overlapped, waited, reduce_passes * chunks, reduce / chunks,
                                                      tail_bucket, window, period, sends / chunks);
    if (!overlapped || waited || !every_micro_batch) return passes_exposed;
    return std::max(passes_exposed, zb_h1_deferred_reduces_exposed(p, m, reduce, tail_bucket, passes));
  };
  GradientReduceExposure r;
  r.exposed = exposed_with_sends(link_sends);
  r.behind_sends = link_sends > 0 ? r.exposed - exposed_with_sends(0.0) : 0.0;
  return r;
}

// ZeRO-3 / FSDP: no gather after the optimizer; every micro-batch gathers the weights for forward and, at
// ZeRO-3, again for backward (the graph's zero3 gather entry), and the gradients are reduce-scattered. Bounded
// overlap, DeepSpeed's live-parameter limit and the ends of the step (the first gather, the last unit's
// reduce-scatter: planner/sharded_time.h, docs/model.md §15). `gather_pass`: one pass's gathers, a
// host-resident shard's copy up included; `reduce`: the step's reduce-scatters.
Zero3Communication sharded_communication(const Scenario& s, const FrameworkRules& fw, const Zero3Layer& zero3_units,
                                         const MicroBatchPasses& passes, double m, double stage_layers,
                                         double gather_pass, double reduce, bool every_micro_batch, bool waited) {
  const ParallelSpec& p = s.parallel;
  const Zero3Settings& zero3 = zero3_units.settings;  // the scenario's memory.zero3_* or defaults
  Zero3Inputs z;
  z.micro_batches = m;
  z.layers = stage_layers;
  z.gather_pass = gather_pass;
  z.reduce_every_micro_batch = every_micro_batch;
  z.reduce_waited_each_backward = waited;
  z.chunks = p.chunks();
  z.gathers_in_backward = gathers_in_backward(p);
  z.gathers_every_micro_batch = gathers_every_micro_batch(fw, s.training, p);
  z.reduce = reduce;
  z.forward = passes.forward;
  z.backward = passes.backward;
  z.overlap_gather = param_gather_overlapped(fw, p);
  z.overlap_reduce = gradient_reduce_overlaps(fw, p);
  z.whole_layers = zero3.whole_layers;
  z.live_limit = zero3.live_parameters;
  z.reuse_limit = zero3.reuse_distance;
  z.backward_prefetch = zero3.backward_prefetch;
  z.recompute_pass = zero3_recompute_pass(zero3, p.recompute.mode);
  return zero3_communication(z, zero3_units.modules.view());
}

}  // namespace

DataParallelComm data_parallel_comm(const Scenario& s, const OpGraph& g, const CommLayout& l, const StageParameters& stage,
                                    double micro_batches, const MicroBatchPasses& passes, int stage_index,
                                    double gather_h2d, const Zero3Layer& zero3_units) {
  const ParallelSpec& p = s.parallel;
  const double worst_f = passes.forward;
  const double m = micro_batches;
  const double params = stage.total;
  DataParallelComm r;
  const Comm* reduce_entry = dp_entry(g, l, CommOverlap::step_backward);  // all-reduce, or reduce-scatter with ZeRO
  if (l.group(CommGroup::dp).size <= 1 || reduce_entry == nullptr) return r;
  const FrameworkRules& fw = framework_rules(s.training.framework);
  const double grad_bytes = comm_bytes(*reduce_entry, l, params);
  // The dense parameters over the data-parallel groups, the experts' over theirs (CommLayout::expert_dp), one
  // after the other on the gradient stream.
  const CommLayout experts = expert_comm_layout(l);
  const double dense = std::max(0.0, params - stage.expert);
  const auto seconds_in_calls = [&](const Comm& c, CommPass pass, double calls) {
    return comm_seconds_in_calls(c, pass, l, dense, calls) +
           (stage.expert > 0 ? comm_seconds_in_calls(c, pass, experts, stage.expert, calls) : 0.0);
  };
  double dp_exposed = 0;
  // ZeRO-3 (and FSDP's SHARD_GRAD_OP) gathers one unit at a time, a collective per unit of every layer, and
  // reduce-scatters per unit or, in DeepSpeed, per gradient bucket (planner/zero3_modules.h).
  const bool per_unit = gathers_per_unit(fw, p);
  const double stage_layers = p.layers_per_stage[static_cast<size_t>(stage_index)];
  const double units = per_unit ? stage_layers * zero3_units.units_per_layer() : 1.0;
  const double reduce_calls =
      per_unit ? std::max(1.0, stage_layers * zero3_reduce_calls(zero3_units, g.layer, p.tp, p.ep)) : 1.0;
  const bool every_micro_batch = reduces_every_micro_batch(fw, s.training, p);
  const double reduce_passes = every_micro_batch ? m : 1.0;
  const Comm* replica_entry = step_entry(g, l, CommOverlap::step_backward, CommGroup::dp_replica);
  double replica = replica_entry != nullptr ? seconds_in_calls(*replica_entry, CommPass::backward, reduce_calls) : 0.0;
  // DeepSpeed's MiCS all-reduces over the replicas once per step (FrameworkRules::replica_all_reduce_once_per_step):
  // each reduce pass carries its share, so the step's total holds one all-reduce.
  if (fw.replica_all_reduce_once_per_step) replica /= reduce_passes;
  const double reduce =
      hybrid_reduce_seconds(fw, seconds_in_calls(*reduce_entry, CommPass::backward, reduce_calls), replica, reduce_calls);
  const double last_bucket = reduce * std::min(1.0, s.memory.comm_bucket.value / std::max(grad_bytes, 1.0));
  const GradientReduceExposure reduce_exposure =
      gradient_reduce_exposure(s, fw, passes, m, stage_index, reduce, last_bucket, every_micro_batch);
  r.behind_sends = reduce_exposure.behind_sends;
  dp_exposed += reduce_exposure.exposed;
  r.reduce = reduce;
  // Counted in an int: a made-up model's 1e23 buckets stay a (huge) count, not undefined behaviour.
  const double buckets = std::ceil(grad_bytes / std::max(s.memory.comm_bucket.value, 1.0));
  r.buckets = static_cast<int>(std::clamp(buckets, 1.0, 1e9));
  const Comm* gather_entry = dp_entry(g, l, p.zero >= 3 ? CommOverlap::step_compute : CommOverlap::step_forward);
  const double gather = gather_entry != nullptr ? seconds_in_calls(*gather_entry, CommPass::forward, units) : 0.0;
  if (p.zero >= 1) r.gather = gather;
  // Overlapped: a chain of buckets in forward order, each dispatched once the forward waits for the one before
  // (docs/model.md §15): what one forward pass does not hide is exposed, whatever the schedule.
  if (p.zero >= 1 && !per_unit) dp_exposed += param_gather_overlapped(fw, p) ? std::max(0.0, gather - worst_f) : gather;
  if (!per_unit) r.traffic = reduce_passes * reduce + (p.zero >= 1 ? gather : 0.0);
  if (per_unit) {
    const Zero3Communication zc =
        sharded_communication(s, fw, zero3_units, passes, m, stage_layers, gather + gather_h2d, reduce_passes * reduce,
                              every_micro_batch, reduce_waited_after_each_backward(fw, s.training, p));
    dp_exposed = zc.exposed;
    r.traffic = zc.traffic;
    r.first_forward = zc.first_forward;
  }
  r.exposed = dp_exposed;
  return r;
}

}  // namespace tp
