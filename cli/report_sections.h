// The sections of `trainplan report` (docs/report.md): each returns an HTML <section> with its
// charts as inline SVG. They read the same Plan (Estimate, StepTime, RunTotals) that
// `evaluate --format json` prints, so the page and the JSON can never disagree.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hardware_profile.h"
#include "plan.h"
#include "specs.h"
#include "sweep.h"

namespace tp {

// Memory per pipeline stage against the capacity; the shortfall and the fixes when infeasible.
std::string memory_section(const Scenario& s, const Plan& p);
// Step time waterfall with MFU, HFU, tokens/s.
std::string step_section(const Scenario& s, const Plan& p);
// One simulated step: a lane per stage (compute stream and link), tasks coloured by kind.
std::string timeline_section(const Scenario& s, const Plan& p);
// Run totals as numbers with units.
std::string totals_section(const Scenario& s, const Plan& p);

// What the sweep section draws: every evaluated point, the fronts and the best.
struct SweepReport {
  std::string source;     // the sweep file or "--grid ..."
  std::string objective;  // "cost", "time", ...
  SweepResult result;     // with `all` filled
  std::vector<std::string> all_labels;  // layout of result.all[i], for hover titles
  std::vector<std::string> top_labels;  // layout of result.top[i]
  std::vector<std::string> pareto_labels;
  // Why a (tp, pp) cell of the feasibility map has no evaluated point: the first problem of one of
  // its layouts ("parallel.tp vs model.heads: ...").
  std::map<std::pair<int, int>, std::string> impossible_reasons;
};
std::string sweep_section(const SweepReport& r);

// Calibration (cli/calibration_view.h): measured vs fitted GEMM efficiency, residuals, attention,
// memory bandwidth per kernel class, fit quality.
struct CalibrationView;
std::string calibration_section(const CalibrationView& v);

// The whole page: a header naming the scenario, the profile and the trainplan version, a table of
// contents and the sections, with the page's style sheet inline (no external resource at all).
struct PageHeader {
  std::string title;       // the scenario's name
  std::string source;      // scenario file ("built-in default", "best layout of sweep.yaml")
  std::string profile;     // hardware profile name
  std::string version;     // "0.1.0"
  std::string facts_html;  // model, GPUs, layout ... (already escaped)
};
std::string report_page(const PageHeader& header, const std::vector<std::pair<std::string, std::string>>& toc,
                        const std::string& sections_html);

// A key number of the page with its JSON path in `evaluate --format json` and its exact value, so
// tests (and readers) can match them: <span data-json="time.step_seconds" data-value="...">text</span>.
std::string json_number(const std::string& json_path, double value, const std::string& text);

}  // namespace tp
