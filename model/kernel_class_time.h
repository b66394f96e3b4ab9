// How long one memory-bound kernel of a class (model/kernel_class.h) takes on a hardware profile: the
// one function `calibrate check`, the fitter and the planner ask (docs/calibration.md, "The kernel-class
// model"). Per class, fitted on real H100 data:
//   t = latency + bytes / (efficiency x HBM bandwidth) x (1 + (row_half / row)^4)^(1/4) + elements x element_time
// `latency` is the fixed cost of one timed call (launch and the framework's host work before the first
// kernel runs); the row term is the row-wise kernels' (one block per row: norms, cross-entropy) loss of
// bandwidth on short rows, where a block has too few bytes in flight to cover the HBM latency; the element
// term is the SM time of a class whose arithmetic per element does not shrink with its bytes (AdamW: the
// same update per parameter whatever the states' dtype, docs/calibration.md, "AdamW's two state dtypes").
#pragma once

#include "hardware_profile.h"
#include "kernel_class.h"
#include "specs.h"
#include "units.h"

namespace tp {

// Row-wise classes (one thread block reduces one row: rmsnorm/layernorm forward and backward,
// cross-entropy over the vocabulary) get the row term; the others are flat elementwise passes.
bool kernel_class_is_row_wise(KernelClass k);

// Classes timed with an element term (SM time per element) and the datasheet HBM: AdamW.
bool kernel_class_counts_elements(KernelClass k);

// The shape factor (1 + (row_half / row)^4)^(1/4) >= 1; 1 when row_half or row is 0 (unknown).
double kernel_row_factor(double row_half, double row_length);

// Achieved bandwidth (B/s) of class k on rows of `row_length` elements (0 = long rows), latency excluded.
double kernel_class_bandwidth(const HardwareProfile& hw, const GpuSpec& gpu, KernelClass k, double row_length);

// GPU time of one pass moving `bytes` (the class's minimal traffic, calibrate/kernel_traffic.h) over `elements`
// elements (AdamW's parameters; read only by classes that count elements), latency excluded.
Seconds kernel_class_pass_seconds(const HardwareProfile& hw, const GpuSpec& gpu, KernelClass k, double bytes, double row_length,
                                  double elements);

// Time of one call: its latency and its pass.
Seconds kernel_class_seconds(const HardwareProfile& hw, const GpuSpec& gpu, KernelClass k, double bytes, double row_length,
                             double elements = 0.0);

// Time of `calls` calls of a flat class that move `bytes` between them: each call's latency, the bytes
// once (a pass over many tensors, one kernel per tensor or per unit). calls below 1 count as 1.
Seconds kernel_class_calls_seconds(const HardwareProfile& hw, const GpuSpec& gpu, KernelClass k, double bytes, double calls);

}  // namespace tp
