// Run-level totals: time, GPU-hours, on-demand and spot dollars, energy, CO2, failures and goodput.
// Oracles (numbers with their rounding as printed there):
//  * ../shared/reference/formulas-seed004-003-000-002.md §2.4, Ex. 26.20 (cost table, break-even
//    preemptions), Ex. 26.21 (on-demand vs spot with the fixed point T = T0/(1 - r t_lost), the case without a checkpoint
//    of run_totals' spot model) and
//    Ex. 26.22(c) (checkpoint write times);
//  * ../shared/reference/formulas-seed001.md §2.1, WE-06 (Napkin Math 1.5, rental) and WE-08
//    (Napkin Math 1.11, energy and carbon);
//  * Young/Daly: J. W. Young, "A first order approximation to the optimum checkpoint interval",
//    CACM 17(9), 1974 (tau = sqrt(2 w M)); J. T. Daly, FGCS 22(3), 2006 (same to first order).
// Tolerances are half a unit of the oracle's last printed digit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "run_totals.h"
#include "units.h"

namespace tp {
namespace {

constexpr double kA100Peak = 312e12;  // FLOP/s, dense bf16 (seed 003's A100 number, Ex. 26.20 assumptions)
constexpr double kDay = 86400.0;

// Wall time of a run of `flops` on n GPUs at a given MFU: t = C / (N * peak * MFU) (seed 001 F4).
Seconds wall_time(double flops, int gpus, double peak, double mfu) {
  return Seconds(flops / (static_cast<double>(gpus) * peak * mfu));
}

// Inputs with failures switched off in effect (an astronomically long GPU MTBF) and no checkpoint.
RunInputs failure_free_inputs(int gpus, Seconds wall) {
  RunInputs in;
  in.tokens = 1e12;
  in.tokens_per_step = 1e6;  // exactly 1e6 steps
  in.step_time = wall / 1e6;
  in.gpus = gpus;
  in.nodes = gpus / 8;
  in.costs.failures.gpu_mtbf = Seconds(1e30);
  in.checkpoint_bytes = Bytes(0.0);
  return in;
}

// ---------------------------------------------------------------- Ex. 26.20: cost table

struct CostRow {
  const char* name;
  double params, tokens;
  int gpus;
  double mfu;
  double hours, on_demand, spot, break_even;  // oracle, rounded as printed
  double hours_tol, usd_tol, n_tol;
};

TEST(CostOracle, Ex26_20_OnDemandSpotAndBreakEven) {
  // Ex. 26.20: FLOPs = 6PD, A100 312 TFLOP/s, $3.50/GPU-h on-demand, spot $1.225, t_lost = 0.5 h.
  const CostRow rows[] = {
      {"BERT-base", 110e6, 3.3e9, 8, 0.45, 0.5386, 15.08, 5.28, 2.00, 5e-5, 5e-3, 5e-3},
      {"GPT-2 medium", 345e6, 40e9, 16, 0.42, 10.970, 614.32, 215.01, 40.75, 5e-4, 5e-3, 5e-3},
      {"3B vision", 3e9, 500e9, 64, 0.38, 329.47, 73802.29, 25830.80, 1223.8, 5e-3, 5e-3, 5e-2},
  };
  for (const CostRow& row : rows) {
    SCOPED_TRACE(row.name);
    const Seconds wall = wall_time(6.0 * row.params * row.tokens, row.gpus, kA100Peak, row.mfu);
    EXPECT_NEAR(wall.value / kHour, row.hours, row.hours_tol);
    EXPECT_NEAR(rental_cost(row.gpus, wall, Usd(3.50)).value, row.on_demand, row.usd_tol);
    EXPECT_NEAR(rental_cost(row.gpus, wall, Usd(1.225)).value, row.spot, row.usd_tol);
    const double n = spot_break_even_preemptions(wall, Usd(3.50), Usd(1.225), Seconds(0.5 * kHour));
    EXPECT_NEAR(n, row.break_even, row.n_tol);
    // "Break-even n* = 3.714 x wall hours (independent of N)."
    EXPECT_NEAR(n / (wall.value / kHour), 3.714, 5e-4);
  }
}

TEST(CostOracle, Ex26_20_CostPerPreemptionAndBreakEvenIdentity) {
  // Ex. 26.20 "Cost per preemption" column: N * 0.5 h * $1.225 = $4.90 / $9.80 / $39.20.
  EXPECT_NEAR(rental_cost(8, Seconds(0.5 * kHour), Usd(1.225)).value, 4.90, 5e-3);
  EXPECT_NEAR(rental_cost(16, Seconds(0.5 * kHour), Usd(1.225)).value, 9.80, 5e-3);
  EXPECT_NEAR(rental_cost(64, Seconds(0.5 * kHour), Usd(1.225)).value, 39.20, 5e-3);
  // At n* preemptions spot costs exactly on-demand: spot + n* * cost per preemption = on-demand.
  const Seconds wall(39491.758241758245);  // GPT-2 medium row
  const double n = spot_break_even_preemptions(wall, Usd(3.50), Usd(1.225), Seconds(0.5 * kHour));
  const double spot_total =
      rental_cost(16, wall, Usd(1.225)).value + n * rental_cost(16, Seconds(0.5 * kHour), Usd(1.225)).value;
  EXPECT_NEAR(spot_total, rental_cost(16, wall, Usd(3.50)).value, 1e-9);
  // Spot that is not cheaper never breaks even; free losses always do.
  EXPECT_LE(spot_break_even_preemptions(wall, Usd(2.0), Usd(2.0), Seconds(1800.0)), 0.0);
  EXPECT_TRUE(std::isinf(spot_break_even_preemptions(wall, Usd(3.5), Usd(1.0), Seconds(0.0))));
}

// ---------------------------------------------------------------- Ex. 26.21: on-demand vs spot

TEST(SpotPreemption, Ex26_21_OptionAOnDemand) {
  // Option A: 32 x A100-80GB on-demand $3.50, MFU 0.45, 1e21 FLOPs -> 222,578 s = 61.83 h, $6,924.66.
  const Seconds wall = wall_time(1e21, 32, kA100Peak, 0.45);
  EXPECT_NEAR(wall.value, 222578.0, 0.5);
  EXPECT_NEAR(wall.value / kHour, 61.83, 5e-3);
  EXPECT_NEAR(rental_cost(32, wall, Usd(3.50)).value, 6924.66, 5e-3);
}

TEST(SpotPreemption, Ex26_21_OptionBWithoutLosses) {
  // Option B: 128 x A100-40GB spot $1.10, MFU 0.35: T0 = 19.87 h, $2,798 without losses (the losses: below).
  const Seconds t0 = wall_time(1e21, 128, kA100Peak, 0.35);
  EXPECT_NEAR(t0.value / kHour, 19.87, 5e-3);
  EXPECT_NEAR(rental_cost(128, t0, Usd(1.10)).value, 2798.0, 0.5);
}

TEST(SpotPreemption, Ex26_21_ThroughRunTotals) {
  // Option B's 2 preemptions/day x 1 h lost: T = T0 + r T t_lost, T = T0 / (1 - r t_lost) = T0 x 12/11 =
  // 21.68 h, $3,052.50. Through run_totals: no checkpoint (w = 0, interval 0), so t_lost = restart = 1 h.
  RunInputs in = failure_free_inputs(128, wall_time(1e21, 128, kA100Peak, 0.35));
  in.costs.spot_gpu_hour = Usd(1.10);
  in.costs.preemptions_per_day = 2.0;
  in.costs.failures.restart = Seconds(kHour);
  const RunTotals r = run_totals(in);
  EXPECT_NEAR(r.lost_per_preemption.value, kHour, 1e-9);
  EXPECT_NEAR(r.spot_seconds.value / kHour, 21.68, 5e-3);
  EXPECT_NEAR(r.spot_seconds / r.seconds, 12.0 / 11.0, 1e-9);
  EXPECT_NEAR(r.spot_cost.value, 3052.50, 5e-3);
  EXPECT_NEAR(r.expected_preemptions, 2.0 * r.spot_seconds.value / kDay, 1e-9);
}

// On spot the job checkpoints for the interruptions it meets: failures and preemptions together (Young 1974
// with the stream's rate). By hand: GPU MTBF 50,000 h on 1,000 GPUs, M = 180,000 s; 2 preemptions a day,
// r = 1 / 43,200 s; rate 1/M + r = 2.87037e-5 /s (one in 34,838.7 s); w = 2 TB / 20 GB/s = 100 s ->
// tau_s = sqrt(2 x 100 x 34,838.7) = 2,639.65 s; t_lost = tau_s/2 + w + R = 1,319.82 + 100 + 600 = 2,019.82 s;
// T_spot = T0 (1 + w / tau_s) / (1 - rate x t_lost) = T0 x 1.037883 / 0.942024 = 1.101759 T0. Before, the
// interval stayed the failures' 6,000 s and each preemption lost 3,600 s: 1.1324 T0 (and at 10 preemptions a
// day 2.2 h each, spot costing 39 x on-demand).
TEST(SpotPreemption, CheckpointIntervalFollowsFailuresAndPreemptions) {
  RunInputs in;
  in.tokens = 1e12;
  in.tokens_per_step = 4e6;
  in.step_time = Seconds(1.44);  // 250,000 steps -> T0 = 100 h
  in.gpus = 1000;
  in.nodes = 125;
  in.checkpoint_bytes = Bytes(2e12);
  in.costs.failures.gpu_mtbf = Seconds(50000.0 * kHour);
  in.costs.failures.checkpoint_bandwidth = ByteRate(20e9);
  in.costs.failures.restart = Seconds(600.0);
  in.costs.spot_gpu_hour = Usd(1.0);
  in.costs.preemptions_per_day = 2.0;
  const RunTotals r = run_totals(in);
  EXPECT_NEAR(r.failures.checkpoint_interval.value, 6000.0, 1e-6);  // on-demand: the failures alone
  EXPECT_NEAR(r.spot_checkpoint_interval.value, 2639.65, 0.005);
  EXPECT_NEAR(r.lost_per_preemption.value, 2019.82, 0.005);
  EXPECT_NEAR(r.spot_seconds / r.seconds, 1.101759, 2e-6);
  EXPECT_NEAR(r.spot_cost.value, 1000.0 * r.spot_seconds.value / kHour * 1.0, 1e-6);
  EXPECT_LT(r.spot_seconds / r.seconds, 1.1324);
}

TEST(SpotPreemption, NoSpotPriceMeansNoSpotCost) {
  RunInputs in = failure_free_inputs(64, Seconds(100.0 * kHour));
  in.costs.preemptions_per_day = 5.0;
  const RunTotals r = run_totals(in);
  EXPECT_EQ(r.spot_cost.value, 0.0);
  EXPECT_EQ(r.spot_seconds.value, 0.0);
  EXPECT_GT(r.cost.value, 0.0);
}

TEST(SpotPreemption, WithoutPreemptionsSpotIsGpuHoursTimesSpotPrice) {
  RunInputs in = failure_free_inputs(64, Seconds(100.0 * kHour));
  in.costs.spot_gpu_hour = Usd(1.0);
  in.costs.gpu_hour = Usd(3.0);
  const RunTotals r = run_totals(in);
  EXPECT_NEAR(r.spot_cost.value, r.gpu_hours * 1.0, 1e-9);
  EXPECT_NEAR(r.cost.value, r.gpu_hours * 3.0, 1e-9);
  EXPECT_NEAR(r.gpu_hours, 6400.0, 1e-6);
}

TEST(SpotPreemption, LossFasterThanProgressNeverFinishes) {
  // r t_lost = 1/3600 per s x 3600 s = 1: a preemption per hour, each losing an hour (no checkpoint to write,
  // a restart of an hour). The stall is reported as such and the wall time stays finite (0: there is none);
  // half the rate finishes, in T0 / (1 - 1/2) = 2 T0.
  RunInputs in = failure_free_inputs(8, Seconds(100.0 * kHour));
  in.costs.spot_gpu_hour = Usd(1.0);
  in.costs.failures.restart = Seconds(kHour);
  in.costs.preemptions_per_day = 24.0;
  const RunTotals stalled = run_totals(in);
  EXPECT_EQ(stalled.spot_regime, Regime::no_progress);
  EXPECT_EQ(stalled.spot_seconds.value, 0.0);
  in.costs.preemptions_per_day = 12.0;
  const RunTotals halved = run_totals(in);
  EXPECT_EQ(halved.spot_regime, Regime::ok);
  EXPECT_NEAR(halved.spot_seconds / halved.seconds, 2.0, 1e-9);
}

// ---------------------------------------------------------------- Ex. 26.22(c): checkpoint I/O

TEST(FailureCheckpoint, Ex26_22c_WriteTimes) {
  // 64 GPUs, 15 GB checkpoint: NAS 1 GB/s -> 15 s; object store 200 MB/s -> 75 s.
  RunInputs in;
  in.tokens = 1e9;
  in.tokens_per_step = 1e6;
  in.step_time = Seconds(1.0);
  in.gpus = 64;
  in.nodes = 8;
  in.checkpoint_bytes = Bytes(15e9);
  in.costs.failures.checkpoint_bandwidth = ByteRate(1e9);
  EXPECT_NEAR(run_totals(in).failures.checkpoint_write.value, 15.0, 1e-9);
  in.costs.failures.checkpoint_bandwidth = ByteRate(200e6);
  EXPECT_NEAR(run_totals(in).failures.checkpoint_write.value, 75.0, 1e-9);
}

// ---------------------------------------------------------------- Young/Daly failure model

TEST(FailureYoungDaly, IntervalIsSqrtTwoWriteMtbf) {
  // gpu MTBF 50,000 h over 1,000 GPUs -> job MTBF 50 h = 180,000 s; w = 2 TB / 20 GB/s = 100 s;
  // Young: tau = sqrt(2 * 100 * 180000) = 6000 s.
  FailureSpec f;
  f.gpu_mtbf = Seconds(50000.0 * kHour);
  f.checkpoint_bandwidth = ByteRate(20e9);
  f.restart = Seconds(600.0);
  const FailureModel m = failure_model(Seconds(100.0 * kHour), 1000, Bytes(2e12), f);
  EXPECT_NEAR(m.job_mtbf.value, 180000.0, 1e-6);
  EXPECT_NEAR(m.checkpoint_write.value, 100.0, 1e-9);
  EXPECT_NEAR(m.checkpoint_interval.value, 6000.0, 1e-6);
  // Young's tau minimises the first-order waste w/tau + tau/(2M).
  auto waste = [&](double tau) { return 100.0 / tau + tau / (2.0 * 180000.0); };
  EXPECT_LT(waste(6000.0), waste(5400.0));
  EXPECT_LT(waste(6000.0), waste(6600.0));
}

TEST(FailureYoungDaly, HandComputedFixedPoint) {
  // Same numbers, T0 = 100 h = 360,000 s. Overhead T0 * w / tau = 6000 s. Per failure:
  // tau/2 + w = 3100 s lost + R = 600 s restart. T = (360000 + 6000) / (1 - 3700/180000).
  FailureSpec f;
  f.gpu_mtbf = Seconds(50000.0 * kHour);
  f.checkpoint_bandwidth = ByteRate(20e9);
  f.restart = Seconds(600.0);
  const FailureModel m = failure_model(Seconds(360000.0), 1000, Bytes(2e12), f);
  const double total = 366000.0 / (1.0 - 3700.0 / 180000.0);  // 373,679.3 s
  EXPECT_NEAR(m.checkpoint_overhead.value, 6000.0, 1e-6);
  EXPECT_NEAR(m.expected_failures, total / 180000.0, 1e-9);
  EXPECT_NEAR(m.lost_work.value, m.expected_failures * 3100.0, 1e-6);
  EXPECT_NEAR(m.restart_time.value, m.expected_failures * 600.0, 1e-6);
  EXPECT_NEAR(m.goodput, 360000.0 / total, 1e-12);
}

TEST(FailureYoungDaly, IntervalNeverShorterThanWrite) {
  // w = 1000 s, M = 100 s: sqrt(2 w M) = 447 s < w, so the interval is capped to w.
  FailureSpec f;
  f.gpu_mtbf = Seconds(100.0);
  f.checkpoint_bandwidth = ByteRate(1e9);
  const FailureModel m = failure_model(Seconds(1e6), 1, Bytes(1e12), f);
  EXPECT_NEAR(m.checkpoint_interval.value, 1000.0, 1e-9);
  // And with per-failure loss (500 + 1000 + 600 s) over the MTBF the job never finishes: a named
  // regime with finite numbers, not an infinite expected failure count.
  EXPECT_EQ(m.regime, Regime::no_progress);
  EXPECT_EQ(m.goodput, 0.0);
  EXPECT_EQ(m.expected_failures, 0.0);
  EXPECT_NEAR(m.lost_per_failure.value, 500.0 + 1000.0 + 600.0, 1e-9);
}

TEST(FailureYoungDaly, GoodputFallsAsMtbfShrinks) {
  RunInputs in;
  in.tokens = 1e12;
  in.tokens_per_step = 4e6;
  in.step_time = Seconds(5.0);
  in.gpus = 1024;
  in.nodes = 128;
  in.checkpoint_bytes = Bytes(1.1e12);
  double prev_goodput = 1.0 + 1e-12;
  double prev_seconds = 0.0;
  for (double mtbf_h : {1e6, 2e5, 5e4, 1e4, 2e3}) {
    in.costs.failures.gpu_mtbf = Seconds(mtbf_h * kHour);
    const RunTotals r = run_totals(in);
    SCOPED_TRACE(mtbf_h);
    EXPECT_LT(r.failures.goodput, prev_goodput);
    EXPECT_GT(r.seconds_with_failures.value, prev_seconds);
    EXPECT_GT(r.failures.goodput, 0.0);
    EXPECT_NEAR(r.failures.goodput, r.seconds / r.seconds_with_failures, 1e-12);
    prev_goodput = r.failures.goodput;
    prev_seconds = r.seconds_with_failures.value;
  }
}

TEST(FailureYoungDaly, MoreGpusShortenJobMtbf) {
  FailureSpec f;  // default 50,000 h per GPU
  double prev = std::numeric_limits<double>::infinity();
  for (int gpus : {1, 8, 64, 512, 4096, 16384}) {
    const FailureModel m = failure_model(Seconds(1e6), gpus, Bytes(1e11), f);
    EXPECT_LT(m.job_mtbf.value, prev) << gpus;
    EXPECT_NEAR(m.job_mtbf.value, f.gpu_mtbf.value / gpus, 1e-6) << gpus;
    prev = m.job_mtbf.value;
  }
}

TEST(RunTotals, TimeIsTheSumOfItsParts) {
  RunInputs in;
  in.tokens = 2e12;
  in.tokens_per_step = 3e6;  // not a divisor: steps round up
  in.step_time = Seconds(7.0);
  in.gpus = 2048;
  in.nodes = 256;
  in.checkpoint_bytes = Bytes(8e11);
  in.costs.gpu_hour = Usd(2.0);
  const RunTotals r = run_totals(in);
  EXPECT_EQ(r.steps, std::ceil(2e12 / 3e6));
  EXPECT_EQ(r.steps, 666667.0);
  EXPECT_NEAR(r.seconds.value, 666667.0 * 7.0, 1e-6);
  const FailureModel& f = r.failures;
  EXPECT_GT(f.expected_failures, 0.0);
  EXPECT_NEAR(r.seconds_with_failures.value,
              (r.seconds + f.checkpoint_overhead + f.lost_work + f.restart_time).value, 1e-6);
  EXPECT_NEAR(f.expected_failures, r.seconds_with_failures / f.job_mtbf, 1e-9);
  EXPECT_GT(r.cost.value, r.cost_without_failures.value);
  EXPECT_NEAR(r.cost.value, r.gpu_hours * 2.0, 1e-6);
  EXPECT_NEAR(r.cost_without_failures.value, 2048.0 * r.seconds.value / kHour * 2.0, 1e-6);
}

// ---------------------------------------------------------------- Seed 001 WE-06 and WE-08

TEST(CostOracle, Seed001_WE06_RentalOfLlama2_70B) {
  // 8.4e23 FLOPs at 494.5 TFLOP/s on 1,024 GPUs -> 19.2 days; rental at $3/GPU-h -> $1.42M
  // ($1,415,578 = 1024 x 24 x 19.2 x $3 with the rounded 19.2 days).
  const Seconds wall = wall_time(8.4e23, 1024, 494.5e12, 1.0);
  EXPECT_NEAR(wall.value / kDay, 19.2, 5e-3);
  EXPECT_NEAR(rental_cost(1024, wall, Usd(3.0)).value, 1.42e6, 5e3);
  EXPECT_NEAR(rental_cost(1024, Seconds(19.2 * kDay), Usd(3.0)).value, 1415578.0, 0.5);
}

TEST(EnergyOracle, Seed001_WE08_HelperDirect) {
  // (1024 x 400 W + 128 x 200 W) x 73.0335 h = 31,784.2 kWh at PUE 1.
  const Seconds wall = wall_time(4.2e22, 1024, 156e12, 1.0);
  EXPECT_NEAR(wall.value / kHour, 73.03, 5e-3);
  EXPECT_NEAR(facility_energy_kwh(1024, Watts(400.0), 128, Watts(200.0), wall, 1.0), 31784.2, 0.05);
  // PUE multiplies IT energy.
  EXPECT_NEAR(facility_energy_kwh(1024, Watts(400.0), 128, Watts(200.0), wall, 1.5), 1.5 * 31784.188, 0.1);
}

TEST(EnergyOracle, Seed001_WE08_ThroughRunTotals) {
  // Napkin Math 1.11: 7B x 1T tokens, 156 TFLOP/s sustained on 1,024 A100 (400 W), 128 hosts x 200 W.
  // Doubling utilization halves the time: saves 15,892.1 kWh; x 0.43 kg/kWh = 6.83 t CO2.
  RunInputs in = failure_free_inputs(1024, wall_time(4.2e22, 1024, 156e12, 1.0));
  in.nodes = 128;
  in.gpu_power_busy = Watts(400.0);
  in.host_power_per_node = Watts(200.0);
  in.costs.pue = 1.0;
  in.costs.carbon_kg_per_j = 0.43 / kJoulesPerKwh;
  in.costs.electricity_usd_per_j = 0.10 / kJoulesPerKwh;
  const RunTotals slow = run_totals(in);
  EXPECT_NEAR(slow.seconds.value / kHour, 73.03, 5e-3);
  EXPECT_NEAR(slow.energy_kwh, 31784.2, 0.05);
  EXPECT_NEAR(slow.energy_cost_usd, 3178.42, 5e-3);
  EXPECT_NEAR(slow.facility_power.value, 435200.0, 1e-6);

  in.step_time = in.step_time / 2.0;
  const RunTotals fast = run_totals(in);
  EXPECT_NEAR(slow.energy_kwh - fast.energy_kwh, 15892.1, 0.05);
  EXPECT_NEAR((slow.co2_kg - fast.co2_kg) / 1000.0, 6.83, 5e-3);
}

TEST(EnergyOracle, HostPowerOverrideAndFailuresCostEnergy) {
  RunInputs in = failure_free_inputs(64, Seconds(10.0 * kHour));
  in.nodes = 8;
  in.gpu_power_busy = Watts(500.0);
  in.host_power_per_node = Watts(1000.0);
  in.costs.pue = 1.2;
  const RunTotals preset = run_totals(in);
  // (64 x 500 + 8 x 1000) W x 10 h x 1.2 = 480 kWh.
  EXPECT_NEAR(preset.energy_kwh, 480.0, 1e-6);
  EXPECT_EQ(preset.host_power_per_node.value, 1000.0);
  in.costs.host_power_per_node = Watts(2000.0);  // costs override the preset
  const RunTotals overridden = run_totals(in);
  EXPECT_EQ(overridden.host_power_per_node.value, 2000.0);
  EXPECT_NEAR(overridden.energy_kwh, (64 * 500.0 + 8 * 2000.0) * 10.0 * 1.2 / 1000.0, 1e-6);
  // With real failures the energy includes the lost time.
  in.costs.failures = FailureSpec{};
  in.checkpoint_bytes = Bytes(1e11);
  const RunTotals failing = run_totals(in);
  EXPECT_GT(failing.energy_kwh, failing.energy_kwh_without_failures);
  EXPECT_NEAR(failing.energy_kwh / failing.energy_kwh_without_failures, 1.0 / failing.failures.goodput, 1e-9);
}

}  // namespace
}  // namespace tp
