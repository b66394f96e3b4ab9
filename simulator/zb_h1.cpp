// ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", §3, handcrafted schedule H1, as in the
// authors' reference implementation): the backward pass is split into B (input gradient, on the
// critical path between stages) and W (weight gradient, free to move). Stage s runs
//   min(p − s − 1, m) warm-up forwards,
//   s pairs F, B whose W is deferred,
//   F, B, W triples while forwards remain,
//   B, W pairs while backwards remain,
//   the deferred W passes.
// W passes run in micro-batch order. It keeps 1F1B's peak of p − s micro-batches between F and B and,
// for F = B = W, cuts the bubble from (p − 1)(F + B + W) to (p − 1)(F + B − W).
#include "schedule.h"

namespace tp::sim {

std::vector<StageOrder> zb_h1_order(const PipelineShape& shape) {
  const int p = shape.stages, m = shape.micro_batches;
  std::vector<StageOrder> out(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    StageOrder& order = out[static_cast<std::size_t>(s)];
    order.reserve(3 * static_cast<std::size_t>(m));
    int f = 0, b = 0, w = 0;
    for (int i = 0; i < p - s - 1 && f < m; ++i) order.push_back({Pass::forward, 0, f++});
    for (int i = 0; i < s && f < m; ++i) {
      order.push_back({Pass::forward, 0, f++});
      order.push_back({Pass::backward, 0, b++});
    }
    while (f < m) {
      order.push_back({Pass::forward, 0, f++});
      order.push_back({Pass::backward, 0, b++});
      order.push_back({Pass::weight, 0, w++});
    }
    while (b < m) {
      order.push_back({Pass::backward, 0, b++});
      order.push_back({Pass::weight, 0, w++});
    }
    while (w < m) order.push_back({Pass::weight, 0, w++});
  }
  return out;
}

}  // namespace tp::sim
