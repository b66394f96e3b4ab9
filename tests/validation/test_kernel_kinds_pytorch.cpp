// Where the GPU time of a real training step goes, by kind of kernel: the planner's compute, recompute and
// optimizer step split into GEMMs, attention, the optimizer's update and the memory-bound rest
// (StepTime::compute_by_kind), against torch.profiler's kernel time per step on one H100 and one H200 (oracle: measured,
// scenarios/validation/h{1,2}00-pytorch/h{1,2}00-pytorch-kernel-time.json; PyTorch 2.11 + transformers).
// The profiler's classes map as: gemm (cuBLAS nvjet and CUTLASS kernels) -> GEMM; attention (FlashAttention-2
// or cuDNN SDPA kernels) -> attention; optimizer -> the optimizer step; elementwise, copy_cast, reduce, norm,
// loss_softmax and other -> memory-bound. The optimizer class of these files also counts the
// "Optimizer.step#AdamW.step" annotation, a range as long as the kernel it encloses (its kernel_s exceeds
// the wall time by it): it is taken out.
//
// A step predicted right overall could be right by errors that cancel; this test says which kinds are right.
// It found (2026-11-30) the GEMMs of the Hugging Face steps predicted slower than PyTorch's cuBLAS ran them
// and the memory-bound rest faster (docs/model.md §15, "Compute by kernel").
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "error_summary.h"
#include "plan.h"
#include "scenario.h"
#include "tests/test_support.h"

