// Usage errors of the trainplan binary (issue 11, "Messages and exits"): every one exits 1 with a message
// naming the option, nothing is half-written, and `simulate` has the built-in default scenario of
// `evaluate`. Oracles: the exit codes promised in README.md ("Exit codes") and the option names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <nlohmann/json.hpp>
#include <thread>

#include "test_support.h"

namespace tp {
namespace {

using ::testing::HasSubstr;

void expect_usage_error(const std::string& args, const std::string& culprit) {
  const test::RunResult r = test::run_trainplan(args);
  EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
  EXPECT_THAT(r.output, HasSubstr(culprit)) << args;
}

// Issue case: CLI11 parse errors exited 105-114; README promises 1.
// A word that is no command said only "A subcommand is required" (a CLI audit, 2026-12-01): the word and the
// commands are named, exit 1; a work limit's value is no command.
TEST(UsageExits, AnUnknownCommandIsNamed) {
  const test::RunResult r = test::run_trainplan("frobnicate");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("unknown command 'frobnicate'; the commands: evaluate, simulate"));
  const test::RunResult limit = test::run_trainplan("--max-points 5");
  EXPECT_EQ(limit.exit_code, 1) << limit.output;
  EXPECT_THAT(limit.output, ::testing::Not(::testing::HasSubstr("unknown command '5'")));
}

TEST(UsageExits, ParseErrorsExitOne) {
  expect_usage_error("evaluate --no-such-option", "--no-such-option");
  expect_usage_error("evaluate --format xml", "--format");
  expect_usage_error("", "subcommand");
  expect_usage_error("simulate --steps 0", "--steps");
  expect_usage_error("simulate --steps many", "--steps");
  // --help still exits 0.
  EXPECT_EQ(test::run_trainplan("evaluate --help").exit_code, 0);
}

// Issue cases: --top 0, --top -5, --simulate-top -1 passed silently.
TEST(UsageExits, TopCountsMustBePositive) {
  expect_usage_error("sweep --grid parallel.tp=1,2 --top 0", "--top");
  expect_usage_error("sweep --grid parallel.tp=1,2 --top -5", "--top");
  expect_usage_error("sweep --grid parallel.tp=1,2 --simulate-top -1", "--simulate-top");
}

// Issue case: --threads -1 was accepted, --threads 2147483647 grew to 9 GB.
TEST(UsageExits, ThreadsWithinHardwareTimesFour) {
  expect_usage_error("sweep --grid parallel.tp=1,2 --threads -1", "--threads");
  expect_usage_error("sweep --grid parallel.tp=1,2 --threads 0", "--threads");
  expect_usage_error("sweep --grid parallel.tp=1,2 --threads 2147483647", "--threads");
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  expect_usage_error("sweep --grid parallel.tp=1,2 --threads " + std::to_string(4 * hw + 1), "--threads");
  // The bound itself is accepted (the default scenario's tp=1,2 grid has feasible points: exit 0 or 2,
  // never a usage error).
  const auto ok = test::run_trainplan("sweep --grid parallel.tp=1,2 --threads " + std::to_string(4 * hw));
  EXPECT_NE(ok.exit_code, 1) << ok.output;
}

// Issue case: --jitter nan was accepted (CLI::Range lets NaN through); negative too.
TEST(UsageExits, JitterMustBeAFiniteFraction) {
  expect_usage_error("simulate --jitter nan", "--jitter");
  expect_usage_error("simulate --jitter inf", "--jitter");
  expect_usage_error("simulate --jitter 10", "--jitter");  // a step of 0.007 s against a lower bound of 14.3 s
  expect_usage_error("simulate --jitter -0.1", "--jitter");
}

// An empty path (an unset shell variable) planned the built-in scenario, or wrote no trace, silently.
TEST(UsageExits, AnEmptyPathIsAnError) {
  expect_usage_error("evaluate ''", "scenario: an empty path");
  expect_usage_error("simulate --trace ''", "--trace: an empty path");
  expect_usage_error("sweep --grid parallel.tp=1,2 --csv ''", "--csv: an empty path");
  expect_usage_error("report -o ''", "an empty path");
}

// A key ending in a dot was read as the key without it.
TEST(UsageExits, ASetKeyEndingInADotIsAnError) {
  expect_usage_error("evaluate --set parallel.tp.=2", "--set: parallel.tp.: empty component in the key");
}

// "-1" and "99999999999999999999" both became seed 18446744073709551615 (the same draws).
TEST(UsageExits, ASeedIsAWholeNumber) {
  expect_usage_error("simulate --jitter 0.1 --seed -1", "--seed: '-1' is not a whole number");
  expect_usage_error("simulate --seed 99999999999999999999", "--seed: '99999999999999999999' is not a whole number");
}

// Issue case: --csv-all without --csv passed silently.
TEST(UsageExits, CsvAllNeedsCsv) { expect_usage_error("sweep --grid parallel.tp=1,2 --csv-all", "--csv"); }

// Issue case: duplicate grid values were evaluated (and counted) twice.
TEST(UsageExits, DuplicateGridValuesAreErrors) {
  expect_usage_error("sweep --grid parallel.tp=2,4,2", "given twice");
  expect_usage_error("sweep --grid parallel.recompute=full,selective,full", "grid.parallel.recompute");
}

// Issue case: `--csv DIR` left DIR.tmp behind.
TEST(UsageExits, CsvToADirectoryIsAnErrorAndLeavesNoTmp) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "trainplan-csv-dir";
  std::filesystem::create_directories(dir);
  expect_usage_error("sweep --grid parallel.tp=1,2 --csv '" + dir.string() + "'", "is a directory");
  EXPECT_FALSE(std::filesystem::exists(dir.string() + ".tmp"));
  const std::filesystem::path nowhere = dir / "no-such-folder" / "out.csv";
  expect_usage_error("sweep --grid parallel.tp=1,2 --csv '" + nowhere.string() + "'", "does not exist");
  std::filesystem::remove_all(dir);
}

