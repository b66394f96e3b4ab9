// Printed numbers at any size (issue 11: "numbers past T/PiB print with 60+ digits"). Oracles: the
// IEC 80000-13 binary prefixes (1 YiB = 1024^8 B), the SI-style count suffixes of format_units.h, and
// hand-written expected strings.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "format_units.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// Totals keep three significant digits where their places would show fewer (a CLI audit, 2026-12-01: a
// one-token run cost "0 USD" and "0 kWh" where the JSON had 0.0079 USD and 0.03 kWh).
TEST(FormatUnits, SmallTotalsKeepTheirDigits) {
  EXPECT_EQ(format_amount(0.0079123, 0), "0.00791");
  EXPECT_EQ(format_amount(8.5, 0), "8.5");
  EXPECT_EQ(format_amount(8400.4, 0), "8400");
  EXPECT_EQ(format_amount(0.75, 1), "0.75");
  EXPECT_EQ(format_amount(179.24, 1), "179.2");
  EXPECT_EQ(format_amount(0.0, 0), "0");
  const test::RunResult r = test::run_trainplan("evaluate --set training.tokens=1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("  Cost        0 USD"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(" 0 USD of electricity"), std::string::npos) << r.output;
}

TEST(FormatUnits, BytesScaleToTheLargestBinaryPrefix) {
  EXPECT_EQ(format_bytes(80.0 * 1024 * 1024 * 1024), "80.00 GiB");
  EXPECT_EQ(format_bytes(512.0), "512 B");
  EXPECT_EQ(format_bytes(3.0 * std::pow(1024.0, 6)), "3.00 EiB");  // past PiB: before, 3072.00 PiB
  EXPECT_EQ(format_bytes(std::pow(1024.0, 8)), "1.00 YiB");
  // Past the last prefix: scientific notation, not 60 digits.
  EXPECT_EQ(format_bytes(1e60), "8.27e+35 YiB");  // 1e60 / 1024^8 = 8.27e35
}

TEST(FormatUnits, CountsAndFixedNeverPrintLongDigitRuns) {
  EXPECT_EQ(format_count(70.55e9), "70.55 B");
  EXPECT_EQ(format_count(999.0), "999");
  EXPECT_EQ(format_count(1e60), "1.00e+48 T");
  EXPECT_EQ(format_fixed(1234.5, 1), "1234.5");
  EXPECT_EQ(format_fixed(1e40, 0), "1.000e+40");
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::quiet_NaN(), 2), "n/a");
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::infinity(), 2), "n/a");
}

TEST(FormatUnits, SecondsPickAReadableUnit) {
  EXPECT_EQ(format_seconds(0.0), "0 s");
  EXPECT_EQ(format_seconds(0.25), "250.0 ms");
  EXPECT_EQ(format_seconds(56.5), "56.5 s");
  EXPECT_EQ(format_seconds(300.0), "5.00 min");
  EXPECT_EQ(format_seconds(5.0 * 3600), "5.00 h");
  EXPECT_EQ(format_seconds(178.3 * 86400), "178.3 days");
  EXPECT_EQ(format_seconds(10.0 * 31557600), "10.0 years");  // Julian year, 365.25 days
  // The 3.7e10 s step: 1172.5 years; and 3.7e20 s -> 1.17e13 years, scientific.
  EXPECT_EQ(format_seconds(3.7e10), "1172.5 years");
  EXPECT_EQ(format_seconds(3.7e20), "1.17e+13 years");
}

// evaluate's step line keeps three decimals of seconds from 10 ms up, and below that takes a smaller unit:
// GPT-2 124M on one GPU at 128 tokens per micro-batch steps in a few milliseconds, which "0.004 s" would
// print with one significant digit.
TEST(FormatUnits, ShortStepsPrintInMilliseconds) {
  const test::RunResult r = test::run_trainplan(
      "evaluate --set model=gpt2-124m --set parallel.tp=1 --set parallel.pp=1 --set training.sequence_length=128 "
      "--set training.micro_batch=1 --set training.global_batch=64");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::size_t at = r.output.find("Step time   ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
  EXPECT_NE(line.find(" ms  (profile"), std::string::npos) << line;
  EXPECT_EQ(line.find("0.00"), std::string::npos) << line;
  // The built-in scenario's step, seconds long, keeps its three decimals.
  const test::RunResult d = test::run_trainplan("evaluate");
  ASSERT_EQ(d.exit_code, 0) << d.output;
  const std::size_t d_at = d.output.find("Step time   ");
  ASSERT_NE(d_at, std::string::npos);
  const std::string d_line = d.output.substr(d_at, d.output.find('\n', d_at) - d_at);
  EXPECT_NE(d_line.find(" s  (profile"), std::string::npos) << d_line;
  EXPECT_EQ(d_line.find(" ms  (profile"), std::string::npos) << d_line;
}

// evaluate's optimizer figure names the part of it that is passes over the weights and gradients beside the
// update: plain PyTorch adds 3 later micro-batches' gradients in place (test_gradient_accumulation.cpp). The
// printed part is the plan's optimizer time less its update, in ms; Megatron (accumulation inside the GEMM)
// prints the figure bare.
TEST(FormatUnits, OptimizerFigureNamesItsWeightAndGradientPasses) {
  const std::string yaml =
      "model: llama2-7b\ncluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
      "training: {framework: pytorch, sequence_length: 1024, micro_batch: 1, global_batch: 4, precision: bf16}\n"
      "parallel: {tp: 1, pp: 1, zero: 0}\n";
  const std::string path = ::testing::TempDir() + "optimizer_passes.yaml";
  std::ofstream(path) << yaml;
  const Scenario s = test::scenario(yaml);
  const StepTime t = make_plan(s, profile_for(s)).time;
  char expected[96];
  std::snprintf(expected, sizeof expected, "optimizer %.1f ms (%.1f ms of it passes over weights and gradients)",
                1e3 * t.optimizer.value, 1e3 * (t.optimizer - t.compute_by_kind.optimizer).value);
  const test::RunResult r = test::run_trainplan("evaluate " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  const test::RunResult m = test::run_trainplan("evaluate " + path + " --set training.framework=megatron");
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_EQ(m.output.find("of it passes"), std::string::npos) << m.output;
}

TEST(FormatUnits, MicroBatchesAgreeInNumber) {
  EXPECT_EQ(format_micro_batches(1), "1 micro-batch");
  EXPECT_EQ(format_micro_batches(4), "4 micro-batches");
}

}  // namespace
}  // namespace tp
