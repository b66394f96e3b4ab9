// The modules ZeRO-3 gathers in one layer (planner/zero3_modules.h), by hand computation from the
// models' shapes. Oracles: the Linear shapes of a GPT layer (qkv h x 3h, proj h x h, fc1 h x 4h, fc2
// 4h x h: Narayanan et al. 2021, eq. 2) and of Mixtral 8x7B (HF mistralai/Mixtral-8x7B-v0.1 config.json:
// h 4096, 32 heads, 8 KV heads of 128, experts 8 of 14336, top 2, SwiGLU); DeepSpeed's persistence rule
// (runtime/zero/partition_parameters.py: a tensor of at most stage3_param_persistence_threshold = 1e5
// elements is ds_persist, held whole and never gathered); expert parallelism: an expert module gathers
// only the ep-local experts (runtime/engine.py _resolve_zero3_param_placement).
#include <gtest/gtest.h>

#include "framework_rules.h"
#include "op_graph.h"
#include "tests/test_support.h"
#include "zero3_modules.h"

namespace tp {
namespace {

constexpr double kDeepSpeedPersistence = 1e5;  // stage3_param_persistence_threshold default

OpGraph graph(const std::string& model) {
  const Scenario s = test::scenario(model +
                                    "cluster: {preset: dgx-h100, nodes: 1}\n"
                                    "training: {sequence_length: 2048, global_batch: 8, micro_batch: 1}\n");
  return build_op_graph(s.model, s.training, s.parallel.tp);
}

const char* kGptWithBias = "model: {layers: 2, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 50304, bias: true}\n";

TEST(Zero3Modules, DenseGptLayerAtTp2) {
  // h = 4096, tp 2. Gathered, per GPU: qkv 4096 x 12288 / 2 = 25,165,824; proj 4096^2 / 2 = 8,388,608;
  // fc1 and fc2 4096 x 16384 / 2 = 33,554,432 each; 6 h^2 = 100,663,296 in all.
  // Persistent (<= 1e5): two LayerNorms 2 x 4096 each, qkv bias 12288 / 2, proj bias 4096 (row-parallel,
  // whole), fc1 bias 16384 / 2, fc2 bias 4096: 8192 + 6144 + 4096 + 8192 + 8192 + 4096 = 38,912.
  const Zero3Modules z = zero3_modules(graph(kGptWithBias).layer, 2, 1, kDeepSpeedPersistence);
  ASSERT_EQ(z.count, 4u);
  const double expected[4] = {25165824, 8388608, 33554432, 33554432};
  const double twelfths[4] = {3, 1, 4, 4};  // 3h^2 : h^2 : 4h^2 : 4h^2, in FLOPs as in parameters
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(z.items[i].parameters, expected[i]) << i;
    EXPECT_NEAR(z.items[i].gather_share, twelfths[i] / 12, 1e-12) << i;
    EXPECT_NEAR(z.items[i].compute_share, twelfths[i] / 12, 1e-12) << i;
  }
  EXPECT_DOUBLE_EQ(z.gathered, 100663296.0);
  EXPECT_DOUBLE_EQ(z.largest, 33554432.0);
  EXPECT_DOUBLE_EQ(z.persistent, 38912.0);
}

TEST(Zero3Modules, FsdpGathersEveryParameterOfTheLayer) {
  // No persistence threshold (FSDP2 shards every parameter of the unit): the norms are modules too and
  // each Linear brings its bias: 8192, 25,165,824 + 6144, 8,388,608 + 4096, 8192, 33,554,432 + 8192,
  // 33,554,432 + 4096; in all the layer's 100,663,296 + 38,912 parameters on one GPU.
  const Zero3Modules z = zero3_modules(graph(kGptWithBias).layer, 2, 1, framework_rules(Framework::fsdp).zero3_persistence_threshold);
  ASSERT_EQ(z.count, 6u);
  const double expected[6] = {8192, 25171968, 8392704, 8192, 33562624, 33558528};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(z.items[i].parameters, expected[i]) << i;
  EXPECT_DOUBLE_EQ(z.gathered, 100663296.0 + 38912.0);
  EXPECT_DOUBLE_EQ(z.persistent, 0.0);
  EXPECT_DOUBLE_EQ(z.items[0].compute_share, 0.0);  // a norm runs no GEMM
}

TEST(Zero3Modules, MixtralLayerAtTp2Ep8) {
  // Mixtral 8x7B at tp 2, ep 8: one expert per GPU. u = 4096^2 / 2 = 8,388,608 parameters.
  // qkv 4096 x (4096 + 2 x 1024) / 2 = 1.5 u; proj u; expert fc1 (gate and up) 1 x 4096 x 28672 / 2 = 7 u;
  // expert fc2 1 x 14336 x 4096 / 2 = 3.5 u; gathered 13 u. Persistent: two RMSNorms of 4096 and the
  // router 4096 x 8 = 32,768 (replicated on the TP ranks): 40,960.
  const Zero3Modules z = zero3_modules(graph("model: mixtral-8x7b\n").layer, 2, 8, kDeepSpeedPersistence);
  const double u = 4096.0 * 4096.0 / 2;
  ASSERT_EQ(z.count, 4u);
  const double params[4] = {1.5 * u, u, 7 * u, 3.5 * u};
  // Per-GPU FLOPs follow the tokens, not the experts held: each GPU runs top_k = 2 expert GEMMs per token
  // whatever ep is, so fc1 does 2 x 7 u and fc2 2 x 3.5 u multiply-adds per token; 23.5 u in all.
  const double flops[4] = {1.5, 1, 14, 7};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(z.items[i].parameters, params[i]) << i;
    EXPECT_NEAR(z.items[i].gather_share, params[i] / (13 * u), 1e-12) << i;
    EXPECT_NEAR(z.items[i].compute_share, flops[i] / 23.5, 1e-12) << i;
  }
  EXPECT_DOUBLE_EQ(z.gathered, 13 * u);
  EXPECT_DOUBLE_EQ(z.largest, 7 * u);
  EXPECT_DOUBLE_EQ(z.persistent, 40960.0);
}

