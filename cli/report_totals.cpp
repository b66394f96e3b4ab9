// Report section 6: the whole run as numbers with units (planner/run_totals.h).
#include <string>

#include "format_units.h"
#include "report_sections.h"
#include "svg.h"

namespace tp {
namespace {

std::string row(const std::string& what, const std::string& value_html, const std::string& note) {
  return "<tr><th>" + what + "</th><td>" + value_html + "</td><td class=\"note\">" + note + "</td></tr>";
}

std::string duration_text(double seconds) {
  const double days = seconds / 86400.0;
  if (days >= 1) return format_fixed(days, 2) + " days";
  if (seconds < 3600) return format_seconds(seconds);
  return format_fixed(seconds / 3600.0, 2) + " h";
}

std::string usd(double v) { return format_amount(v, 0) + " USD"; }

// kWh below 1 MWh, else MWh; kg below 1 t, else t.
std::string energy_text(double kwh) {
  return kwh < 1000 ? format_amount(kwh, 1) + " kWh" : format_fixed(kwh / 1000.0, 1) + " MWh";
}
std::string mass_text(double kg) { return kg < 1000 ? format_amount(kg, 1) + " kg" : format_fixed(kg / 1000.0, 1) + " t"; }

// The rows a run that never finishes has (JSON: no time, cost or energy with failures, docs/json-output.md):
// what the same steps would take without failures, and why it never ends.
std::string rows_without_progress(const Scenario& s, const RunTotals& r) {
  const FailureModel& f = r.failures;
  std::string h = row("wall time", "never finishes",
                      "a failure every " + format_seconds(f.job_mtbf.value) + " (job MTBF), each losing " +
                          format_seconds(f.lost_per_failure.value) + " of work and restart");
  h += row("wall time without failures",
           json_number("run.seconds_without_failures", r.seconds.value, duration_text(r.seconds.value)),
           std::to_string(s.gpus()) + " GPUs on " + std::to_string(s.cluster.nodes) + " nodes");
  h += row("cost without failures",
           json_number("run.cost_usd_without_failures", r.cost_without_failures.value, usd(r.cost_without_failures.value)),
           "at " + format_fixed(s.costs.gpu_hour.value, 2) + " USD per GPU-hour");
  return h;
}

// The rows of a run that finishes: time, GPU-hours, cost (on-demand and spot), energy and CO2.
std::string rows_with_progress(const Scenario& s, const RunTotals& r) {
  std::string h = row("wall time", json_number("run.seconds", r.seconds_with_failures.value, duration_text(r.seconds_with_failures.value)),
                      "with failures, checkpoints and restarts; " + duration_text(r.seconds.value) + " without");
  h += row("GPU time", json_number("run.gpu_hours", r.gpu_hours, format_amount(r.gpu_hours, 0) + " GPU-hours"),
           std::to_string(s.gpus()) + " GPUs on " + std::to_string(s.cluster.nodes) + " nodes");
  h += row("cost, on-demand", json_number("run.cost_usd", r.cost.value, usd(r.cost.value)),
           "at " + format_fixed(s.costs.gpu_hour.value, 2) + " USD per GPU-hour");
  if (r.spot_cost.value > 0) {
    h += row("cost, spot", json_number("run.spot_cost_usd", r.spot_cost.value, usd(r.spot_cost.value)),
             "with " + format_fixed(r.expected_preemptions, 0) + " expected preemptions");
  } else {
    h += row("cost, spot", json_number("run.spot_cost_usd", 0, "no spot price given"), "set costs.spot_gpu_hour");
  }
  h += row("energy", json_number("run.energy_kwh", r.energy_kwh, energy_text(r.energy_kwh)),
           "facility energy (PUE " + format_fixed(s.costs.pue, 2) + "); electricity " +
               format_amount(r.energy_cost_usd, 0) + " USD");
  h += row("CO<sub>2</sub>", json_number("run.co2_kg", r.co2_kg, mass_text(r.co2_kg)),
           "at the grid's carbon intensity");
  return h;
}

}  // namespace

std::string totals_section(const Scenario& s, const Plan& p) {
  const RunTotals& r = p.run;
  const FailureModel& f = r.failures;
  std::string h = "<section id=\"totals\"><h2>6. Run totals</h2><table class=\"totals\">";
  h += "<tr><th>quantity</th><th>value</th><th>how</th></tr>";
  h += row("tokens", svg::escape(format_count(s.training.tokens)) + " tokens",
           format_count(p.estimate.tokens_per_step) + " tokens per step");
  h += row("steps", json_number("run.steps", r.steps, format_fixed(r.steps, 0)), "optimizer steps");
  const bool progress = f.regime == Regime::ok;
  h += progress ? rows_with_progress(s, r) : rows_without_progress(s, r);
  const bool unchecked = progress && !f.checkpointed;
  const std::string checkpoints = unchecked ? "no checkpoint: the run is better restarted from its start"
                                            : "checkpoint every " + duration_text(f.checkpoint_interval.value);
  h += row("goodput", json_number("run.goodput", f.goodput, svg::num(100 * f.goodput, 1) + " %"),
           progress ? format_fixed(f.expected_failures, 1) + " expected failures; " + checkpoints : checkpoints);
  return h + "</table></section>";
}

}  // namespace tp
