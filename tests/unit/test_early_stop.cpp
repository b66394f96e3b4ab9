// The early stop of torch's non-reentrant checkpoint (`training.checkpoint_early_stop`, planner/early_stop.h).
// Oracle: hand computation from the rule in torch/utils/checkpoint.py (the recompute stops once the region's
// saved tensors are all saved again) and autograd's order (an op saves its inputs before its kernel runs): a
// dense block whose last save is the input of its last MLP GEMM never runs that GEMM again; a block ending in
// dropout (the mask is saved after its kernel) runs everything again.
#include <gtest/gtest.h>

#include <string>

#include "early_stop.h"
#include "estimate.h"
#include "hardware_profile.h"
#include "step_time.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// A Llama block (h 4096, f 14336, no bias) of 8 layers, sequences of 2048, 8 per step.
constexpr double kS = 2048, kH = 4096, kF = 14336, kLayers = 8, kSeqs = 8;

Scenario llama(const std::string& recompute, const std::string& early_stop, bool dropout = false) {
  return test::scenario(std::string("model: {layers: 8, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336, "
                                    "vocab: 32000, activation: swiglu, norm: rmsnorm, position: rope, dropout: ") +
                        (dropout ? "true" : "false") +
                        "}\ncluster: {preset: dgx-h100, nodes: 1}\n"
                        "training: {framework: fsdp, precision: bf16, sequence_length: 2048, micro_batch: 1, "
                        "global_batch: 8, checkpoint_early_stop: " + early_stop + "}\n"
                        "parallel: {tp: 1, pp: 1, dp: 8, zero: 3, recompute: " + recompute + "}\n");
}

double forward_flops(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& op : ops) f += op.fwd_flops;
  return f;
}

TEST(EarlyStop, TheLastMlpGemmAndWhatFollowsAreLeftOut) {
  const Scenario s = llama("full", "true");
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  const std::size_t stop = early_stop_index(g.layer);
  ASSERT_LT(stop, g.layer.size());
  EXPECT_EQ(g.layer[stop].kind, OpKind::gemm);
  EXPECT_TRUE(g.layer[stop].row_parallel);  // w2: its input is the block's last save
  EXPECT_DOUBLE_EQ(forward_flops(g.layer) - forward_flops(early_stop_rerun(g.layer)), 2 * kS * kF * kH);
  // With dropout the residual's mask is saved after its kernel: nothing is left out.
  const Scenario d = llama("full", "true", true);
  const OpGraph gd = build_op_graph(d.model, d.training, 1);
  EXPECT_EQ(early_stop_index(gd.layer), gd.layer.size());
}

TEST(EarlyStop, RecomputeFlopsLoseOneGemmPerCheckpointedRegion) {
  const double w2 = 2 * kS * kF * kH;
  const Scenario base = llama("full", "false");
  const double layer = forward_flops(build_op_graph(base.model, base.training, 1).layer);
  const Estimate whole = estimate(base), early = estimate(llama("full", "true"));
  EXPECT_DOUBLE_EQ(whole.flops.recompute_per_step.value, kSeqs * kLayers * layer);
  EXPECT_DOUBLE_EQ(early.flops.recompute_per_step.value, kSeqs * kLayers * (layer - w2));
  // One layer in 3 checkpointed: floor(8 / 3) = 2 regions; segments of 3 layers: ceil(8 / 3) = 3 regions, each
  // stopping once in its last layer.
  EXPECT_NEAR(estimate(llama("{one_in: 3}", "true")).flops.recompute_per_step.value, kSeqs * 2 * (layer - w2),
              1e-9 * layer);
  EXPECT_NEAR(estimate(llama("{every: 3}", "true")).flops.recompute_per_step.value,
              kSeqs * (kLayers * layer - 3 * w2), 1e-9 * layer);
  EXPECT_DOUBLE_EQ(early.flops.model_per_step.value, whole.flops.model_per_step.value);
}

TEST(EarlyStop, RecomputeTimeIsShorterByTheTail) {
  const auto recompute = [](const Scenario& s) {
    return step_time(s, build_op_graph(s.model, s.training, 1), estimate(s), profile_for(s)).recompute.value;
  };
  const double whole = recompute(llama("full", "false")), early = recompute(llama("full", "true"));
  // The tail is one of the block's seven GEMM calls (w2: h x f of 4h^2 + 2h kv + 3hf per token = 27 % of the
  // GEMM FLOPs) and a residual add, against a forward that also runs attention and memory-bound ops: the
  // recompute is 15-35 % shorter.
  EXPECT_GT(whole * 0.85, early);
  EXPECT_LT(whole * 0.65, early);
  // Selective-op checkpointing is not a layer recompute: the setting does not change it.
  EXPECT_DOUBLE_EQ(recompute(llama("selective_op", "true")), recompute(llama("selective_op", "false")));
}

// The default by framework: FSDP's eager code checkpoints with torch's non-reentrant checkpoint_wrapper;
// Hugging Face's default (reentrant) and Megatron's and DeepSpeed's own functions rerun the whole layer.
TEST(EarlyStop, DefaultByFramework) {
  const auto early_stop = [](const std::string& framework) {
    return test::scenario("model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 1}\ntraining: {framework: " +
                          framework + ", sequence_length: 2048, global_batch: 8}\nparallel: {dp: 8}\n")
        .training.checkpoint_early_stop;
  };
  EXPECT_TRUE(early_stop("fsdp"));
  EXPECT_FALSE(early_stop("pytorch"));
  EXPECT_FALSE(early_stop("deepspeed"));
  EXPECT_FALSE(early_stop("megatron"));
  EXPECT_FALSE(early_stop("fsdp, layer_code: fused"));
  EXPECT_TRUE(early_stop("pytorch, checkpoint_early_stop: true"));
}

}  // namespace
}  // namespace tp
