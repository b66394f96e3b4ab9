// `trainplan validate --dir DIR` on a user's own runs: a measured value that is missing, zero or not a
// number is an InputError at its place in DIR/index.yaml (an error is divided by it: never an inf), exit
// 1, and nothing is printed on stdout before it (every run is predicted before any output).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "error_test_support.h"
#include "test_support.h"

namespace tp {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string quoted(const std::string& path) { return "'" + path + "'"; }

// "index.yaml:LINE:COL" of `needle` in `index` (errtest::at, whose label is test.yaml).
std::string in_index(const std::string& index, const std::string& needle) {
  return "index.yaml" + errtest::at(index, needle).substr(std::string("test.yaml").size());
}

// A folder with one valid scenario and `index` as its index.yaml.
std::string validation_dir(const std::string& name, const std::string& index) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::create_directories(dir);
  errtest::write_file(name + "/run.yaml", errtest::Yaml{}.str());
  errtest::write_file(name + "/index.yaml", index);
  return dir.string();
}

TEST(ValidateErrors, ZeroMeasuredStepIsLocatedAndExitsOne) {
  const std::string index = "runs:\n- scenario: run.yaml\n  source: mine\n  measured: {step_seconds: 0}\n";
  const std::string dir = validation_dir("validate-zero", index);
  for (const char* format : {"table", "json"}) {
    const test::RunResult r = test::run_trainplan("validate --dir " + quoted(dir) + " --format " + format);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr(in_index(index, "0}") + ": runs[0].measured.step_seconds: value 0 is out of range [1e-06, 1e+07]"));
    EXPECT_THAT(r.output, Not(HasSubstr("measured [s]")));  // no table header
    EXPECT_THAT(r.output, Not(HasSubstr("{")));              // no JSON
  }
}

// A scenario named by an absolute path was glued onto the index's folder ("DIR//tmp/..."), and an empty name
// said the folder was a folder (a CLI audit, 2026-12-01).
TEST(ValidateErrors, AnAbsoluteScenarioPathIsTakenAsItIs) {
  const std::string scenario = errtest::write_file("validate-absolute-run.yaml", errtest::Yaml{}.str());
  const std::string absolute = std::filesystem::absolute(scenario).string();
  const std::string index = "runs:\n- scenario: " + absolute + "\n  source: mine\n  measured: {step_seconds: 70}\n";
  const test::RunResult r = test::run_trainplan("validate --dir " + quoted(validation_dir("validate-absolute", index)));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string empty = "runs:\n- scenario: ''\n  source: mine\n  measured: {step_seconds: 70}\n";
  const test::RunResult e = test::run_trainplan("validate --dir " + quoted(validation_dir("validate-empty-name", empty)));
  EXPECT_EQ(e.exit_code, 1) << e.output;
  EXPECT_THAT(e.output, HasSubstr("runs[0].scenario: empty: name the scenario file"));
}

// A measured step of microseconds printed as 0.000 (a re-audit, 2026-12-01): three significant digits.
TEST(ValidateErrors, ATinyMeasuredStepKeepsItsDigits) {
  const std::string index = "runs:\n- scenario: run.yaml\n  source: mine\n  measured: {step_seconds: 0.0000123}\n";
  const test::RunResult r = test::run_trainplan("validate --dir " + quoted(validation_dir("validate-tiny", index)));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("1.23e-05")) << r.output;
}

TEST(ValidateErrors, MissingOrTextMeasurementsAreLocated) {
  const std::string unmeasured = "runs:\n- scenario: run.yaml\n  source: mine\n";
  const std::string none = validation_dir("validate-none", unmeasured);
  test::RunResult r = test::run_trainplan("validate --dir " + quoted(none));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(in_index(unmeasured, "scenario") + ": runs[0].measured: needs step_seconds or tokens_per_second_per_gpu"));
  const std::string worded = "runs:\n- scenario: run.yaml\n  source: mine\n  measured: {tokens_per_second_per_gpu: fast}\n";
  const std::string text = validation_dir("validate-text", worded);
  r = test::run_trainplan("validate --dir " + quoted(text));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(in_index(worded, "fast") + ": runs[0].measured.tokens_per_second_per_gpu: expected a number, got 'fast'"));
  const std::string no_list = validation_dir("validate-nolist", "runs: run.yaml\n");
  r = test::run_trainplan("validate --dir " + quoted(no_list));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // At the value's line and column (it named the file alone).
  EXPECT_THAT(r.output, HasSubstr(in_index("runs: run.yaml\n", "run.yaml") + ": runs: expected a list of runs"));
}

