// Run-level totals: wall time, GPU-hours, dollars (on-demand and spot with preemptions), energy,
// CO2, and the cost of hardware failures (checkpointing, lost work, restarts, goodput).
// Pure functions, no I/O. Every quantity is in base SI units (units.h) unless its name says
// otherwise (gpu_hours, energy_kwh, co2_kg).
//
// Model (all first order, documented here and in run_totals.cpp):
//  * Failures: independent exponential GPU failures, so the job (any GPU fails -> whole job
//    restarts) has MTBF M = gpu_mtbf / gpus.
//  * Checkpoints: writing takes w = checkpoint_bytes / checkpoint_bandwidth; the interval between
//    checkpoints is Young's optimum tau = sqrt(2 w M) (Young 1974; Daly 2006 to first order),
//    never shorter than w.
//  * Each failure costs tau/2 + w of lost work (on average half an interval of progress since the
//    last checkpoint, plus the checkpoint write that was in progress or has to be redone; this is
//    slightly more pessimistic than Daly's (tau + w)/2) plus the restart time R.
//  * The total time T is the fixed point of
//        T = T0 * (1 + w/tau) + (T / M) * (tau/2 + w + R)
//    i.e. T = T0 (1 + w/tau) / (1 - (tau/2 + w + R)/M), where T0 is the failure-free wall time.
//    Checkpoints are written between optimizer steps, so tau is at least one step time (when w > 0).
//    The run without checkpoints, restarted from its start after each failure, takes
//        T1 = M e^(R/M) (e^(T0/M) - 1)     (Daly 2006, complete model, one segment, no checkpoint)
//    exactly; the model takes T1 where it is shorter than T (a job shorter than Young's interval) or T has
//    no solution, and then reports no checkpoint (checkpoint_interval 0).
//    When (tau/2 + w + R) >= M and T1 > 100 T0 the job cannot make progress (a failure comes before the
//    work lost to the previous one is redone, e.g. a step longer than the MTBF): the regime is no_progress,
//    the totals with failures are 0 (not a number of days: there is none) and goodput is 0.
//  * Spot: preemptions arrive at costs.preemptions_per_day for the whole job, beside the failures: one
//    stream of interruptions at rate 1/M + r. A job on spot checkpoints at Young's interval for that stream,
//    tau_s = sqrt(2 w / (1/M + r)) (at least w and a step), and each interruption loses
//    t_lost = tau_s/2 + w + R; T_spot = T0 (1 + w/tau_s) / (1 - (1/M + r) t_lost), billed at spot_gpu_hour
//    (with w = 0 and no failures: T0 / (1 - r R), seed ex. 26.21's fixed point). When (1/M + r) t_lost >= 1
//    the job cannot make progress on spot: spot_regime is no_progress, spot totals 0.
// No field of RunTotals or FailureModel is ever infinite or NaN.
#pragma once

#include "specs.h"
#include "units.h"

namespace tp {

struct RunInputs {
  double tokens = 0;            // tokens to train
  double tokens_per_step = 0;
  Seconds step_time;            // failure-free time of one optimizer step
  int gpus = 0;
  int nodes = 0;
  Watts gpu_power_busy;         // average power of one GPU while training (from the power model)
  Watts host_power_per_node;    // node power excluding GPUs (costs.host_power_per_node overrides when > 0)
  Bytes checkpoint_bytes;       // whole checkpoint (all ranks): weights + master + optimizer states
  CostSpec costs;               // prices, PUE, carbon, failures (model/specs.h)
};

// Whether the job finishes at all under failures (or preemptions).
enum class Regime { ok, no_progress };
const char* to_string(Regime r);  // "ok" | "no_progress"

struct FailureModel {
  Regime regime = Regime::ok;
  Seconds job_mtbf;             // gpu_mtbf / gpus (independent exponential failures); 0 when disabled
  Seconds checkpoint_write;     // checkpoint_bytes / checkpoint_bandwidth (0 when either is <= 0)
  Seconds checkpoint_interval;  // Young/Daly optimum sqrt(2 * write * mtbf), at least write and one step; 0: none taken
  double expected_failures = 0; // over the run (total time with failures / job_mtbf)
  Seconds lost_work;            // expected recomputation: failures * (interval/2 + write)
  Seconds restart_time;         // failures * restart
  Seconds checkpoint_overhead;  // (failure-free run / interval) * write
  double goodput = 1.0;         // useful (failure-free) time / total time; 0 with no_progress
  Seconds lost_per_failure;     // interval/2 + write + restart: what each failure costs
  bool checkpointed = true;     // false: the run is better restarted from its start (no checkpoint, interval 0)
};
// With no_progress, make_plan() adds a Violation of kind no_progress (planner/estimate.h) that says so.

struct RunTotals {
  double steps = 0;             // ceil(tokens / tokens_per_step)
  Seconds seconds;              // failure-free wall time: steps * step_time
  Seconds seconds_with_failures;
  double gpu_hours = 0;         // with failures
  double gpu_hours_without_failures = 0;
  Usd cost;                     // on-demand, with failures: gpu_hours * gpu_hour
  Usd cost_without_failures;
  Usd spot_cost;                // 0 when no spot price; with failures and preemptions (see Spot above)
  Seconds spot_seconds;         // wall time on spot (with failures and preemptions); 0 when no spot price
  Regime spot_regime = Regime::ok;  // no_progress: preemptions come faster than the work they lose is redone
  Seconds lost_per_preemption;  // spot_checkpoint_interval/2 + checkpoint write + restart
  Seconds spot_checkpoint_interval;  // Young's interval for failures and preemptions together; 0 when no spot price
  double expected_preemptions = 0;  // over spot_seconds; 0 when no spot price
  Watts host_power_per_node;    // the value used (costs override or RunInputs)
  Watts facility_power;         // (gpus * gpu_power_busy + nodes * host_power) * PUE
  double energy_kwh = 0;        // (gpus * gpu_power_busy + nodes * host_power) * time * PUE, time with failures
  double energy_kwh_without_failures = 0;
  double energy_cost_usd = 0;   // kWh * electricity
  double co2_kg = 0;            // kWh * carbon
  FailureModel failures;
};

RunTotals run_totals(const RunInputs& in);

// The failure/checkpoint model alone for a failure-free wall time t0 on `gpus` GPUs.
// `step`: one optimizer step; checkpoints fall between steps, so the interval is at least one step.
FailureModel failure_model(Seconds t0, int gpus, Bytes checkpoint_bytes, const FailureSpec& f,
                           Seconds step = Seconds(0));

// Price of renting `gpus` GPUs for `wall`: gpus * wall[h] * gpu_hour.
Usd rental_cost(int gpus, Seconds wall, Usd gpu_hour);

// Facility energy in kWh: (gpus * gpu_power + nodes * host_power) * wall * pue.
double facility_energy_kwh(int gpus, Watts gpu_power, int nodes, Watts host_power, Seconds wall, double pue);

// Break-even number of preemptions where spot stops being cheaper (seed ex. 26.20):
// n* = T_wall (p_od - p_spot) / (t_lost p_spot). Independent of the GPU count. +inf when spot is
// free or nothing is lost per preemption; <= 0 when spot is not cheaper to begin with.
double spot_break_even_preemptions(Seconds wall, Usd on_demand_hour, Usd spot_hour, Seconds lost_per_preemption);

}  // namespace tp
