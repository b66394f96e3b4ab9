#include "analysis.h"

#include <algorithm>
#include <utility>

namespace tp::sim {
namespace {

bool on_link(const StepGraph& g, int t) {
  const int r = g.graph.placement(t).resource;
  return g.graph.resources()[static_cast<std::size_t>(r)].kind == ResourceKind::link;
}

double overlap(double a0, double a1, double b0, double b1) { return std::max(0.0, std::min(a1, b1) - std::max(a0, b0)); }

// Peak of a +1/−1 count; at equal times releases come before acquisitions.
int peak_count(std::vector<std::pair<double, int>>& ev) {
  std::sort(ev.begin(), ev.end());
  int now = 0, peak = 0;
  for (const auto& e : ev) {
    now += e.second;
    peak = std::max(peak, now);
  }
  return peak;
}

// The end of each stage's last data-parallel transfer (0 where it has none).
std::vector<double> last_dp_ends(const StepGraph& g, const Execution& x) {
  const auto& tasks = g.graph.tasks();
  std::vector<double> last_dp_end(static_cast<std::size_t>(g.stages), 0.0);
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    if (task_class(tasks[t].kind) == TaskClass::dp) {
      auto& e = last_dp_end[static_cast<std::size_t>(tasks[t].stage)];
      e = std::max(e, x.end[t]);
    }
  }
  return last_dp_end;
}

// Stage s's compute stream over the step: busy time, exposed collectives, and each idle gap charged to the
// link transfer that ended it (P2P or DP); what is left of the step is the bubble.
StageReport stage_report(const StepGraph& g, const Execution& x, int s, double last_dp_end) {
  const double step = x.makespan;
  const auto& tasks = g.graph.tasks();
  const auto& res = g.graph.resources();
  StageReport r;
  r.stage = s;
  const std::vector<int>& order = res[static_cast<std::size_t>(g.stream[static_cast<std::size_t>(s)])].order;
  double prev_end = 0;
  for (int t : order) {
    const std::size_t ti = static_cast<std::size_t>(t);
    const double d = x.end[ti] - x.start[ti];
    if (task_class(tasks[ti].kind) == TaskClass::collective) {
      r.exposed_collective += d;
    } else {
      r.busy += d;
    }
    const double gap0 = prev_end, gap1 = x.start[ti];
    prev_end = x.end[ti];
    const int c = x.cause[ti];
    if (gap1 <= gap0 || c < 0 || !on_link(g, c)) continue;
    // The transfer that ended the gap, and those it queued behind on its communicator.
    double from = x.start[static_cast<std::size_t>(c)];
    for (int k = x.cause[static_cast<std::size_t>(c)]; k >= 0 && on_link(g, k); k = x.cause[static_cast<std::size_t>(k)]) {
      from = std::min(from, x.start[static_cast<std::size_t>(k)]);
    }
    const double exposed = overlap(gap0, gap1, from, x.end[static_cast<std::size_t>(c)]);
    if (task_class(tasks[static_cast<std::size_t>(c)].kind) == TaskClass::p2p) {
      r.exposed_p2p += exposed;
    } else {
      r.exposed_dp += exposed;
    }
  }
  // After the stage's last compute: its own trailing DP transfers (gathers after the optimizer).
  r.exposed_dp += std::max(0.0, std::min(step, last_dp_end) - prev_end);
  r.bubble = std::max(0.0, step - r.busy - r.exposed());
  return r;
}

// Peak in-flight micro-batches: between the start of F and the end of B (input gradient). ZeRO-3's
// per-layer pieces: the first forward piece (layer 0, unit 0) and the last backward piece (the same).
void add_in_flight_peaks(const StepGraph& g, const Execution& x, std::vector<StageReport>& stages) {
  const auto& tasks = g.graph.tasks();
  std::vector<std::vector<std::pair<double, int>>> held(static_cast<std::size_t>(g.stages)), pending(held);
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const Task& k = tasks[t];
    if (k.layer > 0 || k.unit > 0) continue;
    auto& h = held[static_cast<std::size_t>(k.stage)];
    auto& w = pending[static_cast<std::size_t>(k.stage)];
    switch (k.kind) {
      case TaskKind::forward:
        h.emplace_back(x.start[t], +1);
        w.emplace_back(x.start[t], +1);
        break;
      case TaskKind::backward: w.emplace_back(x.end[t], -1); [[fallthrough]];
      case TaskKind::backward_input: h.emplace_back(x.end[t], -1); break;
      case TaskKind::backward_weight: w.emplace_back(x.end[t], -1); break;
      default: break;
    }
  }
  for (int s = 0; s < g.stages; ++s) {
    StageReport& r = stages[static_cast<std::size_t>(s)];
    r.peak_in_flight_chunks = peak_count(held[static_cast<std::size_t>(s)]);
    r.peak_in_flight = static_cast<double>(r.peak_in_flight_chunks) / g.chunks;
    r.peak_weight_pending = static_cast<double>(peak_count(pending[static_cast<std::size_t>(s)])) / g.chunks;
  }
}

// Critical path: from the task that ends last, back through what let each task start.
std::vector<int> critical_path_of(const Execution& x, std::size_t task_count) {
  std::vector<int> path;
  int last = -1;
  for (std::size_t t = 0; t < task_count; ++t) {
    if (last < 0 || x.end[t] > x.end[static_cast<std::size_t>(last)]) last = static_cast<int>(t);
  }
  for (int t = last; t >= 0; t = x.cause[static_cast<std::size_t>(t)]) path.push_back(t);
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

Analysis analyze(const StepGraph& g, const Execution& x) {
  Analysis a;
  const std::vector<double> last_dp_end = last_dp_ends(g, x);
  for (int s = 0; s < g.stages; ++s) {
    a.stages.push_back(stage_report(g, x, s, last_dp_end[static_cast<std::size_t>(s)]));
  }
  add_in_flight_peaks(g, x, a.stages);
  a.critical_path = critical_path_of(x, g.graph.tasks().size());
  return a;
}

}  // namespace tp::sim
