// training.repeat_kv (docs/scenario-reference.md; docs/model.md §15, "Context-parallel exchanges", and §2):
// the model code repeats each K and V head to the query heads it serves before the attention (torchtitan's
// Llama `repeat_kv`, models/llama/model.py; IBM's foundation-model-stack alike), so the attention keeps and
// reads K and V q_dim wide, a copy writes them, and PyTorch's context-parallel ring rotates them wide.
// Oracles by hand below, for 32 query heads and 8 KV heads of 128 (q_dim 4,096, kv_dim 1,024), s = 4,096, bf16.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "op_graph.h"
#include "plan.h"
#include "scenario.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const char* kGqa =
    "model: {layers: 2, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336, vocab: 32000, activation: swiglu,\n"
    "        norm: rmsnorm, position: rope}\n"
    "cluster: {preset: dgx-h100, nodes: 1}\n"
    "training: {framework: fsdp, sequence_length: 4096, global_batch: 8, micro_batch: 1, precision: bf16}\n"
    "parallel: {tp: 1, pp: 1, zero: 3, recompute: none}\n";

const Op* find(const OpGraph& g, const std::string& name) {
  for (const Op& op : g.layer) {
    if (name == op.name) return &op;
  }
  return nullptr;
}

OpGraph graph_of(const Scenario& s) { return build_op_graph(s.model, s.training, s.parallel.tp); }

TEST(RepeatKv, FsdpRepeatsByDefaultAndTheOthersDoNot) {
  EXPECT_TRUE(repeat_kv_of(test::scenario(kGqa).training));
  EXPECT_FALSE(repeat_kv_of(test::scenario(kGqa, {"training.repeat_kv=false"}).training));
  EXPECT_FALSE(repeat_kv_of(test::scenario(kGqa, {"training.framework=pytorch", "parallel.zero=0"}).training));
  EXPECT_FALSE(repeat_kv_of(test::scenario(kGqa, {"training.framework=megatron", "parallel.zero=1"}).training));
}

TEST(RepeatKv, TheAttentionKeepsAndReadsWideKAndV) {
  const double s = 4096, q = 4096, kv = 1024, bpv = 2;
  const OpGraph wide = graph_of(test::scenario(kGqa));
  const OpGraph grouped = graph_of(test::scenario(kGqa, {"training.repeat_kv=false"}));
  // Q, K, V kept by the attention: s (q + 2 q) bpv = 100,663,296 B against s (q + 2 kv) bpv = 50,331,648 B.
  EXPECT_DOUBLE_EQ(find(wide, "attention_core")->saved_bytes, s * 3 * q * bpv);
  EXPECT_DOUBLE_EQ(find(grouped, "attention_core")->saved_bytes, s * (q + 2 * kv) * bpv);
  // The copy: reads K and V (s 2 kv bpv), writes them wide (s 2 q bpv); its backward sums them back, as many bytes.
  const Op* repeat = find(wide, "repeat_kv");
  ASSERT_NE(repeat, nullptr);
  EXPECT_DOUBLE_EQ(repeat->bytes_moved, s * 2 * (kv + q) * bpv);
  EXPECT_DOUBLE_EQ(repeat->backward_share, 1.0);
  EXPECT_DOUBLE_EQ(repeat->saved_bytes, 0.0);
  EXPECT_EQ(find(grouped, "repeat_kv"), nullptr);
  // Multi-head attention has nothing to repeat.
  EXPECT_EQ(find(graph_of(test::scenario(kGqa, {"model.kv_heads=32"})), "repeat_kv"), nullptr);
}

TEST(RepeatKv, TheContextParallelRingRotatesWideKAndV) {
  const double s = 4096, q = 4096, kv = 1024, bpv = 2;
  for (const auto& [sets, width] : {std::pair{std::vector<std::string>{}, q},
                                    std::pair{std::vector<std::string>{"training.repeat_kv=false"}, kv}}) {
    const OpGraph g = graph_of(test::scenario(kGqa, sets));
    EXPECT_DOUBLE_EQ(find(g, "cp_kv_rotate_all_gather")->comm.bytes, s * 2 * width * bpv);
    EXPECT_DOUBLE_EQ(find(g, "cp_kv_grad_exchange")->comm.bytes, s * 2 * width * 4.0);  // fp32 accumulators
  }
}

TEST(RepeatKv, TheStepPaysTheCopy) {
  // Same layout, K and V repeated or not: the repeated step is slower and keeps more.
  const Plan a = test::plan(kGqa), b = test::plan(kGqa, {"training.repeat_kv=false"});
  EXPECT_GT(a.time.step.value, b.time.step.value);
  // Per layer 2 s (q - kv) bpv = 50,331,648 B more kept, on each of the 2 layers.
  EXPECT_NEAR(a.estimate.memory.activations.value - b.estimate.memory.activations.value, 2 * 2 * 4096.0 * 3072 * 2,
              1.0);
}

// evaluate says so: the JSON's attention.repeat_kv and the table's training line, for the FSDP example (Llama
// 3.1 70B, 64 query and 8 KV heads), and not once the scenario says false.
TEST(RepeatKv, EvaluateSaysSo) {
  const std::string example = test::source_path("scenarios/examples/llama3.1-70b-hsdp-256xh100.yaml");
  for (const auto& [set, repeated] : {std::pair{std::string(), true}, std::pair{std::string(" --set training.repeat_kv=false"), false}}) {
    const test::RunResult json = test::run_trainplan("evaluate " + ("'" + example + "'") + set + " --format json");
    ASSERT_EQ(json.exit_code, 0) << json.output;
    EXPECT_EQ(nlohmann::json::parse(json.output).at("attention").at("repeat_kv").get<bool>(), repeated);
    const test::RunResult table = test::run_trainplan("evaluate " + ("'" + example + "'") + set);
    ASSERT_EQ(table.exit_code, 0) << table.output;
    EXPECT_EQ(table.output.find("K/V repeated to the query heads") != std::string::npos, repeated) << table.output;
  }
}

}  // namespace
}  // namespace tp
