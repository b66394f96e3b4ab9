#include "hardware_profile.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "flash_attention_fits.h"
#include "scenario.h"

namespace tp {

double AttentionCurve::efficiency(double seq, double head_dim, bool causal) const {
  double e = max_efficiency;
  if (causal && causal_seq_half > 0 && seq > 0) e *= seq / (seq + causal_seq_half);
  if (seq_half > 0 && seq > 0) e *= seq / (seq + seq_half);
  if (head_dim_half > 0 && head_dim > 0) e *= head_dim / (head_dim + head_dim_half);
  return e;
}

const MeasuredGemm* HardwareProfile::find_measured_gemm(Precision p, double m, double n, double k) const {
  if (gemm_measured.empty()) return nullptr;
  const auto key = std::make_tuple(p, static_cast<std::int64_t>(m), static_cast<std::int64_t>(n), static_cast<std::int64_t>(k));
  if (static_cast<double>(std::get<1>(key)) != m || static_cast<double>(std::get<2>(key)) != n ||
      static_cast<double>(std::get<3>(key)) != k) {
    return nullptr;  // not an integer shape: never measured
  }
  auto less = [](const MeasuredGemm& g, const decltype(key)& x) { return std::make_tuple(g.dtype, g.m, g.n, g.k) < x; };
  auto it = std::lower_bound(gemm_measured.begin(), gemm_measured.end(), key, less);
  if (it == gemm_measured.end() || std::make_tuple(it->dtype, it->m, it->n, it->k) != key) return nullptr;
  return &*it;
}

void HardwareProfile::normalize_measured_gemms() {
  auto key = [](const MeasuredGemm& g) { return std::make_tuple(g.dtype, g.m, g.n, g.k); };
  std::stable_sort(gemm_measured.begin(), gemm_measured.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  std::vector<MeasuredGemm> unique;
  for (const MeasuredGemm& g : gemm_measured) {
    if (!unique.empty() && key(unique.back()) == key(g)) unique.back() = g;
    else unique.push_back(g);
  }
  gemm_measured = std::move(unique);
}

namespace {

// Kernel-class efficiencies of a GPU without a measured profile of its own, from PyTorch's kernels on one
// H100 SXM at the largest measured size (shared/measurements/h100-sxm/torch-attention-and-kernels.json,
// scripts/fused_ref.py; achieved GB/s below). A class's time is its bytes through HBM at the datasheet rate
// plus the same bytes through the SMs at a rate of the class's own (the passes inside an eager op, the norms'
// row reductions, the conversions: PyTorch's code, docs/model.md §13): 1/achieved = 1/HBM + 1/sm_rate. The
// H100's achieved rate gives each class's sm_rate, which scales with the GPU's SMs x boost clock; the
// efficiency on a GPU is achieved / its datasheet HBM. On the H100 it is the measured fraction; on the H200
// (same SMs, 1.43x the bandwidth) the SM-bound classes keep their GB/s, as measured there (PyTorch's eager
// SwiGLU 1.07 -> 1.12 TB/s, bf16 -> fp32 cast 1.92 -> 2.00 TB/s; tests/data/h200/). A GPU with no SM count
// or clock in the catalog keeps the H100's fractions. rotary has no measurement: memory_efficiency.
// AdamW's SM work is per parameter, not per byte (its bf16 states halve the bytes, not the arithmetic): the
// datasheet HBM plus kAdamwSecondsPerParam at 132 SMs x 1980 MHz, scaled the same way. From torch's fused
// AdamW on one H200 over 62.5 M - 2 B parameters in 100 and 1,000 tensors, both state dtypes (24 records,
// tests/data/h200/qwen3-vs-llama-steps-and-adamw.json): t = bytes / (eta HBM) + P c + tensors h fits with
// eta = 0.998, c = 2.32 ps, h = 4.3 us of host work per tensor (hidden in a step: the planner leaves it
// out); the H100, same SMs and clock, is held out (docs/calibration.md, "AdamW's two state dtypes").
constexpr double kAdamwSecondsPerParam = 2.32e-12;

void set_kernel_class_defaults(HardwareProfile& p, const GpuSpec& gpu) {
  const std::pair<KernelClass, double> measured_gbps[] = {
      {KernelClass::rmsnorm_fwd, 1815}, {KernelClass::rmsnorm_bwd, 1503}, {KernelClass::layernorm_fwd, 1718},
      {KernelClass::layernorm_bwd, 1518}, {KernelClass::gelu_fwd, 2975}, {KernelClass::gelu_bwd, 2816},
      {KernelClass::swiglu_fwd, 1067}, {KernelClass::swiglu_bwd, 899}, {KernelClass::residual_add, 2962},
      {KernelClass::cast_to_fp32, 1921}, {KernelClass::cast_to_16bit, 2915}, {KernelClass::cross_entropy, 709}};
  constexpr double kH100Hbm = 3.35e12, kH100SmClock = 132 * 1980e6;  // datasheet; 132 SMs at 1980 MHz
  const double hbm = gpu.memory_bandwidth.value, sm_clock = gpu.sms * gpu.boost_clock_hz;
  const bool scalable = hbm > 0 && sm_clock > 0;
  p.kernel_efficiency[static_cast<size_t>(KernelClass::adamw)] = 1.0;
  p.kernel_shape[static_cast<size_t>(KernelClass::adamw)].element_time =
      Seconds(kAdamwSecondsPerParam * (scalable ? kH100SmClock / sm_clock : 1.0));
  for (const auto& [k, gbps] : measured_gbps) {
    const double achieved = gbps * 1e9;
    double efficiency = achieved / kH100Hbm;
    if (scalable) {
      const double sm_rate = 1.0 / (1.0 / achieved - 1.0 / kH100Hbm) * (sm_clock / kH100SmClock);
      efficiency = 1.0 / (1.0 + hbm / sm_rate);
    }
    p.kernel_efficiency[static_cast<size_t>(k)] = efficiency;
  }
}

// Large-GEMM efficiencies from vendor-published cuBLAS results and MLPerf-class training runs; see
// docs/model.md, "Default efficiencies". The shape terms (k_half, latency, bandwidth_efficiency) are the
// H100 fit's bf16 values rounded (docs/calibration.md), used for every generation.
void set_gemm_defaults(HardwareProfile& p, const GpuSpec& gpu) {
  GemmModel dense16{0.80, 40, Seconds(5.5e-6), 0.75};
  GemmModel dense8{0.70, 40, Seconds(5.5e-6), 0.75};
  const GemmModel dense32{0.85, 40, Seconds(5.5e-6), 0.75};
  if (gpu.generation == "volta") dense16.efficiency = 0.75;
  if (gpu.generation == "ampere") dense16.efficiency = 0.74;
  if (hopper_or_later(gpu)) {
    dense16.efficiency = 0.78;
    // The H100 fit's fp8 constants, rounded (scenarios/profiles/h100-sxm.yaml: 0.717, k_half 212, 5.6 us,
    // 0.69); the H200's own fit gives 0.713 (scenarios/profiles/h200.yaml). No Blackwell measurement: it
    // takes Hopper's. FP8 training's casts and scaling are ops of their own (docs/model.md §21).
    dense8 = GemmModel{0.72, 210, Seconds(5.6e-6), 0.69};
  }
  if (gpu.generation == "ada") dense16.efficiency = 0.75;
  if (gpu.generation == "cdna3") {
    dense16.efficiency = 0.60;
    dense8.efficiency = 0.50;
  }
  p.gemm[static_cast<size_t>(Precision::fp32)] = dense32;
  p.gemm[static_cast<size_t>(Precision::tf32)] = dense16;
  p.gemm[static_cast<size_t>(Precision::fp16)] = dense16;
  p.gemm[static_cast<size_t>(Precision::bf16)] = dense16;
  p.gemm[static_cast<size_t>(Precision::fp8)] = dense8;
}

void set_attention_defaults(HardwareProfile& p, const GpuSpec& gpu) {
  if (gpu.generation == "hopper") {
    // cuDNN's fused attention (bf16) as the committed H100 profile fits it (scenarios/profiles/h100-sxm.yaml,
    // `attention`, rounded): every Hopper part runs the same SMs at the same clocks, the H200 faster memory only.
    p.attention_forward = {1.0, 117, 62.9, 428};
    p.attention_backward = {0.616, 474, 42.1, 646};
    p.attention_kernel = AttentionKernel::cudnn;
  } else if (gpu.generation == "blackwell") {
    // Not measured on Blackwell: flat fractions (cuDNN / Transformer Engine fused attention, bf16), the Hopper
    // defaults before Hopper's measured curve.
    p.attention_forward = {0.50, 0, 0, 0};
    p.attention_backward = {0.36, 0, 0, 0};
    p.attention_kernel = AttentionKernel::cudnn;
  } else {
    // FlashAttention-2 on A100, its published benchmark fitted (model/flash_attention_fits.h).
    const Flash2Curves curves = flash2_curves(kFlash2A100);
    p.attention_forward = curves.forward;
    p.attention_backward = curves.backward;
    p.attention_kernel = AttentionKernel::flash;
  }
}

}  // namespace

HardwareProfile default_profile(const GpuSpec& gpu) {
  HardwareProfile p;
  p.name = "defaults: " + (gpu.generation.empty() ? std::string("generic") : gpu.generation);
  p.gpu = gpu.key;
  set_gemm_defaults(p, gpu);
  set_attention_defaults(p, gpu);
  p.idle_power = Watts(gpu.tdp.value * 0.12);
  // The Hopper fractions are micro-benchmark (burst) rates, at the boost clock, and Blackwell takes them;
  // the others were set from training runs, at the sustained clock (clock 0; docs/model.md §13 and §15,
  // "Sustained clock").
  if (hopper_or_later(gpu)) p.clock_hz = gpu.boost_clock_hz;
  set_kernel_class_defaults(p, gpu);
  return p;
}

}  // namespace tp

namespace tp {
namespace embedded {
extern const char* const kH100SxmProfileYaml;
}
HardwareProfile profile_for(const Scenario& s) {
  if (!s.profile.empty()) return load_profile(s.profile, s.cluster.gpu);
  // The committed, measured H100 profile (scenarios/profiles/h100-sxm.yaml, embedded at build time).
  if (s.cluster.gpu.key == kH100SxmKey) {
    return load_profile_text(embedded::kH100SxmProfileYaml, kH100SxmProfileName, s.cluster.gpu, kBuiltInYaml);
  }
  return default_profile(s.cluster.gpu);
}
}  // namespace tp
