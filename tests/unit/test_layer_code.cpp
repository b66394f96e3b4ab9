// training.layer_code: the layer's kernels as a key of their own, the model states with the framework.
// Oracles by hand (llama2-7b: h = 4096, RMSNorm, SwiGLU; s = 1024, bf16, one sequence):
//  - fused RMSNorm (Korthikanti et al. 2022 Table 2, framework_rules.cpp): keeps its 16-bit input,
//    s x h x 2 B = 1024 x 4096 x 2 = 8,388,608 B; one pass over read x + write y = 2 x 1024 x 4096 x 2 =
//    16,777,216 B at the generic memory efficiency (kernel class -1);
//  - eager RMSNorm (Hugging Face LlamaRMSNorm): keeps x.to(fp32) and the bf16 normalized tensor,
//    s x h x (4 + 2) = 25,165,824 B; 9 memory passes, 6 kernels (to, pow, mean, rsqrt-mul, to, mul);
//  - pytorch's AdamW keeps its states in the parameter dtype: 2 x 2 B per bf16 parameter, no master copy.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hardware_profile.h"
#include "kernel_class.h"
#include "plan.h"
#include "tests/op_lookup.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// One DGX H100 node, ZeRO-3 over its 8 GPUs: DeepSpeed's per-module gathers differ from Megatron's.
const char* kBase =
    "model: llama2-7b\n"
    "cluster: {preset: dgx-h100, nodes: 1}\n"
    "training: {sequence_length: 1024, global_batch: 8, micro_batch: 1, precision: bf16}\n"
    "parallel: {tp: 1, pp: 1, zero: 3}\n";

Scenario with(const std::vector<std::string>& sets) { return test::scenario(kBase, sets); }

OpGraph graph_of(const Scenario& s) { return build_op_graph(s.model, s.training, s.parallel.tp); }

Plan plan_of(const Scenario& s) { return make_plan(s, default_profile(s.cluster.gpu)); }

TEST(LayerCode, DefaultIsTheFrameworks) {
  EXPECT_EQ(layer_code_of(with({}).training), LayerCode::fused);
  for (const char* f : {"deepspeed", "fsdp", "pytorch"}) {  // zero 0: a stage every framework has
    EXPECT_EQ(layer_code_of(with({std::string("training.framework=") + f, "parallel.zero=0"}).training), LayerCode::eager)
        << f;
  }
  EXPECT_EQ(layer_code_of(with({"training.framework=deepspeed", "training.layer_code=fused"}).training),
            LayerCode::fused);
  EXPECT_EQ(layer_code_of(with({"training.layer_code=eager"}).training), LayerCode::eager);
}

TEST(LayerCode, NamingTheDefaultChangesNothing) {
  const Plan ds = plan_of(with({"training.framework=deepspeed"}));
  const Plan ds_eager = plan_of(with({"training.framework=deepspeed", "training.layer_code=eager"}));
  EXPECT_DOUBLE_EQ(ds.time.step.value, ds_eager.time.step.value);
  EXPECT_DOUBLE_EQ(ds.estimate.memory.total.value, ds_eager.estimate.memory.total.value);
  const Plan mg = plan_of(with({}));
  const Plan mg_fused = plan_of(with({"training.layer_code=fused"}));
  EXPECT_DOUBLE_EQ(mg.time.step.value, mg_fused.time.step.value);
  EXPECT_DOUBLE_EQ(mg.estimate.memory.total.value, mg_fused.estimate.memory.total.value);
  // Today's eager DeepSpeed norm (hand counts in the header).
  const OpGraph deepspeed = graph_of(with({"training.framework=deepspeed"}));
  const Op* norm = test::find_layer_op(deepspeed, "attention_norm");
  ASSERT_NE(norm, nullptr);
  EXPECT_DOUBLE_EQ(norm->saved_bytes, 1024.0 * 4096 * (4 + 2));
  EXPECT_DOUBLE_EQ(norm->passes, 9.0);
  EXPECT_DOUBLE_EQ(norm->kernels, 6.0);
}

