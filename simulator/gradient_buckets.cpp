#include "gradient_buckets.h"

#include <algorithm>
#include <map>
#include <utility>

namespace tp::sim {
namespace {

// `bucket` waits for `fraction` of the gradients `grad` produces. The gradients come out of the backward's
// GEMMs, not of the exposed TP/CP/EP collective the stage runs after them. Under layer recompute each
// layer's backward follows its own recompute, so the gradients come out over the recompute and the
// backward together (the planner's window, planner/data_parallel_time.cpp); the step graph runs a chunk's
// recompute as one task before its backward, so the fraction is taken over both.
void depend_on_gradients(TaskGraph& g, const GradientSource& grad, int bucket, double fraction) {
  if (grad.recompute < 0) {
    g.add_partial_dependency(grad.task, bucket, fraction);
    return;
  }
  const double r = g.task(grad.recompute).duration, b = g.task(grad.task).duration;
  const double at = fraction * (r + b);
  if (at <= r) {
    g.add_partial_dependency(grad.recompute, bucket, r > 0 ? at / r : 1.0);
  } else {
    g.add_partial_dependency(grad.task, bucket, b > 0 ? (at - r) / b : 1.0);
  }
}

}  // namespace

std::vector<int> add_gradient_reduce(TaskGraph& g, Placement on_dp, int stage, int micro_batch, double seconds,
                                     int buckets, const std::vector<GradientSource>& grads, bool overlapped) {
  const int v = static_cast<int>(grads.size());
  const int total = std::max(std::max(1, buckets), v);
  std::vector<int> out;
  for (int c = v - 1; c >= 0; --c) {
    const int kc = total / v + (c < total % v ? 1 : 0);
    for (int i = 0; i < kc; ++i) {
      Task t;
      t.kind = TaskKind::dp_reduce;
      t.stage = stage;
      t.chunk = c;
      t.micro_batch = micro_batch;
      t.bucket = i;
      t.duration = seconds / total;
      const int b = g.add_task(t, on_dp);
      if (overlapped) {
        depend_on_gradients(g, grads[static_cast<std::size_t>(c)], b, static_cast<double>(i + 1) / kc);
      } else {
        g.add_dependency(grads[static_cast<std::size_t>(c)].task, b);  // once the chunk's backward has returned
      }
      out.push_back(b);
    }
  }
  return out;
}

void hold_compute_after_each_backward(TaskGraph& g, const std::vector<int>& order, const std::vector<int>& reduces) {
  const auto backward_pass = [](TaskKind k) {
    return k == TaskKind::backward || k == TaskKind::backward_input || k == TaskKind::backward_weight ||
           k == TaskKind::recompute || k == TaskKind::collective_backward;
  };
  std::map<std::pair<int, int>, std::size_t> last;  // (chunk, micro-batch) -> position of its last backward-pass task
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Task& t = g.task(order[i]);
    if (t.micro_batch >= 0 && backward_pass(t.kind)) last[{t.chunk, t.micro_batch}] = i;
  }
  for (int r : reduces) {
    const auto it = last.find({g.task(r).chunk, g.task(r).micro_batch});
    if (it != last.end() && it->second + 1 < order.size()) g.add_dependency(r, order[it->second + 1]);
  }
}

}  // namespace tp::sim
