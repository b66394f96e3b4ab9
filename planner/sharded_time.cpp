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

PassExposure gather_pass_exposure(std::span<const Zero3Module> modules, bool backward, double live_limit,
                                  double layer_gather, double layer_compute, double reuse_limit,
                                  double layer_reduce) {
  PassExposure r;
  const size_t n = modules.size();
  if (n == 0) return r;
  if (zero3_gathers_whole_layers(live_limit)) {
    // FSDP: the next layer's gather overlaps the whole of this layer's compute.
    r.prefetched = layer_gather;
    r.excess = std::max(0.0, layer_gather - layer_compute);
    return r;
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t k = backward ? n - 1 - i : i;
    const size_t prev = backward ? (k + 1) % n : (k + n - 1) % n;  // the module that ran before k
    if (backward && zero3_kept_for_backward(modules, k, reuse_limit)) continue;
    const double gather = modules[k].gather_share * layer_gather;
    if (!zero3_prefetch_allowed(modules[prev], live_limit)) {
      r.blocked += gather;
      r.reduce_waited += modules[prev].gather_share * layer_reduce;  // its gradients
    } else {
      r.prefetched += gather;
      r.excess += std::max(0.0, gather - modules[prev].compute_share * layer_compute);
    }
  }
  return r;
}

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
  const PassExposure f = gather_pass_exposure(mods, false, in.live_limit, layer_gather, forward);
  PassExposure rc;
  PassExposure b;
  if (in.recompute_pass) {
    rc = gather_pass_exposure(mods, false, in.live_limit, layer_gather, forward);
    b = gather_pass_exposure(mods, true, in.live_limit, layer_gather, std::max(0.0, in.backward / layers - forward),
                             in.reuse_limit, layer_reduce);
  } else {
    b = gather_pass_exposure(mods, true, in.live_limit, layer_gather, in.backward / layers, 0.0, layer_reduce);
  }
  double blocked = m * layers * (f.blocked + rc.blocked + b.blocked);
  double prefetched = m * layers * (f.prefetched + rc.prefetched + b.prefetched);
  double excess = m * layers * (f.excess + rc.excess + b.excess);
  if (!in.overlap_gather) {
    blocked += prefetched;
    prefetched = excess = 0;
  }
  const double reduce_waited = in.overlap_gather ? std::min(in.reduce, reducing_passes * layers * b.reduce_waited) : 0.0;
  const double hidden = prefetched + (in.overlap_reduce ? in.reduce - reduce_waited : 0.0);
  const double waited = blocked + reduce_waited + (in.overlap_reduce ? 0.0 : in.reduce);
  const double window = m * (in.forward + in.backward);
  return waited + std::max({excess, hidden - window, in.overlap_reduce ? in.last_bucket : 0.0});
}

}  // namespace tp
