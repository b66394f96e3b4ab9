// The output layer's GEMMs when the vocabulary is not a multiple of 16 bytes (docs/model.md §20).
// Oracle, by hand: cuBLAS on H100 runs such GEMMs in CUTLASS align1 kernels at 0.12 of the dense peak
// (measured: h100-pytorch-kernel-time.json, gpt2-1.5b-s1024-mb4, 16.44 ms for 3 x 2 x 4096 x 1600 x 50257
// FLOP = 120 TFLOP/s of 989), so a forward takes 2 t h V / (0.12 peak) plus one launch, the backward
// twice the FLOPs plus two launches. Megatron pads the vocabulary (make_vocab_size_divisible_by = 128),
// so its layer code is never timed there.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "hardware_profile.h"
#include "op_graph.h"
#include "op_times.h"
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
  const OpGraph g = build_op_graph(s.model, s.training);
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

TEST(MisalignedGemm, UnpaddedVocabularyRunsAtTheAlign1Rate) {
  const Scenario s = test::scenario(gpt2("50257", "pytorch"));
  const HardwareProfile hw = default_profile(s.cluster.gpu);
  const double flops = 2.0 * 4096 * 1600 * 50257;
  const double rate = 0.12 * s.cluster.gpu.peak_for(Precision::bf16).value;
  const double launch = hw.kernel_launch.value;
  const OpTimes t = output_gemm(s, hw);
  EXPECT_NEAR(t.gemm_fwd, flops / rate + launch, 1e-9);
  EXPECT_NEAR(t.gemm_bwd, 2 * flops / rate + 2 * launch, 1e-9);
  EXPECT_NEAR(t.gemm_fwd, 5.55e-3, 0.05e-3);  // 6.59e11 FLOP at 0.12 x 989 TFLOP/s
}

TEST(MisalignedGemm, PaddedVocabularyAndMegatronKeepTheFastKernels) {
  const Scenario odd = test::scenario(gpt2("50257", "pytorch"));
  const HardwareProfile hw = default_profile(odd.cluster.gpu);
  const double slow = output_gemm(odd, hw).gemm_fwd;
  // 50,264 = 8 x 6,283: 16-byte aligned in bf16; nanoGPT pads GPT-2 to 50,304 for this reason.
  const double padded = output_gemm(test::scenario(gpt2("50264", "pytorch")), hw).gemm_fwd;
  const double megatron = output_gemm(test::scenario(gpt2("50257", "megatron")), hw).gemm_fwd;
  EXPECT_LT(padded, slow / 3);
  EXPECT_LT(megatron, slow / 3);
}

}  // namespace
}  // namespace tp
