// training.framework / autocast / optimizer_state_precision. Oracles by hand from the frameworks'
// code (planner/framework_rules.cpp cites it): torch.optim.AdamW keeps exp_avg and exp_avg_sq like the
// parameter (bf16 model: 2 x 2 B per parameter, no master copy); Megatron's distributed optimizer keeps
// fp32 master weights and fp32 Adam states (4 + 8 B per parameter); autocast keeps fp32 parameters.
#include <gtest/gtest.h>

#include "errors.h"
#include "estimate.h"
#include "tests/op_lookup.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const char* kBase =
    "model: llama2-7b\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
    "training: {sequence_length: 1024, global_batch: 1, micro_batch: 1, precision: bf16}\n"
    "parallel: {tp: 1, pp: 1, zero: 0}\n";

double per_param(const Bytes& b, const Estimate& e) { return b.value / e.parameters_per_gpu; }

TEST(FrameworkRules, PytorchAdamWKeepsStatesInTheParameterDtype) {
  const Estimate e = estimate(test::scenario(kBase, {"training.framework=pytorch"}));
  EXPECT_DOUBLE_EQ(per_param(e.memory.optimizer, e), 4.0);       // exp_avg + exp_avg_sq in bf16
  EXPECT_DOUBLE_EQ(per_param(e.memory.master_weights, e), 0.0);  // model.to(bf16): no master copy
  EXPECT_DOUBLE_EQ(per_param(e.memory.weights, e), 2.0);
}

TEST(FrameworkRules, AutocastKeepsFp32ParametersAndStates) {
  const Estimate e = estimate(test::scenario(kBase, {"training.framework=pytorch", "training.autocast=true"}));
  EXPECT_DOUBLE_EQ(per_param(e.memory.weights, e), 4.0);
  EXPECT_DOUBLE_EQ(per_param(e.memory.optimizer, e), 8.0);
  EXPECT_DOUBLE_EQ(per_param(e.memory.master_weights, e), 0.0);
}

TEST(FrameworkRules, StatePrecisionCanBeForced) {
  const Estimate e = estimate(test::scenario(kBase, {"training.framework=pytorch", "training.optimizer_state_precision=fp32"}));
  EXPECT_DOUBLE_EQ(per_param(e.memory.optimizer, e), 8.0);
}

TEST(FrameworkRules, MegatronDefaultsAreTheDistributedOptimizers) {
  const Estimate e = estimate(test::scenario(kBase));
  EXPECT_DOUBLE_EQ(per_param(e.memory.optimizer, e), 8.0);
  EXPECT_DOUBLE_EQ(per_param(e.memory.master_weights, e), 4.0);
  // Megatron-LM accumulates and all-reduces a bf16 model's gradients in fp32 (arguments.py: "bfloat16
  // requires gradient accumulation and all-reduce to be done in fp32"): 4 B, the 18 B per parameter of its
  // optimizer docs without the distributed optimizer. Before, the default kept them in bf16 (2 B).
  EXPECT_DOUBLE_EQ(per_param(e.memory.gradients, e), 4.0);
  EXPECT_EQ(test::scenario(kBase, {"training.precision=fp8"}).training.grad_precision, Precision::fp32);
  // fp16 keeps fp16 gradients unless told (its flag is not forced). FSDP as torchtitan runs it reduces a bf16
  // mixed-precision model's gradients in fp32 (config/configs.py mixed_precision_reduce: "float32"), a model
  // cast to bf16 in bf16; the other frameworks keep the parameters' dtype.
  EXPECT_EQ(test::scenario(kBase, {"training.precision=fp16"}).training.grad_precision, Precision::fp16);
  EXPECT_EQ(test::scenario(kBase, {"training.framework=fsdp", "parallel.zero=3"}).training.grad_precision, Precision::fp32);
  EXPECT_EQ(test::scenario(kBase, {"training.framework=fsdp", "parallel.zero=3", "training.master_weights=none"})
                .training.grad_precision,
            Precision::bf16);
  EXPECT_EQ(test::scenario(kBase, {"training.framework=deepspeed"}).training.grad_precision, Precision::bf16);
  EXPECT_EQ(test::scenario(kBase, {"training.grad_precision=bf16"}).training.grad_precision, Precision::bf16);
}