TEST(Zero3Modules, ExpertParallelDividesOnlyTheExperts) {
  // ep 2: four experts per GPU, fc1 28 u and fc2 14 u; the attention modules do not change.
  const double u = 4096.0 * 4096.0 / 2;
  const Zero3Modules z = zero3_modules(graph("model: mixtral-8x7b\n").layer, 2, 2, kDeepSpeedPersistence);
  ASSERT_EQ(z.count, 4u);
  EXPECT_DOUBLE_EQ(z.items[0].parameters, 1.5 * u);
  EXPECT_DOUBLE_EQ(z.items[2].parameters, 28 * u);
  EXPECT_DOUBLE_EQ(z.items[3].parameters, 14 * u);
  EXPECT_NEAR(z.items[2].compute_share, 14 / 23.5, 1e-12);  // the same tokens: the same FLOPs
}

TEST(Zero3Modules, ARouterAboveTheThresholdIsGatheredWhole) {
  // Threshold 1e4: the router's 4096 x 8 = 32,768 weights (not split over tp) are a module between proj
  // and the experts; its forward FLOPs 2 s x 32,768 are not divided by tp either: 0.0039 u per token
  // against 1.5 u + u + 14 u + 7 u for the tp-split GEMMs.
  const double u = 4096.0 * 4096.0 / 2;
  const Zero3Modules z = zero3_modules(graph("model: mixtral-8x7b\n").layer, 2, 8, 1e4);
  ASSERT_EQ(z.count, 5u);
  EXPECT_DOUBLE_EQ(z.items[2].parameters, 32768.0);
  EXPECT_NEAR(z.items[2].compute_share, (32768.0 / u) / (23.5 + 32768.0 / u), 1e-12);
  EXPECT_DOUBLE_EQ(z.persistent, 8192.0);  // the two RMSNorms
}

}  // namespace
}  // namespace tp
