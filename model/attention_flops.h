// The attention core's FLOP convention, one rule for the op graph, the step time and the calibration
// fit (docs/model.md §4 and §15; docs/calibration.md, "The fit").
#pragma once

namespace tp {

// Matmul FLOPs of the attention forward over the full (non-causal) score matrix: QK^T and softmax(.)V,
// 2 x s_q x s_kv x d each per head (1 MAC = 2 FLOP), Megatron's count (Narayanan et al. 2021, eq. 3).
inline double attention_forward_flops(double sequences, double heads, double seq_q, double seq_kv, double head_dim) {
  return 4.0 * sequences * heads * seq_q * seq_kv * head_dim;
}

// The share of those FLOPs a kernel executes: a fused causal kernel skips the masked half of the score
// blocks; the unfused path computes the whole score matrix.
inline double attention_executed_share(bool fused, bool causal) { return fused && causal ? 0.5 : 1.0; }

// The backward computes dQ, dK and dV: two matmuls for each of the forward's.
inline constexpr double kAttentionBackwardFactor = 2.0;

}  // namespace tp
