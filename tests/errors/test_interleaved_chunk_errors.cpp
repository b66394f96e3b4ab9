// Interleaved stages need enough layers for their chunks (model/layout_resolve.cpp, fewest_stage_layers): each
// stage splits its layers into vpp chunks of floor(L / v) or ceil(L / v) layers; only the first and
// last stage may leave one chunk without a layer, which then holds the embedding or the output layer
// and loss (Llama 3 405B: 126 layers on 16 stages, Dubey et al. 2024, section 3.3.2). Base scenario:
// llama3.1-8b (32 layers) on one DGX H100 (8 GPUs).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_test_support.h"
#include "scenario.h"

namespace tp {
namespace {

using errtest::fails_at;
using errtest::fails_with;
using errtest::load_error;
using errtest::Yaml;

// 32 layers on 4 stages: 8 each, fewer than 16 chunks.
TEST(InterleavedChunkErrors, AutoSplitWithFewerLayersThanChunks) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 4, vpp: 16, schedule: interleaved}";
  EXPECT_TRUE(fails_at(y.str(), "vpp: 16", 5, "parallel.vpp",
                       {"model.layers", "leave stage 0 with 8 (it needs at least 15)"}));
}

// 30 layers on 4 stages with 8 chunks: 7, 8, 8, 7 (the ends one layer lighter) loads; 2 chunks divide
// nothing evenly either and load too (4 + 4 or 3 + 4 layers per chunk).
TEST(InterleavedChunkErrors, UnevenAutoSplitLoads) {
  Yaml y;
  y.model = "{preset: llama3.1-8b, layers: 30}";
  for (const char* vpp : {"8", "2"}) {
    y.parallel = std::string("{tp: 2, pp: 4, schedule: interleaved, vpp: ") + vpp + "}";
    const auto f = load_error(y.str());
    EXPECT_FALSE(f.thrown) << f.what;
  }
  y.parallel = "{tp: 2, pp: 4, schedule: interleaved, vpp: 8}";
  EXPECT_EQ(test::scenario(y.str()).parallel.layers_per_stage, (std::vector<int>{7, 8, 8, 7}));
  // 9 chunks: the ends need 8 layers and have 7.
  y.parallel = "{tp: 2, pp: 4, schedule: interleaved, vpp: 9}";
  EXPECT_TRUE(fails_with(y.str(), {"leave stage 0 with 7 (it needs at least 8)"}));
}

TEST(InterleavedChunkErrors, ListedStageWithFewerLayersThanChunks) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 4, vpp: 4, schedule: interleaved, layers_per_stage: [8, 3, 12, 9]}";
  EXPECT_TRUE(fails_at(y.str(), "[8, 3", 0, "parallel.layers_per_stage",
                       {"stage 1 has 3 layers, fewer than its 4 interleaved chunks", "parallel.vpp"}));
  // The ends may have vpp - 1: one chunk holds only the embedding, one only the output layer.
  y.parallel = "{tp: 2, pp: 4, vpp: 4, schedule: interleaved, layers_per_stage: [3, 13, 13, 3]}";
  const auto ends = load_error(y.str());
  EXPECT_FALSE(ends.thrown) << ends.what;
  y.parallel = "{tp: 2, pp: 4, vpp: 4, schedule: interleaved, layers_per_stage: [2, 14, 13, 3]}";
  EXPECT_TRUE(fails_with(y.str(), {"stage 0 has 2 layers"}));
}

}  // namespace
}  // namespace tp
