// Bounds on work (issue 11): every input that would grow without bound is a clear error naming the
// limit and the flag that raises it, within bounded time and memory (limits_test_support.h runs the
// binary under `timeout` and `ulimit -v`). The oracles are counts written out by hand in each test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "input_file.h"
#include "limits_test_support.h"
#include "scenario.h"
#include "sweep_spec.h"
#include "work_limits.h"
#include "yaml_reader.h"

namespace tp {
namespace {

using ::testing::HasSubstr;
using limtest::kMaxSeconds;
using limtest::run_bounded;

std::string example(const std::string& name) { return test::source_path("scenarios/examples/" + name); }

// --- input files ---------------------------------------------------------------------------------

TEST(WorkLimits, EvaluateDevZeroIsAnErrorNotTwoGigabytes) {
  const auto r = run_bounded("evaluate /dev/zero");
  EXPECT_EQ(r.result.exit_code, 1) << r.result.output;
  EXPECT_THAT(r.result.output, HasSubstr("/dev/zero: is not a regular file"));
  EXPECT_LT(r.seconds, kMaxSeconds);
}

TEST(WorkLimits, DirectoriesAreErrorsNamingThemForEveryReader) {
  const std::string dir = ::testing::TempDir();
  for (const std::string& args : {"evaluate " + dir, "sweep " + dir + " --grid parallel.tp=1,2",
                                 "evaluate --profile " + dir, "calibrate fit " + dir}) {
    const auto r = run_bounded(args);
    EXPECT_EQ(r.result.exit_code, 1) << args << "\n" << r.result.output;
    EXPECT_THAT(r.result.output, HasSubstr("is a directory, not a file")) << args;
    EXPECT_THAT(r.result.output, HasSubstr(dir)) << args;
  }
}

TEST(WorkLimits, FileLargerThanTheCapNamesTheLimitAndTheFlag) {
  // 2 MiB + 1 byte of comment: over a 2 MiB cap by exactly one byte, under the default 16 MiB.
  const std::string path = limtest::write_file("big-scenario.yaml", "#" + std::string(2u << 20, 'x') + "\n");
  const auto capped = run_bounded("--max-input-mib 2 evaluate " + path);
  EXPECT_EQ(capped.result.exit_code, 1) << capped.result.output;
  EXPECT_THAT(capped.result.output, HasSubstr(path + ": the file is larger than the input limit of 2 MiB"));
  EXPECT_THAT(capped.result.output, HasSubstr("--max-input-mib"));
  // The same file under the default cap is read (and then fails for what it is, not for its size).
  const auto uncapped = run_bounded("evaluate " + path);
  EXPECT_THAT(uncapped.result.output, ::testing::Not(HasSubstr("input limit"))) << uncapped.result.output;
}

TEST(WorkLimits, ReadInputFileCapIsExact) {
  const std::string path = limtest::write_file("ten-bytes.txt", "0123456789");  // 10 bytes
  EXPECT_EQ(read_input_file(path, 10), "0123456789");
  EXPECT_THROW((void)read_input_file(path, 9), InputError);
}

// --- YAML aliases ----------------------------------------------------------------------------------

TEST(WorkLimits, ExpandedNodeCountIsExactAtTheLimit) {
  // {a: [1, 2], b: *x} with x = [1, 2]: map 1 + key a 1 + seq 1 + items 2 + key b 1 + alias seq 1 + items 2 = 9.
  const YAML::Node root = YAML::Load("a: &x [1, 2]\nb: *x\n");
  EXPECT_NO_THROW(check_expanded_size(root, "t.yaml", 9));
  EXPECT_THROW(check_expanded_size(root, "t.yaml", 8), InputError);
}

TEST(WorkLimits, AliasBombUnderSweepGridIsRejectedFast) {
  // Nine levels of nine aliases: 9^10 ≈ 3.5e9 leaves once expanded (took > 4 GB before the limit).
  const std::string path = limtest::write_file(
      "bomb-sweep.yaml", "base: " + example("default.yaml") + "\ngrid:\n" + limtest::alias_bomb(9, "  "));
  const auto r = run_bounded("sweep " + path);
  EXPECT_EQ(r.result.exit_code, 1) << r.result.output;
  EXPECT_THAT(r.result.output, HasSubstr(path + ": the YAML document has more than 1,000,000 nodes"));
  EXPECT_THAT(r.result.output, HasSubstr("--max-yaml-nodes"));
  EXPECT_LT(r.seconds, kMaxSeconds);
}

TEST(WorkLimits, AliasBombInScenarioAndSelfAliasAreRejected) {
  const std::string bomb = limtest::write_file("bomb-scenario.yaml", "x:\n" + limtest::alias_bomb(9, "  "));
  const std::string self = limtest::write_file("self-alias.yaml", "a: &a [*a, *a]\n");
  for (const std::string& path : {bomb, self}) {
    const auto r = run_bounded("evaluate " + path);
    EXPECT_EQ(r.result.exit_code, 1) << r.result.output;
    EXPECT_THAT(r.result.output, HasSubstr("--max-yaml-nodes")) << path;
    EXPECT_LT(r.seconds, kMaxSeconds);
  }
}

TEST(WorkLimits, AliasBombInASetValueIsRejected) {
  // Eight levels of nine in one flow sequence: 9^8 ≈ 4.3e7 leaves; copying it into the scenario tree
  // expanded every alias before the limit.
  std::string value = "[&l0 [x, x, x, x, x, x, x, x, x]";
  for (int i = 1; i <= 8; ++i) {
    value += ", &l" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) value += (k ? ", *l" : "*l") + std::to_string(i - 1);
    value += "]";
  }
  value += "]";
  const auto r = run_bounded("evaluate --set 'name=" + value + "'");
  EXPECT_EQ(r.result.exit_code, 1) << r.result.output;
  EXPECT_THAT(r.result.output, HasSubstr("--set name: the YAML document has more than 1,000,000 nodes"));
  EXPECT_LT(r.seconds, kMaxSeconds);
}

// --- sweep points ----------------------------------------------------------------------------------

TEST(WorkLimits, CappedProductNeverWraps) {
  const std::uint64_t two32 = 1ull << 32;
  EXPECT_EQ(capped_product(3, 7, 100), 21u);
  EXPECT_EQ(capped_product(two32, two32, 1000), 1001u);           // 2^64 would wrap to 0
  EXPECT_EQ(capped_product(two32, two32, UINT64_MAX), UINT64_MAX);  // ceiling + 1, ceiling clamped
  EXPECT_EQ(capped_product(0, two32, 5), 0u);
}

TEST(WorkLimits, PointCountIsTheProductOfTheAxes) {
  const SweepSpec spec = sweep_from_cli("", {}, {"parallel.tp=1,2", "parallel.pp=1..3", "training.micro_batch=1..8:pow2"});
  EXPECT_EQ(checked_point_count(spec), 2u * 3u * 4u);  // 1,2 x 1,2,3 x 1,2,4,8
}

TEST(WorkLimits, FourAxesOf65536AreAnErrorNotZeroPoints) {
  // 65536^4 = 2^64 wrapped to 0 points before the checked product.
  const auto r = run_bounded("sweep --grid parallel.tp=1..65536 --grid parallel.pp=1..65536 "
                             "--grid parallel.cp=1..65536 --grid training.micro_batch=1..65536");
  EXPECT_EQ(r.result.exit_code, 1) << r.result.output;
  EXPECT_THAT(r.result.output, HasSubstr("more than the limit of 50,000,000 sweep points"));
  EXPECT_THAT(r.result.output, HasSubstr("--max-points"));
  EXPECT_LT(r.seconds, kMaxSeconds);
}

TEST(WorkLimits, FourAxesOf100000EndQuicklyAndTheFlagLowersTheLimit) {
  const auto big = run_bounded("sweep --grid parallel.tp=1..100000 --grid parallel.pp=1..100000 "
                               "--grid parallel.cp=1..100000 --grid training.micro_batch=1..100000");
  EXPECT_EQ(big.result.exit_code, 1) << big.result.output;
  EXPECT_LT(big.seconds, kMaxSeconds);
  // 2 x 3 = 6 points: fine under --max-points 6, an error under 5.
  const std::string grid = " --grid parallel.tp=1,2 --grid parallel.pp=1,2,4";
  EXPECT_THAT(run_bounded("sweep --max-points 5" + grid).result.output, HasSubstr("limit of 5 sweep points"));
  EXPECT_THAT(run_bounded("sweep --max-points 6" + grid).result.output, ::testing::Not(HasSubstr("sweep points")));
}

TEST(WorkLimits, SweepFileGridIsCountedWithTheCommandLineGrid) {
  // The file's 4 values times --grid's 2 = 8 points: over a limit of 7.
  const std::string path = limtest::write_file(
      "sweep-4.yaml", "base: " + example("default.yaml") + "\ngrid:\n  parallel.tp: [1, 2, 4, 8]\n");
  const auto r = run_bounded("sweep --max-points 7 " + path + " --grid parallel.pp=1,2");
  EXPECT_EQ(r.result.exit_code, 1) << r.result.output;
  EXPECT_THAT(r.result.output, HasSubstr("limit of 7 sweep points"));
}

// --- simulated tasks -------------------------------------------------------------------------------

TEST(WorkLimits, SimulateHundredMillionBatchIsAnErrorBeforeAllocating) {
  const auto r = run_bounded("simulate " + example("default.yaml") + " --set training.global_batch=100000000");
  EXPECT_EQ(r.result.exit_code, 1) << r.result.output;
  EXPECT_THAT(r.result.output, HasSubstr("more than the limit of 2,000,000"));
  EXPECT_THAT(r.result.output, HasSubstr("--max-tasks"));
  EXPECT_LT(r.seconds, kMaxSeconds);
}

TEST(WorkLimits, MaxTasksFlagSetsTheLimit) {
  // default.yaml: pp 4, dp 2, micro_batch 1; global_batch 16 -> 8 micro-batches, bound 4 x 8 x 10 +
  // per-stage terms > 320: an error under --max-tasks 100, fine under the default.
  const std::string args = "simulate " + example("default.yaml") + " --set training.global_batch=16";
  EXPECT_THAT(run_bounded("--max-tasks 100 " + args).result.output, HasSubstr("more than the limit of 100 "));
  EXPECT_EQ(run_bounded(args).result.exit_code, 0);
}

}  // namespace
}  // namespace tp
