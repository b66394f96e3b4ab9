// The kernel-class model (model/kernel_class_time.h, calibrate/fit_kernels.cpp):
//   t = latency + bytes / (eff x HBM) x (1 + (row_half / row)^4)^(1/4)
// judged on REAL H100 data (tests/data/h100-sxm/torch-attention-and-kernels.json: PyTorch's kernels timed
// by ../shared/measurements/scripts/fused_ref.py on 2026-11-22, three sizes per class, two per AdamW
// dtype) with leave-one-out, the only held-out test one file of three sizes allows; plus the formula
// written out by hand and recovery of known constants from synthetic records.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include <yaml-cpp/yaml.h>

#include "catalog.h"
#include "check.h"
#include "errors.h"
#include "fitter.h"
#include "hardware_profile.h"
#include "kernel_class_time.h"
#include "kernel_traffic.h"
#include "measurements.h"
#include "h100_data.h"
#include "test_support.h"
#include "torch_import.h"

namespace tp {
namespace {

ClusterSpec h100() { return test::h100_cluster(); }
Measurements torch_kernels() { return test::torch_reference_file(); }
FitResult fit_of(const Measurements& m) { return test::fit_all(m); }

std::map<std::string, FamilyFit> kernel_families(const FitResult& r) {
  std::map<std::string, FamilyFit> out;
  for (const FamilyFit& f : r.report.families) {
    if (f.family.rfind("kernel ", 0) == 0) out[f.family] = f;
  }
  return out;
}

TEST(KernelClassModel, FormulaByHand) {
  HardwareProfile hw;
  const GpuSpec gpu = h100().gpu;  // 3.35 TB/s datasheet HBM bandwidth
  const auto k = KernelClass::rmsnorm_bwd;
  hw.kernel_efficiency[static_cast<size_t>(k)] = 0.5;
  hw.kernel_shape[static_cast<size_t>(k)] = {Seconds(10e-6), 4096};
  // Row = row_half: factor (1 + 1)^(1/4) = 1.189207; 1e9 B at 0.5 x 3.35e12 B/s = 597.0149 us.
  EXPECT_NEAR(kernel_row_factor(4096, 4096), 1.189207, 1e-6);
  EXPECT_NEAR(kernel_class_seconds(hw, gpu, k, 1e9, 4096).value, 10e-6 + 597.0149e-6 * 1.189207, 1e-9);
  // Unknown row (0) or no row term: the plain bandwidth.
  EXPECT_DOUBLE_EQ(kernel_row_factor(4096, 0), 1.0);
  EXPECT_DOUBLE_EQ(kernel_row_factor(0, 2048), 1.0);
  EXPECT_NEAR(kernel_class_bandwidth(hw, gpu, k, 0), 0.5 * 3.35e12, 1e3);
  // Row 2048 = half of row_half: factor (1 + 16)^(1/4) = 2.030543.
  EXPECT_NEAR(kernel_class_bandwidth(hw, gpu, k, 2048), 0.5 * 3.35e12 / 2.030543, 1e6);
}

TEST(KernelClassModel, ManyCallsPayEachLatencyAndTheBytesOnce) {
  HardwareProfile hw;
  const GpuSpec gpu = h100().gpu;
  const auto k = KernelClass::residual_add;
  hw.kernel_efficiency[static_cast<size_t>(k)] = 0.5;
  hw.kernel_shape[static_cast<size_t>(k)] = {Seconds(10e-6), 0};
  // 1e9 B over 40 kernels at 0.5 x 3.35 TB/s: 40 x 10 us + 597.0149 us; a count below one is one call.
  EXPECT_NEAR(kernel_class_calls_seconds(hw, gpu, k, 1e9, 40).value, 40 * 10e-6 + 597.0149e-6, 1e-9);
  EXPECT_NEAR(kernel_class_calls_seconds(hw, gpu, k, 1e9, 0).value, 10e-6 + 597.0149e-6, 1e-9);
}

TEST(KernelClassModel, AdamwBytesPerParameterFollowTheStateDtype) {
  // fused_ref.py: bytes_moved = params x element bytes x 7 (read p, g, m, v; write p, m, v): 28 B per
  // parameter with fp32 states, 14 B with bf16 ones. The import keeps them, and kernel_traffic agrees.
  int seen = 0;
  for (const Measurement& it : torch_kernels().items) {
    if (it.op != MeasuredOp::memory_kernel || it.kernel != KernelClass::adamw) continue;
    const double per_param = it.dtype == Precision::fp32 ? 28.0 : 14.0;
    EXPECT_DOUBLE_EQ(it.bytes, per_param * static_cast<double>(it.rows)) << to_string(it.dtype);
    EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::adamw, it.dtype, it.rows, 1), it.bytes);
    ++seen;
  }
  EXPECT_EQ(seen, 4);
}