// README, "Output files": a missing folder is an error before any work. `simulate --trace` and `report -o`
// found it only once the plan and its simulation (and the report's sweep) had run: here the scenario they
// would read does not exist, so the error names the output only when it is checked first.
TEST(UsageExits, TraceAndReportTargetsAreCheckedBeforeTheWork) {
  const std::filesystem::path nowhere = std::filesystem::path(::testing::TempDir()) / "no-such-folder-tp";
  const std::string missing_scenario = (nowhere / "scenario.yaml").string();
  const test::RunResult sim =
      test::run_trainplan("simulate '" + missing_scenario + "' --trace '" + (nowhere / "t.json").string() + "'");
  EXPECT_EQ(sim.exit_code, 1) << sim.output;
  EXPECT_THAT(sim.output, HasSubstr("cannot write the trace file"));
  const test::RunResult rep =
      test::run_trainplan("report '" + missing_scenario + "' -o '" + (nowhere / "r.html").string() + "'");
  EXPECT_EQ(rep.exit_code, 1) << rep.output;
  EXPECT_THAT(rep.output, HasSubstr("cannot write the report"));
  EXPECT_THAT(rep.output, HasSubstr("does not exist"));
}

// Found by black-box testing, 2026-12-01: a scenario after --set or --grid was taken as one more key
// ("simulate --set parallel.pp=4 FILE": "expected key=value"). Each flag takes one value; the file is the
// scenario, as anywhere else on the line.
TEST(UsageExits, AScenarioAfterSetOrGridIsTheScenario) {
  const std::string file = test::source_path("scenarios/examples/gpt2-124m-2x3090.yaml");
  for (const std::string command : {"evaluate --set parallel.pp=2 ", "simulate --set parallel.pp=2 ",
                                    "sweep --grid parallel.pp=1,2 --set training.micro_batch=1 "}) {
    const test::RunResult r = test::run_trainplan(command + "'" + file + "'");
    EXPECT_EQ(r.exit_code, 0) << command << r.output;
    EXPECT_THAT(r.output, HasSubstr("gpt2-124m-2x3090.yaml")) << command;
  }
}

// Issue case: `--profile DIR` exited 0 with the defaults.
TEST(UsageExits, ProfileDirectoryIsAnError) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "trainplan-profile-dir";
  std::filesystem::create_directories(dir);
  expect_usage_error("evaluate --profile '" + dir.string() + "'", dir.string() + ": is a directory");
  expect_usage_error("simulate --profile '" + dir.string() + "'", dir.string() + ": is a directory");
  std::filesystem::remove_all(dir);
}

// Issue case: `simulate` needed a scenario file where `evaluate` and `sweep` have the built-in default.
TEST(UsageExits, SimulateUsesTheBuiltInDefault) {
  const test::RunResult sim = test::run_trainplan("simulate --format json");
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  const test::RunResult eval = test::run_trainplan("evaluate --format json");
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  const auto s = nlohmann::json::parse(sim.output);
  const auto e = nlohmann::json::parse(eval.output);
  // The same scenario: same name and the simulator's analytic step equals evaluate's step time.
  EXPECT_EQ(s.at("scenario").at("name"), e.at("scenario").at("name"));
  EXPECT_DOUBLE_EQ(s.at("analytic_step_seconds").get<double>(), e.at("time").at("step_seconds").get<double>());
}

}  // namespace
}  // namespace tp
