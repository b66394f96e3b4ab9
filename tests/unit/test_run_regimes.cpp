// Degenerate but valid regimes of the run model (issue 11, "Numbers that are not numbers"): a job MTBF
// below the checkpoint + restart time, a step longer than the MTBF, spot preemptions faster than
// progress. Each is a named regime (and, through make_plan, a violation) with finite numbers, never
// inf/NaN. Oracles: hand computation of the failure model of planner/run_totals.h, written below.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "plan.h"
#include "run_totals.h"
#include "test_support.h"

namespace tp {
namespace {

void expect_finite(const FailureModel& m) {
  for (double v : {m.job_mtbf.value, m.checkpoint_write.value, m.checkpoint_interval.value, m.expected_failures,
                   m.lost_work.value, m.restart_time.value, m.checkpoint_overhead.value, m.goodput,
                   m.lost_per_failure.value}) {
    EXPECT_TRUE(std::isfinite(v)) << v;
    EXPECT_GE(v, 0.0);
  }
}

void expect_finite(const RunTotals& r) {
  for (double v : {r.steps, r.seconds.value, r.seconds_with_failures.value, r.gpu_hours, r.cost.value,
                   r.cost_without_failures.value, r.spot_cost.value, r.spot_seconds.value, r.energy_kwh,
                   r.energy_cost_usd, r.co2_kg, r.expected_preemptions}) {
    EXPECT_TRUE(std::isfinite(v)) << v;
    EXPECT_GE(v, 0.0);
  }
  expect_finite(r.failures);
}

// Issue case: 10^6 GPUs at 50,000 h each -> job MTBF 50,000 * 3600 / 1e6 = 180 s, below the 600 s restart
// alone. Before: inf days / cost / energy, "MTBF 0.0 h", "every 0 min".
TEST(RunRegimes, MtbfBelowRestartIsNoProgressWithFiniteNumbers) {
  RunInputs in;
  in.tokens = 1e12;
  in.tokens_per_step = 4e6;
  in.step_time = Seconds(2.0);
  in.gpus = 1000000;
  in.nodes = 125000;
  in.gpu_power_busy = Watts(500.0);
  in.checkpoint_bytes = Bytes(1e12);
  in.costs.failures.gpu_mtbf = Seconds(50000.0 * kHour);
  in.costs.failures.checkpoint_bandwidth = ByteRate(100e9);  // w = 10 s
  in.costs.failures.restart = Seconds(600.0);
  const RunTotals r = run_totals(in);
  EXPECT_EQ(r.failures.regime, Regime::no_progress);
  EXPECT_NEAR(r.failures.job_mtbf.value, 180.0, 1e-9);
  // tau = max(sqrt(2 * 10 * 180), 10, one 2 s step) = 60 s; lost per failure = 30 + 10 + 600 = 640 s.
  EXPECT_NEAR(r.failures.checkpoint_interval.value, 60.0, 1e-9);
  EXPECT_NEAR(r.failures.lost_per_failure.value, 640.0, 1e-9);
  EXPECT_EQ(r.failures.goodput, 0.0);
  // The failure-free totals are still reported: 250,000 steps of 2 s.
  EXPECT_NEAR(r.seconds.value, 500000.0, 1e-6);
  expect_finite(r);
}

// Issue case: "Goodput shows 99.9 % with a 3.7e10 s step". A checkpoint can only be written between
// steps, so each failure loses at least half a step: 1.85e10 s, far above a job MTBF of 50 h
// (1000 GPUs). Before the fix tau = sqrt(2 w M) ignored the step and goodput was 99.9 %.
TEST(RunRegimes, StepLongerThanMtbfCannotMakeProgress) {
  FailureSpec f;
  f.gpu_mtbf = Seconds(50000.0 * kHour);
  f.checkpoint_bandwidth = ByteRate(20e9);
  f.restart = Seconds(600.0);
  const double step = 3.7e10;
  const FailureModel m = failure_model(Seconds(10 * step), 1000, Bytes(2e12), f, Seconds(step));
  EXPECT_EQ(m.regime, Regime::no_progress);
  EXPECT_EQ(m.goodput, 0.0);
  EXPECT_NEAR(m.checkpoint_interval.value, step, 1.0);
  expect_finite(m);
}

// With a step well below the MTBF the step bound changes nothing: same numbers as Young's interval
// (gpu MTBF 50,000 h over 1,000 GPUs -> M = 180,000 s; w = 100 s; tau = sqrt(2 * 100 * 180000) = 6000 s).
TEST(RunRegimes, ShortStepKeepsYoungInterval) {
  FailureSpec f;
  f.gpu_mtbf = Seconds(50000.0 * kHour);
  f.checkpoint_bandwidth = ByteRate(20e9);
  f.restart = Seconds(600.0);
  const FailureModel m = failure_model(Seconds(360000.0), 1000, Bytes(2e12), f, Seconds(10.0));
  EXPECT_EQ(m.regime, Regime::ok);
  EXPECT_NEAR(m.checkpoint_interval.value, 6000.0, 1e-6);
  // A step of 9000 s: the interval is one step, the loss per failure 4500 + 100 + 600 = 5200 s, and
  // T = (T0 + T0 * 100 / 9000) / (1 - 5200 / 180000).
  const FailureModel slow = failure_model(Seconds(360000.0), 1000, Bytes(2e12), f, Seconds(9000.0));
  EXPECT_NEAR(slow.checkpoint_interval.value, 9000.0, 1e-9);
  const double total = (360000.0 + 4000.0) / (1.0 - 5200.0 / 180000.0);
  EXPECT_NEAR(slow.goodput, 360000.0 / total, 1e-12);
}

// A job shorter than one checkpoint interval runs through without a checkpoint (a CLI audit, 2026-12-01: an
// 11-minute Llama 3.1 405B job with a job MTBF of 3 h and a 47-minute checkpoint write was reported as never
// finishing, the first-order loss per failure, tau/2 + w + R, being above the MTBF). By hand: one GPU, MTBF
// M = 10,000 s, no restart time, write w = 5,000 s, t0 = 1,000 s. Checkpointed (first order): tau =
// sqrt(2 w M) = 10,000 s, each failure losing tau/2 + w = 10,000 s = M: no progress. Without checkpoints
// (Daly's complete model): T = M (e^(t0/M) - 1) = 10,000 x 0.1051709 = 1,051.709 s, 0.1051709 failures.
TEST(RunRegimes, AShortJobRunsThroughWithoutCheckpoints) {
  FailureSpec f;
  f.gpu_mtbf = Seconds(10000.0);
  f.restart = Seconds(0.0);
  f.checkpoint_bandwidth = ByteRate(1.0);
  const FailureModel m = failure_model(Seconds(1000.0), 1, Bytes(5000.0), f, Seconds(1.0));
  EXPECT_EQ(m.regime, Regime::ok);
  EXPECT_EQ(m.checkpoint_interval.value, 0.0);
  EXPECT_FALSE(m.checkpointed);
  EXPECT_EQ(m.checkpoint_overhead.value, 0.0);
  EXPECT_NEAR(m.expected_failures, 0.1051709, 1e-7);
  EXPECT_NEAR(1000.0 + m.lost_work.value + m.restart_time.value, 1051.709, 1e-3);
  EXPECT_NEAR(m.goodput, 1000.0 / 1051.709, 1e-6);
  expect_finite(m);
  // Ten times longer, the checkpoints' first-order model has no progress and running through takes
  // M (e^1 - 1) = 17,183 s for 10,000 s of work: still the better of the two, and finishing.
  const FailureModel longer = failure_model(Seconds(10000.0), 1, Bytes(5000.0), f, Seconds(1.0));
  EXPECT_EQ(longer.regime, Regime::ok);
  EXPECT_NEAR(10000.0 + longer.lost_work.value, 17182.82, 1e-2);
}

// Spot preemptions faster than progress: 24 per day (one per hour) each losing more than an hour. A 27.8 h
// job (run through without checkpoints it would take e^27.8 hours: Daly's complete model; the 2.8 h job this
// test ran before 2026-12-01 finishes so, at 6 % goodput).
TEST(RunRegimes, SpotStallIsNamedNotInfinite) {
  RunInputs in;
  in.tokens = 1e11;
  in.tokens_per_step = 1e6;
  in.step_time = Seconds(1.0);
  in.gpus = 8;
  in.nodes = 1;
  in.costs.spot_gpu_hour = Usd(1.0);
  in.costs.preemptions_per_day = 24.0;
  in.costs.failures.restart = Seconds(4000.0);  // t_lost >= 4000 s > 3600 s between preemptions
  const RunTotals r = run_totals(in);
  EXPECT_EQ(r.failures.regime, Regime::ok);
  EXPECT_EQ(r.spot_regime, Regime::no_progress);
  expect_finite(r);
}

// Through make_plan: the regime becomes a violation (not feasible), so a sweep neither counts nor ranks it.
TEST(RunRegimes, NoProgressIsAViolationOfThePlan) {
  const Scenario s = test::scenario(
      "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 125000}\n"
      "training: {global_batch: 1000000, micro_batch: 1}\nparallel: {tp: 1, pp: 1, zero: 1}\n"
      "costs: {failures: {restart: 600 s}}\n");
  const Plan p = make_plan(s, default_profile(s.cluster.gpu));
  EXPECT_EQ(p.run.failures.regime, Regime::no_progress);
  EXPECT_FALSE(p.estimate.feasible);
  ASSERT_FALSE(p.estimate.violations.empty());
  const Violation& v = p.estimate.violations.back();
  EXPECT_EQ(v.kind, Violation::Kind::no_progress);
  EXPECT_NE(violation_message(v).find("this job cannot make progress"), std::string::npos);
  expect_finite(p.run);
}

// Issue case, end to end: 10^6 GPUs printed "inf days", "MTBF 0.0 h", "every 0 min" and JSON nulls.
// The table says the job cannot make progress; the JSON names the regime, omits the totals that need a
// finishing time and holds no null. (Job MTBF = 50,000 h / 10^6 GPUs = 180 s, printed "3.00 min".)
TEST(RunRegimes, EvaluatePrintsNoProgressNotInf) {
  const std::string sets =
      "--set model=llama3.1-8b --set cluster.nodes=125000 --set training.global_batch=1000000 "
      "--set parallel.tp=1 --set parallel.pp=1";
  const test::RunResult table = test::run_trainplan("evaluate " + sets);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("this job cannot make progress"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("job MTBF 3.00 min"), std::string::npos) << table.output;
  EXPECT_EQ(table.output.find("inf"), std::string::npos) << table.output;
  EXPECT_EQ(table.output.find("nan"), std::string::npos) << table.output;
  const test::RunResult json = test::run_trainplan("evaluate --format json " + sets);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(json.output.find("null"), std::string::npos) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j.at("run").at("regime"), "no_progress");
  EXPECT_FALSE(j.at("run").contains("seconds"));
  EXPECT_FALSE(j.at("run").contains("cost_usd"));
  EXPECT_EQ(j.at("run").at("goodput").get<double>(), 0.0);
  EXPECT_FALSE(j.at("feasible").get<bool>());
  EXPECT_EQ(j.at("violations").back().at("kind"), "no_progress");
}

// A job that fits but cannot finish is not "DOES NOT FIT" (that verdict is for memory), and the fit is measured
// against the usable memory (capacity less headroom), as the verdict's own rule. Oracle by hand: the built-in
// default's fullest stage holds 47.92 GiB; with headroom 0.1 of 80 GiB, 72 GiB are usable: 66.6 %.
TEST(RunRegimes, VerdictSaysCannotFinishAndMeasuresAgainstUsableMemory) {
  const test::RunResult stalled = test::run_trainplan("evaluate --set costs.failures.gpu_mtbf='1 h'");
  ASSERT_EQ(stalled.exit_code, 0) << stalled.output;
  EXPECT_NE(stalled.output.find("Verdict     CANNOT FINISH: worst stage 0 uses 47.92 GiB of 80.00 GiB usable"),
            std::string::npos) << stalled.output;
  EXPECT_EQ(stalled.output.find("DOES NOT FIT"), std::string::npos) << stalled.output;
  const test::RunResult headroom = test::run_trainplan("evaluate --set memory.headroom=0.1");
  EXPECT_NE(headroom.output.find("FITS: worst stage 0 uses 47.92 GiB of 72.00 GiB usable (66.6%)"), std::string::npos)
      << headroom.output;
}

// Issue case: counts were written as floats (46702792704.0). Llama 3.1 8B has 8,030,261,248 parameters
// (models.yaml, published); Megatron at the default scenario's tp 8 pads its vocabulary of 128,256 to
// 129,024 (a multiple of 128 x 8), adding 2 x 768 x 4096 to the untied embedding and output layer:
// 8,036,552,704. The default scenario's 512 x 8192 tokens per step = 4,194,304.
TEST(JsonCounts, AreIntegers) {
  const test::RunResult r = test::run_trainplan("evaluate --format json --set model=llama3.1-8b");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_TRUE(j.at("parameters").at("total").is_number_integer());
  EXPECT_EQ(j.at("parameters").at("total").get<std::int64_t>(), 8030261248 + 2 * 768 * 4096);
  EXPECT_TRUE(j.at("parameters").at("per_gpu").is_number_integer());
  EXPECT_TRUE(j.at("parameters").at("active").is_number_integer());
  EXPECT_TRUE(j.at("memory").at("per_gpu").at("parameters").is_number_integer());
  EXPECT_TRUE(j.at("scenario").at("tokens_per_step").is_number_integer());
  EXPECT_TRUE(j.at("run").at("steps").is_number_integer());
  EXPECT_TRUE(j.at("scenario").at("micro_batches").is_number_integer());
  EXPECT_EQ(j.at("scenario").at("tokens_per_step").get<std::int64_t>(), 512 * 8192);
  EXPECT_EQ(r.output.find("8036552704.0"), std::string::npos);  // printed without a fraction
}

}  // namespace
}  // namespace tp
