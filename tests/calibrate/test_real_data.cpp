// The fitter and `calibrate check` judged on REAL H100 data (tests/data/h100-sxm/, measured 2026-11-22,
// see its README) that the profile was not fitted on. Oracles: the measured times themselves and the
// targets of the calibration issue ("Done when": GEMM MAPE <= 6 % per dtype, no clamping on real data).
// Where the model alone does not reach a target yet, the bound asserted is the documented one
// (docs/calibration.md, "Fit quality on real data") and the comment says so.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <tuple>

#include "catalog.h"
#include "check.h"
#include "fitter.h"
#include "gemm_time.h"
#include "hardware_profile.h"
#include "measurements.h"
#include "h100_data.h"
#include "test_support.h"
#include "torch_import.h"

namespace tp {
namespace {

std::string data(const std::string& name) { return test::h100_data(name); }
ClusterSpec h100() { return test::h100_cluster(); }
FitResult fit_llama() { return test::fit_all(read_measurements(data("calibrate-llama3.1-8b-shapes.json"))); }

std::map<std::string, CheckFamily> check_file(const HardwareProfile& p, const std::string& file, bool exact) {
  std::map<std::string, CheckFamily> out;
  for (const CheckFamily& f : check_profile(p, h100(), read_measurements(data(file)), {exact})) out[f.family] = f;
  return out;
}

TEST(RealData, FitOfTheLlamaFileIsNeverClamped) {
  const FitResult r = fit_llama();
  for (const std::string& n : r.report.notes) EXPECT_EQ(n.find("clamp"), std::string::npos) << n;
  for (int i = 0; i < kPrecisionCount; ++i) {
    const GemmModel& g = r.profile.gemm[static_cast<size_t>(i)];
    EXPECT_LT(g.efficiency, 1.0);
    EXPECT_GT(g.efficiency, 0.5);  // the H100 reaches 70-80 % of every datasheet peak on large GEMMs
  }
}

TEST(RealData, ProfileMeetsTheGemmTargetOnTheMixtralFile) {
  const FitResult r = fit_llama();
  // With the exact-shape table (the generic grid shapes appear in both files): target <= 6 % per dtype.
  for (const auto& [family, f] : check_file(r.profile, "calibrate-gemm-mixtral-8x7b-shapes.json", true)) {
    EXPECT_LE(f.mape_percent, 6.0) << family;
  }
  // The model alone, held out: bf16 and fp16 meet 6 %; tf32, fp32 and fp8 are within 10 % (documented gap).
  for (const auto& [family, f] : check_file(r.profile, "calibrate-gemm-mixtral-8x7b-shapes.json", false)) {
    EXPECT_LE(f.mape_percent, family == "gemm bf16" || family == "gemm fp16" ? 6.0 : 10.0) << family;
  }
}

TEST(RealData, ModelAlonePredictsTheQuickFileItWasNotFittedOn) {
  const FitResult r = fit_llama();
  const auto fams = check_file(r.profile, "calibrate-quick.json", false);
  ASSERT_TRUE(fams.count("gemm bf16"));
  // Mostly GEMMs under 20 us (quick grids). bf16/fp16/fp8: <= 10 % (the issue's small-GEMM target);
  // fp32/tf32 small shapes pick other cuBLAS kernels: <= 20 % (documented gap).
  for (const char* f : {"gemm bf16", "gemm fp16", "gemm fp8"}) EXPECT_LE(fams.at(f).mape_percent, 10.0) << f;
  for (const char* f : {"gemm fp32", "gemm tf32"}) EXPECT_LE(fams.at(f).mape_percent, 20.0) << f;
}

// The same quick run on another H100 machine five days later with newer libraries (cuDNN 9.19, NCCL 2.28.9;
// tests/data/h100-sxm/calibrate-quick-2026-11-27.json, measured by this project's `calibrate run --quick`
// on the device, where the GPU tests passed too): the profile fitted on the first machine's file holds the
// same bounds on the second's GEMMs.
TEST(RealData, ModelAlonePredictsAnotherMachinesQuickRun) {
  const FitResult r = fit_llama();
  const auto fams = check_file(r.profile, "calibrate-quick-2026-11-27.json", false);
  ASSERT_TRUE(fams.count("gemm bf16"));
  for (const auto& [family, f] : fams) std::printf("%-44s %4d  MAPE %6.2f %%\n", family.c_str(), f.count, f.mape_percent);
  for (const char* f : {"gemm bf16", "gemm fp16", "gemm fp8"}) EXPECT_LE(fams.at(f).mape_percent, 10.0) << f;
  for (const char* f : {"gemm fp32", "gemm tf32"}) EXPECT_LE(fams.at(f).mape_percent, 20.0) << f;
}

TEST(RealData, ExactShapesAreLookedUp) {
  const FitResult r = fit_llama();
  const Measurements m = read_measurements(data("calibrate-llama3.1-8b-shapes.json"));
  const ClusterSpec c = h100();
  for (const Measurement& it : m.items) {
    if (it.op != MeasuredOp::gemm) continue;
    const GemmDims d{static_cast<double>(it.gemm.m), static_cast<double>(it.gemm.n), static_cast<double>(it.gemm.k)};
    const double t = gemm_seconds(r.profile, c.gpu, it.dtype, d).value;
    // Shapes measured twice (several layers share one GEMM) keep one of the two times: within 5 %.
    EXPECT_NEAR(t, it.time.median, 0.05 * it.time.median) << shape_text(it);
  }
}

TEST(RealData, CudnnAttentionAndKernelClassesFitTheTorchFile) {
  FitOptions o;
  o.cluster = h100();
  o.holdout_every = 0;
  const Measurements m = import_torch_file(data("torch-attention-and-kernels.json"));
  const FitResult r = fit_profile(m, o);
  EXPECT_EQ(r.report.attention_algorithm, "cudnn");
  const auto fams = [&] {
    std::map<std::string, CheckFamily> out;
    for (const CheckFamily& f : check_profile(r.profile, h100(), m)) out[f.family] = f;
    return out;
  }();
  // cuDNN SDPA: the curve over (s, d, causal) holds within 5 % on average (the issue's kernel target).
  EXPECT_LE(fams.at("attention fused forward (cudnn)").mape_percent, 5.0);
  EXPECT_LE(fams.at("attention fused backward (cudnn)").mape_percent, 5.0);
  // The kernel-class model (latency, row-length or, for AdamW, per-parameter term per class): every class
  // within 5 % (issue target; AdamW 7.0 % with one efficiency for its two state dtypes, before 2026-11-30).
  // Held-out (leave-one-out) levels: test_kernel_classes.cpp.
  for (const auto& [family, f] : fams) {
    if (family.rfind("kernel ", 0) == 0) {
      EXPECT_LE(f.mape_percent, 5.0) << family;
    }
  }
}

TEST(TorchImport, KernelNamesMapToClasses) {
  // The mapping of the brief / docs/calibration.md, written out here.
  const std::map<std::string, KernelClass> want = {
      {"rmsnorm_fwd", KernelClass::rmsnorm_fwd},         {"rmsnorm_bwd", KernelClass::rmsnorm_bwd},
      {"layernorm_fwd", KernelClass::layernorm_fwd},     {"layernorm_bwd", KernelClass::layernorm_bwd},
      {"gelu_tanh_fwd", KernelClass::gelu_fwd},          {"gelu_tanh_bwd", KernelClass::gelu_bwd},
      {"swiglu_fwd_eager", KernelClass::swiglu_fwd},     {"swiglu_bwd_eager", KernelClass::swiglu_bwd},
      {"residual_add", KernelClass::residual_add},       {"cast_bf16_to_fp32", KernelClass::cast_to_fp32},
      {"cast_fp32_to_bf16", KernelClass::cast_to_16bit}, {"cross_entropy_fwd_bwd_fp32_upcast", KernelClass::cross_entropy},
      {"adamw_fused_fp32", KernelClass::adamw},          {"adamw_fused_bf16", KernelClass::adamw}};
  for (const auto& [name, k] : want) {
    ASSERT_TRUE(torch_kernel_class(name).has_value()) << name;
    EXPECT_EQ(*torch_kernel_class(name), k) << name;
  }
  EXPECT_FALSE(torch_kernel_class("cross_entropy_fwd_bf16").has_value());  // forward only: not the class
}

TEST(TorchImport, RecordsKeepTheScriptsBytesAndShapes) {
  const Measurements m = import_torch_file(data("torch-attention-and-kernels.json"));
  // The file: 60 attention rows (each a forward and a backward) and 46 kernel rows, 6 of them forward-only
  // cross-entropy (skipped).
  int attention = 0, kernels = 0;
  for (const Measurement& it : m.items) {
    attention += is_attention(it.op);
    kernels += it.op == MeasuredOp::memory_kernel;
  }
  EXPECT_EQ(attention, 120);
  EXPECT_EQ(kernels, 40);
  EXPECT_EQ(m.skipped.size(), 6u);
  const Measurement& first = *std::find_if(m.items.begin(), m.items.end(), [](const Measurement& x) { return x.op == MeasuredOp::memory_kernel; });
  // rmsnorm_fwd, tokens 8192 x hidden 2048: bytes_moved 67108864 = read + write of the bf16 tensor (fused_ref.py).
  EXPECT_EQ(first.kernel, KernelClass::rmsnorm_fwd);
  EXPECT_DOUBLE_EQ(first.bytes, 2.0 * 8192 * 2048 * 2);
  EXPECT_EQ(first.rows, 8192);
  EXPECT_EQ(first.cols, 2048);
}

TEST(TorchImport, BadFileNamesTheField) {
  EXPECT_THROW(import_torch(nlohmann::json::parse(R"({"kernels": [{"kernel": "residual_add", "seconds": "x"}]})"), "f.json"),
               InputError);
  try {
    import_torch(nlohmann::json::parse(R"({"attention": [{"backend": "cudnn", "batch": 1}]})"), "f.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("attention[0].heads"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f.json"), std::string::npos) << e.what();
  }
}

TEST(CheckCli, JsonContract) {
  const auto r = test::run_trainplan("calibrate check " + test::source_path("scenarios/profiles/h100-sxm.yaml") + " " +
                                     data("calibrate-gemm-mixtral-8x7b-shapes.json") + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  ASSERT_TRUE(j["families"].is_array());
  // Counted independently from the file: GEMMs per dtype.
  std::map<std::string, int> want;
  for (const Measurement& it : read_measurements(data("calibrate-gemm-mixtral-8x7b-shapes.json")).items) {
    if (it.op == MeasuredOp::gemm) want[std::string("gemm ") + to_string(it.dtype)] += 1;
  }
  ASSERT_EQ(j["families"].size(), want.size());
  for (const auto& f : j["families"]) {
    ASSERT_TRUE(f["family"].is_string() && f["count"].is_number_integer() && f["mape_percent"].is_number() &&
                f["max_error_percent"].is_number());
    EXPECT_EQ(f["count"].get<int>(), want.at(f["family"].get<std::string>()));
    EXPECT_LE(f["mape_percent"].get<double>(), f["max_error_percent"].get<double>());
  }
}

TEST(CheckCli, BadMeasurementsFileNamesFileAndField) {
  const std::string bad = (std::filesystem::temp_directory_path() / "trainplan_check_bad.json").string();
  write_file_atomically(bad, R"({"schema": "trainplan-measurements/1", "measurements": [{"op": "gemm", "dtype": "bf16", "shape": {"m": 1, "n": true, "k": 1}, "time": {"median": 1}}]})");
  const auto r = test::run_trainplan("calibrate check " + test::source_path("scenarios/profiles/h100-sxm.yaml") + " " + bad);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("trainplan_check_bad.json"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("device"), std::string::npos) << r.output;  // the first bad field
}

TEST(Profile, RoundTripKeepsModelTableAttentionAndKernels) {
  const FitResult r = fit_llama();
  HardwareProfile p = r.profile;
  p.kernel_efficiency[static_cast<size_t>(KernelClass::adamw)] = 0.61;
  p.attention_forward = {0.7, 300, 40, 500};
  const HardwareProfile q = load_profile_text(profile_yaml(p), "roundtrip.yaml", h100().gpu);
  ASSERT_EQ(q.gemm_measured.size(), p.gemm_measured.size());
  for (size_t i = 0; i < p.gemm_measured.size(); ++i) {
    EXPECT_NEAR(q.gemm_measured[i].time.value, p.gemm_measured[i].time.value, 1e-5 * p.gemm_measured[i].time.value);
  }
  EXPECT_NEAR(q.gemm_for(Precision::bf16).bandwidth_efficiency, p.gemm_for(Precision::bf16).bandwidth_efficiency, 1e-5);
  EXPECT_NEAR(q.efficiency_of(KernelClass::adamw), 0.61, 1e-9);
  // A class the fit did not measure keeps the generation's value (or memory_efficiency) through the round trip.
  EXPECT_NEAR(q.efficiency_of(KernelClass::rmsnorm_fwd), p.efficiency_of(KernelClass::rmsnorm_fwd), 1e-5);
  EXPECT_NEAR(q.attention_forward.efficiency(4096, 128), p.attention_forward.efficiency(4096, 128), 1e-6);
}

TEST(Profile, UnknownKeyIsAnError) {
  EXPECT_THROW(load_profile_text("gpu: h100-sxm-80gb\ngemm:\n  bf16: {efficency: 0.7}\n", "p.yaml", h100().gpu), InputError);
}

TEST(Profile, H100ScenariosUseTheCommittedProfileOthersTheDefaults) {
  const Scenario h = load_scenario_file(test::source_path("scenarios/examples/llama3.1-8b-8xh100.yaml"));
  const HardwareProfile ph = profile_for(h);
  EXPECT_EQ(ph.name, kH100SxmProfileName);
  EXPECT_FALSE(ph.gemm_measured.empty());  // the committed file's measured shapes
  Scenario a = h;
  a.cluster.gpu = Catalog::builtin().gpu("a100-sxm4-80gb", {"test", 0, 0}, "gpu");
  EXPECT_EQ(profile_for(a).name, "defaults: ampere");
}

}  // namespace
}  // namespace tp

