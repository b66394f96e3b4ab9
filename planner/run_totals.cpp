// Run-level totals. The model and its formulas are documented in run_totals.h.
#include "run_totals.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSecondsPerDay = 86400.0;

}  // namespace

Usd rental_cost(int gpus, Seconds wall, Usd gpu_hour) {
  return Usd(static_cast<double>(gpus) * (wall.value / kHour) * gpu_hour.value);
}

double facility_energy_kwh(int gpus, Watts gpu_power, int nodes, Watts host_power, Seconds wall, double pue) {
  const double it_watts = static_cast<double>(gpus) * gpu_power.value + static_cast<double>(nodes) * host_power.value;
  return it_watts * wall.value * pue / kJoulesPerKwh;
}

double spot_break_even_preemptions(Seconds wall, Usd on_demand_hour, Usd spot_hour, Seconds lost_per_preemption) {
  // Saving of spot over on-demand: N * T * (p_od - p_spot); cost of one preemption: N * t_lost * p_spot.
  const double lost_cost = lost_per_preemption.value * spot_hour.value;
  const double saving = wall.value * (on_demand_hour.value - spot_hour.value);
  if (lost_cost <= 0.0) return saving > 0.0 ? kInf : 0.0;
  return saving / lost_cost;
}

const char* to_string(Regime r) { return r == Regime::ok ? "ok" : "no_progress"; }

namespace {

// The least goodput counted as finishing: a run expected to take over 100 times its failure-free time is
// reported as not finishing (no_progress), not as years of restarts.
constexpr double kLeastGoodput = 0.01;

// The job run through without a checkpoint, restarted from the beginning after each failure. With exponential
// failures at rate 1/M and failures during the restart too, a run of t0 takes M e^(R/M) (e^(t0/M) - 1) on
// average (Daly 2006, "A higher order estimate of the optimum checkpoint interval", the complete model's wall
// time with one segment of t0 and no checkpoint), over e^(t0/M) - 1 failures. Exact, not first order: a job
// shorter than Young's interval is best run so, and it may finish where the checkpointed model's first-order
// loss per failure reaches the MTBF.
FailureModel without_checkpoints(FailureModel m, double t0, double mtbf, double restart) {
  const double failures = std::expm1(t0 / mtbf);
  const double total = mtbf * std::exp(restart / mtbf) * failures;
  if (!std::isfinite(total) || t0 < kLeastGoodput * total) {
    m.regime = Regime::no_progress;
    return m;
  }
  m.regime = Regime::ok;
  m.checkpointed = false;
  m.checkpoint_interval = Seconds(0.0);
  m.checkpoint_overhead = Seconds(0.0);
  m.expected_failures = failures;
  m.restart_time = Seconds(failures * restart);
  m.lost_work = Seconds(std::max(0.0, total - t0 - failures * restart));
  m.lost_per_failure = Seconds(failures > 0.0 ? (total - t0) / failures : restart);
  m.goodput = t0 / std::max(total, t0);
  return m;
}

// The failure-free time plus what failures add.
double with_failures(const FailureModel& m, double t0) {
  return t0 + m.checkpoint_overhead.value + m.lost_work.value + m.restart_time.value;
}

}  // namespace

FailureModel failure_model(Seconds t0, int gpus, Bytes checkpoint_bytes, const FailureSpec& f, Seconds step) {
  FailureModel m;
  // Independent exponential failures: the minimum of `gpus` exponentials has rate gpus / gpu_mtbf.
  // A non-positive gpu_mtbf or GPU count disables the failure model (job_mtbf reported as 0).
  const bool failures = f.gpu_mtbf.value > 0.0 && gpus > 0;
  const double mtbf = failures ? f.gpu_mtbf.value / static_cast<double>(gpus) : kInf;
  m.job_mtbf = Seconds(failures ? mtbf : 0.0);

  // A non-positive size or bandwidth means checkpoints are free (w = 0, the limit of continuous checkpointing).
  m.checkpoint_write = (checkpoint_bytes.value > 0.0 && f.checkpoint_bandwidth.value > 0.0)
                           ? checkpoint_bytes / f.checkpoint_bandwidth
                           : Seconds(0.0);
  const double w = m.checkpoint_write.value;

  // Young's optimum tau = sqrt(2 w M), capped to >= w (Daly's first-order form for w << M), and to at
  // least one step: a checkpoint can only be written between optimizer steps. (w = 0 is the limit of
  // continuous, free checkpointing: no interval, nothing lost but the restart.)
  double tau = 0.0;
  if (w > 0.0 && failures) tau = std::max({std::sqrt(2.0 * w * mtbf), w, step.value});
  m.checkpoint_interval = Seconds(tau);

  if (t0.value <= 0.0) return m;  // nothing to run: no failures, goodput 1

  // Checkpoints are written once per tau of useful progress.
  const double overhead = (tau > 0.0 && w > 0.0) ? t0.value / tau * w : 0.0;
  m.checkpoint_overhead = Seconds(overhead);
  if (!failures) {
    m.goodput = t0.value / (t0.value + overhead);
    return m;
  }

  // Per failure: tau/2 of progress lost on average plus the write in progress/redone, then restart.
  const double lost_per_failure = tau / 2.0 + w;
  const double per_failure = lost_per_failure + f.restart.value;
  m.lost_per_failure = Seconds(per_failure);
  const FailureModel unchecked = without_checkpoints(m, t0.value, mtbf, f.restart.value);
  const double denominator = 1.0 - per_failure / mtbf;
  if (denominator <= 0.0) {  // failures come faster than checkpointed work is redone
    if (unchecked.regime == Regime::ok) return unchecked;
    m.regime = Regime::no_progress;
    m.goodput = 0.0;
    return m;
  }
  // Fixed point T = T0 + overhead + (T / M) * per_failure.
  const double total = (t0.value + overhead) / denominator;
  m.expected_failures = total / mtbf;
  m.lost_work = Seconds(m.expected_failures * lost_per_failure);
  m.restart_time = Seconds(m.expected_failures * f.restart.value);
  m.goodput = t0.value / total;
  // A job shorter than the checkpoints pay for runs through without one.
  const bool better_unchecked = unchecked.regime == Regime::ok && with_failures(unchecked, t0.value) < total;
  return better_unchecked ? unchecked : m;
}

