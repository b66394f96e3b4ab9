// Parameter counts and FLOPs.
// Oracles: published parameter counts (issue: GPT-2 small 124,439,808 [HF gpt2]; Llama 2 7B
// 6,738,415,616; Llama 3.1 8B 8,030,261,248; Llama 3.1 70B 70,553,706,496; Mixtral 8x7B
// 46,702,792,704 [HF model cards / safetensors]); Megatron's FLOP formula (Narayanan et al. 2021,
// eq. 3): 72 B s l h^2 (1 + s/6h + V/12lh) per iteration, 96 B s l h^2 (1 + s/6h + V/16lh) with full
// recompute; seed 001 Napkin 1.1 (WE-02): 2228.01 GFLOP forward per GPT-2 XL layer at B=32, S=1024.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "catalog.h"
#include "estimate.h"
#include "tests/megatron_flops.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const ModelSpec& model(const std::string& key) { return Catalog::builtin().model(key, {}, "model"); }

TEST(Parameters, PublishedCounts) {
  EXPECT_EQ(total_parameters(model("gpt2-124m")), 124439808.0);
  EXPECT_EQ(total_parameters(model("llama2-7b")), 6738415616.0);
  EXPECT_EQ(total_parameters(model("llama3.1-8b")), 8030261248.0);
  EXPECT_EQ(total_parameters(model("llama3.1-70b")), 70553706496.0);
  EXPECT_EQ(total_parameters(model("mixtral-8x7b")), 46702792704.0);
}

TEST(Parameters, MixtralActiveParametersUseTopTwoOfEightExperts) {
  // Mistral AI: 12.9 B active parameters per token (two of eight experts).
  Scenario s = test::scenario("model: mixtral-8x7b\ncluster: {preset: dgx-h100, nodes: 1}\n"
                              "training: {sequence_length: 4096, global_batch: 8}\nparallel: {tp: 8}\n");
  EXPECT_NEAR(estimate(s).parameters_active / 1e9, 12.9, 0.05);
}

TEST(Parameters, Qwen3MoeCountsMatchTheirModelCards) {
  // HF model cards: Qwen3-30B-A3B "30.5B in total and 3.3B activated", Qwen3-235B-A22B "235B in total and 22B
  // activated" (top-8 of 128 experts). The per-head q/k norms the planner leaves out are 256 parameters per
  // layer.
  const auto counts = [](const char* key) {
    Scenario s = test::scenario(std::string("model: ") + key + "\ncluster: {preset: dgx-h100, nodes: 1}\n"
                                "training: {sequence_length: 4096, global_batch: 8}\nparallel: {ep: 8}\n");
    const Estimate e = estimate(s);
    return std::pair{e.parameters_total / 1e9, e.parameters_active / 1e9};
  };
  // The cards truncate: 30.53 B and 3.35 B are printed 30.5 and 3.3.
  const auto [small_total, small_active] = counts("qwen3-30b-a3b");
  EXPECT_TRUE(small_total >= 30.5 && small_total < 30.6) << small_total;
  EXPECT_TRUE(small_active >= 3.3 && small_active < 3.4) << small_active;
  const auto [big_total, big_active] = counts("qwen3-235b-a22b");
  EXPECT_TRUE(big_total >= 235.0 && big_total < 236.0) << big_total;
  EXPECT_TRUE(big_active >= 22.0 && big_active < 23.0) << big_active;
}

TEST(Parameters, PerGpuSplitsByTensorAndPipelineParallelism) {
  // Llama 3.1 8B, tp 2, pp 2: each stage holds 16 layers; stage 0 the embedding, stage 1 the head.
  Scenario s = test::scenario("model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 4}\n"
                              "training: {sequence_length: 4096, global_batch: 8}\nparallel: {tp: 2, pp: 2}\n");
  Estimate e = estimate(s);
  const double h = 4096, kv = 1024, f = 14336, v = 128256;
  const double layer_split = h * (h + 2 * kv) + h * h + 3 * h * f;  // divided by tp
  const double layer_repl = 2 * h;                                  // two RMSNorm weights
  const double layer = layer_split / 2 + layer_repl;
  EXPECT_DOUBLE_EQ(e.stages[0].parameters, 16 * layer + v * h / 2);
  EXPECT_DOUBLE_EQ(e.stages[1].parameters, 16 * layer + h + v * h / 2);
}

TEST(Flops, MegatronFormulaOnSeveralShapes) {
  // Model FLOPs use the model's vocabulary V; hardware FLOPs the vocabulary Megatron runs, padded to a
  // multiple of 128 at tp 1 (GPT-2: 50257 -> 393 x 128 = 50304), as Megatron's own
  // num_floating_point_operations counts it (args.padded_vocab_size).
  struct Case { const char* model; int seq; int batch; double l, h, V, V_padded; };
  const Case cases[] = {{"gpt3-175b", 2048, 64, 96, 12288, 51200, 51200},
                        {"megatron-22b", 2048, 4, 48, 6144, 51200, 51200},
                        {"mt-nlg-530b", 2048, 280, 105, 20480, 51200, 51200},
                        {"gpt2-1.5b", 1024, 32, 48, 1600, 50257, 50304}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model);
    for (bool full : {false, true}) {
      Scenario s = test::scenario(std::string("model: ") + c.model +
                                  "\ncluster: {preset: dgx-a100, nodes: 1, gpus_per_node: 1}\n"
                                  "training: {sequence_length: " + std::to_string(c.seq) +
                                  ", global_batch: " + std::to_string(c.batch) + ", flash_attention: false}\n"
                                  "parallel: {tp: 1, pp: 1, recompute: " + (full ? "full" : "none") + "}\n");
      Estimate e = estimate(s);
      const double expected = test::megatron_flops(c.batch, c.seq, c.l, c.h, c.V_padded, full);
      EXPECT_NEAR(e.flops.hardware_per_step.value / expected, 1.0, 1e-12);
      EXPECT_NEAR(e.flops.model_per_step.value / test::megatron_flops(c.batch, c.seq, c.l, c.h, c.V, false), 1.0, 1e-12);
    }
  }
}

TEST(Flops, SeedGpt2XlLayerForward) {
  // WE-02: QKV 503.32 G + QK^T 107.37 G + AV 107.37 G + out 167.77 G + FFN 1342.18 G = 2228.01 GFLOP.
  OpGraph g = build_op_graph(model("gpt2-1.5b"), 1024, Precision::fp16, true);
  double fwd = 0;
  for (const Op& op : g.layer) fwd += op.fwd_flops;
  EXPECT_NEAR(32 * fwd / 1e9, 2228.01, 0.01);
  // x 48 layers x 3 = 320.8 TFLOP per step (the seed's count leaves out the logits).
  EXPECT_NEAR(3 * 48 * 32 * fwd / 1e12, 320.8, 0.05);
}

TEST(Flops, SelectiveRecomputeAddsTheAttentionCoreForward) {
  // Korthikanti sec. 5: selective recompute re-runs QK^T and AV: 4 B s^2 h per layer.
  Scenario s = test::scenario("model: megatron-22b\ncluster: {preset: dgx-a100, nodes: 1}\n"
                              "training: {sequence_length: 2048, global_batch: 4}\n"
                              "parallel: {tp: 8, recompute: selective}\n");
  Estimate e = estimate(s);
  EXPECT_DOUBLE_EQ(e.flops.recompute_per_step.value, 4.0 * 4 * 2048.0 * 2048.0 * 6144.0 * 48);
}

}  // namespace
}  // namespace tp
