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
  // TARGET NOT YET MET (mean <= 5 %, max <= 12 %): today 7.4 %, 40.4 % max (7.3 % before the A100 defaults took
  // FlashAttention-2's benchmark curve and the measured kernel-class fractions, docs/model.md §13, 2026-11-29,
  // which held-out sets favour: fms-fsdp's two A100 runs +3.4 / +9.3 -> +6.2 / +11.3 %; 7.5 % before FSDP's
  // SHARD_GRAD_OP went unit by unit and AMD hosts paid NCCL's network post overhead, §15 and §14, 2026-11-28;
  // 7.6 %, 40.6 % before DeepSpeed's gradient buckets and NCCL's ring latency over all ranks; 7.4 %, 41.0 % before FSDP's copies
  // around its collectives on the compute stream and its reduce-scatter after every micro-batch, docs/model.md §15
  // "FSDP's copies": the one FSDP2 run, NeMo AutoModel's 70B, +5.0 -> +12.5 %; 8.3 % before the FSDP runs on
  // torch >= 2.1 stopped each checkpointed block's recompute at its last save, torch's non-reentrant early stop,
  // docs/model.md §6 "Early stop"; 8.6 % before DeepSpeed's blocking gradient copy; 9.0 %, 49.6 % before the PyTorch
  // FSDP blog's submodule units were freed after the recompute forward and took their benchmark's backward
  // prefetch, none, docs/model.md §15; 9.1 % before llm-foundry's
  // FlashAttention rows unpadded Q, K, V as its flash_attn_fn does, docs/model.md §20; 9.3 % before the Megatron-Core
  // rows with pp > 1 ran the interleaved schedule their README implies, docs/model.md §22 item 5; 9.5 % before the A100s' offload
  // copies shared each PCIe switch's uplink between its two GPUs, docs/model.md §15 "Offload"; 10.5 % before the llm-foundry
  // runs named the Triton attention kernel their tables ran, docs/model.md §20; 11.0 %, 59.7 % before the
  // PyTorch FSDP blog runs took their benchmark's settings, submodule FSDP units among them; 11.4 %,
  // 62.7 % before the overlap contention and the optimizer step kernel, docs/model.md §15, §20, §22). 20.0 % before the GEMMs
  // and fused attention of busy multi-GPU H100 nodes ran at the sustained clock (1575 of 1980 MHz,
  // docs/model.md §15 "Sustained clock"): the H100 runs went from 22.8 % (signed -21.9 %) to 9.9 %
  // (signed -5.0 %), the A100 ones did not move. The history before that (activation offload, DeepSpeed
  // prefetch settings, dropout, padded vocabularies, ZeRO-3 step ends) is in docs/model.md §22. These
  // bounds record the level as a regression guard, not as a goal; §22 analyses the errors by class. The
  // max is the PyTorch FSDP blog's 1T run, whose source names a bottleneck no planner input describes
  // (the caching allocator near full memory, §22 item 6).
  EXPECT_LE(mean, 0.077);
  EXPECT_LE(worst, 0.42);
}

}  // namespace
}  // namespace tp
