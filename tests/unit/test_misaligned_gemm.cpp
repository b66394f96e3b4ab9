// GEMMs whose dimensions are not multiples of 16 bytes (model/gemm_time.h, docs/model.md §15).
// Oracle, by hand: cuBLAS on H100 runs such GEMMs in CUTLASS align1 kernels at 0.12 of the dense peak
// (measured: h100-pytorch-kernel-time.json, gpt2-1.5b-s1024-mb4, 16.44 ms for 3 x 2 x 4096 x 1600 x 50257
// FLOP = 120 TFLOP/s of 989), so gemm_seconds gives the fitted model's latency + FLOPs / (0.12 peak) for
// them. A 16-bit dimension is aligned when it is a multiple of 8 elements (16 bytes / 2 B): 50,257 is not,
// 50,304 = 8 x 6,288 is (nanoGPT pads GPT-2 to it for this reason). Megatron pads GPT-2's vocabulary to
// 50,304 (the next multiple of 128 x tp = 128 at tp 1: 393 x 128), so its output layer is aligned.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "gemm_time.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "op_times.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

std::string gpt2(const char* vocab, const char* framework) {
  return std::string("model: {layers: 2, hidden: 1600, heads: 25, ffn_hidden: 6400, vocab: ") + vocab +
         ", activation: gelu_tanh, norm: layernorm, position: learned, max_positions: 1024, tied_embeddings: true}\n"
         "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
         "training: {framework: " + framework + ", precision: bf16, autocast: " +
         (std::strcmp(framework, "megatron") == 0 ? "false" : "true") + ", sequence_length: 1024,\n"
         "           micro_batch: 4, global_batch: 4, flash_attention: true}\n"
         "parallel: {tp: 1, pp: 1, dp: 1, zero: 0, recompute: none}\n";
}

// Forward and backward time of the head's output GEMM for one micro-batch of 4 sequences.
OpTimes output_gemm(const Scenario& s, const HardwareProfile& hw) {
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  std::vector<Op> ops;
  for (const Op& op : g.head) {
    if (std::strcmp(op.name, "output") == 0) ops.push_back(op);
  }
  EXPECT_EQ(ops.size(), 1u);
  const OpTimeContext c{s, hw, 1, 1, false, 4.0, s.cluster.gpu.peak_for(Precision::bf16).value,
                        attention_peak(s.cluster.gpu, Precision::bf16).value,
                        s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency};
  return time_ops(ops, c);
}

TEST(UnalignedGemm, SixteenBytesOfTheOperandType) {
  EXPECT_FALSE(gemm_aligned(Precision::bf16, {4096, 50257, 1600}));
  EXPECT_TRUE(gemm_aligned(Precision::bf16, {4096, 50304, 1600}));
  EXPECT_FALSE(gemm_aligned(Precision::bf16, {4096, 1600, 50257}));  // the input-gradient GEMM's K
  EXPECT_FALSE(gemm_aligned(Precision::bf16, {4100, 1600, 1600}));   // 4100 = 8 x 512.5
  EXPECT_TRUE(gemm_aligned(Precision::fp32, {4100, 1600, 1600}));    // 4 elements per 16 bytes: 4 x 1025
  EXPECT_FALSE(gemm_aligned(Precision::fp8, {4096, 4104, 4096}));    // 16 per 16 bytes: 4104 = 16 x 256.5
}

// The tokens are rows of the row-major activations, never a stride: F.linear calls cuBLAS with
// lda = ldb = in features, ldc = out features, and the weight gradient takes the tokens as K. So 4,100
// tokens (micro-batch 1 x sequence 4,100) keep the aligned kernels; a vocabulary of 50,257 does not.
TEST(UnalignedGemm, TokenCountIsNoLeadingDimension) {
  using Tokens = GemmDims::Tokens;
  EXPECT_TRUE(gemm_aligned(Precision::bf16, {4100, 1600, 1600, Tokens::m}));   // forward, input gradient
  EXPECT_TRUE(gemm_aligned(Precision::bf16, {1600, 1600, 4100, Tokens::k}));   // weight gradient
  EXPECT_FALSE(gemm_aligned(Precision::bf16, {4100, 50257, 1600, Tokens::m}));  // the features still count
  EXPECT_FALSE(gemm_aligned(Precision::bf16, {1600, 50257, 4100, Tokens::k}));
}

