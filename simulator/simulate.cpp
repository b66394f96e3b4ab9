#include "simulate.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "analysis.h"
#include "errors.h"
#include "step_graph.h"
#include "trace.h"
#include "work_limits.h"

namespace tp {
namespace sim {
namespace {

// splitmix64 (Steele, Lea & Flood 2014): a small, portable generator, so that a seed gives the same
// draws on every platform.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  double normal() {  // Box-Muller
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

Seconds percentile(const std::vector<double>& sorted, double pct) {
  const std::size_t n = sorted.size();
  std::size_t rank = static_cast<std::size_t>(std::ceil(pct / 100.0 * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  return Seconds(sorted[rank - 1]);
}

}  // namespace

// A jittered run simulates each of its steps: at most kJitteredStepsOfWork x the task limit in all (about
// 20 s at the engine's ~10 M tasks a second on the default limit).
constexpr std::uint64_t kJitteredStepsOfWork = 100;

void check_task_count(const StepInputs& in, std::uint64_t max_tasks, int runs) {
  if (max_tasks == 0) max_tasks = work_limits().sim_tasks;
  const std::uint64_t bound = task_bound(in);
  if (bound <= max_tasks) {
    if (runs <= 1 || static_cast<double>(bound) * runs <= static_cast<double>(kJitteredStepsOfWork) * max_tasks) return;
    throw InputError({"--steps", 0, 0}, "--steps",
                     std::to_string(runs) + " jittered steps of up to " + limit_count_text(bound) + " tasks each are more than " +
                         std::to_string(kJitteredStepsOfWork) + " x the task limit of " + limit_count_text(max_tasks) +
                         " (fewer --steps, or raise the limit with --max-tasks)");
  }
  const auto counted = [](int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  throw InputError({"simulator", 0, 0}, "",
                   "one step of " + counted(in.stages, "stage", "stages") + " x " + counted(in.chunks, "chunk", "chunks") +
                       " x " + counted(in.micro_batches, "micro-batch", "micro-batches") + " makes up to " +
                       limit_count_text(bound) + " tasks, more than the limit of " + limit_count_text(max_tasks) +
                       " (fewer micro-batches: a smaller training.global_batch or a larger training.micro_batch; "
                       "or raise the limit with --max-tasks)");
}

Seconds lower_bound(const StepInputs& in) {
  double best = 0, fill = 0;
  const double hop = in.stages > 1 ? in.p2p_hop.value : 0.0;
  for (std::size_t s = 0; s < in.stage.size(); ++s) {
    const StageInputs& st = in.stage[s];
    const double work = in.micro_batches * st.timing.total().value + st.optimizer.value;
    best = std::max(best, fill + work);
    fill += (st.timing.forward + st.timing.comm_forward).value / in.chunks + hop;
  }
  return Seconds(best);
}

SimResult simulate(const StepInputs& in, const SimOptions& o) {
  const int steps = std::max(1, o.steps);
  // Without jitter every step is the same schedule: simulated once, and its time is every step's.
  const int runs = o.jitter > 0 ? steps : 1;
  check_task_count(in, o.max_tasks, runs);
  const StepGraph g = build_step_graph(in);
  g.graph.validate();
  const CompiledGraph cg = compile(g.graph, o.link_sharing);
  Engine engine(cg);
  SplitMix rng{o.seed};
  std::vector<double> durations = cg.duration;
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(runs));

  SimResult r;
  r.tasks = cg.tasks;
  r.lower_bound = lower_bound(in);
  for (int k = 0; k < runs; ++k) {
    if (o.jitter > 0) {
      const double sigma = o.jitter;
      for (std::size_t t = 0; t < durations.size(); ++t) {
        durations[t] = cg.duration[t] * std::exp(sigma * rng.normal() - 0.5 * sigma * sigma);
      }
    }
    const Execution& x = engine.run(durations);
    if (x.unfinished > 0) {
      throw std::logic_error("simulator: " + std::to_string(x.unfinished) + " tasks never ran (deadlock)");
    }
    times.push_back(x.makespan);
    if (o.progress && runs > 1) o.progress(static_cast<std::uint64_t>(k) + 1, static_cast<std::uint64_t>(runs));
    if (k > 0) continue;

    r.events = x.events;
    const Analysis a = analyze(g, x);
    for (const StageReport& sr : a.stages) {
      const StageInputs& si = in.stage[static_cast<std::size_t>(sr.stage)];
      SimStage st;
      st.stage = sr.stage;
      st.busy = Seconds(sr.busy);
      st.exposed_collectives = Seconds(sr.exposed_collective);
      st.exposed_p2p = Seconds(sr.exposed_p2p);
      st.exposed_dp = Seconds(sr.exposed_dp);
      st.exposed_comm = Seconds(sr.exposed());
      st.bubble = Seconds(sr.bubble);
      st.peak_in_flight = sr.peak_in_flight;
      st.peak_in_flight_chunks = sr.peak_in_flight_chunks;
      st.peak_weight_pending = sr.peak_weight_pending;
      st.planner_in_flight = si.planner_in_flight;
      st.planner_activations = si.planner_activations;
      if (si.planner_in_flight > 0) st.activations = si.planner_activations * (sr.peak_in_flight / si.planner_in_flight);
      r.stages.push_back(st);
    }
    for (int t : a.critical_path) r.critical_path.push_back(task_name(g.graph.task(t)));
    if (!o.trace.empty()) {
      write_trace(g, x, "trainplan: one training step, one data-parallel replica", o.trace);
      r.trace_path = o.trace;
    }
  }

  double sum = 0;
  for (double t : times) sum += t;
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  r.step_seconds = Seconds(sum / static_cast<double>(times.size()));
  r.stats.steps = steps;
  r.stats.mean = r.step_seconds;
  r.stats.p50 = percentile(sorted, 50);
  r.stats.p99 = percentile(sorted, 99);
  r.stats.min = Seconds(sorted.front());
  r.stats.max = Seconds(sorted.back());
  return r;
}

}  // namespace sim

SimResult simulate_step(const Scenario& s, const Plan& plan, const SimOptions& options) {
  SimResult r = sim::simulate(sim::step_inputs(s, plan), options);
  r.analytic_step_seconds = plan.time.step;
  return r;
}

}  // namespace tp
