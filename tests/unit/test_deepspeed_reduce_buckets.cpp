// DeepSpeed ZeRO-3's gradient buckets (planner/zero3_modules.h, zero3_reduce_calls_per_layer). The rule,
// from DeepSpeed's stage3.py (reduce_independent_p_g_buckets_and_remove_grads, v0.6.2 to today): in the
// order the backward produces the gradients, a bucket that is not empty and would exceed reduce_bucket_size
// elements with the next gradient is reduce-scattered first. By hand from a GPT layer's tensors (qkv h x 3h,
// proj h x h, fc1 h x 4h, fc2 4h x h, Narayanan et al. 2021 eq. 2; biases and LayerNorms h each).
#include <gtest/gtest.h>

#include "estimate.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "step_time.h"
#include "tests/test_support.h"
#include "zero3_modules.h"

namespace tp {
namespace {

OpGraph graph(const char* bias) {
  const Scenario s = test::scenario(std::string("model: {layers: 2, hidden: 4096, heads: 32, ffn_hidden: 16384, "
                                                "vocab: 50304, bias: ") + bias + "}\n"
                                    "cluster: {preset: dgx-h100, nodes: 1}\n"
                                    "training: {sequence_length: 2048, global_batch: 8, micro_batch: 1}\n");
  return build_op_graph(s.model, s.training, s.parallel.tp);
}

TEST(DeepSpeedReduceBuckets, EachLargeWeightAndEachRunOfSmallTensorsBetweenThem) {
  // tp 2, a bucket of 5e6 elements, smaller than every weight (proj, the smallest: 4096^2 / 2 = 8.4e6).
  // Backward order: fc2 bias | fc2 W | fc1 bias | fc1 W | ln2, proj bias | proj W | qkv bias | qkv W | ln1,
  // then the next layer's fc2 bias joins ln1's bucket. Each W is reduce-scattered alone and flushes the
  // small tensors before it: 4 weights + 4 runs = 8 reduce-scatters per layer, where the planner counts 4
  // gathered units.
  EXPECT_DOUBLE_EQ(zero3_reduce_calls_per_layer(graph("true").layer, 2, 1, 5e6), 8.0);
  // Without biases the weights of the MLP and of the attention follow each other: fc2 W | fc1 W | ln2 |
  // proj W | qkv W | ln1: 4 weights + 2 norms = 6.
  EXPECT_DOUBLE_EQ(zero3_reduce_calls_per_layer(graph("false").layer, 2, 1, 5e6), 6.0);
}

TEST(DeepSpeedReduceBuckets, ABucketLargerThanALayerSpansLayers) {
  // DeepSpeed's default bucket, 5e8 elements, against 100,702,208 per layer at tp 2 (6 h^2 / 2 + 38,912 of
  // biases and norms): a bucket holds 4.97 layers, so over the 12 layers the count runs on (2 x 5 + 2) it
  // fills twice or three times: 2/12 to 3/12 reduce-scatters per layer.
  const double calls = zero3_reduce_calls_per_layer(graph("true").layer, 2, 1, 5e8);
  EXPECT_GE(calls, 2.0 / 12);
  EXPECT_LE(calls, 3.0 / 12);
}

// Planner: every reduce-scatter pays the latency of NCCL's ring (docs/model.md §14). DeepSpeed ZeRO-3 on
// two DGX H100 nodes, dp 16: a ring of 16 ranks, 14 NVLink hops x 3.4 us + 1 network hop x 14 us =
// 61.6 us per call. Two layers at tp 1 with a 5e6 bucket: 8 calls per layer, 16 in all; with a bucket
// larger than the model, one call. The bytes are the same, so the step's reduce differs by 15 calls'
// latency: 0.924 ms.
TEST(DeepSpeedReduceBuckets, EveryBucketPaysItsOwnLatency) {
  const auto reduce_seconds = [](const char* bucket) {
    const Scenario s = test::scenario(
        std::string("model: {layers: 2, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 50304, bias: true}\n"
                    "cluster: {preset: dgx-h100, nodes: 2}\n"
                    "training: {framework: deepspeed, sequence_length: 2048, global_batch: 16, micro_batch: 1}\n"
                    "parallel: {tp: 1, pp: 1, zero: 3}\n"
                    "memory: {zero3_reduce_bucket: ") + bucket + "}\n");
    const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
    return step_time(s, g, estimate(s, g), profile_for(s)).dp_reduce.value;
  };
  EXPECT_NEAR(reduce_seconds("5e6") - reduce_seconds("1e15"), 15 * (14 * 3.4e-6 + 14e-6), 1e-9);
}

}  // namespace
}  // namespace tp
