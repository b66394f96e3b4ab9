// training.attention_unpad (docs/model.md §20, "Unpadded attention"): flash-attn's bert_padding around
// flash_attn_varlen_func, as llm-foundry's flash_attn_fn runs it. Oracle: hand computation from the code's
// tensor operations, written out below for one GQA layer (s = 2,048, 32 query heads and 8 KV heads of 128,
// bf16): forward gathers Q, K, V (read + write each) and scatters O into zeros (write zeros, read, write);
// backward scatters each of dQ, dK, dV into zeros (write zeros, read, write) and gathers dO (read, write).
// The out-projection keeps the padded O beside the kernel's unpadded one: one more s x q_dim saved.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "hardware_profile.h"
#include "op_graph.h"
#include "plan.h"
#include "tests/op_lookup.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const char* kLayer =
    "model: {name: gqa, layers: 4, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336, vocab: 32000, "
    "activation: swiglu, norm: rmsnorm, position: rope, tied_embeddings: false, bias: false}\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
    "training: {framework: fsdp, sequence_length: 2048, global_batch: 4, micro_batch: 2, precision: bf16}\n"
    "parallel: {tp: 1, pp: 1, zero: 0}\n";

TEST(AttentionUnpad, CopiesCountedFromTheCode) {
  const Scenario s = test::scenario(kLayer, {"training.attention_unpad=true"});
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  const Op* unpad = test::find_layer_op(g, "attention_unpad");
  ASSERT_NE(unpad, nullptr);
  const double sq = 2048.0 * 32 * 128 * 2, skv = 2048.0 * 8 * 128 * 2;  // bytes of Q and of K (= V) per sequence
  const double forward = 2 * (sq + 2 * skv) + 3 * sq;                      // gathers; zeros + scatter of O
  const double backward = 3 * (sq + 2 * skv) + 2 * sq;                     // zeros + scatter of dQ, dK, dV; gather of dO
  EXPECT_DOUBLE_EQ(unpad->bytes_moved, forward);
  EXPECT_DOUBLE_EQ(unpad->bytes_moved * unpad->backward_share, backward);
  EXPECT_DOUBLE_EQ(unpad->saved_bytes, sq);
  // Without the key the layer has no such op.
  const Scenario plain = test::scenario(kLayer);
  const OpGraph p = build_op_graph(plain.model, plain.training, 1);
  EXPECT_EQ(test::find_layer_op(p, "attention_unpad"), nullptr);
}

// The step grows by those bytes at the profile's memory bandwidth, one launch per pass, for every layer
// and micro-batch of 2 sequences (2 micro-batches on one GPU), and the activations by the saved copy.
TEST(AttentionUnpad, StepAndMemoryGrowByTheCopies) {
  const Scenario plain = test::scenario(kLayer);
  const Scenario unpad = test::scenario(kLayer, {"training.attention_unpad=true"});
  const HardwareProfile hw = profile_for(plain);
  const Plan a = make_plan(plain, hw), b = make_plan(unpad, hw);
  const double sq = 2048.0 * 32 * 128 * 2, skv = 2048.0 * 8 * 128 * 2;
  const double bytes = (5 * (sq + 2 * skv) + 5 * sq) * 2;  // forward + backward, micro-batch of 2
  const double bw = plain.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency;
  const double per_layer = bytes / bw + 2 * hw.kernel_launch.value;
  EXPECT_NEAR(b.time.compute.value - a.time.compute.value, 4 * 2 * per_layer, 1e-9);
  EXPECT_NEAR(b.estimate.stages[0].activations.value - a.estimate.stages[0].activations.value, 4 * 2 * sq, 1.0);
}

// The reports say so: `attention.unpad` in JSON (docs/json-output.md), "(unpadded)" after FlashAttention in
// the table.
TEST(AttentionUnpad, ReportsSayTheAttentionIsUnpadded) {
  const test::RunResult j = test::run_trainplan("evaluate --format json --set training.attention_unpad=true");
  ASSERT_EQ(j.exit_code, 0) << j.output;
  EXPECT_EQ(nlohmann::json::parse(j.output).at("attention").at("unpad"), true);
  const test::RunResult plain = test::run_trainplan("evaluate --format json");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(nlohmann::json::parse(plain.output).at("attention").at("unpad"), false);
  const test::RunResult table = test::run_trainplan("evaluate --set training.attention_unpad=true");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("FlashAttention on (unpadded)"), std::string::npos) << table.output;
}

}  // namespace
}  // namespace tp
