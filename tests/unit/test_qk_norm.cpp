// model.qk_norm: a norm over each head of q and of k before RoPE (transformers modeling_qwen3.py,
// Qwen3Attention: q_norm, k_norm = Qwen3RMSNorm(head_dim)). Oracles by hand from that definition: one gain
// of head_dim per tensor (a gain and a bias for LayerNorm), a pass reading and writing q (tokens x heads x
// head_dim) and k (tokens x kv_heads x head_dim), its input kept for backward like the layer's norms; and the
// Hugging Face parameter count measured on the device (tests/data/h200/qwen3-moe-steps.json).
#include <gtest/gtest.h>

#include <string>

#include "estimate.h"
#include "op_graph.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// Qwen3 30B-A3B's attention (32 heads and 4 KV heads of 128 over hidden 2048) in a small dense model.
std::string yaml(bool qk_norm, const std::string& norm = "rmsnorm", const std::string& framework = "megatron") {
  return "model: {layers: 2, hidden: 2048, heads: 32, kv_heads: 4, head_dim: 128, ffn_hidden: 6144, vocab: 32000,"
         " activation: swiglu, norm: " + norm + ", qk_norm: " + (qk_norm ? "true" : "false") + "}\n"
         "cluster: {preset: dgx-h100, nodes: 1}\n"
         "training: {framework: " + framework + ", sequence_length: 4096, micro_batch: 1, global_batch: 8}\n"
         "parallel: {tp: 1}\n";
}

const Op* find_op(const OpGraph& g, const std::string& name) {
  for (const Op& op : g.layer) {
    if (name == op.name) return &op;
  }
  return nullptr;
}

OpGraph graph(const std::string& text) {
  const Scenario s = test::scenario(text);
  return build_op_graph(s.model, s.training, s.parallel.tp);
}

TEST(QkNorm, NormsOverQAndKWithOneGainOfHeadDimEach) {
  const OpGraph g = graph(yaml(true));
  const Op* q = find_op(g, "q_norm");
  const Op* k = find_op(g, "k_norm");
  ASSERT_NE(q, nullptr);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(q->kind, OpKind::norm);
  EXPECT_DOUBLE_EQ(q->params_replicated, 128);
  EXPECT_DOUBLE_EQ(k->params_replicated, 128);
  // bf16: read and write 4,096 tokens x 32 x 128 (q) and x 4 x 128 (k), 2 B each.
  EXPECT_DOUBLE_EQ(q->bytes_moved, 2.0 * 4096 * 4096 * 2);
  EXPECT_DOUBLE_EQ(k->bytes_moved, 2.0 * 4096 * 512 * 2);
  // Split with the heads under tensor parallelism.
  EXPECT_EQ(q->flops_split, TpSplit::tp);
  EXPECT_EQ(q->saved_split, TpSplit::tp);
  // Its input is kept like the layer's norms' (per element).
  const Op* norm = find_op(g, "attention_norm");
  ASSERT_NE(norm, nullptr);
  EXPECT_DOUBLE_EQ(q->saved_bytes / (4096.0 * 4096), norm->saved_bytes / (4096.0 * 2048));
  EXPECT_EQ(find_op(graph(yaml(false)), "q_norm"), nullptr);
}

TEST(QkNorm, ParametersPerLayerByNormKind) {
  const double rms = estimate(test::scenario(yaml(true))).parameters_total -
                     estimate(test::scenario(yaml(false))).parameters_total;
  EXPECT_DOUBLE_EQ(rms, 2 * 2 * 128.0);  // 2 layers x (q, k) x a gain of 128
  const double ln = estimate(test::scenario(yaml(true, "layernorm"))).parameters_total -
                    estimate(test::scenario(yaml(false, "layernorm"))).parameters_total;
  EXPECT_DOUBLE_EQ(ln, 2 * 2 * 2 * 128.0);  // and a bias
}

TEST(QkNorm, AutocastCastsOnlyTheNormsThatFeedGemms) {
  // Under autocast the planner casts a norm's fp32 output once per GEMM reading it; q_norm and k_norm feed
  // the attention: as many casts with them as without.
  auto casts = [](bool qk) {
    const Scenario s = test::scenario(yaml(qk, "rmsnorm", "pytorch"), {"training.autocast=true"});
    int n = 0;
    for (const Op& op : build_op_graph(s.model, s.training, s.parallel.tp).layer) n += std::string(op.name) == "autocast_cast";
    return n;
  };
  EXPECT_GT(casts(false), 0);
  EXPECT_EQ(casts(true), casts(false));
}

TEST(QkNorm, Qwen3CatalogEntriesHaveIt) {
  for (const char* key : {"qwen3-30b-a3b", "qwen3-235b-a22b"}) {
    const Scenario s = test::scenario(std::string("model: ") + key + "\ncluster: {preset: dgx-h100, nodes: 1}\n"
                                      "training: {sequence_length: 4096, micro_batch: 1, global_batch: 8}\nparallel: {ep: 8}\n");
    EXPECT_TRUE(s.model.qk_norm) << key;
  }
}

}  // namespace
}  // namespace tp
