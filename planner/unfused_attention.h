// Time of unfused attention (no FlashAttention: Megatron-LM 2022, eager PyTorch "eager" attention) on a
// profile that did not measure it: the chain of kernels it really is, each after the other on one stream
// (docs/model.md §15, "Unfused attention").
//   forward:  QK^T (batched GEMM, writes the scores) -> scale-mask-softmax (reads, writes) -> dropout
//             (reads, writes the output and a 1-byte mask) -> softmax(.)V (batched GEMM, reads them);
//   backward: the two GEMMs' input and weight gradients (2x the FLOPs) and the score-sized traffic of
//             dV/dP (reads P, writes dP), dropout backward (reads dP and the mask, writes), softmax
//             backward (reads y and dy, writes dx) and dQ/dK (read dS twice).
// Sources: Megatron-LM megatron/model/transformer.py CoreAttention.forward (baddbmm, FusedScaleMaskSoftmax,
// attention_dropout, bmm), megatron/model/fused_softmax.py. A profile with a measured `attention.unfused`
// (calibrate: the whole chain timed) keeps its single fitted efficiency instead.
#pragma once

#include "hardware_profile.h"
#include "specs.h"

namespace tp {

struct UnfusedAttentionTime {
  double forward = 0, backward = 0;  // seconds, launches included
};

// Bytes per score element moved by the chain's memory-bound kernels and GEMM operands (bpv bytes per
// element of the scores, dropout adds its pass and the 1-byte mask).
double unfused_score_bytes_forward(double bpv, bool dropout);
double unfused_score_bytes_backward(double bpv, bool dropout);

// `flops`: forward FLOPs of QK^T and softmax(.)V on this GPU (full s^2 count: no causal skipping);
// `scores`: elements of the score tensor on this GPU (b x heads/t x s x s); `precision`: the training
// precision (fp8 training runs attention in bf16); `launch`: per kernel. GEMMs at the profile's
// large-GEMM efficiency (their time x `gemm_time_scale`: the sustained clock, model/sustained_clock.h),
// score traffic at memory_efficiency x HBM.
UnfusedAttentionTime unfused_attention_time(double flops, double scores, double bpv, bool dropout, Precision precision,
                                            const HardwareProfile& hw, const GpuSpec& gpu, double launch,
                                            double gemm_time_scale = 1.0);

}  // namespace tp