TEST(FrameworkRules, MegatronGraphIsKorthikantis) {
  // The framework-aware builder with Megatron's rules saves exactly what the fused builder saves.
  const Scenario s = test::scenario(kBase);
  const OpGraph a = build_op_graph(s.model, s.training, s.parallel.tp);
  const OpGraph b = build_op_graph(s.model, s.training.sequence_length, s.training.precision, s.training.flash_attention);
  ASSERT_EQ(a.layer.size(), b.layer.size());
  for (size_t i = 0; i < a.layer.size(); ++i) EXPECT_DOUBLE_EQ(a.layer[i].saved_bytes, b.layer[i].saved_bytes) << a.layer[i].name;
  EXPECT_DOUBLE_EQ(a.layer_input_bytes, b.layer_input_bytes);
}

TEST(FrameworkRules, MegatronRotatesQueryAndKeyInOneFusedPass) {
  // Megatron-Core's fused RoPE (apply_rope_fusion) reads and writes Q and K once forward and rotates their
  // gradients once backward. llama2-7b, s = 1024, bf16: Q and K are 4096 wide each, so the forward moves
  // 2 (read + write) x 1024 x (4096 + 4096) x 2 B = 33,554,432 B and the backward as much; nothing is kept.
  const Scenario s = test::scenario(kBase);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Op* rope = test::find_layer_op(g, "rotary");
  ASSERT_NE(rope, nullptr);
  EXPECT_DOUBLE_EQ(rope->bytes_moved, 2.0 * 1024 * (4096 + 4096) * 2);
  EXPECT_DOUBLE_EQ(rope->forward_share, 1.0);
  EXPECT_DOUBLE_EQ(rope->backward_share, 1.0);
  EXPECT_DOUBLE_EQ(rope->saved_bytes, 0.0);
}

TEST(FrameworkRules, FusedNormKeepsItsInputOnlyAndMakesOnePass) {
  // torchtitan's Triton RMSNorm saves x, weight and the per-row rstd (torchtitan/models/norms.py,
  // TritonFusedRMSNorm.forward); the eager RMSNorm keeps the fp32 upcast (4 B) and the bf16 normalized
  // output (2 B). llama2-7b, s = 1024, bf16: 1024 x 4096 elements per norm; rstd is one fp32 per row.
  const Scenario eager = test::scenario(kBase, {"training.framework=fsdp"});
  const Scenario fused = test::scenario(kBase, {"training.framework=fsdp", "training.fused_norm=true"});
  const OpGraph ge = build_op_graph(eager.model, eager.training, 1), gf = build_op_graph(fused.model, fused.training, 1);
  const Op* ne = test::find_layer_op(ge, "attention_norm");
  const Op* nf = test::find_layer_op(gf, "attention_norm");
  ASSERT_NE(ne, nullptr);
  ASSERT_NE(nf, nullptr);
  EXPECT_NEAR(ne->saved_bytes, 1024.0 * 4096 * 6, 1024.0 * 8);
  EXPECT_NEAR(nf->saved_bytes, 1024.0 * 4096 * 2, 1024.0 * 8);
  EXPECT_DOUBLE_EQ(ne->passes, 9.0);
  EXPECT_DOUBLE_EQ(nf->passes, 1.0);
  EXPECT_DOUBLE_EQ(nf->kernels, 1.0);
  // A setting of eager code: refused with Megatron's fused layer code.
  EXPECT_THROW(test::scenario(kBase, {"training.fused_norm=true"}), InputError);
}

TEST(FrameworkRules, AutocastIsATorchSetting) {
  EXPECT_THROW(test::scenario(kBase, {"training.autocast=true"}), InputError);  // megatron
  EXPECT_THROW(test::scenario(kBase, {"training.framework=deepspeed", "training.compile=true"}), InputError);
  EXPECT_THROW(test::scenario(kBase, {"training.framework=pytorch", "training.autocast=true", "training.master_weights=fp32"}),
               InputError);
}

}  // namespace
}  // namespace tp