TEST(KernelClassModel, RealTorchKernelsFitAndHoldOutLeaveOneOut) {
  const auto fams = kernel_families(fit_of(torch_kernels()));
  ASSERT_EQ(fams.size(), 13u);  // every class but rotary (not in the file)
  // The target for memory kernels: <= 5 % (fitted). One bandwidth per class missed it by 12-24 %
  // for the norms and 14 % for AdamW; one efficiency and a latency still 7.0 % for AdamW, whose two state
  // dtypes share the arithmetic per parameter, not the bytes: 2.4 % with its element term
  // (docs/calibration.md, "The kernel-class model", "AdamW's two state dtypes").
  for (const auto& [family, f] : fams) EXPECT_LE(f.mape_fit, 5.0) << family;
  // Leave-one-out (each size predicted by the fit of the other two): elementwise classes <= 5 %; the norms
  // extrapolate their row term from two row lengths (<= 13 %, against 17-35 % for one constant); AdamW
  // 5.0 % (14.5 % with one efficiency).
  for (const char* k : {"kernel gelu_fwd", "kernel gelu_bwd", "kernel swiglu_fwd", "kernel swiglu_bwd",
                        "kernel residual_add", "kernel cast_to_fp32", "kernel cast_to_16bit", "kernel cross_entropy"}) {
    EXPECT_LE(fams.at(k).mape, 5.0) << k;
  }
  for (const char* k : {"kernel rmsnorm_fwd", "kernel rmsnorm_bwd", "kernel layernorm_fwd", "kernel layernorm_bwd"}) {
    EXPECT_LE(fams.at(k).mape, 13.0) << k;
  }
  EXPECT_LE(fams.at("kernel adamw").mape, 6.0);
}

TEST(KernelClassModel, NormBandwidthFollowsTheRowLength) {
  // Measured (fused_ref.py): torch RMSNorm backward moves 0.668 TB/s at hidden 2048 and 1.503 TB/s at
  // hidden 8192 (ratio 0.444); the fitted profile must reproduce that ratio within 5 %.
  const FitResult r = fit_of(torch_kernels());
  const GpuSpec gpu = h100().gpu;
  const double ratio = kernel_class_bandwidth(r.profile, gpu, KernelClass::rmsnorm_bwd, 2048) /
                       kernel_class_bandwidth(r.profile, gpu, KernelClass::rmsnorm_bwd, 8192);
  EXPECT_NEAR(ratio, 667.53 / 1502.84, 0.05 * 667.53 / 1502.84);
  // Elementwise classes have no row term; row-wise ones no latency.
  EXPECT_EQ(r.profile.kernel_shape_of(KernelClass::residual_add).row_half, 0.0);
  EXPECT_EQ(r.profile.kernel_shape_of(KernelClass::rmsnorm_fwd).latency.value, 0.0);
}

Measurement kernel_record(KernelClass k, std::int64_t rows, std::int64_t cols, double seconds) {
  Measurement it;
  it.op = MeasuredOp::memory_kernel;
  it.kernel = k;
  it.dtype = Precision::bf16;
  it.rows = rows;
  it.cols = cols;
  it.bytes = kernel_bytes_moved(k, Precision::bf16, rows, cols);
  it.time.median = seconds;
  return it;
}

