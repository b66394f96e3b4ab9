// Eager norms and RoPE under torch.autocast (planner/framework_rules.cpp, apply_eager_passes; docs/model.md
// §20). Under autocast the parameters are fp32 and so is the residual stream every norm reads, and the
// rotary cos/sin; the ops' minimal traffic (`bytes_moved`) stays the 16-bit read + write, 4 B per
// element. Oracles:
//  - by hand, from the torch ops of Hugging Face's LlamaRMSNorm (to(fp32), pow, mean, mul(rsqrt),
//    to(dtype), mul(weight)): in bf16 to 2+4, pow 4+4, mean 4, mul 4+4, to 4+2, mul 2+2 = 36 B (9 passes,
//    6 kernels); under autocast both casts are no-ops: pow 8, mean 4, mul 8, mul(weight) 8 = 28 B
//    (7 passes, 4 kernels). F.layer_norm is one kernel; under autocast it is among the "CUDA ops that can
//    autocast to float32" (torch.amp documentation) and reads and writes fp32: 8 B (2 passes);
//  - by hand, Hugging Face's apply_rotary_pos_emb on q and k: q * cos + rotate_half(q) * sin. In bf16:
//    mul 2+2, neg of one half 1+1, cat 2+2, mul 2+2, add 4+2 = 20 B (5 passes, 5 kernels per tensor).
//    Under autocast cos and sin come in the fp32 hidden states' dtype and the products promote: mul 2+4,
//    neg 1+1, cat 2+2, mul 2+4, add 8+4, and SDPA (autocast's 16-bit list) casts q and k back, 4+2:
//    36 B (9 passes, 6 kernels per tensor);
//  - measured: h100-framework-steps.json (one H100, torch 2.11): GPT-2 1.5B's `norm` kernel class per
//    micro-batch of 4 x 1,024 tokens, 6.40 ms under autocast (gpt2-1.5b-s1024-mb4-amp) against
//    13.14 / 4 = 3.29 ms in bf16 (gpt2-1.5b-s1024-mb4x4-bf16): 1.95x. The predicted norm time, same
//    kernels, same rows, must double too.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <optional>
#include <string>

#include "hardware_profile.h"
#include "op_graph.h"
#include "op_times.h"
#include "tests/op_lookup.h"
#include "tests/test_support.h"

namespace tp {
namespace {

std::string eager(const char* model, bool autocast) {
  return std::string("model: ") + model +
         "\ncluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
         "training: {framework: pytorch, precision: bf16, sequence_length: 1024, micro_batch: 4, global_batch: 4, autocast: " +
         (autocast ? "true" : "false") + "}\nparallel: {tp: 1, pp: 1, dp: 1, zero: 0, recompute: none}\n";
}

const char* kLlama = "llama2-7b";
const char* kGpt2 =
    "{layers: 48, hidden: 1600, heads: 25, ffn_hidden: 6400, vocab: 50257, activation: gelu_tanh, norm: layernorm,"
    " position: learned, max_positions: 1024, tied_embeddings: true, bias: true}";

// The layer op `name` of `model`'s eager graph, with or without autocast (nullopt when the layer has none).
std::optional<Op> eager_layer_op(const char* model, bool autocast, const char* name) {
  const Scenario s = test::scenario(eager(model, autocast));
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  const Op* op = test::find_layer_op(g, name);
  return op != nullptr ? std::optional<Op>(*op) : std::nullopt;
}

TEST(AutocastKernels, EagerRmsNormReadsTheFp32Stream) {
  for (const bool autocast : {false, true}) {
    const std::optional<Op> norm = eager_layer_op(kLlama, autocast, "attention_norm");
    ASSERT_TRUE(norm.has_value());
    EXPECT_DOUBLE_EQ(norm->bytes_moved, 1024.0 * 4096 * (2 + 2));  // the 16-bit minimal, per sequence
    EXPECT_DOUBLE_EQ(norm->passes, autocast ? 28.0 / 4 : 36.0 / 4) << autocast;
    EXPECT_DOUBLE_EQ(norm->kernels, autocast ? 4.0 : 6.0) << autocast;
  }
}

TEST(AutocastKernels, RotaryRunsInFp32UnderAutocast) {
  for (const bool autocast : {false, true}) {
    const std::optional<Op> rope = eager_layer_op(kLlama, autocast, "rotary");
    ASSERT_TRUE(rope.has_value());
    EXPECT_DOUBLE_EQ(rope->bytes_moved, 2.0 * 1024 * (4096 + 4096) * 2);  // q and k (32 kv heads), read + write
    EXPECT_DOUBLE_EQ(rope->passes, autocast ? 36.0 / 4 : 20.0 / 4) << autocast;
    EXPECT_DOUBLE_EQ(rope->kernels, autocast ? 12.0 : 10.0) << autocast;
  }
}

TEST(AutocastKernels, LayerNormRunsInFp32UnderAutocast) {
  for (const bool autocast : {false, true}) {
    const std::optional<Op> norm = eager_layer_op(kGpt2, autocast, "mlp_norm");
    ASSERT_TRUE(norm.has_value());
    EXPECT_DOUBLE_EQ(norm->passes, autocast ? 8.0 / 4 : 1.0) << autocast;
    EXPECT_DOUBLE_EQ(norm->kernels, 1.0);
  }
}

double measured_norm_class(const nlohmann::json& data, const char* name) {
  for (const nlohmann::json& c : data.at("cases")) {
    if (c.at("name") == name) return c.at("kernel_s_by_class").at("norm").get<double>() / c.at("micro_batches").get<double>();
  }
  return 0.0;
}

// Kernel time of the layer's norms, one micro-batch of 4 sequences, launches left out.
double predicted_norm_seconds(bool autocast) {
  const Scenario s = test::scenario(eager(kGpt2, autocast));
  const HardwareProfile hw = profile_for(s);  // the committed H100 profile
  const OpTimeContext c{s, hw, 1, 1, false, 4.0, s.cluster.gpu.peak_for(Precision::bf16).value,
                        attention_peak(s.cluster.gpu, Precision::bf16).value,
                        s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency};
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  double t = 0;
  for (const char* name : {"attention_norm", "mlp_norm"}) {
    const Op* norm = test::find_layer_op(g, name);
    const OpTimes x = time_ops({*norm}, c);
    t += x.fwd + x.bwd - 3 * norm->kernels * hw.kernel_launch.value;
  }
  return t;
}

TEST(AutocastKernels, MeasuredLayerNormTimeDoublesUnderAutocast) {
  std::ifstream in(test::source_path("scenarios/validation/h100-pytorch/h100-framework-steps.json"));
  ASSERT_TRUE(in.good());
  const nlohmann::json data = nlohmann::json::parse(in);
  const double amp = measured_norm_class(data, "gpt2-1.5b-s1024-mb4-amp");
  const double bf16 = measured_norm_class(data, "gpt2-1.5b-s1024-mb4x4-bf16");
  ASSERT_GT(bf16, 1e-3);
  const double measured_ratio = amp / bf16;
  const double predicted_ratio = predicted_norm_seconds(true) / predicted_norm_seconds(false);
  std::printf("GPT-2 1.5B norm kernels per micro-batch, autocast / bf16: measured %.2f / %.2f ms = %.3f, predicted %.3f\n",
              1e3 * amp, 1e3 * bf16, measured_ratio, predicted_ratio);
  EXPECT_NEAR(measured_ratio, 1.95, 0.01);  // the file's numbers, as the header quotes them
  EXPECT_NEAR(predicted_ratio, measured_ratio, 0.1);
}

}  // namespace
}  // namespace tp
