// Interleaved 1F1B (Narayanan et al. 2021 §2.2; Megatron-LM forward_backward_pipelining_with_
// interleaving). Stage s holds v chunks. Micro-batches go through the chunks in groups of p: the k-th
// forward of a stage is micro-batch (k / (p·v))·p + k mod p of chunk (k mod (p·v)) / p; the k-th
// backward takes the same micro-batch in chunk v − 1 − that chunk. Warm-up forwards:
// min(2(p − s − 1) + (v − 1)·p, m·v), then one forward and one backward alternately, then the
// remaining backwards. Peak in-flight chunk sets: warm-up + 1 (the planner's count, docs/model.md §7).
// Like Megatron-LM (and the scenario checks), it needs m to be a multiple of p: with a smaller last
// group this warm-up count would wait for gradients that the order has not produced yet.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "schedule.h"

namespace tp::sim {
namespace {

// (micro-batch, chunk) of the k-th forward of a stage, for all k.
std::vector<Slot> forward_table(int p, int v, int m) {
  std::vector<Slot> table;
  table.reserve(static_cast<std::size_t>(m) * static_cast<std::size_t>(v));
  for (int first = 0; first < m; first += p) {
    for (int c = 0; c < v; ++c) {
      for (int j = first; j < first + p; ++j) table.push_back({Pass::forward, c, j});
    }
  }
  return table;
}

}  // namespace

std::vector<StageOrder> interleaved_order(const PipelineShape& shape) {
  const int p = shape.stages, v = shape.chunks, m = shape.micro_batches;
  if (m % p != 0) {
    throw std::invalid_argument("interleaved schedule: micro-batches (" + std::to_string(m) +
                                ") must be a multiple of the pipeline stages (" + std::to_string(p) + ")");
  }
  const std::vector<Slot> table = forward_table(p, v, m);
  const int total = m * v;
  std::vector<StageOrder> out(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    StageOrder& order = out[static_cast<std::size_t>(s)];
    order.reserve(2 * static_cast<std::size_t>(total));
    auto forward = [&](int k) { order.push_back(table[static_cast<std::size_t>(k)]); };
    auto backward = [&](int k) {
      const Slot& f = table[static_cast<std::size_t>(k)];
      order.push_back({Pass::backward, v - 1 - f.chunk, f.micro_batch});
    };
    const int warmup = std::min(2 * (p - s - 1) + (v - 1) * p, total);
    for (int k = 0; k < warmup; ++k) forward(k);
    const int steady = total - warmup;
    for (int k = 0; k < steady; ++k) {
      forward(warmup + k);
      backward(k);
    }
    for (int k = steady; k < total; ++k) backward(k);
  }
  return out;
}

}  // namespace tp::sim
