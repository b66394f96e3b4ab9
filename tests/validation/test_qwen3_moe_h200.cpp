// Held out: real Hugging Face Qwen3-MoE training steps on one H200 (tests/data/h200/qwen3-moe-steps.json,
// scripts/qwen3_moe_steps.py, measured by the project on 2026-11-29, after every MoE rule was written).
// Qwen3-30B-A3B's layer (hidden 2048, 32/4 heads of 128, 128 experts, top-8, expert FFN 768) with 4 or 8
// layers, pure bf16, fused AdamW, experts through torch._grouped_mm. Oracles: the measured parameter count,
// peak allocated memory and median step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

std::string case_yaml(const nlohmann::json& c) {
  const nlohmann::json& cfg = c.at("config");
  const std::string seq = std::to_string(c.at("seq").get<int>()), mb = std::to_string(c.at("micro_batch").get<int>());
  return "name: " + c.at("name").get<std::string>() +
         "\nmodel: {name: qwen3 moe, layers: " + std::to_string(cfg.at("num_hidden_layers").get<int>()) +
         ", hidden: 2048, heads: 32, kv_heads: 4, head_dim: 128, ffn_hidden: 6144, vocab: 151936, activation: swiglu,"
         " norm: rmsnorm, qk_norm: true, position: rope, tied_embeddings: false, bias: false, dropout: false,"
         " moe: {experts: 128, top_k: 8, expert_ffn_hidden: 768}}\n"
         "cluster: {preset: hgx-h200, nodes: 1, gpus_per_node: 1}\n"
         "training: {framework: pytorch, precision: bf16, autocast: false, compile: false, sequence_length: " + seq +
         ", micro_batch: " + mb + ", global_batch: " + mb +
         ", optimizer: adamw, optimizer_kernel: fused, flash_attention: true, attention_kernel: cudnn}\n"
         "parallel: {tp: 1, pp: 1, dp: 1, zero: 0, recompute: none}\n";
}

TEST(Qwen3MoeH200, ParametersMemoryAndStepTime) {
  std::ifstream in(test::source_path("tests/data/h200/qwen3-moe-steps.json"));
  const nlohmann::json data = nlohmann::json::parse(in);
  ASSERT_EQ(data.at("steps").size(), 4u);
  std::printf("\n%-24s %11s %11s %8s %11s %11s %8s\n", "case", "meas. [GB]", "pred. [GB]", "error", "meas. [s]",
              "pred. [s]", "error");
  for (const nlohmann::json& c : data.at("steps")) {
    const std::string name = c.at("name").get<std::string>();
    ASSERT_EQ(c.at("experts_implementation").get<std::string>(), "grouped_mm") << name;
    const Plan p = test::plan(case_yaml(c));
    // Exact, Qwen3's per-head q and k RMSNorm weights (qk_norm: 2 x 128 per layer) included.
    EXPECT_DOUBLE_EQ(p.estimate.parameters_total, c.at("params").get<double>()) << name;
    const double allocated = (p.estimate.memory.total - p.estimate.memory.overhead).value;
    const double memory_error = allocated / c.at("peak_allocated").get<double>() - 1.0;
    const double step_error = p.time.step.value / c.at("step_time_s").get<double>() - 1.0;
    std::printf("%-24s %11.2f %11.2f %7.1f%% %11.4f %11.4f %7.1f%%\n", name.c_str(),
                c.at("peak_allocated").get<double>() / 1e9, allocated / 1e9, 100 * memory_error,
                c.at("step_time_s").get<double>(), p.time.step.value, 100 * step_error);
    EXPECT_LT(std::abs(memory_error), 0.03) << name;
    // The known gap, asserted as measured when the data came (docs/model.md §14, "MoE on one GPU,
    // measured"): the steps are predicted 13-24 % fast (16-29 % before AdamW's per-parameter SM time, 25-37 %
    // before qk_norm, 20-33 % before the Hopper defaults timed kernel classes as HBM plus SM time; memory
    // -0.8..-3.6 % before qk_norm, now -0.7..-1.3 %; the SDPA ran cuDNN's kernel, as profiled): the MoE
    // block's routing, permutation and grouped-GEMM kernels are slower than their op counts say.
    EXPECT_GT(step_error, -0.30) << name;
    EXPECT_LT(step_error, -0.08) << name;
  }
}

// Where the gap lies: the one step profiled per kernel class (torch.profiler, the same file) against the
// planner's GPU time by kernel kind (StepTime::compute_by_kind). The profiler's classes map as gemm and
// grouped_gemm -> GEMM, attention -> attention, optimizer -> the optimizer's update, the rest (index, scatter
// and gather, sort and scan, router top-k and softmax, copies and casts, reductions, other elementwise) ->
// memory-bound. Asserted as measured on 2026-11-30: the GEMMs are predicted slow (+20 %), the attention
// +23 % (the cuDNN class, tests/validation/test_kernel_kinds_pytorch.cpp), the optimizer within 8 %, and the
// memory-bound kernels 35 % short: the step's gap is the MoE block's eager dispatch, not its GEMMs.
TEST(Qwen3MoeH200, TheGapIsInTheMemoryBoundKernels) {
  std::ifstream in(test::source_path("tests/data/h200/qwen3-moe-steps.json"));
  const nlohmann::json data = nlohmann::json::parse(in);
  int profiled = 0;
  for (const nlohmann::json& c : data.at("steps")) {
    if (!c.contains("kernel_time_per_class_s")) continue;
    ++profiled;
    double gemm = 0, attention = 0, optimizer = 0, memory_bound = 0;
    for (const auto& [kind, seconds] : c.at("kernel_time_per_class_s").items()) {
      const double v = seconds.get<double>();
      if (kind == "gemm" || kind == "grouped_gemm") gemm += v;
      else if (kind == "attention") attention += v;
      else if (kind == "optimizer") optimizer += v;
      else memory_bound += v;
    }
    const ComputeByKind k = test::plan(case_yaml(c)).time.compute_by_kind;
    const double e_gemm = k.gemm.value / gemm - 1, e_attention = k.attention.value / attention - 1;
    const double e_optimizer = k.optimizer.value / optimizer - 1, e_memory = k.memory_bound.value / memory_bound - 1;
    std::printf("%s kernel time [ms], measured / predicted: GEMM %.1f / %.1f (%+.0f%%), attention %.1f / %.1f (%+.0f%%), "
                "memory-bound %.1f / %.1f (%+.0f%%), optimizer %.1f / %.1f (%+.0f%%)\n",
                c.at("name").get<std::string>().c_str(), 1e3 * gemm, 1e3 * k.gemm.value, 100 * e_gemm, 1e3 * attention,
                1e3 * k.attention.value, 100 * e_attention, 1e3 * memory_bound, 1e3 * k.memory_bound.value, 100 * e_memory,
                1e3 * optimizer, 1e3 * k.optimizer.value, 100 * e_optimizer);
    EXPECT_LT(e_memory, -0.25);
    EXPECT_GT(e_memory, -0.45);
    EXPECT_LT(std::abs(e_gemm), 0.25);
    EXPECT_LT(std::abs(e_attention), 0.30);
    EXPECT_LT(std::abs(e_optimizer), 0.10);
  }
  EXPECT_EQ(profiled, 1);
}

}  // namespace
}  // namespace tp
