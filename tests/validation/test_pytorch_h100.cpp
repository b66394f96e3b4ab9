// Real single-H100 training steps in PyTorch 2.11 + Hugging Face transformers 5.17
// (scenarios/validation/h100-pytorch/, copied from shared/validation; the method is in each JSON file).
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

void print_summary(const char* what, const std::vector<Row>& rows, double& mean, double& worst) {
  mean = 0;
  worst = 0;
  for (const Row& r : rows) {
    mean += std::abs(r.error());
    worst = std::max(worst, std::abs(r.error()));
  }
  mean /= static_cast<double>(rows.size());
  std::printf("%s: mean |error| %.2f%%, max %.2f%% over %zu cases\n", what, 100 * mean, 100 * worst, rows.size());
}

TEST(PytorchH100, PeakAllocatedMemoryAndOutOfMemoryVerdict) {
  const YAML::Node index = YAML::LoadFile(test::source_path(kDir + "index.yaml"));
  std::vector<Row> rows;
  int oom_cases = 0;
  std::printf("\n%-30s %14s %14s %8s\n", "case", "measured GB", "predicted GB", "error");
  for (const YAML::Node& run : index["runs"]) {
    const std::string file = run["scenario"].as<std::string>();
    const Scenario s = case_scenario(file);
    const Estimate e = estimate(s);
    // JSON contract: total - overhead is what torch.cuda.max_memory_allocated reports.
    const double allocated = (e.memory.total - e.memory.overhead).value;
    EXPECT_NEAR(e.parameters_total, run["parameters"].as<double>(), 1e-9 * run["parameters"].as<double>()) << file;
    if (run["oom"]) {
      ++oom_cases;
      std::printf("%-30s %14s %14.2f   predicted %s\n", file.c_str(), "OOM", allocated / 1e9, e.feasible ? "to fit" : "not to fit");
      // It ran out of memory on the 80 GB H100 (h100-pytorch-steps.json): predicted not to fit, through
      // the stranded loss block that layer recompute leaves in the allocator (docs/model.md §9).
      EXPECT_FALSE(e.feasible) << file;
      continue;
    }
    rows.push_back({file, allocated, run["peak_allocated_bytes"].as<double>()});
    std::printf("%-30s %14.2f %14.2f %7.2f%%\n", file.c_str(), rows.back().measured / 1e9, allocated / 1e9,
                100 * rows.back().error());
    EXPECT_TRUE(e.feasible) << file;
  }
  EXPECT_EQ(oom_cases, 1);
  double mean = 0, worst = 0;
  print_summary("memory (total - overhead vs peak allocated)", rows, mean, worst);
  EXPECT_LE(mean, 0.03);
  EXPECT_LE(worst, 0.06);
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
  const YAML::Node index = YAML::LoadFile(test::source_path(kDir + "index.yaml"));
  std::vector<Row> rows;
  std::printf("\n%-30s %12s %12s %8s\n", "case", "measured s", "predicted s", "error");
  for (const YAML::Node& run : index["runs"]) {
    if (run["oom"]) continue;
    const std::string file = run["scenario"].as<std::string>();
    const Scenario s = case_scenario(file);
    const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
    const Estimate e = estimate(s, g);
    const StepTime t = step_time(s, g, e, profile_for(s));
    rows.push_back({file, t.step.value, run["step_seconds"].as<double>()});
    std::printf("%-30s %12.4f %12.4f %7.2f%%\n", file.c_str(), rows.back().measured, rows.back().predicted,
                100 * rows.back().error());
  }
  // 7 cases of h100-pytorch-steps.json, 8 plain-loop cases of h100-framework-steps.json (held out: measured
  // after the rules they check were written)
  ASSERT_EQ(rows.size(), 15u);
  double mean = 0, worst = 0;
  print_summary("step time (median measured step)", rows, mean, worst);
  EXPECT_LE(mean, 0.05);
  EXPECT_LE(worst, 0.10);
}

}  // namespace
}  // namespace tp
