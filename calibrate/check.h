// `trainplan calibrate check`: predicts every measurement of a file with a profile (the same functions
// the planner uses: gemm_seconds, the fused-attention curve, the kernel classes, collective_time) and
// reports per family the count, MAPE and worst error. docs/calibration.md, "Checking a profile".
#pragma once

#include <string>
#include <vector>

#include "hardware_profile.h"
#include "measurements.h"
#include "specs.h"

namespace tp {

struct CheckFamily {
  std::string family;  // "gemm bf16", "attention fused forward", "kernel rmsnorm_fwd", "launch", ...
  int count = 0;
  double mape_percent = 0;       // mean |predicted - measured| / measured, %
  double max_error_percent = 0;  // worst of the same
  double mape_under_20us_percent = -1;  // GEMMs only: the same over those measured under 20 us (-1 = none)
  int count_under_20us = 0;
};

struct CheckOptions {
  bool exact_shapes = true;  // false: ignore the profile's measured-GEMM table (judge the model alone)
};

// `cluster` gives the GPU peaks and bandwidths and, for collectives, the links.
std::vector<CheckFamily> check_profile(const HardwareProfile& hw, const ClusterSpec& cluster, const Measurements& m,
                                       const CheckOptions& o = {});

// {"families": [{"family": ..., "count": N, "mape_percent": x, "max_error_percent": y, ...}, ...]}
std::string check_json(const std::vector<CheckFamily>& families);
std::string check_table(const std::vector<CheckFamily>& families);

}  // namespace tp
