// Step time against published runs (scenarios/validation/index.yaml, converted from
// published-runs.yaml): Korthikanti et al. 2022 Table 5 (8 runs, both modes, A100) and the NeMo 24.07
// H100 FP8 table (10 runs, tokens/s per GPU -> step time). One set of default efficiencies per GPU
// generation, no per-run tuning. Targets (issue): mean absolute error <= 5%, none above 12%.
//
// NOT MET for the NeMo H100 FP8 runs, and the tolerances below say so. With the measured H100 profile
// (fp8 GEMMs at ~0.72 of the datasheet, scenarios/profiles/h100-sxm.yaml) and the FP8 physics the
// planner models from sources (docs/model.md, "FP8 training": Transformer Engine's quantization kernels,
// the FP8 weight cast once per step, the output layer in bf16), the 10 NeMo runs are still predicted
// 15-27 % too fast (mean 22.8 %). The remaining cost is not identified from sources yet (candidates and
// what was ruled out: docs/model.md, "FP8 training", "What is left"); no factor hides it. The
// Korthikanti A100 (bf16) runs are untouched by that work and held where they are.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "commands.h"

namespace tp {
namespace {

TEST(StepTimeValidation, PublishedRunsWithinTargets) {
  const std::vector<ValidationRow> rows = validation_rows(std::string(TRAINPLAN_SOURCE_DIR) + "/scenarios/validation");
  ASSERT_EQ(rows.size(), 18u);
  double sum[2] = {0, 0}, worst[2] = {0, 0};
  int count[2] = {0, 0};
  for (const auto& r : rows) {
    const double err = r.predicted_step / r.measured_step - 1.0;
    std::printf("%-52s measured %9.3f s  predicted %9.3f s  %+6.1f%%\n", r.name.c_str(), r.measured_step,
                r.predicted_step, 100 * err);
    const int set = r.source == "nemo2407" ? 1 : 0;
    ASSERT_TRUE(set == 1 || r.source == "korthikanti2022") << r.source;
    sum[set] += std::fabs(err);
    worst[set] = std::max(worst[set], std::fabs(err));
    ++count[set];
    // The FP8 cost left unmodelled keeps the NeMo predictions fast; one more than 3 % slow would mean
    // the FP8 rules overcount (gpt3-20b is +1.3 % with the overlap contention, docs/model.md §15).
    if (set == 1) {
      EXPECT_LT(err, 0.03) << r.name;
    }
  }
  ASSERT_EQ(count[0], 8);
  ASSERT_EQ(count[1], 10);
  const double mean_k = sum[0] / count[0], mean_n = sum[1] / count[1];
  std::printf("Korthikanti A100: mean absolute error %.2f%%, max %.2f%%\n", 100 * mean_k, 100 * worst[0]);
  std::printf("NeMo H100 FP8:    mean absolute error %.2f%%, max %.2f%%\n", 100 * mean_n, 100 * worst[1]);
  // Korthikanti (bf16, A100 generation defaults): 3.2 % / 6.6 % with the unfused-attention kernel chain
  // (docs/model.md §15; 5.6 % / 14.4 % before). Target 5 % / 12 %: met.
  EXPECT_LE(mean_k, 0.04);
  EXPECT_LE(worst[0], 0.07);
  // NeMo H100 FP8: 4.0 % mean / 7.5 % max with the overlap contention (4.5 % / 8.1 % without) since the GEMMs and fused attention of a busy 8-GPU node run
  // at the sustained clock, 1575 of the calibration's 1980 MHz (docs/model.md §15, "Sustained clock"):
  // target 5 % / 12 % met. Before: 20.4 % / 23.8 % (the same profile at burst clocks); 28.2 % / 31.5 %
  // with the measured profile and no FP8 physics (docs/model.md §21 lists the FP8 rules added since).
  EXPECT_LE(mean_n, 0.05);
  EXPECT_LE(worst[1], 0.09);
}

}  // namespace
}  // namespace tp
