// Op roles (planner/op_graph.h, OpRole; docs/model.md §2): the graph builder says what each op is where its
// kind does not, and the kernel rules of eager code (§20) and of FP8 training (§21) read that role, never
// the op's name. Oracles: the layer structure of the model definitions the builder follows (a pre-norm per
// block feeding qkv and fc1, Qwen3's q/k norms, a residual add closing each block, the MoE router before
// the experts), and the rules as docs/model.md writes them, checked on ops whose names say otherwise.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "estimate.h"
#include "framework_rules.h"
#include "layer_code_rules.h"
#include "op_builders.h"
#include "op_graph.h"
#include "op_graph_kernels.h"
#include "tests/test_support.h"

namespace tp {
namespace {

std::string scenario_text(const std::string& framework, bool moe, bool autocast = false) {
  return "model: {layers: 2, hidden: 2048, heads: 32, kv_heads: 4, head_dim: 128, ffn_hidden: 6144, vocab: 32000,"
         " activation: swiglu, norm: rmsnorm, qk_norm: true" +
         std::string(moe ? ", moe: {experts: 8, top_k: 2, expert_ffn_hidden: 768}" : "") +
         "}\ncluster: {preset: dgx-h100, nodes: 1}\n"
         "training: {framework: " + framework + ", sequence_length: 4096, micro_batch: 1, global_batch: 8" +
         (autocast ? ", autocast: true" : "") + "}\nparallel: {tp: 1}\n";
}

// The role of every layer op the builder tagged, by name.
std::map<std::string, OpRole> tagged_roles(const std::string& text) {
  const Scenario s = test::scenario(text);
  std::map<std::string, OpRole> roles;
  for (const Op& op : build_op_graph(s.model, s.training, s.parallel.tp).layer) {
    if (op.role != OpRole::none) roles[op.name] = op.role;
  }
  return roles;
}

TEST(OpRoles, TheBuilderTagsEachOpTheRulesTreatApart) {
  const std::map<std::string, OpRole> dense = {
      {"attention_norm", OpRole::block_norm}, {"qkv", OpRole::norm_fed_gemm},  {"q_norm", OpRole::head_norm},
      {"k_norm", OpRole::head_norm},          {"attention_residual", OpRole::residual},
      {"mlp_norm", OpRole::block_norm},       {"fc1", OpRole::norm_fed_gemm},  {"swiglu", OpRole::activation},
      {"mlp_residual", OpRole::residual}};
  EXPECT_EQ(tagged_roles(scenario_text("megatron", false)), dense);
  // Eager code adds casts and bias sums, none of which the rules treat apart; the tagged ops are the same.
  EXPECT_EQ(tagged_roles(scenario_text("pytorch", false, true)), dense);
  // MoE: the router (a plain Linear) and the experts' activation; the experts' fc1 reads the dispatched
  // tokens, not the norm.
  std::map<std::string, OpRole> moe = dense;
  moe.erase("fc1");
  moe.erase("swiglu");
  moe["router"] = OpRole::router;
  moe["expert_activation"] = OpRole::activation;
  EXPECT_EQ(tagged_roles(scenario_text("megatron", true)), moe);
}

SavedTensorRules eager_autocast_rules(ModelSpec& model) {
  const Scenario s = test::scenario(scenario_text("pytorch", false, true));
  model = s.model;
  return saved_tensor_rules(s.training, s.model);
}

// Eager code (docs/model.md §20): a residual add at the residual class, a per-head norm at its own passes
// and without autocast's cast (it feeds the attention), a block norm at the norm passes with one cast per
// reading module (3 for the attention's separate q, k, v projections under Hugging Face's code).
TEST(OpRoles, EagerKernelRulesReadTheRoleNotTheName) {
  ModelSpec m;
  const SavedTensorRules r = eager_autocast_rules(m);
  ASSERT_TRUE(r.eager_kernels);
  ASSERT_GT(r.casts_per_norm_output, 0);
  ASSERT_NE(r.norm_passes, r.head_norm_passes);
  const double s = 4096;
  std::vector<Op> ops;
  add_elementwise(ops, "mlp_residual", Block::mlp, 0.0, TpSplit::seq_tp, 1e6);  // role none
  add_elementwise(ops, "sum_of_streams", Block::mlp, 0.0, TpSplit::seq_tp, 1e6).role = OpRole::residual;
  add_norm(ops, "attention_norm", Block::attention, m, s, 2.0, 2.0).role = OpRole::head_norm;
  add_norm(ops, "q_norm", Block::attention, m, s, 2.0, 2.0);  // add_norm: a block norm
  apply_eager_kernels(ops, m, r, s, 2.0);
  ASSERT_EQ(ops.size(), 5u);  // one autocast cast, after the block norm only
  EXPECT_EQ(ops[0].kernel_class, -1);
  EXPECT_EQ(ops[1].kernel_class, static_cast<int>(KernelClass::residual_add));
  EXPECT_DOUBLE_EQ(ops[2].passes, r.head_norm_passes);
  EXPECT_DOUBLE_EQ(ops[3].passes, r.norm_passes);
  EXPECT_STREQ(ops[4].name, "autocast_cast");
  const double readers = r.separate_qkv ? 3.0 : 1.0;
  EXPECT_DOUBLE_EQ(ops[4].bytes_moved, readers * s * static_cast<double>(m.hidden) * (4.0 + 2.0));
}

// FP8 training (docs/model.md §21): a GEMM reading a fused norm's output needs only the FP8 transpose of
// its input in the backward; any other GEMM casts and transposes its input in the forward.
TEST(OpRoles, Fp8NormFusionReadsTheRoleNotTheName) {
  std::vector<Op> ops;
  auto add_fp8_gemm = [&ops](const char* name, OpRole role) {
    Op& g = add_gemm(ops, name, Block::attention, 1024, 3072, 4096, false, false, 0.0, TpSplit::seq_tp);
    g.compute_precision = Precision::fp8;
    g.role = role;
  };
  add_fp8_gemm("qkv", OpRole::none);
  add_fp8_gemm("projection", OpRole::norm_fed_gemm);
  add_fp8_quantization(ops, true, Fp8Recipe::delayed);
  std::vector<std::string> names;
  for (const Op& op : ops) names.emplace_back(op.name);
  const std::vector<std::string> expected = {
      "fp8_cast_transpose_input", "qkv",        "fp8_cast_transpose_grad_output",
      "projection",               "fp8_transpose_input", "fp8_cast_transpose_grad_output"};
  EXPECT_EQ(names, expected);
}

}  // namespace
}  // namespace tp