// Finite values that passed as "a finite number > 0" gave an error of inf % (exit 0) or, with --format json,
// an internal error (exit 70): a denormal step, a rate near the largest double. Both keys at once kept one
// silently; a misspelled key was "missing". Found by black-box testing, 2026-11-30.
TEST(ValidateErrors, MeasuredValuesAreBoundedAndStrict) {
  struct Case {
    const char* name;
    std::string index, needle, message;
  };
  const std::string head = "runs:\n- scenario: run.yaml\n  source: mine\n  measured: ";
  const Case cases[] = {
      {"validate-denormal", head + "{step_seconds: 1e-320}\n", "1e-320",
       ": runs[0].measured.step_seconds: value 1e-320 is out of range [1e-06, 1e+07]"},
      {"validate-huge-rate", head + "{tokens_per_second_per_gpu: 1.7e308}\n", "1.7e308",
       ": runs[0].measured.tokens_per_second_per_gpu: value 1.7e308 is out of range [0.001, 1e+09]"},
      {"validate-both", head + "{step_seconds: 2, tokens_per_second_per_gpu: 900}\n", "2, tokens",
       ": runs[0].measured.step_seconds: give step_seconds or tokens_per_second_per_gpu, not both"},
      {"validate-misspelled", head + "{step_seconds: 2, step_secs: 1.4}\n", "step_secs:",
       ": runs[0].measured.step_secs: unknown key"},
  };
  for (const Case& c : cases) {
    for (const char* format : {"table", "json"}) {
      const test::RunResult r =
          test::run_trainplan("validate --dir " + quoted(validation_dir(c.name, c.index)) + " --format " + format);
      EXPECT_EQ(r.exit_code, 1) << c.name << ": " << r.output;
      EXPECT_THAT(r.output, HasSubstr(in_index(c.index, c.needle) + c.message)) << c.name;
      EXPECT_THAT(r.output, Not(HasSubstr("inf")));
    }
  }
}

// Index shapes a CLI audit (2026-12-01) found ending in an internal error (exit 70: yaml-cpp's "bad
// conversion", "operator[] call on a scalar"), naming no file (an empty index blamed --set), or silently
// ignored (unknown keys): each an InputError at its place, exit 1.
TEST(ValidateErrors, IndexShapesAreInputErrors) {
  struct Case {
    const char* name;
    std::string index, needle, message;
  };
  const std::string run = "- scenario: run.yaml\n  source: mine\n  measured: {step_seconds: 2.5}\n";
  const Case cases[] = {
      {"validate-class-list", "runs:\n- scenario: run.yaml\n  source: mine\n  class: [x]\n  measured: {step_seconds: 2.5}\n",
       "[x]", ": runs[0].class: expected a string"},
      {"validate-scalar-run", "runs:\n- run.yaml\n", "run.yaml", ": runs[0]: expected a mapping of keys to values"},
      {"validate-source-list", "runs:\n- scenario: run.yaml\n  source: [x]\n  measured: {step_seconds: 2.5}\n", "[x]",
       ": runs[0].source: expected a string"},
      {"validate-top-key", "extra: 5\nruns:\n" + run, "extra", ": extra: unknown key; valid keys here: runs"},
      {"validate-folder", "runs:\n- scenario: .\n  source: mine\n  measured: {step_seconds: 2.5}\n", ".\n",
       ": runs[0].scenario: "},
      {"validate-run-key", "runs:\n- scenario: run.yaml\n  source: mine\n  nme: q\n  measured: {step_seconds: 2.5}\n", "nme",
       ": runs[0].nme: unknown key"},
  };
  for (const Case& c : cases) {
    const test::RunResult r = test::run_trainplan("validate --dir " + quoted(validation_dir(c.name, c.index)));
    EXPECT_EQ(r.exit_code, 1) << c.name << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr(in_index(c.index, c.needle) + c.message)) << c.name;
  }
  const test::RunResult folder = test::run_trainplan(
      "validate --dir " + quoted(validation_dir("validate-folder", "runs:\n- {scenario: ., source: mine, measured: {step_seconds: 2.5}}\n")));
  EXPECT_THAT(folder.output, HasSubstr(": is a folder; name the scenario file"));
  const test::RunResult empty = test::run_trainplan("validate --dir " + quoted(validation_dir("validate-empty", "")));
  EXPECT_EQ(empty.exit_code, 1) << empty.output;
  EXPECT_THAT(empty.output, HasSubstr("validate-empty/index.yaml: (document): expected a mapping with runs:"));
}

