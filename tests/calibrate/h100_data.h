// The real H100 measurement files of tests/data/h100-sxm/ (measured 2026-11-22, see its README) and the
// fit the calibration tests run on them, shared by the suites that judge the fitter on real data; and the
// H200 (tests/data/h200/) they are judged on as a second GPU.
#pragma once

#include <string>

#include "catalog.h"
#include "fitter.h"
#include "measurements.h"
#include "test_support.h"
#include "torch_import.h"

namespace tp::test {

inline std::string h100_data(const std::string& name) { return source_path("tests/data/h100-sxm/" + name); }

inline ClusterSpec h100_cluster() {
  ClusterSpec c;
  c.gpu = Catalog::builtin().gpu("h100-sxm-80gb", {"test", 0, 0}, "gpu");
  return c;
}

inline std::string h200_data(const std::string& name) { return source_path("tests/data/h200/" + name); }

inline ClusterSpec h200_cluster() {
  ClusterSpec c;
  c.gpu = Catalog::builtin().gpu("h200-sxm-141gb", {"test", 0, 0}, "gpu");
  return c;
}

// PyTorch's reference timings (cuDNN and FlashAttention-2 attention, the kernel classes), as records.
inline Measurements torch_reference_file() { return import_torch_file(h100_data("torch-attention-and-kernels.json")); }

// A profile fitted on every record (no hold-out), on the H100.
inline FitResult fit_all(const Measurements& m) {
  FitOptions o;
  o.cluster = h100_cluster();
  o.holdout_every = 0;
  return fit_profile(m, o);
}

}  // namespace tp::test
