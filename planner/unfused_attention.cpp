#include "unfused_attention.h"

namespace tp {

double unfused_score_bytes_forward(double bpv, bool dropout) {
  // QK^T writes S; softmax reads S, writes P; dropout reads P, writes P' and the mask; PV reads P'.
  return bpv + 2.0 * bpv + (dropout ? 2.0 * bpv + 1.0 : 0.0) + bpv;
}

double unfused_score_bytes_backward(double bpv, bool dropout) {
  // dV = P'^T dO reads P'; dP' = dO V^T writes dP'; dropout backward reads dP' and the mask, writes dP;
  // softmax backward reads P and dP, writes dS; dQ = dS K and dK = dS^T Q read dS twice.
  return bpv + bpv + (dropout ? 2.0 * bpv + 1.0 : 0.0) + 3.0 * bpv + 2.0 * bpv;
}

UnfusedAttentionTime unfused_attention_time(double flops, double scores, double bpv, bool dropout, Precision precision,
                                            const HardwareProfile& hw, const GpuSpec& gpu, double launch,
                                            double gemm_time_scale) {
  UnfusedAttentionTime t;
  // FP8 training keeps attention in 16 bits (as attention_peak does).
  const Precision p = precision == Precision::fp8 ? Precision::bf16 : precision;
  // The profile's large-GEMM rate, at the cluster's sustained clock.
  const double gemm_rate = gpu.peak_for(p).value * hw.gemm_for(p).efficiency / gemm_time_scale;
  const double bandwidth = gpu.memory_bandwidth.value * hw.memory_efficiency;
  if (gemm_rate <= 0 || bandwidth <= 0) return t;
  const double kernels_fwd = dropout ? 4.0 : 3.0;
  t.forward = flops / gemm_rate + scores * unfused_score_bytes_forward(bpv, dropout) / bandwidth + kernels_fwd * launch;
  // Backward: four GEMMs (dV, dP, dQ, dK) and the softmax and dropout backward kernels.
  const double kernels_bwd = 4.0 + 1.0 + (dropout ? 1.0 : 0.0);
  t.backward = 2.0 * flops / gemm_rate + scores * unfused_score_bytes_backward(bpv, dropout) / bandwidth + kernels_bwd * launch;
  return t;
}

}  // namespace tp
