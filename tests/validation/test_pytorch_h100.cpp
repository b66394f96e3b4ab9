// Real single-GPU training steps in PyTorch 2.11 + Hugging Face transformers 5.17: on one H100
// (scenarios/validation/h100-pytorch/, copied from shared/validation) and on one H200
// (scenarios/validation/h200-pytorch/, measured by the project); the method is in each JSON file.
// Oracles are measurements: bytes saved for backward per layer (autograd saved-tensor hooks on 2- and
// 4-layer models), torch.cuda.max_memory_allocated per step, and which configuration ran out of memory.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "estimate.h"
#include "hardware_profile.h"
#include "step_time.h"
#include "scenario.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const std::string kDir = "scenarios/validation/h100-pytorch/";

Scenario case_scenario(const std::string& file, const std::vector<std::string>& sets = {}) {
  return load_scenario_file(test::source_path(kDir + file), sets);
}

// Bytes of the weights a layer's saved storages include (read from the measurement's method: in bf16
// mode the parameters themselves, under autocast the 16-bit copies of the GEMM weights plus the fp32
// norm weights the norms' multiplications keep). Counted by hand from the Hugging Face modules.
double weights_saved_per_layer(const ModelSpec& m, bool amp) {
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double q = static_cast<double>(m.heads * m.head_dim), kv = static_cast<double>(m.kv_heads * m.head_dim);
  if (m.norm == Norm::layernorm) {  // GPT-2: c_attn h x 3h, c_proj h x h, c_fc h x 4h, c_proj 4h x h
    const double gemm = 3 * h * h + h * h + 2 * h * f;
    return amp ? 2 * gemm + 2 * 2 * h * 4 : 2 * gemm + 2 * 2 * h * 2;  // + ln_1, ln_2 weight and bias
  }
  const double gemm = h * (q + 2 * kv) + q * h + 3 * h * f;  // q,k,v,o + gate, up, down
  return amp ? 2 * gemm + 2 * h * 4 : 2 * gemm + 2 * h * 2;   // + two RMSNorm weights
}

TEST(PytorchH100, SavedBytesPerLayerWithinThreePercent) {
  const YAML::Node data = YAML::LoadFile(test::source_path(kDir + "h100-pytorch-saved-activations.json"));
  // The measured models are the step cases' models (same Hugging Face configs).
  const std::map<std::string, std::string> scenario_of = {{"llama-h2048", "llama1b-s4096-mb2.yaml"},
                                                          {"llama-h4096", "llama8b-s2048-mb2-bf16ckpt.yaml"},
                                                          {"gpt2-h1024", "gpt2-355m-s1024-mb8.yaml"}};
  std::map<std::string, std::map<int, double>> saved;  // name/mode -> layers -> bytes
  std::map<std::string, YAML::Node> first;
  for (const YAML::Node& c : data["cases"]) {
    const std::string key = c["name"].as<std::string>() + "/" + c["mode"].as<std::string>();
    saved[key][c["layers"].as<int>()] = c["saved_bytes"].as<double>();
    first[key] = c;
  }
  ASSERT_EQ(saved.size(), 4u);
  std::printf("\n%-18s %14s %14s %8s %14s\n", "case", "measured [B]", "predicted [B]", "error", "B/(token*h)");
  for (const auto& [key, by_layers] : saved) {
    const YAML::Node c = first[key];
    const bool amp = c["mode"].as<std::string>() == "amp";
    const std::int64_t seq = c["seq"].as<std::int64_t>(), mb = c["micro_batch"].as<std::int64_t>();
    const Scenario s = case_scenario(scenario_of.at(c["name"].as<std::string>()),
                                     {"training.autocast=" + std::string(amp ? "true" : "false"), "training.compile=false",
                                      "training.sequence_length=" + std::to_string(seq),
                                      "training.micro_batch=" + std::to_string(mb), "training.global_batch=" + std::to_string(mb),
                                      "parallel.recompute=none"});
    const double per_layer = (by_layers.at(4) - by_layers.at(2)) / 2.0 - weights_saved_per_layer(s.model, amp);
    const double predicted = layer_activation_bytes(s, build_op_graph(s.model, s.training, s.parallel.tp)).value;
    const double err = predicted / per_layer - 1.0;
    std::printf("%-18s %14.0f %14.0f %7.2f%% %14.2f\n", key.c_str(), per_layer, predicted, 100 * err,
                per_layer / static_cast<double>(seq * mb * s.model.hidden));
    EXPECT_LT(std::abs(err), 0.03) << key;
  }
}

