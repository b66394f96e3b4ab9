// The constants the time model uses: achievable fractions of the datasheet peaks. Defaults come
// from the GPU's generation (docs/model.md lists them and their sources); `trainplan calibrate fit`
// writes measured ones to a YAML file that `profile:` or --profile loads.
#pragma once

#include <array>
#include <string>

#include "kernel_class.h"
#include "specs.h"
#include "units.h"

namespace tp {

// GEMM efficiency as a smooth function of the shape: eff(M, N, K) = max * f(M) f(N) f(K) with
// f(d) = d / (d + half_dim). Large square GEMMs approach `max`; a dimension of `half_dim` halves it.
struct GemmCurve {
  double max_efficiency = 0.8;
  double half_dim = 64;
  double efficiency(double m, double n, double k) const;
};

struct CollectiveTierProfile {
  double bandwidth_efficiency = 1.0;  // achieved bus bandwidth / link bandwidth
  Seconds latency;                    // 0 = use the cluster's link latency
};

struct HardwareProfile {
  std::string name;    // "defaults: hopper" or the file it came from
  std::string gpu;     // the GPU key it describes ("" = any)
  std::array<GemmCurve, kPrecisionCount> gemm{};
  double attention_forward = 0.6;   // fused attention, fraction of the 16-bit peak
  double attention_backward = 0.45;
  double attention_unfused = 0.35;  // unfused: batched GEMMs, fraction of the 16-bit peak
  double memory_efficiency = 0.85;  // achieved / datasheet HBM bandwidth for memory-bound kernels
  // Per kernel class (model/kernel_class.h): achieved / datasheet HBM bandwidth; 0 = memory_efficiency.
  std::array<double, kKernelClassCount> kernel_efficiency{};
  Seconds kernel_launch = Seconds(4e-6);  // per kernel, not hidden behind the previous one
  CollectiveTierProfile intra_node{0.8, Seconds(0)};
  CollectiveTierProfile inter_node{0.9, Seconds(0)};
  double pcie_efficiency = 0.8;
  Watts idle_power;              // per GPU
  double busy_power_fraction = 0.8;  // average training power / TDP

  const GemmCurve& gemm_for(Precision p) const { return gemm[static_cast<size_t>(p)]; }
  double efficiency_of(KernelClass k) const {
    const double e = kernel_efficiency[static_cast<size_t>(k)];
    return e > 0 ? e : memory_efficiency;
  }
};

// Datasheet-derived defaults for the GPU's generation (one set per generation, no per-run tuning).
HardwareProfile default_profile(const GpuSpec& gpu);

// YAML load/save (strict: unknown keys are errors with file:line:column). Keys not in the file keep
// the defaults of `gpu`. save_profile writes atomically (temporary file, then rename).
HardwareProfile load_profile(const std::string& path, const GpuSpec& gpu);
void save_profile(const HardwareProfile& p, const std::string& path);
std::string profile_yaml(const HardwareProfile& p);

}  // namespace tp

namespace tp {
// The scenario's `profile:` file when it names one, else the defaults of its GPU's generation.
HardwareProfile profile_for(const Scenario& s);
}  // namespace tp
