// `trainplan report`: evaluates the scenario (and the sweep, and fits the measurements), draws every
// section, and writes the page only when all of it succeeded (temporary file, then rename).
#include "report_cmd.h"

#include <iostream>
#include <memory>
#include <set>

#include "calibration_view.h"
#include "checks.h"
#include "errors.h"
#include "fixes.h"
#include "format_units.h"
#include "hardware_profile.h"
#include "measurements.h"
#include "output_file.h"
#include "plan.h"
#include "progress_bar.h"
#include "report_sections.h"
#include "scenario.h"
#include "svg.h"
#include "sweep_setup.h"

#ifndef TRAINPLAN_VERSION
#define TRAINPLAN_VERSION "unknown"
#endif

namespace tp {
namespace {

// Why the layouts of (tp, pp) cells with no evaluated point are impossible: the first problem of
// one of the cell's layouts.
void impossible_reasons(SweepReport& r, const SweepSetup& setup) {
  std::set<std::pair<int, int>> evaluated;
  for (const SweepPoint& p : r.result.all) {
    if (p.status != PointStatus::indivisible) evaluated.insert({p.tp, p.pp});
  }
  for (const SweepPoint& p : r.result.all) {
    const std::pair<int, int> cell{p.tp, p.pp};
    if (p.status != PointStatus::indivisible || evaluated.count(cell) || r.impossible_reasons.count(cell)) continue;
    Scenario s = point_scenario(setup.bases[static_cast<size_t>(p.block)], setup.fast, p);
    std::vector<Problem> problems = resolve_layout(s);
    if (problems.empty()) problems = check_scenario(s, true);
    r.impossible_reasons[cell] =
        problems.empty() ? "not a valid layout"
                         : problems.front().field +
                               (problems.front().other_field.empty() ? "" : " vs " + problems.front().other_field) + ": " +
                               problems.front().message;
  }
}

struct SweepRun {
  SweepSetup setup;
  SweepReport report;
};

SweepRun run_report_sweep(const ReportOptions& o) {
  const bool file = !o.sweep.empty();
  SweepRun run{prepare_sweep(file ? o.sweep : o.scenario, o.sets, o.grids, terminal_progress("scenarios")), {}};
  const SweepSpec& spec = run.setup.spec;
  SweepOptions options;
  options.keep_all = true;  // the scatter and the feasibility map draw every point
  options.progress = terminal_progress("points");  // a grid may take long (a CLI audit, 2026-12-01: 40 s silent)
  SweepReport& r = run.report;
  r.result = run_sweep(run.setup.bases, run.setup.fast, spec.parallel_auto, spec.objective, spec.constraints, spec.top,
                       options);
  r.objective = to_string(spec.objective);
  if (file) {
    r.source = "Sweep " + o.sweep;
  } else {
    r.source = "Sweep of " + (o.scenario.empty() ? std::string("the built-in scenario") : o.scenario) + " over";
    for (const auto& g : o.grids) r.source += " " + g;
  }
  auto label = [&](const SweepPoint& p) {
    const std::string extra = extra_label(p, run.setup.bases, run.setup.fast);
    return layout_label(p) + (extra.empty() ? "" : " " + extra);
  };
  for (const SweepPoint& p : r.result.all) r.all_labels.push_back(label(p));
  for (const SweepPoint& p : r.result.top) r.top_labels.push_back(label(p));
  for (const SweepPoint& p : r.result.pareto_cost) r.pareto_labels.push_back(label(p));
  impossible_reasons(r, run.setup);
  return run;
}

// The scenario of sections 1-3: the one named, else the sweep's best layout, else the built-in one.
Scenario main_scenario(const ReportOptions& o, const SweepRun* sweep) {
  if (!o.scenario.empty()) return load_scenario_file(o.scenario, o.sets);
  if (sweep && !sweep->report.result.top.empty()) {
    const SweepPoint& best = sweep->report.result.top.front();
    Scenario s = point_scenario(sweep->setup.bases[static_cast<size_t>(best.block)], sweep->setup.fast, best);
    s.source = "best layout (by " + sweep->report.objective + ") of " + (o.sweep.empty() ? "the sweep" : o.sweep);
    return s;
  }
  return default_scenario(o.sets);
}

std::string facts(const Scenario& s, const Plan& p) {
  const ParallelSpec& par = s.parallel;
  auto fact = [](const std::string& k, const std::string& v) {
    return "<span><b>" + svg::escape(k) + "</b> " + svg::escape(v) + "</span>";
  };
  std::string layout = "tp " + std::to_string(par.tp) + " · pp " + std::to_string(par.pp) + " · dp " +
                       std::to_string(par.dp) + " · cp " + std::to_string(par.cp) + " · ep " + std::to_string(par.ep) +
                       (par.vpp > 1 ? " · vpp " + std::to_string(par.vpp) : "") + ", " + to_string(par.schedule) +
                       ", " + zero_label(par) + ", recompute " + to_string(par.recompute.mode);
  return fact("model", s.model.key + " (" + format_count(p.estimate.parameters_total) + " parameters)") +
         fact("GPUs", std::to_string(s.gpus()) + " × " + (s.cluster.gpu.key.empty() ? s.cluster.gpu.name : s.cluster.gpu.key) +
                          " (" + std::to_string(s.cluster.nodes) + " nodes)") +
         fact("layout", layout) +
         fact("batch", std::to_string(s.training.global_batch) + " sequences × " +
                           std::to_string(s.training.sequence_length) + " tokens, micro-batch " +
                           std::to_string(s.training.micro_batch)) +
         fact("precision", to_string(s.training.precision));
}

}  // namespace

int run_report(const ReportOptions& o) {
  if (o.output.empty()) throw InputError({"command line", 0, 0}, "-o", "give the HTML file to write: -o report.html");
  check_output_target(o.output, "the report");
  std::unique_ptr<SweepRun> sweep;
  if (!o.sweep.empty() || !o.grids.empty()) sweep = std::make_unique<SweepRun>(run_report_sweep(o));
  if (sweep && o.scenario.empty() && sweep->report.result.top.empty()) {
    // No best layout to draw, and the built-in scenario is not the one the sweep was about: as `sweep`, exit 2.
    const SweepResult& r = sweep->report.result;
    std::cerr << "error: no feasible point among " << r.total << " (" << r.out_of_memory << " out of memory, "
              << r.indivisible << " indivisible, " << r.constrained << " rejected by constraints); nothing written: "
              << "name a SCENARIO to report it beside the sweep\n";
    return 2;
  }

  Scenario s = main_scenario(o, sweep.get());
  if (!o.profile.empty()) s.profile = o.profile;
  const HardwareProfile hw = profile_for(s);
  Plan p = make_plan(s, hw);
  attach_fixes(s, p.estimate);

  std::vector<std::pair<std::string, std::string>> toc = {
      {"memory", "Memory"}, {"step", "Step time"}, {"timeline", "Timeline"}};
  std::string body = memory_section(s, p) + step_section(s, p) + timeline_section(s, p);
  if (sweep) {
    toc.push_back({"sweep", "Sweep"});
    body += sweep_section(sweep->report);
  }
  if (!o.measurements.empty()) {
    toc.push_back({"calibration", "Calibration"});
    body += calibration_section(calibration_view(o.measurements, s.cluster));
  }
  toc.push_back({"totals", "Run totals"});
  body += totals_section(s, p);

  PageHeader header;
  header.title = s.name.empty() ? "trainplan report" : s.name;
  header.source = s.source;
  header.profile = hw.name;
  header.version = TRAINPLAN_VERSION;
  header.facts_html = facts(s, p);
  const std::string page = report_page(header, toc, body);
  write_output_file(o.output, [&](std::ostream& out) { out << page; }, "the report");
  std::string sections;
  for (const auto& [id, name] : toc) sections += (sections.empty() ? "" : ", ") + name;
  std::cout << "wrote " << o.output << " (" << format_fixed(static_cast<double>(page.size()) / 1000.0, 0)
            << " kB): " << sections << "\n";
  return 0;
}

}  // namespace tp
