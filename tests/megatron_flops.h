// Megatron's FLOP count of a GPT step, the oracle of the tests that compare against it: Narayanan et al.
// 2021 (arXiv 2104.04473) eq. (3), which Megatron-LM's num_floating_point_operations (megatron/training/
// training.py, core_r0.8.0) computes for one KV group per head, ffn 4h and no SwiGLU:
// 72 B s l h^2 (1 + s/6h + V/12lh) = 12 B s l h^2 (6 + s/h + V/2lh) for forward and backward, and with full
// recompute one more forward: 96 B s l h^2 (1 + s/6h + V/16lh). Attention is counted non-causally.
#pragma once

namespace tp::test {

inline double megatron_flops(double B, double s, double l, double h, double V, bool full_recompute = false) {
  if (full_recompute) return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  return 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
}

}  // namespace tp::test