namespace {
// Spot (run_totals.h): failures and preemptions are one stream of interruptions, at the rate of both; the
// job checkpoints at Young's interval for that stream, and each interruption loses tau/2 + w + R.
void spot_totals(const RunInputs& in, RunTotals& r) {
  const CostSpec& c = in.costs;
  const double preemption_rate = c.preemptions_per_day / kSecondsPerDay;
  const bool failures = c.failures.gpu_mtbf.value > 0.0 && in.gpus > 0;
  const double failure_rate = failures ? in.gpus / c.failures.gpu_mtbf.value : 0.0;
  FailureSpec interruptions = c.failures;
  if (preemption_rate > 0.0) interruptions.gpu_mtbf = Seconds(in.gpus / (failure_rate + preemption_rate));
  const FailureModel m = failure_model(r.seconds, in.gpus, in.checkpoint_bytes, interruptions, in.step_time);
  r.spot_checkpoint_interval = m.checkpoint_interval;
  r.lost_per_preemption = m.lost_per_failure;
  r.spot_regime = m.regime;
  r.spot_seconds = m.regime == Regime::ok ? r.seconds + m.checkpoint_overhead + m.lost_work + m.restart_time : Seconds(0.0);
  r.expected_preemptions = preemption_rate * r.spot_seconds.value;
  r.spot_cost = rental_cost(in.gpus, r.spot_seconds, c.spot_gpu_hour);
}
}  // namespace

RunTotals run_totals(const RunInputs& in) {
  RunTotals r;
  const CostSpec& c = in.costs;
  r.steps = (in.tokens > 0.0 && in.tokens_per_step > 0.0) ? std::ceil(in.tokens / in.tokens_per_step) : 0.0;
  r.seconds = in.step_time * r.steps;

  r.failures = failure_model(r.seconds, in.gpus, in.checkpoint_bytes, c.failures, in.step_time);
  const FailureModel& f = r.failures;
  // No progress: there is no finishing time; the totals with failures stay 0 and the regime says why.
  r.seconds_with_failures = f.regime == Regime::ok
                                ? r.seconds + f.checkpoint_overhead + f.lost_work + f.restart_time
                                : Seconds(0.0);

  r.gpu_hours = static_cast<double>(in.gpus) * r.seconds_with_failures.value / kHour;
  r.gpu_hours_without_failures = static_cast<double>(in.gpus) * r.seconds.value / kHour;
  r.cost = rental_cost(in.gpus, r.seconds_with_failures, c.gpu_hour);
  r.cost_without_failures = rental_cost(in.gpus, r.seconds, c.gpu_hour);

  if (c.spot_gpu_hour.value > 0.0) spot_totals(in, r);

  r.host_power_per_node = c.host_power_per_node.value > 0.0 ? c.host_power_per_node : in.host_power_per_node;
  r.facility_power = Watts((static_cast<double>(in.gpus) * in.gpu_power_busy.value +
                            static_cast<double>(in.nodes) * r.host_power_per_node.value) *
                           c.pue);
  r.energy_kwh = facility_energy_kwh(in.gpus, in.gpu_power_busy, in.nodes, r.host_power_per_node,
                                     r.seconds_with_failures, c.pue);
  r.energy_kwh_without_failures =
      facility_energy_kwh(in.gpus, in.gpu_power_busy, in.nodes, r.host_power_per_node, r.seconds, c.pue);
  // CostSpec prices are per joule (base SI).
  r.energy_cost_usd = r.energy_kwh * kJoulesPerKwh * c.electricity_usd_per_j;
  r.co2_kg = r.energy_kwh * kJoulesPerKwh * c.carbon_kg_per_j;
  return r;
}

}  // namespace tp
