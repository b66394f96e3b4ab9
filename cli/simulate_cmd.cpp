// trainplan simulate: one training step as a discrete-event simulation (simulator/), its breakdown
// per stage, the critical path and optionally a Chrome trace (open it in Perfetto).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "format_units.h"
#include "hardware_profile.h"
#include "output_file.h"
#include "plan.h"
#include "progress_bar.h"
#include "report.h"
#include "scenario.h"
#include "simulate.h"

namespace tp {
namespace {

std::string secs(Seconds s) { return format_fixed(s.value, 4); }

// A step time with its unit: seconds to the millisecond from 0.1 s up, else in ms or µs (a 183 µs step was
// "0.000 s").
std::string step_text(Seconds s) { return s.value >= 0.1 ? format_fixed(s.value, 3) + " s" : format_seconds(s.value); }

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", std::fabs(x) < 5e-4 ? 0.0 : 100.0 * x);
  return buf;
}

nlohmann::json simulation_json(const Scenario& s, const Plan& p, const SimResult& r, const SimulateOptions& o) {
  nlohmann::json stages = nlohmann::json::array();
  for (const SimStage& st : r.stages) {
    stages.push_back({{"stage", st.stage},
                      {"busy", st.busy.value},
                      {"bubble", st.bubble.value},
                      {"exposed_comm",
                       {{"total", st.exposed_comm.value},
                        {"collectives", st.exposed_collectives.value},
                        {"pp", st.exposed_p2p.value},
                        {"dp", st.exposed_dp.value}}},
                      {"peak_in_flight_micro_batches", st.peak_in_flight},
                      {"peak_in_flight_chunks", st.peak_in_flight_chunks},
                      {"peak_weight_pending_micro_batches", st.peak_weight_pending},
                      {"planner_in_flight_micro_batches", st.planner_in_flight},
                      {"activations", st.activations.value},
                      {"planner_activations", st.planner_activations.value}});
  }
  nlohmann::json j;
  j["scenario"] = {{"name", s.name}, {"source", s.source}, {"schedule", to_string(s.parallel.schedule)},
                   {"micro_batches", p.estimate.micro_batches}};
  j["step_seconds"] = r.step_seconds.value;
  j["analytic_step_seconds"] = r.analytic_step_seconds.value;
  j["difference"] = r.analytic_step_seconds.value > 0 ? r.step_seconds / r.analytic_step_seconds - 1.0 : 0.0;
  j["lower_bound_seconds"] = r.lower_bound.value;
  j["tasks"] = r.tasks;
  j["events"] = r.events;
  j["steps"] = {{"count", r.stats.steps}, {"jitter", o.jitter}, {"seed", o.seed}, {"mean", r.stats.mean.value},
                {"p50", r.stats.p50.value}, {"p99", r.stats.p99.value}, {"min", r.stats.min.value},
                {"max", r.stats.max.value}};
  j["stages"] = stages;
  j["critical_path"] = r.critical_path;
  j["trace"] = r.trace_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.trace_path);
  j["units"] = {{"time", "seconds"}, {"memory", "bytes"}};
  return j;
}

// "F s0 c0 mb0 → … → B s0 c0 mb15" with the first and last few tasks, and a count per kind.
void print_critical_path(std::ostream& out, const std::vector<std::string>& path) {
  out << "  Critical path  " << path.size() << " tasks:";
  std::map<std::string, int> kinds;
  for (const std::string& n : path) ++kinds[n.substr(0, n.find(' '))];
  for (const auto& [k, n] : kinds) out << " " << k << " " << n << ",";
  out << "\n    ";
  const std::size_t ends = 4;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path.size() > 2 * ends + 1 && i == ends) {
      out << " → …";
      i = path.size() - ends - 1;
      continue;
    }
    out << (i ? " → " : "") << path[i];
  }
  out << "\n";
}