TEST(LayerCode, DeepspeedWithFusedCodeRunsMegatronsLayer) {
  const OpGraph megatron = graph_of(with({}));
  const OpGraph fused = graph_of(with({"training.framework=deepspeed", "training.layer_code=fused"}));
  ASSERT_EQ(fused.layer.size(), megatron.layer.size());
  for (size_t i = 0; i < fused.layer.size(); ++i) {
    const Op& a = fused.layer[i];
    const Op& b = megatron.layer[i];
    EXPECT_STREQ(a.name, b.name);
    EXPECT_DOUBLE_EQ(a.saved_bytes, b.saved_bytes) << a.name;
    EXPECT_DOUBLE_EQ(a.bytes_moved, b.bytes_moved) << a.name;
    EXPECT_DOUBLE_EQ(a.passes, b.passes) << a.name;
    EXPECT_DOUBLE_EQ(a.kernels, b.kernels) << a.name;
    EXPECT_EQ(a.kernel_class, b.kernel_class) << a.name;
  }
  const Op* norm = test::find_layer_op(fused, "attention_norm");
  ASSERT_NE(norm, nullptr);
  EXPECT_DOUBLE_EQ(norm->saved_bytes, 1024.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(norm->bytes_moved, 2.0 * 1024 * 4096 * 2);
  EXPECT_DOUBLE_EQ(norm->passes, 1.0);
  EXPECT_EQ(norm->kernel_class, -1);
  // The whole activation memory follows: Megatron's, not DeepSpeed-eager's.
  const Plan p_fused = plan_of(with({"training.framework=deepspeed", "training.layer_code=fused"}));
  const Plan p_megatron = plan_of(with({}));
  const Plan p_eager = plan_of(with({"training.framework=deepspeed"}));
  EXPECT_DOUBLE_EQ(p_fused.estimate.memory.activations.value, p_megatron.estimate.memory.activations.value);
  EXPECT_GT(p_eager.estimate.memory.activations.value, p_fused.estimate.memory.activations.value);
}

TEST(LayerCode, DeepspeedWithFusedCodeKeepsDeepspeedsStatesAndOptimizer) {
  const Plan fused = plan_of(with({"training.framework=deepspeed", "training.layer_code=fused"}));
  const Plan eager = plan_of(with({"training.framework=deepspeed"}));
  const Plan megatron = plan_of(with({}));
  const MemoryBreakdown& a = fused.estimate.memory;
  const MemoryBreakdown& b = eager.estimate.memory;
  EXPECT_DOUBLE_EQ(a.weights.value, b.weights.value);
  EXPECT_DOUBLE_EQ(a.gradients.value, b.gradients.value);
  EXPECT_DOUBLE_EQ(a.master_weights.value, b.master_weights.value);
  EXPECT_DOUBLE_EQ(a.optimizer.value, b.optimizer.value);
  // DeepSpeed's per-submodule ZeRO-3 gathers (framework_rules.h), not Megatron's whole layers.
  EXPECT_DOUBLE_EQ(a.buffers.value, b.buffers.value);
  EXPECT_NE(a.buffers.value, megatron.estimate.memory.buffers.value);
  // DeepSpeed's fused Adam at the adamw kernel class, not Megatron's step at the generic bandwidth.
  EXPECT_DOUBLE_EQ(fused.time.optimizer.value, eager.time.optimizer.value);
  EXPECT_NE(fused.time.optimizer.value, megatron.time.optimizer.value);
}

TEST(LayerCode, PytorchWithFusedCodeKeepsItsOwnStateDtypes) {
  const Plan p = plan_of(with({"training.framework=pytorch", "training.layer_code=fused", "parallel.zero=0"}));
  const double params = p.estimate.parameters_per_gpu;
  EXPECT_DOUBLE_EQ(p.estimate.memory.optimizer.value / params, 4.0);  // exp_avg + exp_avg_sq in bf16
  EXPECT_DOUBLE_EQ(p.estimate.memory.master_weights.value, 0.0);
}

// Eager MoE (Mixtral 8x7B, SwiGLU experts): the experts' activation runs PyTorch's SwiGLU kernels like
// the dense MLP's; the permutation into expert order and the weighted combine are copies and sums, not
// activations, and stay at the generic memory efficiency (kernel class -1). Oracle: the layer code
// (Hugging Face MixtralBlockSparseTop2MLP applies act_fn(w1(x)) * w3(x) per expert; the token gather and
// index_add_ around it are indexing kernels).
TEST(LayerCode, EagerMoeTimesOnlyTheActivationsAsActivationKernels) {
  const OpGraph g = graph_of(with({"model=mixtral-8x7b", "training.framework=pytorch", "parallel.zero=0"}));
  const Op* act = test::find_layer_op(g, "expert_activation");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->kernel_class, static_cast<int>(KernelClass::swiglu_fwd));
  EXPECT_EQ(act->kernel_class_backward, static_cast<int>(KernelClass::swiglu_bwd));
  for (const char* copy : {"expert_permute", "expert_combine"}) {
    const Op* op = test::find_layer_op(g, copy);
    ASSERT_NE(op, nullptr) << copy;
    EXPECT_EQ(op->kernel_class, -1) << copy;
  }
}

}  // namespace
}  // namespace tp
