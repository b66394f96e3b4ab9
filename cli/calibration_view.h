// The adapter between the calibration code (calibrate/fitter.h, calibrate/measurements.h) and the
// report's calibration charts: everything the charts draw, as plain numbers. The fitter is free to
// change; only calibration_view.cpp follows it.
#pragma once

#include <string>
#include <vector>

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

struct BandwidthView {
  std::string kernel;          // "rmsnorm_fwd", "copy" ...
  int points = 0;
  double measured_median = 0;  // B/s
  double measured_min = 0, measured_max = 0;
  double profile = 0;          // B/s the fitted profile predicts for large sizes
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

// Reads the measurements file, fits a profile to it (holding out every 5th measurement, as
// `calibrate fit` does) and returns what to draw. `cluster`: the scenario's, used when the file
// names no catalog GPU. Throws InputError / IoError naming the file.
CalibrationView calibration_view(const std::string& path, const ClusterSpec& cluster);

}  // namespace tp
