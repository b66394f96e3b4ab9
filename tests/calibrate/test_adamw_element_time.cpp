// AdamW's time as HBM traffic plus SM arithmetic per parameter (model/kernel_class_time.h, docs/calibration.md,
// "AdamW's two state dtypes"), judged on real measurements of torch's fused AdamW:
//  - tests/data/h200/qwen3-vs-llama-steps-and-adamw.json: one H200, 62.5 M - 2 B parameters in 100 and in
//    1,000 tensors, fp32 and bf16 states (24 records; the defaults' constant comes from these);
//  - tests/data/h100-sxm/torch-attention-and-kernels.json: one H100, 250 M and 1 B parameters in 100 tensors,
//    both state dtypes (4 records; held out from the defaults);
//  - the fused AdamW kernel inside real training steps (torch.profiler, scenarios/validation/h{1,2}00-pytorch/:
//    *-pytorch-kernel-time.json, multi_tensor_apply_kernel per step; *-framework-steps.json, the plain loops'
//    optimizer class), on both GPUs.
// Oracles: the measured times. The least squares below are written out in the test.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "errors.h"
#include "h100_data.h"
#include "hardware_profile.h"
#include "kernel_class_time.h"
#include "kernel_traffic.h"
#include "plan.h"
#include "scenario.h"

