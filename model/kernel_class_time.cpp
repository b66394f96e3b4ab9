#include "kernel_class_time.h"

#include <algorithm>
#include <cmath>

namespace tp {

bool kernel_class_is_row_wise(KernelClass k) {
  switch (k) {
    case KernelClass::rmsnorm_fwd:
    case KernelClass::rmsnorm_bwd:
    case KernelClass::layernorm_fwd:
    case KernelClass::layernorm_bwd:
    case KernelClass::cross_entropy: return true;
    default: return false;
  }
}

bool kernel_class_counts_elements(KernelClass k) { return k == KernelClass::adamw; }

double kernel_row_factor(double row_half, double row_length) {
  if (!(row_half > 0) || !(row_length > 0)) return 1.0;
  // A smooth minimum of the long-row bandwidth and one growing with the row (bytes in flight per block,
  // Little's law), p = 4 as in the GEMM roofline's corner (docs/calibration.md, evidence table).
  const double r = row_half / row_length;
  return std::sqrt(std::sqrt(1.0 + r * r * r * r));  // (1 + r^4)^(1/4)
}

double kernel_class_bandwidth(const HardwareProfile& hw, const GpuSpec& gpu, KernelClass k, double row_length) {
  const double bw = gpu.memory_bandwidth.value * hw.efficiency_of(k);
  return bw / kernel_row_factor(hw.kernel_shape_of(k).row_half, row_length);
}

Seconds kernel_class_pass_seconds(const HardwareProfile& hw, const GpuSpec& gpu, KernelClass k, double bytes, double row_length,
                                  double elements) {
  const double bw = kernel_class_bandwidth(hw, gpu, k, row_length);
  const double per_element = kernel_class_counts_elements(k) ? hw.kernel_shape_of(k).element_time.value : 0.0;
  return Seconds((bw > 0 ? bytes / bw : 0.0) + elements * per_element);
}

Seconds kernel_class_seconds(const HardwareProfile& hw, const GpuSpec& gpu, KernelClass k, double bytes, double row_length,
                             double elements) {
  return Seconds(hw.kernel_shape_of(k).latency.value + kernel_class_pass_seconds(hw, gpu, k, bytes, row_length, elements).value);
}

Seconds kernel_class_calls_seconds(const HardwareProfile& hw, const GpuSpec& gpu, KernelClass k, double bytes, double calls) {
  const double extra_calls = std::max(1.0, calls) - 1.0;
  return kernel_class_seconds(hw, gpu, k, bytes, 0.0) + Seconds(extra_calls * hw.kernel_shape_of(k).latency.value);
}

}  // namespace tp
