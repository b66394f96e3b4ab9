// parallel.zero by framework (docs/scenario-reference.md `zero`, model/specs.h default_zero and
// framework_has_zero). Unsaid, it is the stage the framework runs by default; a stage the framework has no
// layout for is an InputError at the value, naming training.framework. Oracles: the frameworks' own
// defaults and strategies, cited in the test names' comments.
#include <gtest/gtest.h>

#include <string>

#include "error_test_support.h"
#include "mesh.h"
#include "scenario.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// One DGX H100 node: dp 8 at tp 1, pp 1.
std::string with_framework(const std::string& framework, const std::string& parallel) {
  errtest::Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, framework: " + framework + "}";
  y.parallel = parallel;
  return y.str();
}

int zero_of(const std::string& framework, const std::string& parallel) {
  return test::scenario(with_framework(framework, parallel)).parallel.zero;
}

// Megatron-Core recipes run the distributed optimizer (1); DeepSpeed's zero_optimization.stage defaults to 0
// (deepspeed/runtime/zero/config.py); FSDP fully shards (FULL_SHARD / fully_shard: 3), but torchtitan keeps
// a pipeline stage's weights gathered (parallelize.py: reshard_after_forward = not pp_enabled: 2); plain
// PyTorch is DistributedDataParallel (0).
TEST(FrameworkZeroErrors, UnsaidZeroIsTheFrameworksDefault) {
  EXPECT_EQ(zero_of("megatron", "{tp: 1, pp: 1}"), 1);
  EXPECT_EQ(zero_of("deepspeed", "{tp: 1, pp: 1}"), 0);
  EXPECT_EQ(zero_of("fsdp", "{tp: 1, pp: 1}"), 3);
  EXPECT_EQ(zero_of("fsdp", "{tp: 1, pp: 2}"), 2);
  EXPECT_EQ(zero_of("pytorch", "{tp: 1, pp: 1}"), 0);
  EXPECT_EQ(zero_of("fsdp", "{tp: 1, pp: 1, zero: 0}"), 0);  // given: as given
}

// FSDP1's ShardingStrategy (NO_SHARD, SHARD_GRAD_OP, FULL_SHARD, HYBRID_SHARD) and FSDP2's fully_shard shard
// gradients wherever they shard optimizer states: no ZeRO-1.
TEST(FrameworkZeroErrors, FsdpHasNoZeroOne) {
  const std::string yaml = with_framework("fsdp", "{tp: 1, pp: 1, zero: 1}");
  EXPECT_TRUE(errtest::fails_at(yaml, "zero: 1", 6, "parallel.zero",
                                {"FSDP has no ZeRO-1", "SHARD_GRAD_OP", "training.framework"}));
  for (const char* zero : {"0", "2", "3"}) {
    const auto e = errtest::load_error(with_framework("fsdp", std::string("{tp: 1, pp: 1, zero: ") + zero + "}"));
    EXPECT_FALSE(e.thrown) << zero << ": " << e.what;
  }
}

// Plain PyTorch has DDP (0) and ZeroRedundancyOptimizer (1); sharded gradients or weights are FSDP's.
TEST(FrameworkZeroErrors, PlainPytorchShardsTheOptimizerAtMost) {
  for (const char* zero : {"2", "3"}) {
    const std::string yaml = with_framework("pytorch", std::string("{tp: 1, pp: 1, zero: ") + zero + "}");
    EXPECT_TRUE(errtest::fails_at(yaml, std::string("zero: ") + zero, 6, "parallel.zero",
                                  {"ZeroRedundancyOptimizer", "framework: fsdp"}))
        << zero;
  }
  EXPECT_FALSE(errtest::load_error(with_framework("pytorch", "{tp: 1, pp: 1, zero: 1}")).thrown);
}

// An error about a stage the user never wrote says whose default it is, and its advice leads to a layout
// that loads (before: "needs zero: 3" for plain PyTorch, which refuses zero 3; "needs zero: 1, 2 or 3" under
// DeepSpeed, which shards in groups only at ZeRO-3).
TEST(FrameworkZeroErrors, ErrorsSayWhereAnUnsaidZeroCameFrom) {
  EXPECT_TRUE(errtest::fails_with(with_framework("pytorch", "{tp: 1, pp: 1, offload: {params: cpu}}"),
                                  {"parallel.offload.params", "zero: 0 (pytorch's default)", "framework: fsdp or deepspeed"}));
  EXPECT_TRUE(errtest::fails_with(with_framework("fsdp", "{tp: 1, pp: 2, offload: {params: cpu}}"),
                                  {"zero: 2 (fsdp's default)", "pp: 1"}));
  EXPECT_TRUE(errtest::fails_with(with_framework("deepspeed", "{tp: 1, pp: 1, dp_shard: 2}"),
                                  {"parallel.dp_shard", "zero: 3 under DeepSpeed", "zero: 0 (deepspeed's default)"}));
  EXPECT_FALSE(errtest::load_error(with_framework("deepspeed", "{tp: 1, pp: 1, dp_shard: 2, zero: 3}")).thrown);
  // Given, the stage is named without a default.
  EXPECT_TRUE(errtest::fails_with(with_framework("megatron", "{tp: 1, pp: 1, zero: 1, offload: {params: cpu}}"),
                                  {"here zero: 1 (conflicts"}));
}

// `sweep --grid parallel=auto` offers only the stages the framework has: under FSDP no ZeRO-1, under plain
// PyTorch no ZeRO-2 or 3; the others each.
TEST(FrameworkZeroErrors, AutoLayoutsOfferTheFrameworksStages) {
  for (const char* framework : {"fsdp", "pytorch", "megatron"}) {
    bool offered[4] = {false, false, false, false};
    for (const LayoutChoice& c : auto_layouts(test::scenario(with_framework(framework, "{tp: 1, pp: 1}")))) {
      offered[c.zero] = true;
    }
    const std::string f = framework;
    EXPECT_TRUE(offered[0]) << f;
    EXPECT_EQ(offered[1], f != "fsdp") << f;
    EXPECT_EQ(offered[2], f != "pytorch") << f;
    EXPECT_EQ(offered[3], f != "pytorch") << f;
  }
}

}  // namespace
}  // namespace tp