void print_simulation_table(std::ostream& out, const Scenario& s, const Plan& p, const SimResult& r,
                            const SimulateOptions& o, double wall_ms) {
  const ParallelSpec& par = s.parallel;
  out << s.name << "  (" << s.source << ")\n\n";
  out << "  Layout      tp " << par.tp << " · pp " << par.pp << " · dp " << par.dp << " · cp " << par.cp << " · ep " << par.ep
      << (par.vpp > 1 ? " · vpp " + std::to_string(par.vpp) : "") << ", " << to_string(par.schedule) << ", " << zero_label(par)
      << ", " << format_micro_batches(p.estimate.micro_batches) << " per replica\n";
  out << "  Simulated   " << step_text(r.step_seconds) << " per step; analytic model " << step_text(r.analytic_step_seconds)
      << " (" << percent(r.analytic_step_seconds.value > 0 ? r.step_seconds / r.analytic_step_seconds - 1.0 : 0.0)
      << " simulated vs analytic); lower bound " << step_text(r.lower_bound) << "\n";
  out << "  Task graph  " << r.tasks << " tasks, " << r.events << " events, simulated"
      << (r.trace_path.empty() ? "" : " and its trace written") << " in " << format_fixed(wall_ms, 1) << " ms\n";
  if (r.stats.steps > 1 || o.jitter > 0) {
    out << "  Steps       " << r.stats.steps << " with jitter " << format_fixed(100 * o.jitter, 1) << "% (seed " << o.seed
        << "): mean " << secs(r.stats.mean) << " s, p50 " << secs(r.stats.p50) << " s, p99 " << secs(r.stats.p99)
        << " s, min " << secs(r.stats.min) << " s, max " << secs(r.stats.max) << " s\n";
  }
  out << "\n  Per stage (first step)     busy [s]  bubble [s]  exposed comm [s]: tp/cp/ep      pp      dp"
         "   in flight sim / planner   activations [GiB] sim / planner\n";
  for (const SimStage& st : r.stages) {
    char buf[256];
    // format_fixed: scientific notation for huge values instead of 30-digit cells.
    std::snprintf(buf, sizeof buf, "    stage %-3d %22s %11s %26s %7s %7s %13s / %-8s %17s / %s%s\n", st.stage,
                  secs(st.busy).c_str(), secs(st.bubble).c_str(), secs(st.exposed_collectives).c_str(),
                  secs(st.exposed_p2p).c_str(), secs(st.exposed_dp).c_str(), format_fixed(st.peak_in_flight, 2).c_str(),
                  format_fixed(st.planner_in_flight, 2).c_str(), format_fixed(st.activations.value / kGiB, 2).c_str(),
                  format_fixed(st.planner_activations.value / kGiB, 2).c_str(),
                  (st.planner_in_flight > 0 && st.peak_in_flight != st.planner_in_flight) ? "  (differs)" : "");
    out << buf;
  }
  out << "\n";
  print_critical_path(out, r.critical_path);
  if (!r.trace_path.empty()) {
    out << "\n  Trace       " << r.trace_path << " (open in https://ui.perfetto.dev or chrome://tracing)\n";
  }
}

}  // namespace

int run_simulate(const SimulateOptions& o) {
  if (!o.trace.empty()) check_output_target(o.trace, "the trace file");
  // The same built-in default as `evaluate` and `sweep` when no file is given.
  Scenario s = o.scenario.empty() ? default_scenario(o.sets) : load_scenario_file(o.scenario, o.sets);
  if (!o.profile.empty()) s.profile = o.profile;
  const HardwareProfile hw = profile_for(s);
  const Plan p = make_plan(s, hw);
  SimOptions so;
  so.steps = o.steps;
  so.progress = terminal_progress("steps");  // many jittered steps take a while (on a terminal only)
  so.jitter = o.jitter;
  so.seed = o.seed;
  so.trace = o.trace;
  const auto t0 = std::chrono::steady_clock::now();
  const SimResult r = simulate_step(s, p, so);
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (o.format == "json") {
    const nlohmann::json j = simulation_json(s, p, r, o);
    print_json(std::cout, j);
  } else {
    print_simulation_table(std::cout, s, p, r, o, wall_ms);
  }
  return 0;
}

}  // namespace tp
