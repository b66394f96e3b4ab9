// Inputs inside their ranges whose combination gave impossible results, found by black-box testing on
// 2026-11-30 (about 6,000 random scenarios): a report that built a step of 429 M tasks (24 GB, killed), MoE
// experts of no width (NaN times), 10^10 GPUs (negative times and costs), clocks that scaled kernels past
// the GPU's peak (an MFU of 310 %), cuDNN attention on an A100 at 1.22 x the tensor-core peak. Oracles: the
// limits the documentation states and the physical bound that no kernel runs above its peak.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "error_test_support.h"
#include "test_support.h"

namespace tp {
namespace {

using ::testing::HasSubstr;

// `evaluate` of the default test scenario with `profile_text` as its profile (files named after `name`).
test::RunResult evaluate_with_profile(const std::string& name, const std::string& profile_text) {
  errtest::Yaml y;
  y.extra = "profile: " + errtest::write_file(name + "-profile.yaml", profile_text) + "\n";
  return test::run_trainplan("evaluate '" + errtest::write_file(name + ".yaml", y.str()) + "'");
}

// The report simulates no step over --max-tasks: its timeline says so and the rest of the page is written
// (tests/report, ReportErrors.AStepOverTheTaskLimitLeavesTheTimelineOut; it exited 1 before 2026-12).
TEST(PhysicalBounds, TheReportKeepsTheSimulatorsTaskLimit) {
  const std::string path = errtest::write_file("bounds-report.yaml", errtest::Yaml{}.str());
  const test::RunResult r = test::run_trainplan("--max-tasks 10 report '" + path + "' -o '" + path + ".html'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream page(path + ".html");
  const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_THAT(html, HasSubstr("more than the limit of 10"));
}

// Products of values each inside its range left 64 bits (a CLI audit, 2026-12-01): micro_batch 2^52 on
// 16,384 nodes (dp 2^17) wrapped micro_batch × dp to 0 and the divisibility check divided by it (SIGFPE, no
// message); global_batch 10^6 × sequence_length 2^52 wrapped the JSON's tokens_per_step to -2^63.
TEST(PhysicalBounds, BatchProductsStayCountable) {
  errtest::Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 16384}";
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 4503599627370496}";
  y.parallel = "{tp: 1, pp: 1}";
  errtest::Failure f = errtest::load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.field, "training.global_batch");
  EXPECT_THAT(f.what, HasSubstr("is smaller than micro_batch × dp = 4503599627370496 × 131072"));
  y.training = "{sequence_length: 4096, micro_batch: 4503599627370496}";  // global_batch unsaid: micro_batch × dp
  f = errtest::load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.field, "training.micro_batch");
  EXPECT_THAT(f.what, HasSubstr("is more than 2^52"));
  y.cluster = "{preset: dgx-h100, nodes: 1}";
  y.training = "{sequence_length: 4503599627370496, global_batch: 1000000, micro_batch: 1}";
  f = errtest::load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.field, "training.global_batch");
  EXPECT_THAT(f.what, HasSubstr("tokens is more than the 1e+18 tokens a run may train on"));
}

// A made-up model's parameter count beyond 64 bits is written as the number it is (7.25e29 here: 10^5
// layers of hidden 2^40), not wrapped to -2^63.
TEST(PhysicalBounds, CountsBeyond64BitsAreNotWrapped) {
  errtest::Yaml y;
  y.model = "{layers: 100000, hidden: 1099511627776, heads: 1, ffn_hidden: 1099511627776, vocab: 1099511627776}";
  y.training = "{sequence_length: 8, global_batch: 8}";
  y.parallel = "{tp: 1, pp: 1}";
  const test::RunResult r =
      test::run_trainplan("evaluate --format json '" + errtest::write_file("bounds-huge-model.yaml", y.str()) + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("-9223372036854775808")));
  EXPECT_THAT(r.output, HasSubstr("\"parameters\": 7.25"));
}

// An empty profile (a CLI audit, 2026-12-01) was taken as the generation's defaults under its own name: an
// error now, for `evaluate --profile` and a scenario's `profile:` alike.
TEST(PhysicalBounds, AnEmptyProfileIsNoProfile) {
  for (const char* text : {"", "# nothing yet\n"}) {
    const test::RunResult r = evaluate_with_profile("bounds-empty", text);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("bounds-empty-profile.yaml: holds no hardware profile"));
  }
}

TEST(PhysicalBounds, AnExpertHasAWidth) {
  errtest::Yaml y;
  y.model = "{layers: 2, hidden: 1024, heads: 8, vocab: 32000, moe: {experts: 8, top_k: 2}, bias: true}";
  const errtest::Failure f = errtest::load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.field, "model.moe.expert_ffn_hidden");
}