TEST(KernelClassModel, SyntheticConstantsAreRecovered) {
  // Known constants, 1 % multiplicative noise, the sizes of fused_ref.py and two more per class.
  const double hbm = 3.35e12, eff_norm = 0.55, row_half = 3000, eff_add = 0.9, latency = 8e-6;
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.01);
  Measurements m;
  for (const auto& [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {8192, 1024}, {8192, 2048}, {8192, 4096}, {16384, 8192}, {4096, 16384}}) {
    const double nb = kernel_bytes_moved(KernelClass::rmsnorm_fwd, Precision::bf16, rows, cols);
    const double tn = nb / (eff_norm * hbm) * std::pow(1 + std::pow(row_half / cols, 4), 0.25);
    m.items.push_back(kernel_record(KernelClass::rmsnorm_fwd, rows, cols, tn * std::exp(noise(rng))));
    const double ab = kernel_bytes_moved(KernelClass::residual_add, Precision::bf16, rows, cols);
    m.items.push_back(kernel_record(KernelClass::residual_add, rows, cols, (latency + ab / (eff_add * hbm)) * std::exp(noise(rng))));
  }
  const FitResult r = fit_of(m);
  EXPECT_NEAR(r.profile.efficiency_of(KernelClass::rmsnorm_fwd), eff_norm, 0.03 * eff_norm);
  EXPECT_NEAR(r.profile.kernel_shape_of(KernelClass::rmsnorm_fwd).row_half, row_half, 0.1 * row_half);
  EXPECT_NEAR(r.profile.efficiency_of(KernelClass::residual_add), eff_add, 0.03 * eff_add);
  EXPECT_NEAR(r.profile.kernel_shape_of(KernelClass::residual_add).latency.value, latency, 0.3 * latency);
}

TEST(KernelClassModel, ProfileRoundTripKeepsTheShapeTerms) {
  HardwareProfile p = fit_of(torch_kernels()).profile;
  const HardwareProfile q = load_profile_text(profile_yaml(p), "roundtrip.yaml", h100().gpu);
  for (int i = 0; i < kKernelClassCount; ++i) {
    const auto k = static_cast<KernelClass>(i);
    EXPECT_NEAR(q.kernel_shape_of(k).row_half, p.kernel_shape_of(k).row_half, 1e-5 * (1 + p.kernel_shape_of(k).row_half));
    EXPECT_NEAR(q.kernel_shape_of(k).latency.value, p.kernel_shape_of(k).latency.value, 1e-5 * p.kernel_shape_of(k).latency.value);  // %.6g
  }
  EXPECT_THROW(load_profile_text("gpu: h100-sxm-80gb\nkernel_shape:\n  adamw: {latncy: 1 us}\n", "p.yaml", h100().gpu),
               InputError);
}

// GPUs without a measured profile time each eager kernel class at the H100 measurement's fraction of the
// datasheet bandwidth, whatever their generation (docs/model.md §13, "Kernel-class fractions for every
// generation"). Oracle: the measured file itself, each class's largest size, GB/s / 3.35 TB/s.
// Each class's largest measured size in a PyTorch kernel file (the bf16 AdamW rows are the same class as
// the fp32 ones: fp32 taken): class -> its bytes, achieved GB/s and elements (AdamW: parameters).
struct LargestKernel {
  double bytes = 0, gbps = 0, elements = 0;
};

std::map<KernelClass, LargestKernel> largest_size_gbps(const std::string& file) {
  const YAML::Node data = YAML::LoadFile(test::source_path(file));
  std::map<KernelClass, LargestKernel> largest;
  for (const YAML::Node& k : data["kernels"]) {
    const std::string name = k["kernel"].as<std::string>();
    const std::optional<KernelClass> c = torch_kernel_class(name);
    if (!c || name == "adamw_fused_bf16") continue;
    const double bytes = k["bytes_moved"].as<double>();
    const double elements = k["params"] ? k["params"].as<double>() : 0.0;
    if (!largest.count(*c) || bytes > largest[*c].bytes) largest[*c] = {bytes, k["gbps"].as<double>(), elements};
  }
  return largest;
}

