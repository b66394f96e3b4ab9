// trainplan simulate and evaluate --simulate: the breakdown, the JSON keys, the trace file, and
// the errors (a bad trace path names the path, exits non-zero and leaves nothing behind).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace tp {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kExample = "'" + test::source_path("scenarios/examples/default.yaml") + "'";

TEST(SimulateCli, PrintsTheBreakdownAndWritesATrace) {
  const fs::path trace = fs::path(::testing::TempDir()) / "trainplan-cli-trace.json";
  fs::remove(trace);
  const test::RunResult r = test::run_trainplan("simulate " + kExample + " --trace '" + trace.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Simulated"));
  EXPECT_THAT(r.output, HasSubstr("analytic model"));
  EXPECT_THAT(r.output, HasSubstr("stage 3"));
  EXPECT_THAT(r.output, HasSubstr("Critical path"));
  EXPECT_THAT(r.output, HasSubstr(trace.string()));
  std::ifstream in(trace);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_GT(j.at("traceEvents").size(), 1000u);
}

// A step under 0.1 s is shown in ms or µs: a one-layer model of width 1 (183 µs a step on an H100) was
// "0.000 s per step" (a CLI audit, 2026-12-01); evaluate's FLOP per token was "0.00 GFLOP/token".
TEST(SimulateCli, ATinyStepKeepsItsDigits) {
  const std::string tiny = "--set 'model={layers: 1, hidden: 1, heads: 1, ffn_hidden: 1, vocab: 1}' "
                           "--set 'cluster={preset: dgx-h100, nodes: 1, gpus_per_node: 1}' "
                           "--set 'training={sequence_length: 1, global_batch: 1, micro_batch: 1}' "
                           "--set 'parallel={tp: 1, pp: 1}'";
  const test::RunResult sim = test::run_trainplan("simulate " + tiny);
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_THAT(sim.output, HasSubstr(" us per step; analytic model "));
  EXPECT_THAT(sim.output, ::testing::Not(HasSubstr("0.000 s")));
  const test::RunResult plan = test::run_trainplan("evaluate " + tiny);
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr(" FLOP/token)"));  // 54 FLOP a token, by the op graph
  EXPECT_THAT(plan.output, ::testing::Not(HasSubstr("0.00 GFLOP/token")));
}

// Long work shows progress on a terminal (a CLI audit, 2026-12-01: simulate --steps and report --grid ran for
// seconds with nothing shown); into a pipe or a file, no carriage returns. `script` gives the command a
// terminal (util-linux / bsdutils); skipped where it is missing.
TEST(SimulateCli, ProgressOnATerminalOnly) {
  if (test::run_shell("command -v script").exit_code != 0) GTEST_SKIP() << "no `script` here to give a terminal";
  const std::string report = (fs::path(::testing::TempDir()) / "trainplan-progress.html").string();
  // A model axis makes one base scenario per value before any point: that shows progress too (a re-audit:
  // 6,000 layer counts took 16 s with nothing shown, and the header said 0.11 s).
  for (const std::string& args : {std::string("simulate --steps 50 --jitter 0.1"),
                                  "report --grid parallel.tp=4,8 -o '" + report + "'",
                                  std::string("sweep --grid model.layers=8..40 --top 1")}) {
    const std::string command = std::string(TRAINPLAN_BINARY) + " " + args;
    const test::RunResult tty = test::run_shell("script -qec \"" + command + "\" /dev/null");
    ASSERT_EQ(tty.exit_code, 0) << args << "\n" << tty.output;
    EXPECT_THAT(tty.output, HasSubstr("100.0%")) << args;
    if (args.rfind("sweep", 0) == 0) {
      EXPECT_THAT(tty.output, HasSubstr("scenarios/s")) << args;
    }
    const test::RunResult piped = test::run_shell(command);
    ASSERT_EQ(piped.exit_code, 0) << args;
    EXPECT_THAT(piped.output, ::testing::Not(HasSubstr("100.0%"))) << args;
  }
  fs::remove(report);
}

TEST(SimulateCli, JsonHasTheResultKeys) {
  const test::RunResult r = test::run_trainplan("simulate " + kExample + " --format json --steps 5 --jitter 0.05 --seed 9");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  for (const char* key : {"step_seconds", "analytic_step_seconds", "lower_bound_seconds", "stages", "critical_path", "steps", "tasks", "events"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j.at("stages").size(), 4u);
  EXPECT_EQ(j.at("steps").at("count"), 5);
  EXPECT_LE(j.at("steps").at("p50").get<double>(), j.at("steps").at("p99").get<double>());
  EXPECT_GE(j.at("step_seconds").get<double>(), j.at("lower_bound_seconds").get<double>());
  const auto& st = j.at("stages").at(0);
  for (const char* key : {"busy", "bubble", "exposed_comm", "peak_in_flight_micro_batches", "planner_in_flight_micro_batches", "activations"}) {
    EXPECT_TRUE(st.contains(key)) << key;
  }
}

TEST(SimulateCli, EvaluateSimulateAddsTheSimulatedStepTime) {
  const test::RunResult json = test::run_trainplan("evaluate " + kExample + " --simulate --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json j = nlohmann::json::parse(json.output);
  const double simulated = j.at("time").at("simulated_step_seconds").get<double>();
  const double analytic = j.at("time").at("step_seconds").get<double>();
  EXPECT_GT(simulated, 0.0);
  EXPECT_NEAR(simulated / analytic, 1.0, 0.05);
  const test::RunResult plain = test::run_trainplan("evaluate " + kExample + " --format json");
  EXPECT_FALSE(nlohmann::json::parse(plain.output).at("time").contains("simulated_step_seconds"));
  const test::RunResult table = test::run_trainplan("evaluate " + kExample + " --simulate");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_THAT(table.output, HasSubstr("simulated"));
}

TEST(SimulateCli, BadTracePathIsAnErrorNamingItAndNothingIsWritten) {
  const fs::path dir = fs::path(::testing::TempDir()) / "trainplan-cli-missing-dir";
  fs::remove_all(dir);
  const std::string path = (dir / "trace.json").string();
  const test::RunResult r = test::run_trainplan("simulate " + kExample + " --trace '" + path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: "));
  EXPECT_THAT(r.output, HasSubstr(path));
  EXPECT_FALSE(fs::exists(dir));
}

TEST(SimulateCli, BadOptionsAreErrors) {
  // Without a file `simulate` uses the built-in default scenario, like `evaluate` (issue 11);
  // tests/errors/test_usage_exits.cpp checks that it is the same scenario.
  EXPECT_EQ(test::run_trainplan("simulate").exit_code, 0);
  EXPECT_EQ(test::run_trainplan("simulate " + kExample + " --steps 0").exit_code, 1);
  EXPECT_EQ(test::run_trainplan("simulate " + kExample + " --jitter -1").exit_code, 1);
  const test::RunResult r = test::run_trainplan("simulate " + kExample + " --set parallel.ppp=2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("parallel.ppp"));
}

}  // namespace
}  // namespace tp
