// Unfused attention as a chain of kernels (planner/unfused_attention.h), by hand computation, and the
// Korthikanti et al. 2022 (arXiv:2205.05198) Table 4 measurement of what selective recompute repeats.
#include <gtest/gtest.h>

#include "estimate.h"
#include "hardware_profile.h"
#include "step_time.h"
#include "tests/test_support.h"
#include "unfused_attention.h"

namespace tp {
namespace {

TEST(UnfusedAttention, ScoreBytesCountEachKernelsReadsAndWrites) {
  // fp16 with dropout: QK^T writes 2, softmax 2 + 2, dropout 2 + 2 + 1 (mask), PV reads 2 = 13 B.
  EXPECT_DOUBLE_EQ(unfused_score_bytes_forward(2.0, true), 13.0);
  // Without dropout: 2 + 4 + 2 = 8 B.
  EXPECT_DOUBLE_EQ(unfused_score_bytes_forward(2.0, false), 8.0);
  // Backward with dropout: read P' 2, write dP' 2, dropout 2 + 2 + 1, softmax 3 x 2, dS read twice 4 = 19 B.
  EXPECT_DOUBLE_EQ(unfused_score_bytes_backward(2.0, true), 19.0);
  EXPECT_DOUBLE_EQ(unfused_score_bytes_backward(2.0, false), 14.0);
}

TEST(UnfusedAttention, TimeIsGemmsPlusScorePassesPlusLaunches) {
  GpuSpec a100;
  a100.key = "a100-sxm4-80gb";
  a100.generation = "ampere";
  a100.memory_bandwidth = ByteRate(2.0e12);
  a100.peak[static_cast<int>(Precision::fp16)] = FlopRate(300e12);
  HardwareProfile hw;
  hw.gemm[static_cast<size_t>(Precision::fp16)].efficiency = 0.75;
  hw.memory_efficiency = 0.8;
  // 45 GFLOP, 100 M score elements, fp16, dropout, 4 us launches. By hand:
  // forward 45e9 / 225e12 = 200 us; 100e6 x 13 B / 1.6e12 B/s = 812.5 us; 4 kernels 16 us: 1028.5 us.
  // backward 90e9 / 225e12 = 400 us; 100e6 x 19 B / 1.6e12 = 1187.5 us; 6 kernels 24 us: 1611.5 us.
  const UnfusedAttentionTime t = unfused_attention_time(45e9, 100e6, 2.0, true, Precision::fp16, hw, a100, 4e-6);
  EXPECT_NEAR(t.forward, 1028.5e-6, 1e-9);
  EXPECT_NEAR(t.backward, 1611.5e-6, 1e-9);
  // At a clock 1.25x slower (the sustained clock, model/sustained_clock.h) only the GEMMs stretch:
  // forward 250 us instead of 200, backward 500 instead of 400.
  const UnfusedAttentionTime slow = unfused_attention_time(45e9, 100e6, 2.0, true, Precision::fp16, hw, a100, 4e-6, 1.25);
  EXPECT_NEAR(slow.forward, 1078.5e-6, 1e-9);
  EXPECT_NEAR(slow.backward, 1711.5e-6, 1e-9);
  // FP8 training runs the chain in bf16: no bf16 peak here, so nothing is timed (0, never inf/NaN).
  const UnfusedAttentionTime none = unfused_attention_time(45e9, 100e6, 2.0, true, Precision::fp8, hw, a100, 4e-6);
  EXPECT_EQ(none.forward, 0.0);
}

TEST(UnfusedAttention, SelectiveRecomputeMatchesKorthikantiTable4) {
  // Korthikanti et al. 2022, Table 4 (22B, one transformer layer, 8 A100, micro-batch 4, s 2048):
  // selective recompute adds 20.9 - 19.6 = 1.3 ms per layer (its forward of the attention core; 20.3 -
  // 19.0 = 1.3 ms with sequence parallelism). The generation defaults (no measured unfused attention)
  // must reproduce that repeated time per layer within 15 %.
  const Scenario s = test::scenario(
      "model: megatron-22b\n"
      "cluster: {preset: dgx-a100, nodes: 1}\n"
      "training: {sequence_length: 2048, global_batch: 4, micro_batch: 4, precision: fp16, grad_precision: fp32, optimizer: adam, flash_attention: false}\n"
      "parallel: {tp: 8, pp: 1, dp: 1, zero: 0, sequence_parallel: true, recompute: selective}\n");
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Estimate e = estimate(s, g);
  const StepTime t = step_time(s, g, e, profile_for(s));
  const double per_layer = t.recompute.value / static_cast<double>(s.model.layers);
  EXPECT_NEAR(per_layer, 1.3e-3, 0.15 * 1.3e-3) << per_layer;
}

}  // namespace
}  // namespace tp
