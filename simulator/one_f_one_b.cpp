// 1F1B (PipeDream-Flush; Narayanan et al. 2021, Megatron-LM forward_backward_pipelining_without_
// interleaving): stage s runs min(p − s − 1, m) warm-up forwards, then alternates one forward and one
// backward, then drains the remaining backwards. Peak in-flight micro-batches: min(p − s, m).
#include <algorithm>

#include "schedule.h"

namespace tp::sim {

std::vector<StageOrder> one_f_one_b_order(const PipelineShape& shape) {
  const int p = shape.stages, m = shape.micro_batches;
  std::vector<StageOrder> out(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    StageOrder& order = out[static_cast<std::size_t>(s)];
    order.reserve(2 * static_cast<std::size_t>(m));
    const int warmup = std::min(p - s - 1, m);
    for (int j = 0; j < warmup; ++j) order.push_back({Pass::forward, 0, j});
    const int steady = m - warmup;
    for (int i = 0; i < steady; ++i) {
      order.push_back({Pass::forward, 0, warmup + i});
      order.push_back({Pass::backward, 0, i});
    }
    for (int j = steady; j < m; ++j) order.push_back({Pass::backward, 0, j});
  }
  return out;
}

}  // namespace tp::sim