// Before: every GEMM of a step whose micro-batch x sequence was not a multiple of 8 ran at the align1 rate
// (0.12 of peak): 5 x the GEMM time for 0.1 % more tokens. Oracle by hand: the GEMM FLOPs grow with the tokens
// (4,100 / 4,096) and the aligned kernels run both, so the GEMM time stays within 2 % of the 4,096 tokens'
// (the H100 profile times 4,096-token shapes it measured exactly, the others by its fitted curve).
TEST(UnalignedGemm, AnOddSequenceLengthKeepsTheGemmRate) {
  auto gemm_time = [](const char* sequence) {
    const Scenario s = test::scenario(
        std::string("model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 14336, vocab: 128256}\n"
                    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
                    "training: {precision: bf16, micro_batch: 1, global_batch: 1, sequence_length: ") +
        sequence + "}\nparallel: {tp: 1, pp: 1}\n");
    return make_plan(s, profile_for(s)).time.compute_by_kind.gemm.value;
  };
  const double ratio = gemm_time("4100") / gemm_time("4096");
  EXPECT_GT(ratio, 0.98);
  EXPECT_LT(ratio, 1.02) << "4,100 tokens ran " << ratio << " x the GEMM time of 4,096";
}

TEST(UnalignedGemm, GemmSecondsRunsAtTheAlign1Rate) {
  const GpuSpec h100 = test::scenario(gpt2("50257", "pytorch")).cluster.gpu;
  const HardwareProfile hw = default_profile(h100);
  const double flops = 2.0 * 4096 * 1600 * 50257;
  const double rate = 0.12 * h100.peak_for(Precision::bf16).value;
  const double latency = hw.gemm_for(Precision::bf16).latency.value;
  EXPECT_NEAR(gemm_seconds(hw, h100, Precision::bf16, {4096, 50257, 1600}).value, latency + flops / rate, 1e-12);
  // 6.59e11 FLOP at 0.12 x 989 TFLOP/s = 5.55 ms; the aligned shape runs at the fitted rate, > 3x faster.
  EXPECT_NEAR(latency + flops / rate, 5.55e-3, 0.05e-3);
  EXPECT_LT(gemm_seconds(hw, h100, Precision::bf16, {4096, 50304, 1600}).value, (latency + flops / rate) / 3);
}

TEST(UnalignedGemm, MeasuredShapeWins) {
  const GpuSpec h100 = test::scenario(gpt2("50257", "pytorch")).cluster.gpu;
  HardwareProfile hw = default_profile(h100);
  hw.gemm_measured.push_back({Precision::bf16, 4096, 50257, 1600, Seconds(7e-3)});
  hw.normalize_measured_gemms();
  EXPECT_DOUBLE_EQ(gemm_seconds(hw, h100, Precision::bf16, {4096, 50257, 1600}).value, 7e-3);
}

TEST(UnalignedGemm, UnpaddedVocabularyOutputLayer) {
  // fwd = FLOPs x (gemm_seconds - launch) / FLOPs + launch = latency + FLOPs / rate; the backward does
  // twice the FLOPs at the same rate with two launches: 2 (latency + FLOPs / rate).
  const Scenario s = test::scenario(gpt2("50257", "pytorch"));
  const HardwareProfile hw = default_profile(s.cluster.gpu);
  const double flops = 2.0 * 4096 * 1600 * 50257;
  const double rate = 0.12 * s.cluster.gpu.peak_for(Precision::bf16).value;
  const double latency = hw.gemm_for(Precision::bf16).latency.value;
  const OpTimes t = output_gemm(s, hw);
  EXPECT_NEAR(t.gemm_fwd, flops / rate + latency, 1e-9);
  EXPECT_NEAR(t.gemm_bwd, 2 * (flops / rate + latency), 1e-9);
}

TEST(UnalignedGemm, PaddedVocabularyAndMegatronKeepTheFastKernels) {
  const Scenario odd = test::scenario(gpt2("50257", "pytorch"));
  const HardwareProfile hw = default_profile(odd.cluster.gpu);
  const double slow = output_gemm(odd, hw).gemm_fwd;
  // 50,264 = 8 x 6,283: 16-byte aligned in bf16.
  const double padded = output_gemm(test::scenario(gpt2("50264", "pytorch")), hw).gemm_fwd;
  // Megatron runs the same model over 50,304 columns: aligned, though 0.09 % more FLOPs.
  const Scenario mg = test::scenario(gpt2("50257", "megatron"));
  EXPECT_EQ(build_op_graph(mg.model, mg.training, mg.parallel.tp).vocab, 50304);
  const double megatron = output_gemm(mg, hw).gemm_fwd;
  EXPECT_LT(padded, slow / 3);
  EXPECT_LT(megatron, slow / 3);
}

}  // namespace
}  // namespace tp
