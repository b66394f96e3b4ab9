// The step simulator's entry points. simulate_step() runs one training step of one data-parallel
// replica as a task graph (simulator/step_graph.h) on the planner's own durations, and reports the
// step time, where each stage's time went, the critical path, the peak in-flight micro-batches per
// stage (and the activation memory they imply, next to the planner's), and optionally writes a
// Chrome trace of the step. With jitter, every task's duration is drawn anew for each of `steps`
// simulated steps, giving the step-time distribution under stragglers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine.h"
#include "plan.h"
#include "specs.h"
#include "step_inputs.h"

namespace tp {

struct SimOptions {
  int steps = 1;          // simulated steps (each with its own jitter draw)
  double jitter = 0.0;    // spread of every task's duration: duration x exp(σz − σ²/2), z ~ N(0,1), σ = jitter
  std::uint64_t seed = 1;
  std::string trace;      // Chrome trace JSON of the first step; "" = none
  sim::LinkSharing link_sharing = sim::LinkSharing::fair;
  std::uint64_t max_tasks = 0;  // tasks of one step; 0 = work_limits().sim_tasks (--max-tasks)
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;  // after each jittered step; may be empty
};

struct SimStage {
  int stage = 0;
  Seconds busy;                 // F, R, B, W and the optimizer
  Seconds exposed_comm;         // = collectives + p2p + dp below
  Seconds exposed_collectives;  // TP/SP/CP/EP on the compute stream
  Seconds exposed_p2p;          // waiting on pipeline transfers
  Seconds exposed_dp;           // waiting on DP reduce / parameter gathers
  Seconds bubble;               // the rest: busy + exposed_comm + bubble = step
  double peak_in_flight = 0;    // micro-batches between the start of F and the end of B (chunks / v)
  int peak_in_flight_chunks = 0;
  double peak_weight_pending = 0;  // zb-h1: until W (its inputs kept); else = peak_in_flight
  double planner_in_flight = 0;    // the planner's memory model (docs/model.md §7)
  Bytes activations;               // implied: the planner's bytes per in-flight micro-batch x peak_in_flight
  Bytes planner_activations;
};

struct StepStats {
  int steps = 0;
  Seconds mean, p50, p99, min, max;  // nearest-rank percentiles
};

struct SimResult {
  Seconds step_seconds;           // mean simulated step time (= the step when steps = 1)
  Seconds analytic_step_seconds;  // the planner's (0 when simulated from bare inputs)
  Seconds lower_bound;            // max over stages of (fill before its first task + its serial work)
  std::vector<SimStage> stages;   // of the first simulated step
  std::vector<std::string> critical_path;  // task names, first to last, of the first step
  StepStats stats;
  std::size_t tasks = 0;
  std::uint64_t events = 0;       // events of the first step
  std::string trace_path;         // written trace, "" = none
};

// Simulates the step of `plan` (make_plan of `s`). Pure unless options.trace names a file.
SimResult simulate_step(const Scenario& s, const Plan& plan, const SimOptions& options);

namespace sim {
// The same from bare inputs (tests, benchmarks).
SimResult simulate(const StepInputs& in, const SimOptions& options);
// max over stages s of: Σ_{s' < s} (forward + comm-F of s') / v + s·hop (before s can start)
// + m × its per-micro-batch work + its optimizer. No schedule can beat it.
Seconds lower_bound(const StepInputs& in);
// An InputError when one step of `in` would make more tasks than `max_tasks` (0: work_limits().sim_tasks,
// --max-tasks), before anything is allocated: every caller that builds a step graph checks it first. With
// `runs` jittered steps, also when they all make more than 100 x that many (--steps).
void check_task_count(const StepInputs& in, std::uint64_t max_tasks = 0, int runs = 1);
}  // namespace sim

}  // namespace tp
