// memory.fsdp_unit: submodule (docs/model.md §15, "ZeRO-3 gathers per module"): FSDP units of one
// submodule each gather module by module with no live-parameter limit, one unit ahead.
// Oracles, by hand: a GPT layer's Linear weights are 3h^2 (qkv), h^2 (proj), 4h^2 (fc1), 4h^2 (fc2)
// (Narayanan et al. 2021, eq. 2); FSDP1 prefetches the next unit whatever its size (no
// stage3_max_live_parameters of DeepSpeed's kind); the benchmark behind the PyTorch FSDP blog wraps each
// submodule of a Block this way (ptd_benchmark models.py, ShardedGPT: wrapper(Block(..., wrapper=wrap))).
#include <gtest/gtest.h>

#include "estimate.h"
#include "estimate_parts.h"
#include "framework_rules.h"
#include "op_graph.h"
#include "sharded_time.h"
#include "tests/test_support.h"
#include "zero3_modules.h"

namespace tp {
namespace {

const std::string kGpt =
    "model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 8192, bias: false}\n"
    "cluster: {preset: dgx-a100, nodes: 2}\n"
    "training: {framework: fsdp, sequence_length: 2048, global_batch: 16, micro_batch: 1}\n"
    "parallel: {dp: 16, zero: 3}\n";

TEST(FsdpUnit, SubmoduleUnitsGatherModuleByModuleWithNoLiveLimit) {
  const FrameworkRules& fsdp = framework_rules(Framework::fsdp);
  const Zero3Settings layers = zero3_settings_of(fsdp, test::scenario(kGpt).memory);
  EXPECT_TRUE(layers.whole_layers);
  const Zero3Settings units = zero3_settings_of(fsdp, test::scenario(kGpt + "memory: {fsdp_unit: submodule}\n").memory);
  EXPECT_FALSE(units.whole_layers);
  // No module is too large to let the next one be prefetched: even a 10^15-parameter one.
  EXPECT_TRUE(zero3_prefetch_allowed(Zero3Module{1e15, 1.0, 1.0}, units.live_parameters));
}

TEST(FsdpUnit, GatheredParametersAreTheLargestModuleAndOneUnitAhead) {
  // h = 4096: qkv 3h^2 = 50.3 M, proj 16.8 M, fc1 and fc2 67.1 M each; a layer 12 h^2 = 201.3 M.
  // Whole layers, one ahead: 2 x 12 h^2. Submodule units, one ahead: 2 x 4 h^2.
  const Scenario s = test::scenario(kGpt);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Zero3Modules mods = zero3_modules(g.layer, 1, 1, framework_rules(Framework::fsdp).zero3_persistence_threshold);
  const double h2 = 4096.0 * 4096.0;
  ASSERT_NEAR(mods.largest, 4 * h2, 1.0);
  const FrameworkRules& fsdp = framework_rules(Framework::fsdp);
  const Zero3Settings layers = zero3_settings_of(fsdp, s.memory);
  const Zero3Settings units = zero3_settings_of(fsdp, test::scenario(kGpt + "memory: {fsdp_unit: submodule}\n").memory);
  EXPECT_NEAR(zero3_gathered_params(layers, mods, 1), 2 * mods.gathered, 1.0);
  EXPECT_NEAR(zero3_gathered_params(units, mods, 1), 2 * 4 * h2, 1.0);
  EXPECT_NEAR(zero3_gathered_params(units, mods, 0), 4 * h2, 1.0);
  // Full recompute changes nothing here: the recompute forward frees each unit after its forward as the
  // first forward does, so the backward holds one unit and one ahead, 8 h^2, not the layer's 12 h^2.
  EXPECT_TRUE(units.recompute_regathers);
  // The estimate's buffers shrink by the difference, 2 x 8 h^2 parameters of 2 bytes (bf16 weights); the
  // small vocabulary keeps the loss working set (fp32 logits, 2048 x 8192 x 4 B x 2) below both.
  const Estimate whole = estimate(s);
  const Estimate sub = estimate(test::scenario(kGpt + "memory: {fsdp_unit: submodule}\n"));
  // Within the 5 % allocator slack the overhead adds on transient memory (memory.allocator_overhead).
  EXPECT_NEAR(whole.memory.total.value - sub.memory.total.value, 2 * 8 * h2 * 2, 0.06 * 2 * 8 * h2 * 2);
}

TEST(FsdpUnit, UnderFullRecomputeTheBackwardGathersEveryUnitAgain) {
  // The activation checkpoint wraps the units (ptd_benchmark: checkpoint_wrapper(Block) around wrap()ped
  // submodules), so the recompute forward runs each unit's FSDP forward, which frees it again (PyTorch
  // 1.11 FullyShardedDataParallel.forward: reshard_after_forward frees unconditionally); the unit's
  // pre-backward hook then gathers it once more. Nothing is kept: the backward pass gathers all four.
  const Zero3Settings units =
      zero3_settings_of(framework_rules(Framework::fsdp), test::scenario(kGpt + "memory: {fsdp_unit: submodule}\n").memory);
  const std::vector<Zero3Module> layer = {{3, 0.25, 0.25}, {1, 1.0 / 12, 1.0 / 12}, {4, 1.0 / 3, 1.0 / 3}, {4, 1.0 / 3, 1.0 / 3}};
  for (std::size_t k = 0; k < layer.size(); ++k) EXPECT_FALSE(zero3_kept_for_backward(layer, k, units.reuse_distance)) << k;
  GatherPassInputs in{GatherPass::backward, units.live_parameters, 12.0, 18.0};
  in.reuse_limit = units.reuse_distance;
  in.after_recompute = true;
  const PassExposure b = gather_pass_exposure(layer, in);
  EXPECT_DOUBLE_EQ(b.prefetched + b.blocked, 12.0);
  // Whole-layer units (the default) have no recompute pass: the checkpoint runs inside the unit.
  EXPECT_FALSE(zero3_settings_of(framework_rules(Framework::fsdp), test::scenario(kGpt).memory).recompute_regathers);
}

TEST(FsdpUnit, EachUnitsGatherHidesOnlyBehindTheModuleBeforeIt) {
  // Forward pass, G = 12 s of gather and C = 6 s of compute per layer, shares by parameters (dense GPT):
  // whole layers hide G behind the previous layer's C: 12 - 6 = 6 s beyond it. Submodule units: proj
  // 1 s behind qkv 1.5 s: 0; fc1 4 s behind proj 0.5 s: 3.5; fc2 4 s behind fc1 2 s: 2; the next
  // layer's qkv 3 s behind fc2 2 s: 1. 6.5 s beyond, nothing blocked.
  const double h2 = 1.0;
  const std::vector<Zero3Module> layer = {
      {3 * h2, 3.0 / 12, 3.0 / 12}, {h2, 1.0 / 12, 1.0 / 12}, {4 * h2, 4.0 / 12, 4.0 / 12}, {4 * h2, 4.0 / 12, 4.0 / 12}};
  const Zero3Settings units =
      zero3_settings_of(framework_rules(Framework::fsdp), test::scenario(kGpt + "memory: {fsdp_unit: submodule}\n").memory);
  GatherPassInputs in{GatherPass::forward, units.live_parameters, 12.0, 6.0};
  const PassExposure sub = gather_pass_exposure(layer, in);
  EXPECT_DOUBLE_EQ(sub.blocked, 0.0);
  EXPECT_DOUBLE_EQ(sub.prefetched, 12.0);
  EXPECT_NEAR(sub.excess, 6.5, 1e-12);
  // Whole-layer units (the default): the next layer's gather hides behind the whole layer, 12 - 6 s.
  in.whole_layers = zero3_settings_of(framework_rules(Framework::fsdp), test::scenario(kGpt).memory).whole_layers;
  ASSERT_TRUE(in.whole_layers);
  EXPECT_NEAR(gather_pass_exposure(layer, in).excess, 6.0, 1e-12);
}

}  // namespace
}  // namespace tp
