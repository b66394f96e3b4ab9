#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "errors.h"
#include "format_units.h"
#include "output_file.h"
#include "plan.h"
#include "progress_bar.h"
#include "report.h"
#include "scenario.h"
#include "simulate.h"
#include "sweep.h"
#include "sweep_setup.h"
#include "sweep_spec.h"

namespace tp {
namespace {

// Prints one table row without the trailing spaces an empty last column would leave.
void print_row(std::string row) {
  row.erase(row.find_last_not_of(' ') + 1);
  std::printf("%s\n", row.c_str());
}

template <typename... Args>
std::string format_row(const char* format, Args... args) {
  const int n = std::snprintf(nullptr, 0, format, args...);
  std::string row(static_cast<size_t>(std::max(n, 0)) + 1, '\0');
  std::snprintf(row.data(), row.size(), format, args...);
  row.resize(static_cast<size_t>(std::max(n, 0)));
  return row;
}

void print_points(const char* title, const std::vector<SweepPoint>& points, const std::vector<SweepBase>& bases,
                  const std::vector<FastAxis>& axes) {
  const char* format = "  %4s  %-46s %6s %9s %9s %6s %9s %14s %11s  %s";
  std::printf("\n%s\n", title);
  print_row(format_row(format, "#", "layout", "GPUs", "mem[GiB]", "step[s]", "MFU%", "days", "cost[USD]", "energy[MWh]",
                       "other"));
  int rank = 0;
  for (const auto& p : points) {
    // format_fixed switches to scientific notation for huge values (no 40-digit cells).
    print_row(format_row(format, std::to_string(++rank).c_str(), layout_label(p).c_str(), std::to_string(p.gpus).c_str(),
                         format_fixed(p.memory / kGiB, 2).c_str(), format_fixed(p.step, 3).c_str(),
                         format_fixed(100 * p.mfu, 1).c_str(), format_fixed(p.run_seconds / 86400.0, 2).c_str(),
                         format_fixed(p.cost, 0).c_str(), format_fixed(p.energy_kwh / 1000.0, 1).c_str(),
                         extra_label(p, bases, axes).c_str()));
  }
}

nlohmann::json point_json(const SweepPoint& p, const std::vector<SweepBase>& bases, const std::vector<FastAxis>& axes) {
  return {{"index", p.index},
          {"status", to_string(p.status)},
          {"layout",
           {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp}, {"ep", p.ep}, {"vpp", p.vpp},
            {"schedule", to_string(p.schedule)}, {"zero", p.zero}, {"dp_shard", sharding_group(p.dp_shard, p.dp)},
            {"recompute", to_string(p.recompute)},  // as the scenario spells it: --set parallel.recompute=...
            {"recompute_every", p.recompute_every},  // k of every / one_in, else 0 (as evaluate's)
            {"micro_batch", p.micro_batch},
            {"sequence_parallel", p.sequence_parallel}}},
          {"other", extra_label(p, bases, axes)},
          {"gpus", p.gpus},
          {"nodes", p.nodes},
          {"memory_bytes", p.memory},
          {"step_seconds", p.step},
          {"mfu", p.mfu},
          {"tokens_per_second_per_gpu", p.tokens_per_gpu},
          // A job that cannot finish has no run time, cost or energy: null, whatever its status.
          {"finishes", p.finishes},
          {"run_seconds", p.finishes ? nlohmann::json(p.run_seconds) : nlohmann::json()},
          {"cost_usd", p.finishes ? nlohmann::json(p.cost) : nlohmann::json()},
          {"energy_kwh", p.finishes ? nlohmann::json(p.energy_kwh) : nlohmann::json()}};
}

// A CSV cell of a number (10 significant digits; a byte count whole): empty when the point has no such value
// (an indivisible layout or one over max_gpus / max_nodes is not evaluated; a job that cannot make progress has
// no run time or cost) or it is
// not finite (the model never produces one; no "inf" in a CSV).
std::string cell(double v, bool has_value = true, bool whole = false) {
  if (!has_value || !std::isfinite(v)) return "";
  char buf[40];
  if (whole) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// A CSV text cell (RFC 4180): quoted, its own quotes doubled, so that a grid value with a quote or comma in it
// reads back as written.
std::string quoted_cell(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

void write_csv(const std::string& path, const std::vector<SweepPoint>& points, const std::vector<SweepBase>& bases,
               const std::vector<FastAxis>& axes) {
  write_output_file(path, [&](std::ostream& out) {
    out << "index,status,tp,pp,dp,cp,ep,vpp,schedule,zero,dp_shard,recompute,recompute_every,micro_batch,gpus,nodes,"
           "memory_bytes,step_seconds,"
           "mfu,tokens_per_second_per_gpu,run_seconds,cost_usd,energy_kwh,other\n";
    for (const auto& p : points) {
      const bool evaluated = p.evaluated;
      const bool runs = evaluated && p.finishes;  // out of memory and not finishing alike
      out << p.index << "," << to_string(p.status) << "," << p.tp << "," << p.pp << "," << p.dp << "," << p.cp << ","
          << p.ep << "," << p.vpp << "," << to_string(p.schedule) << "," << p.zero << "," << sharding_group(p.dp_shard, p.dp)
          << "," << to_string(p.recompute) << "," << p.recompute_every << "," << p.micro_batch << "," << p.gpus << "," << p.nodes << ","
          << cell(p.memory, evaluated, true) << "," << cell(p.step, evaluated) << "," << cell(p.mfu, evaluated) << ","
          << cell(p.tokens_per_gpu, evaluated) << "," << cell(p.run_seconds, runs) << "," << cell(p.cost, runs) << ","
          << cell(p.energy_kwh, runs) << "," << quoted_cell(extra_label(p, bases, axes)) << "\n";
    }
  }, "the CSV file");
}

// The points the CSV holds: every point with --csv-all (or json_all), else the best ones and both
// Pareto fronts, once each, in grid order.
std::vector<SweepPoint> csv_points(const SweepResult& r, bool keep_all) {
  std::vector<SweepPoint> kept = keep_all ? r.all : r.top;
  if (!keep_all) {
    for (const auto& p : r.pareto_cost) kept.push_back(p);
    for (const auto& p : r.pareto_gpus) kept.push_back(p);
    std::sort(kept.begin(), kept.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.index < b.index; });
    kept.erase(std::unique(kept.begin(), kept.end(),
                           [](const SweepPoint& a, const SweepPoint& b) { return a.index == b.index; }),
               kept.end());
  }
  return kept;
}

// --simulate-top: the best layouts re-scored with the event simulator (the run scales with the simulated step),
// re-ranked, each with its analytic step.
struct Rescored {
  std::vector<SweepPoint> points;
  std::vector<double> analytic_step;
  std::vector<std::string> not_simulated;  // why a layout was not simulated (over --max-tasks ...), else empty
};

// --format json: counts, rejections, the best points, both Pareto fronts and the nearest misses (and, with
// --simulate-top, the re-scored layouts).
void print_sweep_json(const SweepResult& r, Objective objective, const std::vector<SweepBase>& bases,
                      const std::vector<FastAxis>& fast, const Rescored* rescored) {
  nlohmann::json j;
  j["objective"] = to_string(objective);
  j["points"] = {{"total", r.total}, {"feasible", r.feasible}, {"out_of_memory", r.out_of_memory},
                 {"indivisible", r.indivisible}, {"constraint", r.constrained}, {"no_progress", r.no_progress}};
  j["seconds"] = r.seconds;
  j["rejections"] = nlohmann::json::object();
  for (const auto& [k, v] : r.reasons) j["rejections"][k] = v;
  for (auto [name, list] : {std::pair{"top", &r.top}, std::pair{"pareto_time_cost", &r.pareto_cost},
                            std::pair{"pareto_time_gpus", &r.pareto_gpus}, std::pair{"nearest_misses", &r.nearest_misses}}) {
    j[name] = nlohmann::json::array();
    for (const auto& p : *list) j[name].push_back(point_json(p, bases, fast));
  }
  if (rescored != nullptr) {
    j["simulated_top"] = nlohmann::json::array();
    for (size_t i = 0; i < rescored->points.size(); ++i) {
      nlohmann::json p = point_json(rescored->points[i], bases, fast);
      p["analytic_step_seconds"] = rescored->analytic_step[i];
      p["simulated"] = rescored->not_simulated[i].empty();
      if (!rescored->not_simulated[i].empty()) p["not_simulated"] = rescored->not_simulated[i];
      j["simulated_top"].push_back(p);
    }
  }
  print_json(std::cout, j);
}

// The table format: a summary line, the counts, the point tables, rejections and nearest misses.
void print_sweep_table(const SweepResult& r, const SweepSpec& spec, const std::vector<SweepBase>& bases,
                       const std::vector<FastAxis>& fast) {
  std::printf("Sweep of %s: %s points in %.2f s (%s points/s), objective %s\n", spec.label().c_str(),
              format_count(static_cast<double>(r.total)).c_str(), r.seconds,
              format_count(r.total / std::max(r.seconds, 1e-9)).c_str(), to_string(spec.objective));
  std::printf("  feasible %llu, out of memory %llu, indivisible %llu, rejected by constraints %llu",
              static_cast<unsigned long long>(r.feasible), static_cast<unsigned long long>(r.out_of_memory),
              static_cast<unsigned long long>(r.indivisible), static_cast<unsigned long long>(r.constrained));
  if (r.no_progress > 0) {
    std::printf(", cannot make progress under failures %llu", static_cast<unsigned long long>(r.no_progress));
  }
  std::printf("\n");
  if (!r.top.empty()) print_points("Best layouts", r.top, bases, fast);
  if (!r.pareto_cost.empty()) print_points("Pareto front: run time vs cost", r.pareto_cost, bases, fast);
  if (!r.pareto_gpus.empty()) print_points("Pareto front: run time vs GPUs", r.pareto_gpus, bases, fast);
  if (!r.reasons.empty()) {
    std::printf("\nRejected (by reason)\n");
    for (const auto& [k, v] : r.reasons) std::printf("  %10llu  %s\n", static_cast<unsigned long long>(v), k.c_str());
  }
  if (!r.nearest_misses.empty()) {
    std::printf("\nNearest misses (out of memory, closest to fitting)\n");
    for (const auto& p : r.nearest_misses) {
      const std::string other = extra_label(p, bases, fast);  // empty for a plain grid: no trailing spaces
      // The shortfall too: two sizes that round alike ("80.00 GiB of 80.00 GiB") say nothing.
      std::printf("  %-46s needs %s of %s (%s short)%s\n", layout_label(p).c_str(), format_bytes(p.memory).c_str(),
                  format_bytes(p.capacity).c_str(), format_bytes(p.memory - p.capacity).c_str(),
                  other.empty() ? "" : ("  " + other).c_str());
    }
  }
}

// Scales point `p` to the simulated step time: the run, its cost and energy scale with the step;
// MFU and tokens per GPU inversely. The objective is recomputed from the scaled values.
void rescale_to_simulated_step(SweepPoint& p, double simulated_step, Objective objective) {
  const double k = simulated_step / p.step;
  p.step = simulated_step;
  p.run_seconds *= k;
  p.cost *= k;
  p.energy_kwh *= k;
  p.mfu /= k;
  p.tokens_per_gpu /= k;
  p.objective = objective == Objective::tokens_per_gpu ? -p.tokens_per_gpu
                : objective == Objective::mfu          ? -p.mfu
                : objective == Objective::cost         ? p.cost
                : objective == Objective::energy       ? p.energy_kwh
                                                       : p.run_seconds;
}

// Re-scores the best `count` layouts with the event simulator and re-ranks them, showing progress on a
// terminal. A layout the simulator refuses (a step over --max-tasks, the task graph's limits) keeps its
// analytic figures, is marked with the reason and ranked after the simulated ones: the rest still print.
Rescored rescore_with_simulator(const SweepResult& r, int count, Objective objective, const std::vector<SweepBase>& bases,
                                const std::vector<FastAxis>& fast, bool tty) {
  std::vector<SweepPoint> points(r.top.begin(), r.top.begin() + std::min<size_t>(r.top.size(), count));
  std::vector<double> analytic;
  std::vector<std::string> refused;
  for (size_t i = 0; i < points.size(); ++i) {
    SweepPoint& p = points[i];
    if (tty) std::fprintf(stderr, "\r  simulating layout %zu of %zu ", i + 1, points.size());
    const SweepBase& base = bases[static_cast<size_t>(p.block)];
    Scenario s = point_scenario(base, fast, p);
    const Plan plan = make_plan(s, base.profile);
    analytic.push_back(p.step);
    try {
      const SimResult sim = simulate_step(s, plan, SimOptions{});
      rescale_to_simulated_step(p, sim.step_seconds.value, objective);
      refused.emplace_back();
    } catch (const InputError& e) {
      refused.push_back(e.message());
    }
  }
  if (tty && !points.empty()) std::fprintf(stderr, "\n");
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (refused[a].empty() != refused[b].empty()) return refused[a].empty();
    return points[a].objective < points[b].objective;
  });
  Rescored out;
  for (size_t i : order) {
    out.points.push_back(points[i]);
    out.analytic_step.push_back(analytic[i]);
    out.not_simulated.push_back(refused[i]);
  }
  return out;
}