TEST(PhysicalBounds, TheGpuCountStaysCountable) {
  errtest::Yaml y;
  y.cluster = "{preset: dgx-h100, gpus_per_node: 1024, nodes: 10000000}";
  const errtest::Failure f = errtest::load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, HasSubstr("cluster.nodes: value 10000000 is out of range [1, 2000000]"));
}

TEST(PhysicalBounds, ClocksAreOnesTheGpuRunsAt) {
  errtest::Yaml y;
  y.cluster = "{preset: dgx-h100, sustained_clock: 2500 MHz}";  // the H100 SXM boosts to 1980 MHz
  errtest::Failure f = errtest::load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, HasSubstr("cluster.sustained_clock: 2500 MHz is above what the GPU reaches"));
  const test::RunResult r = evaluate_with_profile("bounds-clock", "gpu: h100-sxm-80gb\nclock: 150 MHz\n");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("clock: the SM clock the rates were timed at, 150 MHz, is not one the GPU runs at"));
}

// Llama 3.1 8B on 8 A100 at s 131,072 with cuDNN attention: no kernel above the peak, so the hardware FLOPs a
// GPU runs per second stay below its bf16 peak (the MFU counts the attention's whole score matrix, the
// kernels half of it: docs/model.md §15, "Rates").
TEST(PhysicalBounds, NoKernelRunsAboveThePeak) {
  const Plan p = test::plan(
      "model: llama3.1-8b\ncluster: dgx-a100\n"
      "training: {sequence_length: 131072, global_batch: 8, attention_kernel: cudnn}\n");
  EXPECT_LE(p.time.hfu, 1.0);
  EXPECT_GT(p.time.hfu, 0.5);
}

// A profile's measured GEMM of 1 ns (the loader's least time) gave an MFU of 146 %. Oracle: 2 x 8192^3 FLOP
// at the H100's 989.4 TFLOP/s bf16 peak take 1.11 ms at the least.
TEST(PhysicalBounds, AMeasuredGemmIsNoFasterThanThePeak) {
  const test::RunResult r = evaluate_with_profile(
      "bounds-gemm", "gpu: h100-sxm-80gb\ngemm_measured:\n  - {dtype: bf16, m: 8192, n: 8192, k: 8192, time: 1 ns}\n");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("gemm_measured[0].time: 1e-09 s is faster than the GPU's bf16 peak allows"));
}

// A peak set below the catalog's made the built-in profile's measured GEMMs "faster than the peak", an error
// that named only the profile's line (a CLI audit, 2026-12-01): it names the scenario's setting and the way out.
TEST(PhysicalBounds, ALoweredPeakIsNamedWhenTheProfileOutrunsIt) {
  const test::RunResult r = test::run_trainplan("evaluate --set 'cluster.gpu.peak.bf16=600 TFLOP/s'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the scenario's cluster.gpu.peak.bf16 is below the catalog's 989.4 TFLOP/s"));
  EXPECT_THAT(r.output, HasSubstr("give a profile measured on this GPU"));
}

// --max-yaml-nodes bounds what a user gives: at 100 it refused the built-in catalog ("catalog/gpus.yaml: ...
// an alias bomb?"), a file the user never wrote. The example scenario has fewer than 100 nodes.
TEST(PhysicalBounds, TheYamlNodeLimitIsTheUsersNotTheCatalogs) {
  const std::string example = test::source_path("scenarios/examples/llama3.1-8b-8xh100.yaml");
  const test::RunResult r = test::run_trainplan("--max-yaml-nodes 100 evaluate '" + example + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const test::RunResult tight = test::run_trainplan("--max-yaml-nodes 10 evaluate '" + example + "'");
  EXPECT_EQ(tight.exit_code, 1) << tight.output;
  EXPECT_THAT(tight.output, HasSubstr("llama3.1-8b-8xh100.yaml: the YAML document has more than 10 nodes"));
}

// A profile's AdamW time of 1e12 s per element planned a step of 3e13 years with exit 0.
TEST(PhysicalBounds, AProfilesKernelTimesAreAGpus) {
  const test::RunResult r = evaluate_with_profile(
      "bounds-element", "gpu: h100-sxm-80gb\nkernel_shape: {adamw: {element_time: 1e12 s}}\nkernel_launch: 5 s\n");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("kernel_shape.adamw.element_time: 1e+12 s is longer than any GPU takes"));
}

}  // namespace
}  // namespace tp