namespace tp {
namespace {

using test::h100_cluster;
using test::h200_cluster;
using test::h200_data;

struct AdamwRecord {
  double bytes = 0, params = 0, tensors = 0, seconds = 0;
};

std::vector<AdamwRecord> h200_records() {
  std::ifstream in(h200_data("qwen3-vs-llama-steps-and-adamw.json"));
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<AdamwRecord> out;
  for (const auto& r : j.at("adamw")) {
    out.push_back({r.at("bytes_moved").get<double>(), r.at("params").get<double>(), r.at("tensors").get<double>(),
                   r.at("seconds").get<double>()});
  }
  return out;
}

// torch's fused AdamW rows of the H100's PyTorch kernel file (fused_ref.py: 100 tensors each).
std::vector<AdamwRecord> h100_records() {
  std::vector<AdamwRecord> out;
  for (const Measurement& m : test::torch_reference_file().items) {
    if (m.op == MeasuredOp::memory_kernel && m.kernel == KernelClass::adamw) {
      out.push_back({m.bytes, static_cast<double>(m.rows), 100, m.time.median});
    }
  }
  return out;
}

// t = bytes / HBM + P c + tensors h, least squares in relative error (each row divided by t): the 2 x 2
// normal equations solved by hand. Returns {c, h}.
std::pair<double, double> fit_element_and_tensor_time(const std::vector<AdamwRecord>& rs, double hbm) {
  double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
  for (const AdamwRecord& r : rs) {
    const double u = r.params / r.seconds, v = r.tensors / r.seconds, y = 1.0 - r.bytes / hbm / r.seconds;
    a11 += u * u, a12 += u * v, a22 += v * v, b1 += u * y, b2 += v * y;
  }
  const double det = a11 * a22 - a12 * a12;
  return {(b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det};
}

double error_percent(double predicted, double measured) { return 100.0 * (predicted / measured - 1.0); }

// The defaults' constant is what the H200's 24 records give, and that form fits all of them: both state
// dtypes, 32x in size, 10x in tensor count (the largest miss, +8 %, is 250 M parameters in 1,000 tensors,
// where the host's work is 70 % of the time).
TEST(AdamwElementTime, DefaultsAreTheH200sPerParameterTime) {
  const double hbm = h200_cluster().gpu.memory_bandwidth.value;
  const std::vector<AdamwRecord> records = h200_records();
  const auto [c, h] = fit_element_and_tensor_time(records, hbm);
  std::printf("H200 fit: %.3f ps per parameter, %.2f us per tensor\n", c * 1e12, h * 1e6);
  const HardwareProfile d = default_profile(h200_cluster().gpu);
  EXPECT_NEAR(d.kernel_shape_of(KernelClass::adamw).element_time.value, c, 0.02 * c);
  EXPECT_NEAR(h, 4.3e-6, 0.3e-6);
  double worst = 0;
  for (const AdamwRecord& r : records) {
    worst = std::max(worst, std::abs(error_percent(r.bytes / hbm + r.params * c + r.tensors * h, r.seconds)));
  }
  EXPECT_LE(worst, 9.0);
}

// Held out: the H100 (same SMs and clock as the H200, 0.70x its HBM) by the defaults' pass plus the H200's
// host time per tensor: -1.8, -11.8, -0.2, +2.0 % (250 M fp32, 250 M bf16, 1 B fp32, 1 B bf16). One
// efficiency, the rule before (the 1 B fp32 record's 2.52 TB/s), misses the bf16 states by 18 and 40 %.
TEST(AdamwElementTime, HoldsOnTheH100) {
  const GpuSpec gpu = h100_cluster().gpu;
  const HardwareProfile d = default_profile(gpu);
  const double h = fit_element_and_tensor_time(h200_records(), h200_cluster().gpu.memory_bandwidth.value).second;
  const std::vector<AdamwRecord> records = h100_records();
  ASSERT_EQ(records.size(), 4u);
  double sum = 0, worst = 0, worst_one_efficiency = 0;
  for (const AdamwRecord& r : records) {
    const double p = kernel_class_pass_seconds(d, gpu, KernelClass::adamw, r.bytes, 0.0, r.params).value + r.tensors * h;
    const double e = error_percent(p, r.seconds);
    const double one_efficiency = error_percent(r.bytes / 2.517e12, r.seconds);
    std::printf("H100 %5.0f M params, %s: measured %.3f ms, predicted %.3f ms (%+.1f %%); one efficiency %+.1f %%\n",
                r.params / 1e6, r.bytes / r.params > 20 ? "fp32" : "bf16", r.seconds * 1e3, p * 1e3, e, one_efficiency);
    sum += std::abs(e);
    worst = std::max(worst, std::abs(e));
    worst_one_efficiency = std::max(worst_one_efficiency, std::abs(one_efficiency));
  }
  EXPECT_LE(sum / 4, 5.0);
  EXPECT_LE(worst, 12.5);
  EXPECT_GE(worst_one_efficiency, 14.0);
}

// The element term scales like the other classes' SM terms: with SMs x boost clock (by hand: the A100's
// 108 SMs at 1410 MHz against 132 at 1980), and AdamW runs at the datasheet HBM.
TEST(AdamwElementTime, ScalesWithSmsTimesClock) {
  const GpuSpec a100 = Catalog::builtin().gpu("a100-sxm-80gb", {"test", 0, 0}, "gpu");
  const HardwareProfile d = default_profile(a100);
  EXPECT_DOUBLE_EQ(d.efficiency_of(KernelClass::adamw), 1.0);
  EXPECT_NEAR(d.kernel_shape_of(KernelClass::adamw).element_time.value, 2.32e-12 * (132 * 1980.0) / (108 * 1410.0), 1e-16);
  // 1 B parameters with bf16 states: 14 GB at 2.039 TB/s plus 1 B x 3.93 ps.
  EXPECT_NEAR(kernel_class_pass_seconds(d, a100, KernelClass::adamw, 14e9, 0.0, 1e9).value,
              14e9 / a100.memory_bandwidth.value + 1e9 * 2.32e-12 * (132 * 1980.0) / (108 * 1410.0), 1e-9);
  // Only AdamW counts elements: another class ignores them.
  EXPECT_DOUBLE_EQ(kernel_class_pass_seconds(d, a100, KernelClass::residual_add, 1e9, 0.0, 1e9).value,
                   kernel_class_pass_seconds(d, a100, KernelClass::residual_add, 1e9, 0.0, 0.0).value);
}

// The fused AdamW kernel's time per step in torch.profiler's kernel-time file of one GPU, by case name.
double in_step_adamw_seconds(const std::string& gpu, const std::string& name) {
  std::ifstream in(test::source_path("scenarios/validation/" + gpu + "-pytorch/" + gpu + "-pytorch-kernel-time.json"));
  const nlohmann::json j = nlohmann::json::parse(in);
  for (const auto& c : j.is_array() ? j : j.at("cases")) {
    if (c.at("name") != name) continue;
    for (const auto& [kernel, seconds] : c.at("top_kernels_s").items()) {
      if (kernel.find("multi_tensor_apply_kernel") != std::string::npos) return seconds.get<double>();
    }
  }
  ADD_FAILURE() << gpu << " " << name << ": no AdamW kernel";
  return 0;
}

struct InStepAdamw {
  std::string gpu, name;
  double params = 0, bytes_per_param = 0, measured = 0;
};

// Every AdamW kernel timed inside a real step, on both GPUs: the kernel-time files' three cases (parameters and
// modes from their step files, *-pytorch-steps.json) and the plain loops of the framework-step files (the
// `optimizer` kernel class: the fused kernel alone, the same with 1 and 4 micro-batches). Autocast keeps fp32
// parameters, gradients and states (28 B per parameter), the bf16 model bf16 ones (14 B).
std::vector<InStepAdamw> in_step_adamw_kernels() {
  std::vector<InStepAdamw> out;
  for (const std::string gpu : {"h100", "h200"}) {
    out.push_back({gpu, "llama1b-s4096-mb2", 1235814400, 28, in_step_adamw_seconds(gpu, "llama1b-s4096-mb2")});
    out.push_back({gpu, "gpt2-1.5b-s1024-mb4", 1557611200, 28, in_step_adamw_seconds(gpu, "gpt2-1.5b-s1024-mb4")});
    out.push_back({gpu, "llama8b-s2048-mb1-bf16ckpt", 8030261248, 14, in_step_adamw_seconds(gpu, "llama8b-s2048-mb1-bf16ckpt")});
    std::ifstream in(test::source_path("scenarios/validation/" + gpu + "-pytorch/" + gpu + "-framework-steps.json"));
    const nlohmann::json steps = nlohmann::json::parse(in);
    for (const auto& c : steps.at("cases")) {
      if (c.at("loop") != "plain") continue;
      out.push_back({gpu, c.at("name").get<std::string>() + " (plain)", c.at("params").get<double>(),
                     c.at("mode") == "amp" ? 28.0 : 14.0, c.at("kernel_s_by_class").at("optimizer").get<double>()});
    }
  }
  return out;
}

// Held out from both constants' sources: AdamW inside real steps, the GPU's kernel time only (no host), 22
// kernels by the defaults: -2.4 ... +5.8 % (mean 2.0 %). One efficiency missed the bf16 8B model on the H100 by
// 14 % (the defaults' 2.52 TB/s) and 19 % (the H100 profile's fitted 2.67 TB/s).
TEST(AdamwElementTime, PredictsTheKernelInsideRealSteps) {
  const std::vector<InStepAdamw> kernels = in_step_adamw_kernels();
  ASSERT_EQ(kernels.size(), 22u);
  double sum = 0, worst = 0;
  for (const InStepAdamw& k : kernels) {
    const ClusterSpec cluster = k.gpu == "h100" ? h100_cluster() : h200_cluster();
    const HardwareProfile d = default_profile(cluster.gpu);
    const double predicted =
        kernel_class_pass_seconds(d, cluster.gpu, KernelClass::adamw, k.params * k.bytes_per_param, 0.0, k.params).value;
    const double e = error_percent(predicted, k.measured);
    std::printf("%s %-36s AdamW in the step: measured %.2f ms, predicted %.2f ms (%+.1f %%)\n", k.gpu.c_str(),
                k.name.c_str(), k.measured * 1e3, predicted * 1e3, e);
    sum += std::abs(e);
    worst = std::max(worst, std::abs(e));
  }
  EXPECT_LE(sum / static_cast<double>(kernels.size()), 3.0);
  EXPECT_LE(worst, 6.0);
  const double one_efficiency = 8030261248.0 * 14 / 2.517e12;
  EXPECT_GE(std::abs(error_percent(one_efficiency, in_step_adamw_seconds("h100", "llama8b-s2048-mb1-bf16ckpt"))), 12.0);
}

// The planner's optimizer step of a real bf16 step (no autocast, one micro-batch: the fused AdamW alone) against
// the profiled kernel of the same model: the step's byte count (2 w + g + 2 states = 14 B per parameter with
// PyTorch's bf16 states) and the element term together. The H200 takes the defaults (42.0 against 43.07 ms);
// the H100 its committed profile, whose own AdamW fit (1.92 ps per parameter) comes out short (49.0 against
// 52.03 ms, -5.9 %; docs/calibration.md, "AdamW's two state dtypes").
TEST(AdamwElementTime, ThePlannersOptimizerStepMatchesTheProfiledKernel) {
  for (const auto& [gpu, bound] : {std::pair{std::string("h200"), 0.03}, std::pair{std::string("h100"), 0.07}}) {
    const Scenario s = load_scenario_file(
        test::source_path("scenarios/validation/" + gpu + "-pytorch/llama8b-s2048-mb2-bf16ckpt.yaml"));
    const Plan p = make_plan(s, profile_for(s));
    const double measured = in_step_adamw_seconds(gpu, "llama8b-s2048-mb1-bf16ckpt");
    std::printf("%s llama8b bf16: optimizer step %.2f ms, AdamW kernel measured %.2f ms\n", gpu.c_str(),
                p.time.optimizer_step.value * 1e3, measured * 1e3);
    EXPECT_NEAR(p.time.optimizer_step.value, measured, bound * measured) << gpu;
  }
}

// The fitter recovers known constants (by construction: t = bytes / HBM + P c + L, 1 % noise, the suite's two
// state dtypes at four sizes) and writes the element term with its unit; the profile file reads it back.
TEST(AdamwElementTime, FitterRecoversElementTimeAndLatency) {
  const double hbm = 3.35e12, c = 2.0e-12, latency = 500e-6;
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0.0, 0.01);
  Measurements m;
  for (std::int64_t params : {125'000'000, 250'000'000, 1'000'000'000, 2'000'000'000}) {
    for (Precision dtype : {Precision::fp32, Precision::bf16}) {
      Measurement it;
      it.op = MeasuredOp::memory_kernel;
      it.kernel = KernelClass::adamw;
      it.dtype = dtype;
      it.rows = params;
      it.cols = 1;
      it.bytes = kernel_bytes_moved(KernelClass::adamw, dtype, params, 1);
      it.time.median = (it.bytes / hbm + static_cast<double>(params) * c + latency) * std::exp(noise(rng));
      m.items.push_back(it);
    }
  }
  const HardwareProfile p = test::fit_all(m).profile;
  EXPECT_DOUBLE_EQ(p.efficiency_of(KernelClass::adamw), 1.0);
  EXPECT_NEAR(p.kernel_shape_of(KernelClass::adamw).element_time.value, c, 0.05 * c);
  EXPECT_NEAR(p.kernel_shape_of(KernelClass::adamw).latency.value, latency, 0.2 * latency);
  const std::string yaml = profile_yaml(p);
  EXPECT_NE(yaml.find(" ps}"), std::string::npos) << yaml;
  const HardwareProfile q = load_profile_text(yaml, "roundtrip.yaml", h100_cluster().gpu);
  EXPECT_NEAR(q.kernel_shape_of(KernelClass::adamw).element_time.value, p.kernel_shape_of(KernelClass::adamw).element_time.value,
              1e-5 * c);
}

// A profile written with one AdamW efficiency (before the element term) keeps that meaning: its own
// kernel_efficiency replaces the defaults' kernel model, element term included.
TEST(AdamwElementTime, AProfileWithOneEfficiencyDoesNotGainTheDefaultsTerm) {
  const GpuSpec gpu = h100_cluster().gpu;
  const HardwareProfile old = load_profile_text("gpu: h100-sxm-80gb\nkernel_efficiency: {adamw: 0.8}\n", "old.yaml", gpu);
  EXPECT_DOUBLE_EQ(old.kernel_shape_of(KernelClass::adamw).element_time.value, 0.0);
  EXPECT_NEAR(kernel_class_pass_seconds(old, gpu, KernelClass::adamw, 14e9, 0.0, 1e9).value, 14e9 / (0.8 * 3.35e12), 1e-12);
  const HardwareProfile given = load_profile_text(
      "gpu: h100-sxm-80gb\nkernel_efficiency: {adamw: 1}\nkernel_shape:\n  adamw: {element_time: 3 ps}\n", "new.yaml", gpu);
  EXPECT_NEAR(given.kernel_shape_of(KernelClass::adamw).element_time.value, 3e-12, 1e-18);
  EXPECT_THROW(load_profile_text("gpu: h100-sxm-80gb\nkernel_shape:\n  adamw: {element_time: -1 ps}\n", "bad.yaml", gpu),
               InputError);
  // On a class that does not count elements the term would be ignored: an error naming the file, line and field.
  try {
    load_profile_text("gpu: h100-sxm-80gb\nkernel_shape:\n  residual_add: {element_time: 2 ps}\n", "bad.yaml", gpu);
    ADD_FAILURE() << "element_time on residual_add was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.yaml:3"), std::string::npos) << what;
    EXPECT_NE(what.find("kernel_shape.residual_add.element_time"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tp
