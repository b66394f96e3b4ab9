#include "sharded_time.h"

#include <algorithm>

namespace tp {

bool zero3_prefetch_allowed(const Zero3Module& previous, double live_limit) { return previous.parameters < live_limit; }

bool zero3_kept_for_backward(std::span<const Zero3Module> modules, std::size_t k, double reuse_limit) {
  double fetched_since = 0;
  for (std::size_t i = k + 1; i < modules.size(); ++i) fetched_since += modules[i].parameters;
  return reuse_limit > 0 && 2.0 * fetched_since <= reuse_limit;
}

namespace {

// The backward piece before the one before module k's gather (p2, of the module `reduced`) and the
// piece between them (p1, of `between`). A prefetched gather is issued when p2 ends, right after p2's
// gradient reduce-scatter, and both share the stream while p1 runs, unless p1's own gather was blocked
// behind p2 (then that reduce-scatter was waited before p1, counted as such). Forward: no backward
// piece. Recompute pass: module 0 follows the next layer's backward of modules 1 then 0; module 1
// follows that backward of module 0, then module 0's recompute. Backward: modules k + 2 and k + 1
// (of the layer before when they wrap), or recompute pieces after a recompute pass.
struct SharingReduce {
  int reduced = -1, between = -1;
  bool between_is_backward = true;
};
SharingReduce reduce_sharing_window(GatherPass pass, std::size_t k, std::size_t n, bool after_recompute) {
  const int ki = static_cast<int>(k), ni = static_cast<int>(n);
  if (pass == GatherPass::forward) return {};
  if (pass == GatherPass::recompute) {
    if (k == 0) return n >= 2 ? SharingReduce{1, 0, true} : SharingReduce{};
    return k == 1 ? SharingReduce{0, 0, false} : SharingReduce{};
  }
  if (ki + 2 < ni) return {ki + 2, ki + 1, true};
  if (after_recompute) return {};
  return {(ki + 2) % ni, (ki + 1) % ni, true};
}

// Seconds of reduce-scatter that share the window of module k's prefetched gather (above).
double reduce_in_window(std::span<const Zero3Module> modules, const GatherPassInputs& in, std::size_t k) {
  const SharingReduce w = reduce_sharing_window(in.pass, k, modules.size(), in.after_recompute);
  if (w.reduced < 0 || in.layer_reduce <= 0) return 0.0;
  const Zero3Module& reduced = modules[static_cast<std::size_t>(w.reduced)];
  const bool between_gathers = !w.between_is_backward || !zero3_kept_for_backward(modules, static_cast<std::size_t>(w.between), in.reuse_limit);
  if (between_gathers && !zero3_prefetch_allowed(reduced, in.live_limit)) return 0.0;  // waited before it
  return reduced.gather_share * in.layer_reduce;
}

// The piece that ran just before module k's use in the pass (i: k's position in the pass): the module
// before it, or at a layer's first gather the previous layer's last piece (its last module; in the
// recompute pass its first module's backward), or, in a backward right after the recompute pass, the
// recompute of module k itself, which runs just before its backward.
struct PreviousPiece {
  std::size_t module = 0;
  double compute = 0;     // seconds
  bool backward = false;  // a backward piece, whose gradients are reduce-scattered when it ends
};
PreviousPiece previous_piece(std::span<const Zero3Module> modules, const GatherPassInputs& in, std::size_t i,
                             std::size_t k) {
  const std::size_t n = modules.size();
  const bool layer_start = i == 0;
  if (in.pass == GatherPass::forward) {
    const std::size_t prev = (k + n - 1) % n;
    return {prev, modules[prev].compute_share * in.layer_compute, false};
  }
  if (in.pass == GatherPass::recompute) {
    if (layer_start) return {0, modules[0].compute_share * in.layer_backward, true};
    return {k - 1, modules[k - 1].compute_share * in.layer_compute, false};
  }
  if (layer_start && in.after_recompute) return {k, modules[k].compute_share * in.layer_recompute, false};
  const std::size_t prev = (k + 1) % n;
  return {prev, modules[prev].compute_share * in.layer_compute, true};
}

}  // namespace

PassExposure gather_pass_exposure(std::span<const Zero3Module> modules, const GatherPassInputs& in) {
  PassExposure r;
  const size_t n = modules.size();
  if (n == 0) return r;
  const bool backward = in.pass == GatherPass::backward;
  // FSDP's backward_prefetch post / none: a gather after a backward piece is issued when it ends; none
  // behind its reduce-scatter, post ahead of it, so the next gather may wait for the rest of that one.
  const bool backward_waits = in.pass != GatherPass::forward && in.backward_prefetch != BackwardPrefetch::pre;
  const bool post = in.backward_prefetch == BackwardPrefetch::post;
  if (in.whole_layers && (!in.prefetch || (backward && backward_waits))) {
    r.blocked = in.layer_gather;
    if (!backward) return r;
    if (post) r.excess = std::max(0.0, in.layer_reduce - in.layer_compute);
    else r.reduce_waited = r.boundary_reduce_waited = in.layer_reduce;
    return r;
  }
  if (in.whole_layers) {
    // FSDP: the next layer's gather overlaps the whole of this layer's compute; in a reducing backward
    // it shares the stream with the reduce-scatter of the layer before (issued just before it).
    r.prefetched = in.layer_gather;
    const double reduce = in.pass == GatherPass::backward ? in.layer_reduce : 0.0;
    r.excess = std::max(0.0, in.layer_gather + reduce - in.layer_compute);
    return r;
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t k = backward ? n - 1 - i : i;
    if (backward && zero3_kept_for_backward(modules, k, in.reuse_limit)) continue;
    const PreviousPiece prev = previous_piece(modules, in, i, k);
    const double gather = modules[k].gather_share * in.layer_gather;
    const bool issued_after_backward = backward_waits && prev.backward;
    if (issued_after_backward && post) r.excess += std::max(0.0, reduce_in_window(modules, in, k) - prev.compute);
    if (!in.prefetch || !zero3_prefetch_allowed(modules[prev.module], in.live_limit) || issued_after_backward) {
      r.blocked += gather;
      if (prev.backward && !post) {
        const double waited = modules[prev.module].gather_share * in.layer_reduce;  // its gradients
        r.reduce_waited += waited;
        if (prev.module == 0 && i == 0) r.boundary_reduce_waited = waited;
      }
    } else {
      r.prefetched += gather;
      r.excess += std::max(0.0, gather + reduce_in_window(modules, in, k) - prev.compute);
    }
  }
  return r;
}

namespace {

// The first gather of the step (module 0 of the stage's first layer, first micro-batch's forward) has no
// compute before it: exposed in full. When it is prefetched, the forward pass's excess already counts
// the part beyond the module before it; this is the rest. A blocked gather is already waited in full.
double first_gather_unhidden(const Zero3Inputs& in, std::span<const Zero3Module> mods, double layer_gather,
                             double layer_forward) {
  if (!in.overlap_gather) return 0.0;
  const Zero3Module& previous = mods.back();  // the module before the first in forward order (a layer before)
  if (in.whole_layers) return std::min(layer_gather, layer_forward);
  if (!zero3_prefetch_allowed(previous, in.live_limit)) return 0.0;
  return std::min(mods.front().gather_share * layer_gather, previous.compute_share * layer_forward);
}

// What the reduce-scatters leave exposed at the backwards' ends. A backward that gathers nothing has its
// reduce-scatters alone on the stream, the first issued when its first piece (the last unit in forward order)
// ends: what they take beyond the rest of that backward (after `first_piece`) is left when it ends (the last
// unit's, `last_reduce`, at least, after the last backward), and an earlier backward's too where the backward
// waits for them or the next forward's gathers queue behind them. Otherwise (nothing gathered, no wait:
// Megatron-FSDP over a sharding group of one) the stream owes every pass's reduce-scatters against all the
// compute after the first piece. A backward that gathers leaves its last unit's, once a pass where it waits.
double reduce_tail(const Zero3Inputs& in, double reducing_passes, double last_reduce, double first_piece,
                   bool backward_gathers) {
  // What one backward's reduce-scatters take beyond it, over `backward` of compute and `reduce` of traffic.
  const auto overflow_of = [&](double reduce, double backward) {
    return backward_gathers || !in.overlap_reduce ? 0.0 : std::max(0.0, reduce - (backward - first_piece));
  };
  const double after_first_piece = in.backward - first_piece;
  const double overflow = overflow_of(in.reduce / reducing_passes, in.backward);
  if (in.reduce_waited_each_backward) {  // each chunk's backward a wait of its own
    const double waits = reducing_passes * in.chunks;
    return waits * std::max(last_reduce, overflow_of(in.reduce / waits, in.backward / in.chunks));
  }
  if (!backward_gathers && in.overlap_reduce && in.gather_pass <= 0) {
    const double backlog = in.reduce - after_first_piece - (reducing_passes - 1.0) * (in.forward + in.backward);
    return std::max({last_reduce, overflow, backlog});
  }
  return std::max(last_reduce, overflow) + (reducing_passes - 1.0) * overflow;
}

// The three passes of one micro-batch over a layer.
struct Zero3Passes {
  PassExposure forward, recompute, backward;
  double excess() const { return forward.excess + recompute.excess + backward.excess; }
};

}  // namespace

Zero3Communication zero3_communication(const Zero3Inputs& in, std::span<const Zero3Module> modules) {
  static constexpr Zero3Module whole_layer[1] = {{0.0, 1.0, 1.0}};
  const std::span<const Zero3Module> mods = modules.empty() ? std::span<const Zero3Module>(whole_layer) : modules;
  const double layers = std::max(1.0, in.layers);
  const double m = in.micro_batches;
  const double layer_gather = in.gather_pass / layers;
  // Each reducing backward pass reduce-scatters one layer's share per layer: the last micro-batch's,
  // or every micro-batch's (DeepSpeed).
  const double reducing_passes = in.reduce_every_micro_batch ? std::max(1.0, m) : 1.0;
  const double layer_reduce = in.overlap_reduce ? in.reduce / reducing_passes / layers : 0.0;
  const double forward = in.forward / layers;
  GatherPassInputs pass{GatherPass::forward, in.live_limit, layer_gather, forward};
  pass.backward_prefetch = in.backward_prefetch;
  pass.whole_layers = in.whole_layers;
  pass.prefetch = in.overlap_gather;
  const PassExposure f = gather_pass_exposure(mods, pass);
  pass.pass = GatherPass::backward;
  pass.layer_compute = in.backward / layers;
  GatherPassInputs recompute{GatherPass::recompute, in.live_limit, layer_gather, forward};
  recompute.backward_prefetch = in.backward_prefetch;
  recompute.whole_layers = in.whole_layers;
  recompute.prefetch = in.overlap_gather;
  if (in.recompute_pass) {
    pass.layer_compute = std::max(0.0, in.backward / layers - forward);  // `backward` holds the recompute
    pass.reuse_limit = in.reuse_limit;
    pass.after_recompute = true;
    pass.layer_recompute = forward;
    recompute.layer_backward = pass.layer_compute;
    recompute.reuse_limit = in.reuse_limit;
  }
  // Passes of a micro-batch whose backward reduce-scatters (all, or the last one) and of the others. A
  // backward that gathers nothing (SHARD_GRAD_OP, or a sharding group of one) adds nothing here: its
  // reduce-scatters queue on the stream behind no gather and hide behind the whole backward (below).
  const bool backward_gathers = in.gathers_in_backward && in.gather_pass > 0;
  const auto exposure = [&](const GatherPassInputs& p, bool gathers) {
    return gathers && backward_gathers ? gather_pass_exposure(mods, p) : PassExposure{};
  };
  const Zero3Passes quiet{f, exposure(recompute, in.recompute_pass), exposure(pass, true)};
  pass.layer_reduce = recompute.layer_reduce = layer_reduce;
  const Zero3Passes reducing{f, exposure(recompute, in.recompute_pass), exposure(pass, true)};
  const PassExposure& rc = reducing.recompute;
  const PassExposure& b = reducing.backward;
  const double quiet_passes = std::max(0.0, m - reducing_passes);
  const double gathering = in.gathers_every_micro_batch ? m : 1.0;  // micro-batches whose forward gathers
  const double blocked = layers * (gathering * f.blocked + m * (rc.blocked + b.blocked));
  const double prefetched = layers * (gathering * f.prefetched + m * (rc.prefetched + b.prefetched));
  const double excess = layers * ((gathering - m) * f.excess + reducing_passes * reducing.excess() + quiet_passes * quiet.excess());
  const double traffic = blocked + prefetched + in.reduce;
  // Without the gathers' overlap (GatherPassInputs::prefetch) every gather is blocked, and one issued after a
  // backward piece waits behind that piece's reduce-scatter as well (2026-12-01: that wait was not counted,
  // 4 x 32 x 2.07 ms on Llama 2 7B, the simulator 15 % slower).
  const double per_layer_waited = b.reduce_waited + rc.reduce_waited;
  const double reduce_waited = std::min(in.reduce, reducing_passes * layers * per_layer_waited);
  // The last unit's reduce-scatter has no compute after it. Where the layers' first gathers wait behind
  // the reduce-scatter of the layer before (DeepSpeed, the first module over the live-parameter limit),
  // the per-layer count above already charged it once too often (L layers, L - 1 layers before another).
  const double boundary_counted = b.boundary_reduce_waited + rc.boundary_reduce_waited;
  const double last_unit = in.whole_layers ? 1.0 : mods.front().gather_share;
  const double last_reduce = std::max(0.0, last_unit * layer_reduce - boundary_counted);
  const double first_gather = first_gather_unhidden(in, mods, layer_gather, forward);
  const double hidden = prefetched + (in.overlap_reduce ? in.reduce - reduce_waited : 0.0);
  const double waited = blocked + reduce_waited + (in.overlap_reduce ? 0.0 : in.reduce);
  const double window = m * (in.forward + in.backward);
  const double first_piece = in.backward / layers * (in.whole_layers ? 1.0 : mods.back().compute_share);
  const double tail = reduce_tail(in, reducing_passes, last_reduce, first_piece, backward_gathers);
  // Each chunk's first forward waits for its layers' gathers but those issued while it waited for its input.
  const double issued_ahead = (in.overlap_gather ? 2.0 : 1.0) * std::max(1.0, in.chunks);
  const double first_forward = std::max(0.0, layers - issued_ahead) * (f.blocked + f.excess);
  return {waited + std::max(first_gather + excess + tail, hidden - window), traffic, first_forward};
}

}  // namespace tp
