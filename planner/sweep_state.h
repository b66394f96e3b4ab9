// The sweep engine's per-thread state and the small types it is built from (planner/sweep.cpp only).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mesh.h"
#include "op_graph.h"
#include "plan.h"
#include "sweep.h"

namespace tp::sweep_detail {

// What besides sequence, precision and flash attention decides the op graph's saved bytes and kernels.
inline int graph_code_of(const TrainingSpec& t) {
  return (static_cast<int>(t.framework) * 2 + static_cast<int>(layer_code_of(t))) * 4 + (t.autocast ? 2 : 0) +
         (t.compile ? 1 : 0);
}

// The fields a fast setter may touch, restored before every point.
struct Mutable {
  ParallelSpec parallel;
  TrainingSpec training;
  int nodes = 1;
  double headroom = 0;
};

inline void save(const Scenario& s, Mutable& m) {
  m.parallel = s.parallel;
  m.training = s.training;
  m.nodes = s.cluster.nodes;
  m.headroom = s.memory.headroom;
}

inline void restore(Scenario& s, const Mutable& m) {
  s.parallel = m.parallel;  // copy-assignment keeps layers_per_stage's storage: no allocation
  s.training = m.training;
  s.cluster.nodes = m.nodes;
  s.memory.headroom = m.headroom;
}

// Keys whose values change what parallel: auto enumerates.
inline bool shapes_auto(const std::string& key) {
  return key == "cluster.nodes" || key == "training.global_batch" || key == "training.sequence_length";
}

struct GridBlock {
  int base = 0;
  std::vector<std::uint32_t> block_values;  // value index per block axis
  std::shared_ptr<const std::vector<LayoutChoice>> layouts;  // parallel: auto, or empty
  std::uint64_t start = 0, count = 0;
};

struct Better {  // strict weak order: lower objective first, then lower index
  bool operator()(const SweepPoint& a, const SweepPoint& b) const {
    return a.objective != b.objective ? a.objective < b.objective : a.index < b.index;
  }
};

// Inserts into a Pareto front over (x, y), both minimised; ties keep the lower index.
template <class X, class Y>
void pareto_insert(std::vector<SweepPoint>& front, const SweepPoint& p, X x, Y y) {
  for (const SweepPoint& q : front) {
    const bool no_worse = x(q) <= x(p) && y(q) <= y(p);
    const bool better = x(q) < x(p) || y(q) < y(p) || q.index < p.index;
    if (no_worse && better) return;
  }
  front.erase(std::remove_if(front.begin(), front.end(),
                             [&](const SweepPoint& q) {
                               const bool no_worse = x(p) <= x(q) && y(p) <= y(q);
                               const bool better = x(p) < x(q) || y(p) < y(q) || p.index < q.index;
                               return no_worse && better;
                             }),
              front.end());
  front.push_back(p);
}

inline double run_x(const SweepPoint& p) { return p.run_seconds; }
inline double cost_y(const SweepPoint& p) { return p.cost; }
inline double gpus_y(const SweepPoint& p) { return p.gpus; }

struct ThreadState {
  Scenario work;
  Mutable saved;
  int block = -1;
  // Op graphs of the current model and training settings, one per vocabulary the layouts pad to (the
  // framework pads by a multiple of tp: a few values per sweep); `graph_index` is the current point's.
  std::vector<OpGraph> graphs;
  int graph_index = -1;
  const OpGraph& graph() const { return graphs[static_cast<size_t>(graph_index)]; }
  bool graph_valid = false;
  const Scenario* graph_base = nullptr;
  std::int64_t graph_seq = 0;
  Precision graph_precision = Precision::bf16;
  bool graph_flash = true;
  int graph_code = -1;  // framework, layer code, autocast and compile the graph was built for (framework_rules.h)

  Plan plan;  // reused for every point of this thread

  std::uint64_t feasible = 0, oom = 0, indivisible = 0, constrained = 0, no_progress = 0;
  std::map<std::string, std::uint64_t> reasons;
  std::vector<SweepPoint> top;  // heap, worst at front
  std::vector<SweepPoint> pareto_cost, pareto_gpus, nearest, all;
};


}  // namespace tp::sweep_detail
