#include "gemm_time.h"

#include <algorithm>
#include <cmath>

namespace tp {

double gemm_input_bytes(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4;
    case Precision::fp16:
    case Precision::bf16: return 2;
    case Precision::fp8: return 1;
  }
  return 2;
}

// cuBLASLt writes fp8 GEMMs' D in bf16 (the measurement suite's layout); the others in their own type.
double gemm_output_bytes(Precision p) { return p == Precision::fp8 ? 2 : gemm_input_bytes(p); }

double gemm_traffic_bytes(Precision p, const GemmDims& d) {
  return (d.m * d.k + d.k * d.n) * gemm_input_bytes(p) + d.m * d.n * gemm_output_bytes(p);
}

Seconds gemm_model_seconds(const GemmModel& model, const GpuSpec& gpu, Precision precision, const GemmDims& d) {
  const double peak = gpu.peak_for(precision).value;
  if (peak <= 0 || model.efficiency <= 0 || d.flops() <= 0) return model.latency;
  // Pipeline fill: the K loop of each output tile streams K / k_tile stages; short K cannot hide the
  // prologue and epilogue of the tile (docs/calibration.md, "The GEMM model", evidence table).
  const double fill = d.k / (d.k + model.k_half);
  const double compute = d.flops() / (peak * model.efficiency * fill);
  const double bandwidth = gpu.memory_bandwidth.value * model.bandwidth_efficiency;
  const double memory = bandwidth > 0 ? gemm_traffic_bytes(precision, d) / bandwidth : 0.0;
  // Roofline (Williams et al. 2009, CACM 52(4)) with a smooth corner: the p-norm of the two times, p = 4.
  const double a = std::max(compute, memory);
  const double b = std::min(compute, memory) / a;
  const double busy = a * std::sqrt(std::sqrt(1.0 + b * b * b * b));  // (1 + b^4)^(1/4), two square roots: cheaper than pow
  return Seconds(model.latency.value + busy);
}

bool gemm_aligned(Precision precision, const GemmDims& d) {
  // dim / (16 / bytes) is exact (a power-of-two scaling), so it is whole exactly when the dim is a multiple.
  const double per_element = gemm_input_bytes(precision) / 16.0;
  const auto aligned = [&](double dim) {
    const double units = dim * per_element;
    return units == std::floor(units);
  };
  return (d.tokens == GemmDims::Tokens::m || aligned(d.m)) && aligned(d.n) &&
         (d.tokens == GemmDims::Tokens::k || aligned(d.k));
}

Seconds gemm_seconds(const HardwareProfile& hw, const GpuSpec& gpu, Precision precision, const GemmDims& d) {
  if (const MeasuredGemm* g = hw.find_measured_gemm(precision, d.m, d.n, d.k)) return g->time;
  const GemmModel& model = hw.gemm_for(precision);
  const Seconds fitted = gemm_model_seconds(model, gpu, precision, d);
  const double peak = gpu.peak_for(precision).value;
  if (gemm_aligned(precision, d) || peak <= 0 || d.flops() <= 0) return fitted;
  const double align1 = model.latency.value + d.flops() / (kUnalignedGemmShareOfPeak * peak);
  return Seconds(std::max(fitted.value, align1));
}

}  // namespace tp
