// `trainplan validate` groups each published set by GPU with a signed mean, so a bias on one generation
// shows (docs/model.md §22). Oracles: hand computation for the summary; for the printed groups, the
// per-run error lines of the same output, re-aggregated in the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "cli/error_summary.h"
#include "test_support.h"

namespace tp {
namespace {

TEST(ValidateGroups, SignedMeanByHand) {
  // Errors +10 %, -30 %, -20 %: mean |e| = 60/3 = 20 %, signed mean = -40/3 = -13.3 %, worst 30 %.
  ErrorSummary e;
  e.add(0.10);
  e.add(-0.30);
  e.add(-0.20);
  EXPECT_NEAR(e.mean(), 0.20, 1e-12);
  EXPECT_NEAR(e.signed_mean(), -0.40 / 3.0, 1e-12);
  EXPECT_NEAR(e.worst, 0.30, 1e-12);
  EXPECT_EQ(e.n, 3);
  EXPECT_EQ(ErrorSummary{}.signed_mean(), 0.0);  // an empty group divides by nothing
}

// The sharded set's per-GPU lines agree with its per-run lines: count and signed mean per GPU.
TEST(ValidateGroups, ShardedSetGpuGroupsMatchTheRows) {
  test::RunResult r = test::run_trainplan("validate");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string sharded = r.output.substr(r.output.find("Published sharded"));
  const std::string table = sharded.substr(0, sharded.find("\n  class "));
  // Each run line: name, class, measured, predicted, error %, MFU %.
  const std::regex row(R"(^\S+\s+\S+\s+([0-9.]+)\s+([0-9.]+)\s+(-?[0-9.]+)%\s+[0-9.]+%$)");
  std::istringstream lines(table);
  std::string line;
  int rows = 0;
  double signed_sum = 0;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (!std::regex_match(line, m, row)) continue;
    ++rows;
    signed_sum += std::stod(m[3]);
  }
  ASSERT_GT(rows, 10);
  // Per-GPU group lines, summed back to the whole set.
  const std::regex group(R"(  gpu (\S+)\s+mean absolute error\s+([0-9.]+)%, signed mean\s+([-+][0-9.]+)%, max\s+([0-9.]+)% over (\d+) runs)");
  int grouped = 0;
  double grouped_signed = 0;
  for (auto it = std::sregex_iterator(sharded.begin(), sharded.end(), group); it != std::sregex_iterator(); ++it) {
    const int n = std::stoi((*it)[5]);
    grouped += n;
    grouped_signed += n * std::stod((*it)[3]);
    EXPECT_LE(std::fabs(std::stod((*it)[3])), std::stod((*it)[2]) + 0.05) << "|signed mean| <= mean |error|";
  }
  EXPECT_EQ(grouped, rows);
  // Rounding: each row is printed to 0.1 %, each group mean to 0.1 %.
  EXPECT_NEAR(grouped_signed, signed_sum, 0.05 * rows);
}

}  // namespace
}  // namespace tp