// A re-audit (2026-12-01): a user's classes grouped nothing, a set with no measured run summarised as a
// mean error of 0, another GPU's scenario was summed into the H100 steps, and `parameters` took -3.
TEST(ValidateErrors, OwnRunsSummariesAreHonest) {
  const std::string classed = "runs:\n- scenario: run.yaml\n  source: mine\n  class: x\n  measured: {step_seconds: 2.5}\n";
  const test::RunResult grouped = test::run_trainplan("validate --dir " + quoted(validation_dir("validate-class", classed)) + " --format json");
  ASSERT_EQ(grouped.exit_code, 0) << grouped.output;
  EXPECT_EQ(nlohmann::json::parse(grouped.output)["sets"]["published"]["by_class"]["x"]["runs"], 1);
  const std::string none = validation_dir("validate-norun", "runs: []\n");
  const test::RunResult table = test::run_trainplan("validate --dir " + quoted(none));
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_THAT(table.output, HasSubstr("step time: no run with a measured value to compare"));
  const test::RunResult json = test::run_trainplan("validate --dir " + quoted(none) + " --format json");
  EXPECT_TRUE(nlohmann::json::parse(json.output)["sets"]["published"]["step_time"]["mean_absolute_error"].is_null());
  // The H100 steps' folder: an A100 scenario, and a parameter count below 1.
  const std::string dir = validation_dir("validate-steps", "runs: []\n");
  std::filesystem::create_directories(std::filesystem::path(dir) / "h100-pytorch");
  errtest::Yaml a100;
  a100.cluster = "{preset: dgx-a100, nodes: 1}";
  errtest::write_file("validate-steps/h100-pytorch/a100.yaml", a100.str());
  errtest::write_file("validate-steps/h100-pytorch/h100.yaml", errtest::Yaml{}.str());
  const std::string steps = "runs:\n- {scenario: a100.yaml, parameters: 8000000000, step_seconds: 1, peak_allocated_bytes: 1e10}\n";
  errtest::write_file("validate-steps/h100-pytorch/index.yaml", steps);
  test::RunResult r = test::run_trainplan("validate --dir " + quoted(dir));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("runs[0].scenario: runs on a100-sxm4-80gb, but this folder holds h100 steps"));
  errtest::write_file("validate-steps/h100-pytorch/index.yaml",
                      "runs:\n- {scenario: h100.yaml, parameters: -3, step_seconds: 1, peak_allocated_bytes: 1e10}\n");
  r = test::run_trainplan("validate --dir " + quoted(dir));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("runs[0].parameters"));
}

// The same folder with a valid measurement validates: exit 0, one run in the table.
TEST(ValidateErrors, OwnRunsValidate) {
  const std::string dir = validation_dir("validate-ok", "runs:\n- scenario: run.yaml\n  source: mine\n  measured: {step_seconds: 2.5}\n");
  const test::RunResult r = test::run_trainplan("validate --dir " + quoted(dir));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("step time: mean absolute error"));
  EXPECT_THAT(r.output, HasSubstr("over 1 runs"));
}

}  // namespace
}  // namespace tp
