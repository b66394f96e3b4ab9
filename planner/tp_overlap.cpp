#include "tp_overlap.h"

#include <algorithm>

#include "gemm_time.h"

namespace tp {

TpOverlapGemmPlan tp_overlap_gemm_plan(bool row_parallel, int tp) {
  TpOverlapGemmPlan plan;
  if (tp <= 1) return plan;
  const double t = static_cast<double>(tp);
  if (row_parallel) {
    plan.forward_splits = kTePipelineSplits;  // proj_fprop, fc2_fprop: pipeline
    plan.dgrad_splits = t;                    // proj_dgrad, fc2_dgrad: ring_exchange
  } else {
    plan.forward_splits = t;  // qkv_fprop, fc1_fprop: ring_exchange
    plan.dgrad_splits = 1;    // qkv_dgrad, fc1_dgrad: bulk (the GEMM whole)
  }
  return plan;
}

double chunked_gemm_seconds_per_flop(const HardwareProfile& hw, const GpuSpec& gpu, Precision p, const GemmDims& d,
                                      double splits, double launch) {
  if (d.flops() <= 0) return 0.0;
  const double n = std::max(1.0, splits);
  GemmDims chunk = d;  // the same GEMM over 1/n of the tokens
  chunk.m = d.m / n;
  return (n * gemm_seconds(hw, gpu, p, chunk).value - launch) / d.flops();
}

int streaming_multiprocessors(const GpuSpec& gpu) {
  const std::string& k = gpu.key;
  if (gpu.generation == "hopper") return k.find("pcie") != std::string::npos ? 114 : 132;
  if (gpu.generation == "ampere" && k.rfind("a100", 0) == 0) return 108;
  if (gpu.generation == "blackwell") return 148;
  if (gpu.generation == "volta") return 80;
  return 0;
}

double ub_sm_cost(double comm, double gemm, const GpuSpec& gpu) {
  const int sms = streaming_multiprocessors(gpu);
  if (sms <= 0 || comm <= 0 || gemm <= 0) return 0.0;
  // While the communication kernel runs (at most as long as the GEMMs it overlaps) the GEMMs advance at
  // (1 - lost) of their speed: work W with c of it overlapped takes c + (W - c (1 - lost)) = W + c lost.
  const double lost = kTeUbCommSms / sms;
  return std::min(comm, gemm) * lost;
}

}  // namespace tp
