// The bias gradient of eager biased Linears (planner/op_graph_kernels.cpp, add_bias_grad; docs/model.md §20).
// Oracles:
//  - by hand, from autograd's rule for a broadcast bias (addmm's `self` in derivatives.yaml, summed to its
//    shape): one reduction per biased Linear in the backward, reading the output gradient once in the
//    GEMM's 16-bit dtype. GPT-2 1.5B (h = 1,600, 25 heads, ffn 6,400), s = 1,024: qkv 1,024 x 4,800 x 2 B,
//    attention_out and fc2 1,024 x 1,600 x 2 B, fc1 1,024 x 6,400 x 2 B per sequence;
//  - timed at the profile's generic memory rate: backward = bytes x sequences / (HBM x memory_efficiency)
//    + one launch, no forward;
//  - measured: the `reduce` class of h100-pytorch-kernel-time.json (gpt2-1.5b-s1024-mb4: 4.59 ms of
//    reduce_kernel<..., BFloat16, sum> per step). The generic rate streams faster than those column sums,
//    so the 48 layers' predicted sums must lie below it, and above half of it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "hardware_profile.h"
#include "op_graph.h"
#include "op_times.h"
#include "tests/test_support.h"

namespace tp {
namespace {

std::string gpt2_xl(const char* framework, bool bias) {
  return std::string("model: {layers: 48, hidden: 1600, heads: 25, ffn_hidden: 6400, vocab: 50257, activation: gelu_tanh,\n"
                     "        norm: layernorm, position: learned, max_positions: 1024, tied_embeddings: true, bias: ") +
         (bias ? "true" : "false") +
         "}\n"
         "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
         "training: {framework: " + framework + ", precision: bf16, sequence_length: 1024, micro_batch: 4, global_batch: 4}\n"
         "parallel: {tp: 1, pp: 1, dp: 1, zero: 0, recompute: none}\n";
}

std::vector<Op> bias_grads(const OpGraph& g) {
  std::vector<Op> out;
  for (const std::vector<Op>* part : {&g.embedding, &g.layer, &g.head}) {
    for (const Op& op : *part) {
      if (std::strcmp(op.name, "bias_grad") == 0) out.push_back(op);
    }
  }
  return out;
}

TEST(BiasGrad, EagerBiasedLinearsSumTheirOutputGradient) {
  const Scenario s = test::scenario(gpt2_xl("pytorch", true));
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  const std::vector<Op> sums = bias_grads(g);
  ASSERT_EQ(sums.size(), 4u);  // qkv, attention_out, fc1, fc2; the output layer has no bias
  const double expected[] = {1024.0 * 4800 * 2, 1024.0 * 1600 * 2, 1024.0 * 6400 * 2, 1024.0 * 1600 * 2};
  for (size_t i = 0; i < sums.size(); ++i) {
    EXPECT_DOUBLE_EQ(sums[i].bytes_moved, expected[i]) << i;
    EXPECT_EQ(sums[i].forward_share, 0.0);
    EXPECT_EQ(sums[i].saved_bytes, 0.0);
  }
  // Fused layer code (Megatron, Transformer Engine) folds it into its GEMM and bias kernels; no bias, no sum.
  EXPECT_TRUE(bias_grads(build_op_graph(s.model, test::scenario(gpt2_xl("megatron", true)).training, 1)).empty());
  const Scenario unbiased = test::scenario(gpt2_xl("pytorch", false));
  EXPECT_TRUE(bias_grads(build_op_graph(unbiased.model, unbiased.training, 1)).empty());
}

TEST(BiasGrad, TimedInTheBackwardAtTheGenericRateBelowTheMeasuredReduceClass) {
  const Scenario s = test::scenario(gpt2_xl("pytorch", true));
  const HardwareProfile hw = profile_for(s);  // the committed H100 profile
  const double bw = s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency;
  const OpTimeContext c{s, hw, 1, 1, false, 4.0, s.cluster.gpu.peak_for(Precision::bf16).value,
                        attention_peak(s.cluster.gpu, Precision::bf16).value, bw};
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  double layer = 0;
  for (const Op& op : bias_grads(g)) {
    const OpTimes t = time_ops({op}, c);
    EXPECT_DOUBLE_EQ(t.fwd, 0.0);
    EXPECT_NEAR(t.bwd, 4.0 * op.bytes_moved / bw + hw.kernel_launch.value, 1e-15);
    layer += t.bwd;
  }
  std::ifstream in(test::source_path("scenarios/validation/h100-pytorch/h100-pytorch-kernel-time.json"));
  ASSERT_TRUE(in.good());
  const nlohmann::json kt = nlohmann::json::parse(in);
  double measured = 0;
  for (const nlohmann::json& c : kt.at("cases")) {
    if (c.at("name") == "gpt2-1.5b-s1024-mb4") measured = c.at("by_class_s").at("reduce").get<double>();
  }
  ASSERT_GT(measured, 4e-3);
  const double predicted = 48 * layer;
  std::printf("bias gradients of gpt2-1.5b mb4: predicted %.2f ms per step, measured reduce class %.2f ms\n", 1e3 * predicted,
              1e3 * measured);
  EXPECT_LT(predicted, measured);
  EXPECT_GT(predicted, 0.5 * measured);
}

}  // namespace
}  // namespace tp