struct Row {
  std::string name;
  double predicted, measured;
  double error() const { return predicted / measured - 1.0; }
};

// Prints the rows' mean and worst |error| and asserts them against the bounds.
void expect_errors_within(const char* what, const std::vector<Row>& rows, double mean_bound, double worst_bound) {
  double mean = 0, worst = 0;
  for (const Row& r : rows) {
    mean += std::abs(r.error());
    worst = std::max(worst, std::abs(r.error()));
  }
  mean /= static_cast<double>(rows.size());
  std::printf("%s: mean |error| %.2f%%, max %.2f%% over %zu cases\n", what, 100 * mean, 100 * worst, rows.size());
  EXPECT_LE(mean, mean_bound) << what;
  EXPECT_LE(worst, worst_bound) << what;
}

// The targets for real single-GPU steps, the same on every GPU: memory (total - overhead against the
// peak allocated) mean <= 3 %, max <= 6 %; step time mean <= 5 %, max <= 10 %.
void expect_memory_target(const std::vector<Row>& rows) {
  expect_errors_within("memory (total - overhead vs peak allocated)", rows, 0.03, 0.06);
}
void expect_step_time_target(const std::vector<Row>& rows) {
  expect_errors_within("step time (median measured step)", rows, 0.05, 0.10);
}

// Predicted memory (total - overhead, the JSON contract's allocated bytes) against each run's
// torch.cuda.max_memory_allocated, and the verdict against the runs that ran out of memory.
std::vector<Row> peak_memory_rows(const std::string& dir, int& oom_cases) {
  const YAML::Node index = YAML::LoadFile(test::source_path(dir + "index.yaml"));
  std::vector<Row> rows;
  oom_cases = 0;
  std::printf("\n%-30s %14s %14s %8s\n", "case", "measured GB", "predicted GB", "error");
  for (const YAML::Node& run : index["runs"]) {
    const std::string file = run["scenario"].as<std::string>();
    const Scenario s = load_scenario_file(test::source_path(dir + file));
    const Estimate e = estimate(s);
    const double allocated = (e.memory.total - e.memory.overhead).value;
    EXPECT_NEAR(e.parameters_total, run["parameters"].as<double>(), 1e-9 * run["parameters"].as<double>()) << file;
    if (run["oom"]) {
      ++oom_cases;
      std::printf("%-30s %14s %14.2f   predicted %s\n", file.c_str(), "OOM", allocated / 1e9, e.feasible ? "to fit" : "not to fit");
      EXPECT_FALSE(e.feasible) << file;
      continue;
    }
    rows.push_back({file, allocated, run["peak_allocated_bytes"].as<double>()});
    std::printf("%-30s %14.2f %14.2f %7.2f%%\n", file.c_str(), rows.back().measured / 1e9, allocated / 1e9,
                100 * rows.back().error());
    EXPECT_TRUE(e.feasible) << file;
  }
  return rows;
}

// Predicted step time (the scenario's default profile) against each run's median measured step.
std::vector<Row> step_time_rows(const std::string& dir) {
  const YAML::Node index = YAML::LoadFile(test::source_path(dir + "index.yaml"));
  std::vector<Row> rows;
  std::printf("\n%-30s %12s %12s %8s\n", "case", "measured s", "predicted s", "error");
  for (const YAML::Node& run : index["runs"]) {
    if (run["oom"]) continue;
    const std::string file = run["scenario"].as<std::string>();
    const Scenario s = load_scenario_file(test::source_path(dir + file));
    const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
    const Estimate e = estimate(s, g);
    const StepTime t = step_time(s, g, e, profile_for(s));
    rows.push_back({file, t.step.value, run["step_seconds"].as<double>()});
    std::printf("%-30s %12.4f %12.4f %7.2f%%\n", file.c_str(), rows.back().measured, rows.back().predicted,
                100 * rows.back().error());
  }
  return rows;
}

