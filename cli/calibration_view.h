// The adapter between the calibration code (calibrate/fitter.h, calibrate/measurements.h) and the
// report's calibration charts: everything the charts draw, as plain numbers. The fitter is free to
// change; only calibration_view.cpp follows it.
#pragma once

#include <string>
#include <vector>

#include "hardware_profile.h"
#include "measurements.h"
#include "specs.h"

namespace tp {

struct GemmPointView {
  std::string dtype;     // "bf16"
  std::string shape;     // "m=4096 n=4096 k=4096"
  double flops = 0;      // of the measured call (batch included)
  double measured = 0;   // achieved / peak of the dtype
  double fitted = 0;     // the fitted profile's prediction (gemm_seconds), same units
  bool held_out = false;  // kept out of the fit
};

struct AttentionView {
  std::string what;      // "fused forward", "fused backward", "unfused"
  int points = 0;
  double measured_median = 0;  // efficiency, fraction of the 16-bit peak
  double measured_min = 0, measured_max = 0;
  double profile = 0;          // the fitted profile's constant
};

// One measured memory-bound call and what the profile predicts for exactly that call.
struct BandwidthPointView {
  double row_length = 0;  // elements per row (the kernel's cols); 0 = not a row-wise shape
  double bytes = 0;       // minimal traffic of the call
  double measured = 0;    // B/s
  double profile = 0;     // B/s: bytes / kernel_class_seconds at this row length (model/kernel_class_time.h)
};

struct BandwidthView {
  std::string kernel;          // "rmsnorm_fwd", "copy" ...
  int points = 0;
  double measured_median = 0;  // B/s
  double measured_min = 0, measured_max = 0;
  double profile = 0;          // B/s: median of the points' predictions (the same cases as the measured median)
  std::vector<BandwidthPointView> cases;  // in file order
};

struct FitQualityView {
  std::string family;
  int fitted = 0, held_out = 0;
  double r2 = 0, mape = 0;  // NaN when none held out
};

struct CalibrationView {
  std::string file, device, gpu_key;
  double hbm_datasheet = 0;  // B/s
  std::vector<GemmPointView> gemm;
  std::vector<AttentionView> attention;
  std::vector<BandwidthView> bandwidth;
  std::vector<FitQualityView> quality;
  std::vector<std::string> notes;
};

// Per memory-bound kernel (class or plain memory op), the measured bandwidths and what `hw` predicts at
// each measured call's size and row length: the kernel-class model with its shape terms
// (kernel_class_seconds) for kernel classes, bytes / (launch + bytes / (memory_efficiency HBM)) for the
// plain memory ops, as `calibrate check` predicts them.
std::vector<BandwidthView> bandwidth_views(const Measurements& m, const HardwareProfile& hw, const GpuSpec& gpu);

// Reads the measurements file, fits a profile to it (holding out every 5th measurement, as
// `calibrate fit` does) and returns what to draw. `cluster`: the scenario's, used when the file
// names no catalog GPU. Throws InputError / IoError naming the file.
CalibrationView calibration_view(const std::string& path, const ClusterSpec& cluster);

}  // namespace tp