namespace tp {
namespace {

struct Kinds {
  double gemm = 0, attention = 0, memory_bound = 0, optimizer = 0;
  double total() const { return gemm + attention + memory_bound + optimizer; }
};

// The measured case's kernel time per kind (seconds per step).
Kinds measured_kinds(const nlohmann::json& c) {
  const nlohmann::json& by = c.at("by_class_s");
  Kinds k;
  double annotation = 0;
  for (const auto& [name, seconds] : c.at("top_kernels_s").items()) {
    if (name.rfind("Optimizer.step#", 0) == 0) annotation += seconds.get<double>();
  }
  for (const auto& [name, seconds] : by.items()) {
    const double v = seconds.get<double>();
    if (name == "gemm") k.gemm += v;
    else if (name == "attention") k.attention += v;
    else if (name == "optimizer") k.optimizer += v - annotation;
    else k.memory_bound += v;
  }
  return k;
}

Kinds predicted_kinds(const Plan& p) {
  const StepTime& t = p.time;
  return {t.compute_by_kind.gemm.value, t.compute_by_kind.attention.value, t.compute_by_kind.memory_bound.value,
          t.compute_by_kind.optimizer.value};
}

// Errors per kind over the steps (cli/error_summary.h, as `trainplan validate` sums them); attention also
// over the steps whose attention ran FlashAttention-2 (its kernels named pytorch_flash::).
struct KindErrors {
  ErrorSummary gemm, attention, memory_bound, optimizer, total, attention_flash;
};

bool ran_flash_attention_2(const nlohmann::json& c) {
  for (const auto& [name, seconds] : c.at("top_kernels_s").items()) {
    if (name.find("pytorch_flash::") != std::string::npos) return true;
  }
  return false;
}

double error(double predicted, double measured) { return predicted / measured - 1.0; }

// Prints one GPU's table and collects its errors.
void compare_gpu(const std::string& dir, const std::string& file, KindErrors& out) {
  std::ifstream in(test::source_path(dir + file));
  const nlohmann::json data = nlohmann::json::parse(in);
  const nlohmann::json& cases = data.is_array() ? data : data.at("cases");
  ASSERT_EQ(cases.size(), 3u) << file;
  std::printf("\n%s\n%-28s %17s %17s %17s %17s %17s\n", file.c_str(), "case [ms meas./pred.]", "GEMM", "attention",
              "memory-bound", "optimizer", "kernel total");
  for (const nlohmann::json& c : cases) {
    const std::string name = c.at("name").get<std::string>();
    // The 8B case ran micro-batch 1 (the files' method); its scenario is the steps' micro-batch 2.
    const bool eight_b = name == "llama8b-s2048-mb1-bf16ckpt";
    const std::string yaml = eight_b ? "llama8b-s2048-mb2-bf16ckpt.yaml" : name + ".yaml";
    const std::vector<std::string> sets =
        eight_b ? std::vector<std::string>{"training.micro_batch=1", "training.global_batch=1"} : std::vector<std::string>{};
    const Scenario s = load_scenario_file(test::source_path(dir + yaml), sets);
    const Plan p = make_plan(s, profile_for(s));
    const Kinds m = measured_kinds(c), q = predicted_kinds(p);
    // The kinds sum to the step's compute, recompute and optimizer step: nothing is lost or counted twice.
    EXPECT_NEAR(q.total(), (p.time.compute + p.time.recompute + p.time.optimizer).value, 1e-12);
    auto cell = [](double meas, double pred) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%6.1f/%6.1f %+4.0f%%", 1e3 * meas, 1e3 * pred, 100 * error(pred, meas));
      return std::string(buf);
    };
    std::printf("%-28s %17s %17s %17s %17s %17s\n", name.c_str(), cell(m.gemm, q.gemm).c_str(),
                cell(m.attention, q.attention).c_str(), cell(m.memory_bound, q.memory_bound).c_str(),
                cell(m.optimizer, q.optimizer).c_str(), cell(m.total(), q.total()).c_str());
    out.gemm.add(error(q.gemm, m.gemm));
    out.attention.add(error(q.attention, m.attention));
    out.memory_bound.add(error(q.memory_bound, m.memory_bound));
    out.optimizer.add(error(q.optimizer, m.optimizer));
    out.total.add(error(q.total(), m.total()));
    if (ran_flash_attention_2(c)) out.attention_flash.add(error(q.attention, m.attention));
  }
}

TEST(KernelKindsPytorch, EachKindOfKernelTimeAgainstTheProfiledSteps) {
  KindErrors e;
  compare_gpu("scenarios/validation/h100-pytorch/", "h100-pytorch-kernel-time.json", e);
  compare_gpu("scenarios/validation/h200-pytorch/", "h200-pytorch-kernel-time.json", e);
  ASSERT_EQ(e.total.n, 6);
  ASSERT_EQ(e.attention_flash.n, 3);  // the H100 steps
  std::printf("\nmean / max |error| over 6 steps: GEMM %.1f / %.1f %%, attention %.1f / %.1f %%, memory-bound %.1f / "
              "%.1f %%, optimizer %.1f / %.1f %%, kernel total %.1f / %.1f %%\n",
              100 * e.gemm.mean(), 100 * e.gemm.worst, 100 * e.attention.mean(), 100 * e.attention.worst,
              100 * e.memory_bound.mean(), 100 * e.memory_bound.worst, 100 * e.optimizer.mean(), 100 * e.optimizer.worst,
              100 * e.total.mean(), 100 * e.total.worst);
  // Bounds: what the planner reaches now (2026-11-30), rounded up, as a regression guard per kind: the kernel
  // total 6.5 %, GEMMs 7.8 % (predicted slow: 0…+8 %), the optimizer's update 5.8 %, the memory-bound rest
  // 16.7 % (the checkpointed 8B steps +13 / +17 %). Attention 54.5 %, on the H200 steps, which ran cuDNN's
  // SDPA: there the profiler's attention class holds less than the kernel's own timing implies (GPT-2 1.5B,
  // 48 layers of 13.4 + 26.8 GFLOP: 8.2 ms in the class, about 10.3 ms at the 270 / 162 TFLOP/s PyTorch's SDPA
  // timing of cuDNN measured on this GPU at sequence 1,024 and head 64, tests/data/h200/
  // torch-attention-and-kernels.json), so part of cuDNN's work likely sits in other classes (not resolved
  // without the full kernel list); the H100 steps, on FlashAttention-2, are within 12 %.
  EXPECT_LE(e.total.worst, 0.08);
  EXPECT_LE(e.gemm.worst, 0.10);
  EXPECT_LE(e.optimizer.worst, 0.08);
  EXPECT_LE(e.memory_bound.worst, 0.20);
  EXPECT_LE(e.attention.worst, 0.60);
  EXPECT_LE(e.attention_flash.worst, 0.15);
}

}  // namespace
}  // namespace tp
