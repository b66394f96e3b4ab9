// The sustained GEMM rate under the power cap (model/gemm_time.h sustained_seconds_per_flop; the
// profile's power.sustained_gemm_bf16), by hand computation.
#include <gtest/gtest.h>

#include "estimate.h"
#include "gemm_time.h"
#include "hardware_profile.h"
#include "step_time.h"
#include "tests/test_support.h"

namespace tp {
namespace {

TEST(SustainedGemm, FloorIsOneOverPeakTimesFraction) {
  GpuSpec g;
  g.peak[static_cast<int>(Precision::bf16)] = FlopRate(1000e12);
  g.peak[static_cast<int>(Precision::fp8)] = FlopRate(2000e12);
  HardwareProfile hw;
  EXPECT_EQ(sustained_seconds_per_flop(hw, g, Precision::bf16), 0.0);  // not measured: no floor
  hw.sustained_gemm_bf16 = 0.5;
  // 1 / (1000 TFLOP/s x 0.5) = 2e-15 s per FLOP.
  EXPECT_DOUBLE_EQ(sustained_seconds_per_flop(hw, g, Precision::bf16), 2e-15);
  // The phase measures bf16 only: fp8 GEMMs get no floor from it.
  EXPECT_EQ(sustained_seconds_per_flop(hw, g, Precision::fp8), 0.0);
}

// A Megatron (fused) step's GEMMs run back to back: with a sustained fraction far below the burst
// curve, each layer GEMM takes at least its FLOPs at that rate; PyTorch eager steps are not bounded.
TEST(SustainedGemm, BoundsFusedStepsOnly) {
  const std::string yaml =
      "model: llama3-8b\n"
      "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
      "training: {framework: FW, sequence_length: 4096, global_batch: 1, micro_batch: 1, precision: bf16, grad_precision: fp32}\n"
      "parallel: {tp: 1, pp: 1, recompute: none}\n";
  auto run = [&](const char* fw, double sustained) {
    std::string y = yaml;
    y.replace(y.find("FW"), 2, fw);
    const Scenario s = test::scenario(y);
    const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
    const Estimate e = estimate(s, g);
    HardwareProfile hw = profile_for(s);
    hw.sustained_gemm_bf16 = sustained;
    return step_time(s, g, e, hw).compute.value;
  };
  // Hand computation of the bound: the layer GEMM FLOPs of one 4096-token sequence, forward + backward
  // (3x), at 0.2 x 989.4 TFLOP/s: 6 x 4096 x (per-layer weights) x 32 layers.
  const double h = 4096, kv = 1024, f = 14336;
  const double layer_params = h * (h + 2 * kv) + h * h + 3 * h * f;
  const double gemm_flops = 6.0 * 4096 * layer_params * 32;
  const double bound = gemm_flops / (0.2 * 989.4e12);
  EXPECT_GE(run("megatron", 0.2), bound);
  EXPECT_LT(run("megatron", 0.0), bound);  // the burst curve is far faster than 0.2 of the peak
  EXPECT_DOUBLE_EQ(run("pytorch", 0.2), run("pytorch", 0.0));
}

}  // namespace
}  // namespace tp
