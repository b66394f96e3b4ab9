// FlashAttention-2's published benchmarks, fitted: the causal forward + backward throughput of
// FlashAttention-2 on one GPU at head dims 64 and 128 and sequences of 512 to 16k tokens (Dao 2023,
// "FlashAttention-2"; the flash-attention repository's assets/flash2_a100_fwd_bwd_benchmark.png, Figure 4 (c)
// and (d), and assets/flash2_h100_fwd_bwd_benchmark.png, its H100 80GB SXM5 figure (c) and (d)). Its benchmark
// (benchmarks/benchmark_flash_attention.py) counts a causal forward as half the full score matrix's matmul
// FLOPs, as trainplan does (attention_flops.h), and the backward as 2.5x the forward. The attention defaults
// of the GPUs before Hopper (model/hardware_profile.cpp) and FlashAttention-2's kernels on a Hopper profile
// of cuDNN curves (planner/attention_curves.h) read them; docs/model.md §13 and §20.
#pragma once

#include "attention_flops.h"
#include "hardware_profile.h"

namespace tp {

// rate = peak x share x s / (s + seq_half) x d / (d + head_dim_half), forward and backward together
// (flash2_curves below turns it into a profile's two AttentionCurves, which evaluate it).
struct CausalAttentionFit {
  double share = 0;
  double seq_half = 0;
  double head_dim_half = 0;
};

// The fits describe the kernel on a full GPU: each bar is read as the fit times the balance of the
// benchmark's grid on the GPU's SMs (model/attention_grid.h; batch 16k / s, 2048 / d heads: 0.93-0.97 at
// d = 128, 0.96-0.98 at d = 64), least squares on the log.
// FlashAttention-2 on A100 (108 SMs): the 12 causal bars (88-189 TFLOP/s of the 312 peak) within 2.4 %
// (mean 0.9 %).
inline constexpr CausalAttentionFit kFlash2A100{0.7531, 480, 20.45};
// FlashAttention-2 on H100 (132 SMs; the Ampere mma.sync kernels, it has no Hopper path): the 12 causal
// bars (141-328 TFLOP/s of the 989 dense 16-bit peak) within 1.8 % (mean 1.0 %).
inline constexpr CausalAttentionFit kFlash2H100{0.4353, 524, 28.2};
// The benchmark's backward FLOPs over the forward's (flops(..., mode="fwd_bwd") = 3.5 x the forward's).
inline constexpr double kBenchmarkBackwardFactor = 2.5;
// FlashAttention-2's forward efficiency over its backward one, in trainplan's FLOP count: 0.55 / 0.40, the
// split of the earlier flat defaults (Dao 2023: forward 50-73 % of peak, the backward slower). With it the
// fitted curve's forward reaches 0.63 of the peak at s = 8,192, d = 128 (196 TFLOP/s; the paper's forward
// alone peaks near 230).
inline constexpr double kFlash2ForwardOverBackward = 0.55 / 0.40;

// Forward and backward efficiencies (fractions of the peak, trainplan's FLOP count: the backward
// kAttentionBackwardFactor x the forward's FLOPs) whose summed time gives the benchmark's combined
// `share`, the forward `forward_over_backward` x the backward's.
struct PassEfficiencies {
  double forward = 0, backward = 0;
};
constexpr PassEfficiencies pass_efficiencies(double share, double forward_over_backward) {
  // Both passes' time in units of (forward FLOPs / (peak x backward efficiency)), against the benchmark's
  // FLOPs in units of the forward's.
  const double both_passes = 1.0 / forward_over_backward + kAttentionBackwardFactor;
  const double backward = share * both_passes / (1.0 + kBenchmarkBackwardFactor);
  return {forward_over_backward * backward, backward};
}

// A fit as the forward and backward curves of a profile (hardware_profile.h): the passes split as
// kFlash2ForwardOverBackward, and its sequence term a causal one (the fit is causal; a non-causal
// attention, which only calibration checks time, gets none).
struct Flash2Curves {
  AttentionCurve forward, backward;
};
constexpr Flash2Curves flash2_curves(const CausalAttentionFit& fit) {
  const PassEfficiencies e = pass_efficiencies(fit.share, kFlash2ForwardOverBackward);
  return {{e.forward, 0, fit.head_dim_half, fit.seq_half}, {e.backward, 0, fit.head_dim_half, fit.seq_half}};
}

}  // namespace tp
