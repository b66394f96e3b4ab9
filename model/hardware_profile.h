// The constants the time model uses: achievable fractions of the datasheet peaks. Defaults come
// from the GPU's generation (docs/model.md lists them and their sources); `trainplan calibrate fit`
// writes measured ones to a YAML file that `profile:` or --profile loads.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_class.h"
#include "specs.h"
#include "units.h"

namespace tp {

// GEMM time model of one dtype (docs/calibration.md, "The GEMM model"), fitted on real H100 data:
//   t = latency + smooth_max(t_compute, t_memory),  smooth_max(a, b) = (a^4 + b^4)^(1/4)
//   t_compute = 2 M N K / (peak x efficiency x K / (K + k_half))   (pipeline fill over the K loop)
//   t_memory  = ((M K + K N) x input bytes + M N x output bytes) / (bandwidth_efficiency x HBM bandwidth)
struct GemmModel {
  double efficiency = 0.78;            // fraction of the datasheet peak reached by large GEMMs
  double k_half = 64;                  // K at which the pipeline fill halves the efficiency
  Seconds latency = Seconds(5e-6);     // launch + prologue/epilogue floor of one GEMM
  double bandwidth_efficiency = 0.75;  // achieved / datasheet HBM bandwidth of memory-bound GEMMs
};

// A GEMM measured on this GPU: gemm_seconds returns its time for exactly this (dtype, m, n, k), each
// dimension at most kMaxGemmDimension (2^40: far beyond any layer; the profile's and the measurements' bound).
inline constexpr std::int64_t kMaxGemmDimension = std::int64_t(1) << 40;
struct MeasuredGemm {
  Precision dtype = Precision::bf16;
  std::int64_t m = 0, n = 0, k = 0;
  Seconds time;
};

// Fused attention efficiency (fraction of the 16-bit peak, planner FLOP conventions) as a function of
// the sequence length and head dim: eff = max x s / (s + seq_half) x d / (d + head_dim_half), and under a
// causal mask x s / (s + causal_seq_half): the diagonal tiles are computed whole but count half.
struct AttentionCurve {
  double max_efficiency = 0.6;
  double seq_half = 0;         // 0 = no sequence dependence
  double head_dim_half = 0;    // 0 = no head-dim dependence
  double causal_seq_half = 0;  // 0 = causal runs as fast as non-causal (per counted FLOP)
  double efficiency(double seq, double head_dim, bool causal = true) const;
};

// Shape terms of a kernel class (model/kernel_class_time.h): t = latency + bytes / (efficiency x HBM)
// x (1 + (row_half / row)^4)^(1/4) + elements x element_time. All 0 = the plain bandwidth of `kernel_efficiency`.
struct KernelClassShape {
  Seconds latency = Seconds(0);       // fixed cost of one call
  double row_half = 0;                // row length (elements) below which a row-wise kernel loses bandwidth
  Seconds element_time = Seconds(0);  // SM time per element, for classes that count elements (AdamW: per parameter)
  bool any() const { return latency.value > 0 || row_half > 0 || element_time.value > 0; }  // a term is set
};

struct CollectiveTierProfile {
  double bandwidth_efficiency = 1.0;  // achieved bus bandwidth / link bandwidth
  Seconds latency;                    // 0 = use the cluster's link latency
};

struct HardwareProfile {
  std::string name;    // "defaults: hopper" or the file it came from
  std::string gpu;     // the GPU key it describes ("" = any)
  std::array<GemmModel, kPrecisionCount> gemm{};
  std::vector<MeasuredGemm> gemm_measured;  // sorted by (dtype, m, n, k); see find_measured_gemm
  AttentionCurve attention_forward{0.6, 0, 0, 0};   // fused attention, fraction of the 16-bit peak
  AttentionCurve attention_backward{0.45, 0, 0, 0};
  AttentionKernel attention_kernel = AttentionKernel::flash;  // what the two curves above describe
  double attention_unfused = 0.35;  // unfused: batched GEMMs, fraction of the 16-bit peak
  bool attention_unfused_measured = false;  // a profile file gave `attention.unfused` (else: the kernel-chain model)
  double memory_efficiency = 0.85;  // achieved / datasheet HBM bandwidth for memory-bound kernels
  // Per kernel class (model/kernel_class.h): achieved / datasheet HBM bandwidth; 0 = memory_efficiency.
  std::array<double, kKernelClassCount> kernel_efficiency{};
  std::array<KernelClassShape, kKernelClassCount> kernel_shape{};
  Seconds kernel_launch = Seconds(4e-6);  // per kernel, not hidden behind the previous one
  CollectiveTierProfile intra_node{0.8, Seconds(0)};
  CollectiveTierProfile inter_node{0.9, Seconds(0)};
  double pcie_efficiency = 0.8;
  Watts idle_power;              // per GPU
  double busy_power_fraction = 0.8;  // average training power / TDP
  // SM clock (Hz) its GEMM and fused-attention rates were measured at (a calibration's bursts); 0 = the
  // rates are sustained training rates already (model/sustained_clock.h).
  double clock_hz = 0;
  // SM clock (Hz) back-to-back GEMMs held in the power suite's GEMM phase, seconds long at the power cap;
  // 0 = not measured.
  double sustained_clock_hz = 0;

  const GemmModel& gemm_for(Precision p) const { return gemm[static_cast<size_t>(p)]; }
  // The measured time of exactly this GEMM, or nullptr.
  const MeasuredGemm* find_measured_gemm(Precision p, double m, double n, double k) const;
  // Sorts gemm_measured and keeps one entry per shape (the last one added wins).
  void normalize_measured_gemms();
  double efficiency_of(KernelClass k) const {
    const double e = kernel_efficiency[static_cast<size_t>(k)];
    return e > 0 ? e : memory_efficiency;
  }
  const KernelClassShape& kernel_shape_of(KernelClass k) const { return kernel_shape[static_cast<size_t>(k)]; }
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
// The scenario's `profile:` file when it names one; else the committed measured profile of its GPU
// (h100-sxm-80gb: scenarios/profiles/h100-sxm.yaml, embedded at build time); else the generation defaults.
HardwareProfile profile_for(const Scenario& s);
}  // namespace tp

namespace tp {
inline constexpr const char* kH100SxmKey = "h100-sxm-80gb";
inline constexpr const char* kH100SxmProfileName = "scenarios/profiles/h100-sxm.yaml (built in)";
// Parses profile YAML text; `name` is used in messages and as the profile's name.
// `max_nodes` as parse_yaml_text's (the built-in profile passes kBuiltInYaml).
HardwareProfile load_profile_text(const std::string& text, const std::string& name, const GpuSpec& gpu,
                                  std::uint64_t max_nodes = 0);
}  // namespace tp
