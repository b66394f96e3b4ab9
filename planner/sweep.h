// The sweep engine: evaluates a grid of layouts lazily (points are decoded from an index, never
// materialised), in parallel with oneTBB, deterministically whatever the thread count. Keeps the
// best N by the objective, the Pareto fronts (run time vs cost, run time vs GPUs) and counts what is
// rejected, by reason, with the nearest out-of-memory misses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hardware_profile.h"
#include "mesh.h"
#include "specs.h"
#include "sweep_spec.h"

namespace tp {

// One fast axis: a key and, per value, how to write it into a scenario.
struct FastAxis {
  std::string key;
  std::vector<std::string> labels;
  std::vector<std::function<void(Scenario&)>> setters;
};

// Fast setters exist for the layout, batch, precision and cluster-size keys; other keys are applied
// through the YAML document (once per combination, outside the hot loop).
bool is_fast_key(const std::string& key);
// Throws InputError naming the axis when a value is malformed.
FastAxis make_fast_axis(const Axis& a);

// no_progress: fits in memory, but failures come faster than the job redoes the work they lose (run_totals.h).
enum class PointStatus { feasible, out_of_memory, indivisible, constrained, no_progress };
const char* to_string(PointStatus s);

struct SweepPoint {
  std::uint64_t index = 0;
  PointStatus status = PointStatus::feasible;
  bool evaluated = true;  // false: rejected before any arithmetic (indivisible, over max_gpus / max_nodes)
  int block = 0;  // which base scenario (slow-axis combination)
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vpp = 1, zero = 0, nodes = 1, gpus = 1;
  Schedule schedule = Schedule::one_f_one_b;
  RecomputeMode recompute = RecomputeMode::none;
  int recompute_every = 0;
  std::int64_t micro_batch = 1;
  bool sequence_parallel = false;
  int dp_shard = 0;  // parallel.dp_shard: 0 = all of dp
  std::vector<std::uint32_t> fast_values;  // value index per fast axis (for labels)
  double memory = 0;        // worst-stage bytes per GPU
  double capacity = 0;
  double step = 0;          // seconds
  double mfu = 0;
  double tokens_per_gpu = 0;
  double run_seconds = 0;   // with failures (0 when the job cannot finish: `finishes`)
  bool finishes = true;     // false: failures outpace progress (no run time, cost or energy), whatever the status
  double cost = 0;          // USD
  double energy_kwh = 0;
  double objective = 0;     // minimised
};

struct SweepResult {
  std::uint64_t total = 0;
  std::uint64_t feasible = 0;
  std::uint64_t out_of_memory = 0;
  std::uint64_t indivisible = 0;
  std::uint64_t constrained = 0;
  std::uint64_t no_progress = 0;  // fit in memory but cannot make progress under failures
  std::vector<std::pair<std::string, std::uint64_t>> reasons;  // "parallel.tp vs model.heads" -> count, most first
  std::vector<SweepPoint> top;             // best first
  std::vector<SweepPoint> pareto_cost;     // run time vs cost, fastest first
  std::vector<SweepPoint> pareto_gpus;     // run time vs GPUs, fastest first
  std::vector<SweepPoint> nearest_misses;  // out-of-memory points closest to fitting
  std::vector<SweepPoint> all;             // every evaluated point (when asked), by index
  double seconds = 0;                      // wall time of the sweep
};

struct SweepOptions {
  int threads = 0;        // 0 = all cores
  bool keep_all = false;  // fill SweepResult::all
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;  // called from one thread
};

// One base scenario (a combination of slow-axis values): its label ("model=llama3.1-70b"), the
// scenario (not checked) and its hardware profile.
struct SweepBase {
  std::string label;
  Scenario scenario;
  HardwareProfile profile;
};

// The scenario of a point: its base, the grid values and (for parallel: auto) its layout.
Scenario point_scenario(const SweepBase& base, const std::vector<FastAxis>& axes, const SweepPoint& p);

SweepResult run_sweep(const std::vector<SweepBase>& bases, const std::vector<FastAxis>& axes, bool parallel_auto,
                      Objective objective, const Constraints& constraints, int top, const SweepOptions& options);

}  // namespace tp
