#include "sharded_time.h"

#include <algorithm>
#include <limits>

namespace tp {

bool zero3_gathers_whole_layers(double live_limit) { return !(live_limit < std::numeric_limits<double>::infinity()); }

bool zero3_prefetch_allowed(const Zero3Module& previous, double live_limit) { return previous.parameters < live_limit; }

bool zero3_kept_for_backward(std::span<const Zero3Module> modules, std::size_t k, double reuse_limit) {
  double fetched_since = 0;
  for (std::size_t i = k + 1; i < modules.size(); ++i) fetched_since += modules[i].parameters;
  return fetched_since < reuse_limit;
}

PassExposure gather_pass_exposure(std::span<const Zero3Module> modules, const GatherPassInputs& in) {
  PassExposure r;
  const size_t n = modules.size();
  if (n == 0) return r;
  if (zero3_gathers_whole_layers(in.live_limit)) {
    // FSDP: the next layer's gather overlaps the whole of this layer's compute.
    r.prefetched = in.layer_gather;
    r.excess = std::max(0.0, in.layer_gather - in.layer_compute);
    return r;
  }
  const bool backward = in.pass == GatherPass::backward;
  for (size_t i = 0; i < n; ++i) {
    const size_t k = backward ? n - 1 - i : i;
    if (backward && zero3_kept_for_backward(modules, k, in.reuse_limit)) continue;
    // The piece that ran just before k: the module before it in the pass, or at a layer's first gather
    // the previous layer's last piece (its last module; in the recompute pass its first module's backward).
    const bool layer_start = i == 0;
    const bool after_backward = backward || (in.pass == GatherPass::recompute && layer_start);
    const size_t prev = in.pass == GatherPass::recompute && layer_start ? 0 : backward ? (k + 1) % n : (k + n - 1) % n;
    const double prev_compute = modules[prev].compute_share * (after_backward && !backward ? in.layer_backward : in.layer_compute);
    const double gather = modules[k].gather_share * in.layer_gather;
    if (!zero3_prefetch_allowed(modules[prev], in.live_limit)) {
      r.blocked += gather;
      if (after_backward) {
        const double waited = modules[prev].gather_share * in.layer_reduce;  // its gradients
        r.reduce_waited += waited;
        if (prev == 0 && layer_start) r.boundary_reduce_waited = waited;
      }
    } else {
      r.prefetched += gather;
      r.excess += std::max(0.0, gather - prev_compute);
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
  if (zero3_gathers_whole_layers(in.live_limit)) return std::min(layer_gather, layer_forward);
  if (!zero3_prefetch_allowed(previous, in.live_limit)) return 0.0;
  return std::min(mods.front().gather_share * layer_gather, previous.compute_share * layer_forward);
}

}  // namespace

double zero3_exposed(const Zero3Inputs& in, std::span<const Zero3Module> modules) {
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
  const PassExposure f = gather_pass_exposure(mods, pass);
  PassExposure rc;
  pass.pass = GatherPass::backward;
  pass.layer_reduce = layer_reduce;
  pass.layer_compute = in.backward / layers;
  if (in.recompute_pass) {
    pass.layer_compute = std::max(0.0, in.backward / layers - forward);  // `backward` holds the recompute
    pass.reuse_limit = in.reuse_limit;
    GatherPassInputs recompute{GatherPass::recompute, in.live_limit, layer_gather, forward};
    recompute.layer_reduce = layer_reduce;
    recompute.layer_backward = pass.layer_compute;
    rc = gather_pass_exposure(mods, recompute);
  }
  const PassExposure b = gather_pass_exposure(mods, pass);
  double blocked = m * layers * (f.blocked + rc.blocked + b.blocked);
  double prefetched = m * layers * (f.prefetched + rc.prefetched + b.prefetched);
  double excess = m * layers * (f.excess + rc.excess + b.excess);
  if (!in.overlap_gather) {
    blocked += prefetched;
    prefetched = excess = 0;
  }
  const double per_layer_waited = b.reduce_waited + rc.reduce_waited;
  const double reduce_waited = in.overlap_gather ? std::min(in.reduce, reducing_passes * layers * per_layer_waited) : 0.0;
  // The last unit's reduce-scatter has no compute after it. Where the layers' first gathers wait behind
  // the reduce-scatter of the layer before (DeepSpeed, the first module over the live-parameter limit),
  // the per-layer count above already charged it once too often (L layers, L - 1 layers before another).
  const double boundary_counted = in.overlap_gather ? b.boundary_reduce_waited + rc.boundary_reduce_waited : 0.0;
  const double last_unit = zero3_gathers_whole_layers(in.live_limit) ? 1.0 : mods.front().gather_share;
  const double last_reduce = std::max(0.0, last_unit * layer_reduce - boundary_counted);
  const double first_gather = first_gather_unhidden(in, mods, layer_gather, forward);
  const double hidden = prefetched + (in.overlap_reduce ? in.reduce - reduce_waited : 0.0);
  const double waited = blocked + reduce_waited + (in.overlap_reduce ? 0.0 : in.reduce);
  const double window = m * (in.forward + in.backward);
  return waited + std::max(first_gather + excess + last_reduce, hidden - window);
}

}  // namespace tp