// The defaults of a GPU without a profile (model/hardware_profile.cpp): 1/achieved = 1/HBM + 1/sm_rate, the
// class's sm_rate set from the H100's achieved rate and scaled by SMs x boost clock. Oracles: the H100's
// measured fractions, the formula by hand, and the H200's own PyTorch kernels (tests/data/h200/, measured
// 2026-11-29, after the H100-only rule was written; nothing set from them).
TEST(KernelClassModel, DefaultsAreHbmPlusSmTimeFromTheH100) {
  const std::map<KernelClass, LargestKernel> h100 = largest_size_gbps("tests/data/h100-sxm/torch-attention-and-kernels.json");
  ASSERT_EQ(h100.size(), 13u);
  const auto& gpus = Catalog::builtin().gpus();
  // The H100's own bandwidth and SMs give back its measured fractions (AdamW's SM time is per parameter and
  // set elsewhere: test_adamw_element_time.cpp).
  const HardwareProfile on_h100 = default_profile(gpus.at("h100-sxm-80gb"));
  // (The defaults hold the rates rounded to 1 GB/s.)
  for (const auto& [k, m] : h100) {
    if (k == KernelClass::adamw) continue;
    EXPECT_NEAR(on_h100.efficiency_of(k), m.gbps * 1e9 / 3.35e12, 5e-4) << to_string(k);
  }
  // By hand, eager SwiGLU forward (1,067 GB/s on the H100) on an A100 SXM 80GB (2.039 TB/s, 108 SMs at
  // 1,410 MHz against 132 at 1,980): sm_rate = 1 / (1/1.067 - 1/3.35) x (108 x 1410)/(132 x 1980) = 0.9122 TB/s;
  // achieved = 1 / (1/2.039 + 1/0.9122) = 0.6303 TB/s, 0.3091 of the A100's HBM (0.3185 as a plain fraction).
  const HardwareProfile on_a100 = default_profile(gpus.at("a100-sxm4-80gb"));
  EXPECT_NEAR(on_a100.efficiency_of(KernelClass::swiglu_fwd), 0.3091, 2e-4);
  // Held out: the H200 (4.8 TB/s, the H100's SMs and clock). The plain fractions missed its PyTorch kernels by
  // 16.3 % on average (cast to fp32 +37.6 %, SwiGLU forward +37.2 %, every class fast); the model by 8.0 %
  // (cross-entropy -19.3 %, cast to fp32 +16.2 %, gelu forward +14.5 %; AdamW +1.9 %, by its element term).
  const GpuSpec& h200_gpu = gpus.at("h200-sxm-141gb");
  const std::map<KernelClass, LargestKernel> h200 = largest_size_gbps("tests/data/h200/torch-attention-and-kernels.json");
  const HardwareProfile on_h200 = default_profile(h200_gpu);
  double model = 0, fraction = 0;
  for (const auto& [k, m] : h200) {
    const double gbps = m.gbps;
    const double predicted = m.bytes / kernel_class_pass_seconds(on_h200, h200_gpu, k, m.bytes, 0.0, m.elements).value;
    const double plain = h100.at(k).gbps * 1e9 / 3.35e12 * 4.8e12;
    std::printf("%-14s H200 %5.0f GB/s  model %5.0f (%+5.1f %%)  plain fraction %5.0f (%+5.1f %%)\n", to_string(k),
                gbps, predicted / 1e9, 100 * (predicted / (gbps * 1e9) - 1), plain / 1e9, 100 * (plain / (gbps * 1e9) - 1));
    model += std::abs(predicted / (gbps * 1e9) - 1) / static_cast<double>(h200.size());
    fraction += std::abs(plain / (gbps * 1e9) - 1) / static_cast<double>(h200.size());
  }
  EXPECT_LT(model, 0.10);
  EXPECT_LT(model, 0.6 * fraction);
}

}  // namespace
}  // namespace tp