namespace tp {
namespace {

// K-fold over shapes: the GEMMs of the three `calibrate run` files pooled, grouped by (dtype, m, n, k) so
// that a shape measured in several files is never both fitted and held out; 5 folds in sorted shape
// order. Prints the held-out MAPE per dtype (docs/calibration.md quotes it) and asserts the bounds.
TEST(RealData, GemmModelKFoldOverShapes) {
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t>;
  std::map<Key, std::vector<double>> times;
  for (const char* f : {"calibrate-llama3.1-8b-shapes.json", "calibrate-quick.json", "calibrate-gemm-mixtral-8x7b-shapes.json"}) {
    for (const Measurement& it : read_measurements(data(f)).items) {
      if (it.op == MeasuredOp::gemm && it.gemm.batch == 1) {
        times[{static_cast<int>(it.dtype), it.gemm.m, it.gemm.n, it.gemm.k}].push_back(it.time.median);
      }
    }
  }
  const GpuSpec gpu = h100().gpu;
  constexpr int kFolds = 5;
  for (int pi = 0; pi < kPrecisionCount; ++pi) {
    const Precision p = static_cast<Precision>(pi);
    std::vector<std::pair<Key, std::vector<double>>> shapes;
    for (const auto& [k, t] : times) {
      if (std::get<0>(k) == pi) shapes.emplace_back(k, t);
    }
    double err = 0;
    int n = 0;
    for (int fold = 0; fold < kFolds; ++fold) {
      std::vector<GemmSample> train;
      for (size_t i = 0; i < shapes.size(); ++i) {
        if (static_cast<int>(i % kFolds) == fold) continue;
        const auto& [k, ts] = shapes[i];
        for (double t : ts) train.push_back({{double(std::get<1>(k)), double(std::get<2>(k)), double(std::get<3>(k))}, t});
      }
      const GemmModel model = fit_gemm_model(gpu, p, train);
      for (size_t i = fold; i < shapes.size(); i += kFolds) {
        const auto& [k, ts] = shapes[i];
        const double pred = gemm_model_seconds(model, gpu, p, {double(std::get<1>(k)), double(std::get<2>(k)), double(std::get<3>(k))}).value;
        for (double t : ts) {
          err += std::fabs(pred - t) / t;
          ++n;
        }
      }
    }
    const double mape = 100.0 * err / n;
    std::printf("[ k-fold   ] gemm %-4s %3zu shapes %3d measurements  held-out MAPE %.2f %%\n", to_string(p), shapes.size(), n, mape);
    // Issue target 6 %: bf16 must meet it. fp16 and fp8 within 8 %, tf32 and fp32 (their small shapes
    // run other cuBLASLt kernels) within 15 %: the documented gaps (docs/calibration.md).
    const double bound = p == Precision::bf16 ? 6.0 : (p == Precision::tf32 || p == Precision::fp32) ? 15.0 : 8.0;
    EXPECT_LE(mape, bound) << to_string(p);
  }
}

}  // namespace
}  // namespace tp
