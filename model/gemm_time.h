// How long one GEMM takes on a hardware profile: the one function the planner, the fitter's checks and
// `trainplan calibrate check` ask. C[m x n] = A[m x k] B[k x n] in `precision`, launch included.
#pragma once

#include "hardware_profile.h"
#include "specs.h"
#include "units.h"

namespace tp {

struct GemmDims {
  double m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * m * n * k; }
};

// Kernel time of one GEMM of shape `d` on `gpu` described by `hw` (seconds, > 0 for a non-empty GEMM).
Seconds gemm_seconds(const HardwareProfile& hw, const GpuSpec& gpu, Precision precision, const GemmDims& d);

}  // namespace tp
