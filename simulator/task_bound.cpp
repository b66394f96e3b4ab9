// The most tasks build_step_graph can add for a step (simulator/step_graph.h), from the same counts it
// builds from: the work limit checks it before any task is built.
#include <algorithm>

#include "step_graph.h"
#include "work_limits.h"
#include "zero3_graph.h"

namespace tp::sim {

std::uint64_t task_bound(const StepInputs& in) {
  const std::uint64_t cap = UINT64_MAX / 4;
  const auto p = static_cast<std::uint64_t>(std::max(1, in.stages));
  const auto v = static_cast<std::uint64_t>(std::max(1, in.chunks));
  const auto m = static_cast<std::uint64_t>(std::max(1, in.micro_batches));
  const auto k = static_cast<std::uint64_t>(std::max(1, in.dp_buckets));
  const std::uint64_t slot = in.per_unit ? std::max<std::uint64_t>(10, zero3_tasks_per_slot(in)) : 10;
  const std::uint64_t per_slot = capped_product(capped_product(p, v, cap), capped_product(m, slot, cap), cap);
  // Gradient reduce buckets (after every micro-batch's backward when reduce_every_micro_batch), ZeRO-1/2
  // gathers, and the optimizer, the sequence-parallel sync and the overlap slowdown.
  const std::uint64_t reduces = capped_product(in.reduce_every_micro_batch ? m : 1, std::max(k, v), cap);
  const std::uint64_t per_stage = capped_product(p, reduces + k + 3, cap);
  return std::min(cap, per_slot + per_stage);
}

}  // namespace tp::sim
