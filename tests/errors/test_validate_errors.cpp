// `trainplan validate --dir DIR` on a user's own runs: a measured value that is missing, zero or not a
// number is an InputError at its place in DIR/index.yaml (an error is divided by it: never an inf), exit
// 1, and nothing is printed on stdout before it (every run is predicted before any output).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
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
    EXPECT_THAT(r.output, HasSubstr(in_index(index, "0}") + ": step_seconds: needs a measured value, a finite number > 0"));
    EXPECT_THAT(r.output, Not(HasSubstr("measured [s]")));  // no table header
    EXPECT_THAT(r.output, Not(HasSubstr("{")));              // no JSON
  }
}

TEST(ValidateErrors, MissingOrTextMeasurementsAreLocated) {
  const std::string unmeasured = "runs:\n- scenario: run.yaml\n  source: mine\n";
  const std::string none = validation_dir("validate-none", unmeasured);
  test::RunResult r = test::run_trainplan("validate --dir " + quoted(none));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(in_index(unmeasured, "scenario") + ": measured: needs step_seconds or tokens_per_second_per_gpu"));
  const std::string worded = "runs:\n- scenario: run.yaml\n  source: mine\n  measured: {tokens_per_second_per_gpu: fast}\n";
  const std::string text = validation_dir("validate-text", worded);
  r = test::run_trainplan("validate --dir " + quoted(text));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(in_index(worded, "fast") + ": tokens_per_second_per_gpu: needs a measured value"));
  const std::string no_list = validation_dir("validate-nolist", "runs: run.yaml\n");
  r = test::run_trainplan("validate --dir " + quoted(no_list));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("runs: expected a list of runs"));
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
