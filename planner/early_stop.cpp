#include "early_stop.h"

#include <algorithm>
#include <cmath>

#include "estimate_parts.h"

namespace tp {
namespace {

// Checkpointed regions of `layers` layers: one per checkpointed layer (full, {one_in: k}), except that
// {every: k} checkpoints ceil(layers / k) segments of k layers.
double checkpointed_regions(const ParallelSpec& p, double layers) {
  if (p.recompute.mode == RecomputeMode::every) return std::ceil(layers / std::max(1, p.recompute.every));
  return checkpointed_layers(p, layers);
}

}  // namespace

std::size_t early_stop_index(const std::vector<Op>& layer) {
  for (std::size_t i = layer.size(); i-- > 0;) {
    const Op& op = layer[i];
    if (op.kind == OpKind::collective || op.saved_bytes <= 0) continue;
    return op.kind == OpKind::gemm ? i : i + 1;
  }
  return 0;
}

std::vector<Op> early_stop_rerun(const std::vector<Op>& layer) {
  return std::vector<Op>(layer.begin(), layer.begin() + static_cast<std::ptrdiff_t>(early_stop_index(layer)));
}

LayerRecompute layer_recompute(const Scenario& s) {
  // The layers of one model chunk (a pipeline stage's, or one of its interleaved chunks): the frameworks count
  // checkpointed layers and regions within the chunk a rank builds (torchtitan's one-in-k counter, Megatron's
  // segments), as the stage's activation memory does (planner/activation_memory.cpp).
  const double chunk = std::max(1.0, static_cast<double>(std::max(1, s.model.layers)) /
                                         (std::max(1, s.parallel.pp) * s.parallel.chunks()));
  const double rerun = checkpointed_layers(s.parallel, chunk) / chunk;
  const double stopped = s.training.checkpoint_early_stop ? checkpointed_regions(s.parallel, chunk) / chunk : 0.0;
  return {rerun - stopped, stopped};
}

}  // namespace tp
