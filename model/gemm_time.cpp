#include "gemm_time.h"

namespace tp {

Seconds gemm_seconds(const HardwareProfile& hw, const GpuSpec& gpu, Precision precision, const GemmDims& d) {
  const double peak = gpu.peak_for(precision).value;
  const double eff = hw.gemm_for(precision).efficiency(d.m, d.n, d.k);
  if (peak <= 0 || eff <= 0) return Seconds(hw.kernel_launch.value);
  return Seconds(d.flops() / (peak * eff) + hw.kernel_launch.value);
}

}  // namespace tp
