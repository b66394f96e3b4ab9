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

// Bytes per element of the operands (A, B) and of the output (C) as the measurement suite runs them.
double gemm_input_bytes(Precision p);
double gemm_output_bytes(Precision p);
// Minimal HBM traffic of one GEMM: A and B read once, C written once.
double gemm_traffic_bytes(Precision p, const GemmDims& d);

// The fitted model alone (hardware_profile.h, GemmModel), launch and latency floor included.
Seconds gemm_model_seconds(const GemmModel& model, const GpuSpec& gpu, Precision precision, const GemmDims& d);

// Kernel time of one GEMM: the profile's measured time when exactly this (dtype, m, n, k) was measured,
// else the fitted model. Kernel time of one GEMM of shape `d` on `gpu` described by `hw` (seconds, > 0 for a non-empty GEMM).
Seconds gemm_seconds(const HardwareProfile& hw, const GpuSpec& gpu, Precision precision, const GemmDims& d);

// Seconds per FLOP at the rate back-to-back GEMMs sustain under the power cap (the profile's
// power.sustained_gemm_bf16, measured by the power suite's GEMM phase): a floor for the GEMMs of a fused
// training step, which run back to back for seconds. 16-bit GEMMs only; 0 when not measured.
double sustained_seconds_per_flop(const HardwareProfile& hw, const GpuSpec& gpu, Precision precision);

}  // namespace tp