void print_rescored_table(const Rescored& r) {
  std::printf("\nRe-scored with the step simulator (best %zu)\n", r.points.size());
  std::printf("  %4s  %-46s %14s %14s %8s\n", "#", "layout", "analytic [s]", "simulated [s]", "diff");
  for (size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    if (!r.not_simulated[i].empty()) {
      const std::string& why = r.not_simulated[i];  // its first clause; the JSON has the whole message
      std::printf("  %4zu  %-46s %14s %14s  not simulated: %s\n", i + 1, layout_label(p).c_str(),
                  format_fixed(r.analytic_step[i], 3).c_str(), "-", why.substr(0, why.find(" (")).c_str());
      continue;
    }
    const double diff = 100.0 * (p.step / r.analytic_step[i] - 1.0);
    std::printf("  %4zu  %-46s %14s %14s %7.1f%%\n", i + 1, layout_label(p).c_str(), format_fixed(r.analytic_step[i], 3).c_str(),
                format_fixed(p.step, 3).c_str(), std::fabs(diff) < 0.05 ? 0.0 : diff);  // no "-0.0%"
  }
}

}  // namespace

int run_sweep_command(const SweepCommandOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  SweepSetup setup = prepare_sweep(o.input, o.sets, o.grids, terminal_progress("scenarios"));
  const double setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  SweepSpec& spec = setup.spec;
  if (!o.csv.empty()) check_output_target(o.csv, "the CSV file");
  if (!o.objective.empty()) spec.objective = parse_objective(o.objective, {"--objective", 0, 0}, "objective");
  if (o.top > 0) spec.top = o.top;
  const std::vector<FastAxis>& fast = setup.fast;
  const std::vector<SweepBase>& bases = setup.bases;

  SweepOptions options;
  options.threads = o.threads;
  options.keep_all = o.csv_all || o.format == "json_all";
  options.progress = terminal_progress("points");
  // --simulate-top N re-scores the best N even when --top shows fewer: the sweep keeps the larger count, and
  // the analytic tables show --top (N was capped at --top before 2026-12-01).
  const int kept = std::max(spec.top, o.simulate_top);
  SweepResult r = run_sweep(bases, fast, spec.parallel_auto, spec.objective, spec.constraints, kept, options);
  r.seconds += setup_seconds;  // the wall time includes making the base scenarios (a model axis: seconds)
  // Nearest misses are layouts short of memory; an infeasible point that fits (its job cannot make
  // progress under failures, or host memory) is no near miss of memory.
  std::erase_if(r.nearest_misses, [](const SweepPoint& p) { return p.memory <= p.capacity; });

  std::optional<Rescored> rescored;
  if (o.simulate_top > 0 && !r.top.empty()) rescored = rescore_with_simulator(r, o.simulate_top, spec.objective, bases, fast, isatty(STDERR_FILENO) != 0);
  if (r.top.size() > static_cast<std::size_t>(spec.top)) r.top.resize(static_cast<std::size_t>(spec.top));
  // Once all the work is done: a run that fails leaves no file behind.
  if (!o.csv.empty()) write_csv(o.csv, csv_points(r, options.keep_all), bases, fast);
  if (o.format == "json") {
    print_sweep_json(r, spec.objective, bases, fast, rescored ? &*rescored : nullptr);
  } else {
    print_sweep_table(r, spec, bases, fast);
    if (rescored) print_rescored_table(*rescored);
  }
  if (r.feasible == 0) {
    std::cerr << "error: no feasible point among " << r.total << " (" << r.out_of_memory << " out of memory, "
              << r.indivisible << " indivisible, " << r.constrained << " rejected by constraints, " << r.no_progress
              << " cannot make progress under failures)\n";
    return 2;
  }
  return 0;
}

}  // namespace tp
