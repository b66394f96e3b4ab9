// Step time against the published sharded-data-parallel and Megatron-Core runs
// (scenarios/validation/sharded/index.yaml, written by scripts/sharded_scenarios.py from
// published-sharded-runs.yaml). The oracle is each source's published measurement (tokens/s, step time,
// or TFLOP/s per GPU under the source's own FLOP formula), converted to seconds per step in index.yaml as
// its `conversion` field says. One set of default efficiencies per GPU generation and framework, no
// per-run constant. Issue targets: mean absolute error <= 5 %, max <= 12 %.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "commands.h"

namespace tp {
namespace {

TEST(ShardedValidation, PublishedShardedRuns) {
  const std::vector<ValidationRow> rows =
      validation_rows(std::string(TRAINPLAN_SOURCE_DIR) + "/scenarios/validation/sharded");
  // All 45 runs of published-sharded-runs.yaml are simulated: none is excluded.
  ASSERT_EQ(rows.size(), 45u);
  double sum = 0, worst = 0;
  std::map<std::string, int> per_source;
  for (const auto& r : rows) {
    ASSERT_TRUE(std::isfinite(r.predicted_step) && r.predicted_step > 0) << r.name;
    ASSERT_TRUE(std::isfinite(r.measured_step) && r.measured_step > 0) << r.name;
    const double err = r.predicted_step / r.measured_step - 1.0;
    std::printf("%-52s %-22s measured %9.3f s  predicted %9.3f s  %+7.1f%%\n", r.name.c_str(),
                r.failure_class.c_str(), r.measured_step, r.predicted_step, 100 * err);
    sum += std::fabs(err);
    worst = std::max(worst, std::fabs(err));
    ++per_source[r.source];
  }
  // Counts per source as published-sharded-runs.yaml lists them.
  EXPECT_EQ(per_source["llmfoundry"], 22);
  EXPECT_EQ(per_source["fmsfsdp"], 4);
  EXPECT_EQ(per_source["megatron-core"], 6);
  EXPECT_EQ(per_source["deepspeed-azure"], 5);
  const double mean = sum / rows.size();
  std::printf("sharded set: mean absolute error %.2f%%, max %.2f%% over %zu runs\n", 100 * mean, 100 * worst,
              rows.size());
  // TARGET NOT YET MET (mean <= 5 %, max <= 12 %): today 20.0 %, 62.7 % max (19.94 % before the
  // Megatron-Bridge Llama-3.1 405B run got its own 126 layers with the first and last stage one layer
  // lighter, docs/model.md §7 "Uneven chunks", instead of 128: -21.2 -> -25.4 %; 20.10 % before the
  // activation offload's PCIe copies were timed, docs/model.md §15; 19.17 % before the
  // DeepSpeed Azure runs got the stage3_max_live_parameters / stage3_max_reuse_distance of 3e9 their
  // recipes set, Megatron-DeepSpeed examples/azure/*.sh: the gathers the 1e9 default kept waiting behind
  // modules of >= 1e9 parameters (530B, 1T, 2T) are prefetched, so those runs are predicted faster;
  // 19.24 % before the eleven Megatron-based GPT runs got Megatron's default dropout 0.1, docs/model.md §22;
  // 19.4 % before the
  // DeepSpeed Azure runs got their Megatron-DeepSpeed layer code without FlashAttention and Megatron's
  // end-of-step gradient syncs slowed the tied-GPT pipeline runs by 0.2-0.6 %; 19.6 % / 62.8 % before
  // the ZeRO-3 ends of the step and the recompute's waits behind the reduce-scatter slowed the 33 ZeRO-3
  // runs by 0.0-1.6 %; 19.7 % before Megatron's padded vocabulary and loss traffic slowed the Megatron
  // runs by 0.2-4 %). These bounds record that level as a regression guard, not as a goal;
  // docs/model.md §22 analyses the errors by class.
  // The level was 15.0 % / 58.9 % while MPT's GELU was timed as Hugging Face's nine-kernel gelu_new; MPT
  // runs torch.nn.GELU (one kernel), and with it every H100 llm-foundry run is 17-42 % fast while the
  // A100 ones are within -8 … +4 %: the H100 gap of §22 item 7, not the GELU. The max is the PyTorch FSDP
  // blog's 1T run with the SGD optimizer its source prints (its FLOP formula is not printed, item 6).
  EXPECT_LE(mean, 0.205);
  EXPECT_LE(worst, 0.628);
}

}  // namespace
}  // namespace tp