TEST(PytorchH100, PeakAllocatedMemoryAndOutOfMemoryVerdict) {
  int oom_cases = 0;
  // llama1b-s4096-mb8-ckpt ran out of memory on the 80 GB H100 (h100-pytorch-steps.json): predicted not to
  // fit, through the stranded loss block that layer recompute leaves in the allocator (docs/model.md §9).
  const std::vector<Row> rows = peak_memory_rows(kDir, oom_cases);
  EXPECT_EQ(oom_cases, 1);
  expect_memory_target(rows);
}

// Step time against the median measured step, with the committed measured H100 profile
// (scenarios/profiles/h100-sxm.yaml). Target of the issue, asserted: mean <= 5 %, max <= 10 %. The seven
// cases of h100-pytorch-steps.json and the eight plain-loop cases of h100-framework-steps.json (measured
// later, on a machine whose cuDNN 9.19 made PyTorch's SDPA run cuDNN's attention: their scenarios say
// training.attention_kernel: cudnn): mean 2.6 %, max 6.0 %. Before the norms under autocast were counted
// reading and writing the fp32 residual stream (docs/model.md §20; tests/unit/test_autocast_kernels.cpp) the
// autocast cases were 3-10 % fast: mean 4.0 %, max 10.3 %. Before the output layer's misaligned GEMMs were
// timed at cuBLAS' align1 fallback rate (GPT-2's unpadded vocabulary of 50,257, docs/model.md §20) the
// GPT-2 autocast cases were 13-14 % fast: mean 6.4 %, max 14.2 %. (5.4 % / 12.2 % before the kernel classes
// got their latency term; docs/calibration.md, "The kernel-class model".)
TEST(PytorchH100, StepTime) {
  const std::vector<Row> rows = step_time_rows(kDir);
  // 7 cases of h100-pytorch-steps.json, 8 plain-loop cases of h100-framework-steps.json (held out: measured
  // after the rules they check were written)
  ASSERT_EQ(rows.size(), 15u);
  expect_step_time_target(rows);
}

// Held out: the same scripts run by the project on one H200 141GB on 2026-11-29
// (scenarios/validation/h200-pytorch/, method in each JSON file), after every rule they check was written.
// No constant was set from them: the H200 takes the Hopper generation's defaults (model/hardware_profile.cpp),
// the catalog's datasheet bandwidth and capacity. The same Hopper chip with faster, larger memory.
const std::string kH200Dir = "scenarios/validation/h200-pytorch/";

TEST(PytorchH200, PeakAllocatedMemoryAndTheRunThatOnlyFitsOnTheH200) {
  int oom_cases = 0;
  const std::vector<Row> rows = peak_memory_rows(kH200Dir, oom_cases);
  // llama1b-s4096-mb8-ckpt, out of memory on the 80 GB H100, ran on the 141 GB H200 (70.8 GB allocated):
  // peak_memory_rows asserts it is predicted to fit. 0.4 % / 0.9 % when added.
  EXPECT_EQ(oom_cases, 0);
  ASSERT_EQ(rows.size(), 15u);
  expect_memory_target(rows);
}

// The H100's target, asserted on the H200: mean <= 5 %, max <= 10 %. When added: mean 3.7 %, max 7.3 %, every
// case fast, with FlashAttention-2 in the scenarios; with cuDNN's attention, which the profiles show the SDPA ran
// there: 5.9 % / 9.2 %, every case fast, while the defaults' kernel classes were H100 fractions of the HBM
// bandwidth; 2.0 % / 5.0 %, signs mixed, as HBM plus SM time (docs/model.md §13); 2.1 % / 5.3 % once AdamW's
// kernel has its per-parameter SM time (bf16 Llama 1B cases, predicted slow already, +1 %).
TEST(PytorchH200, StepTime) {
  const std::vector<Row> rows = step_time_rows(kH200Dir);
  // 7 cases of h200-pytorch-steps.json, 8 plain-loop cases of h200-framework-steps.json
  ASSERT_EQ(rows.size(), 15u);
  expect_step_time_target(rows);
}

}  // namespace
}  // namespace tp
