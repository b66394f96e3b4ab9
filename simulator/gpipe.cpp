// GPipe (Huang et al. 2019): every stage runs the forwards of all m micro-batches, then their
// backwards. Peak in-flight micro-batches: m on every stage.
#include "schedule.h"

namespace tp::sim {

std::vector<StageOrder> gpipe_order(const PipelineShape& shape) {
  std::vector<StageOrder> out(static_cast<std::size_t>(shape.stages));
  for (StageOrder& order : out) {
    order.reserve(2 * static_cast<std::size_t>(shape.micro_batches));
    for (int j = 0; j < shape.micro_batches; ++j) order.push_back({Pass::forward, 0, j});
    for (int j = 0; j < shape.micro_batches; ++j) order.push_back({Pass::backward, 0, j});
  }
  return out;
}

}  // namespace tp::sim
