// parallel.dp_shard (docs/scenario-reference.md, docs/model.md §15 "Hybrid sharding"): the data-parallel
// ranks ZeRO shards the states over. An InputError at its line when nothing is sharded (zero 0), when it
// does not divide dp (the replicas are dp / dp_shard whole groups), under DeepSpeed below ZeRO-3 (its one
// hybrid mode, MiCS, is ZeRO-3's) and when an MoE model's experts cannot be spread over the group; the
// error points at the value and names the field it conflicts with.
#include <gtest/gtest.h>

#include <string>

#include "error_test_support.h"
#include "scenario.h"

namespace tp {
namespace {

// Two DGX H100 nodes, tp 1 pp 1: dp 16.
std::string with_shard(const std::string& parallel, const std::string& framework = "fsdp",
                       const std::string& model = "llama3.1-8b") {
  errtest::Yaml y;
  y.model = model;
  y.cluster = "{preset: dgx-h100, nodes: 2}";
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, framework: " + framework + "}";
  y.parallel = parallel;
  return y.str();
}

TEST(DpShardErrors, NeedsSomethingSharded) {
  const std::string yaml = with_shard("{tp: 1, pp: 1, zero: 0, dp_shard: 8}");
  EXPECT_TRUE(errtest::fails_at(yaml, "dp_shard: 8", 10, "parallel.dp_shard", {"zero: 1, 2 or 3", "parallel.zero"}));
}

TEST(DpShardErrors, MustDivideDp) {
  const std::string yaml = with_shard("{tp: 1, pp: 1, zero: 3, dp_shard: 3}");
  EXPECT_TRUE(errtest::fails_at(yaml, "dp_shard: 3", 10, "parallel.dp_shard", {"must divide dp (16)", "groups of 3"}));
}

TEST(DpShardErrors, DeepspeedShardsInGroupsOnlyAtZero3) {
  const std::string yaml = with_shard("{tp: 1, pp: 1, zero: 2, dp_shard: 8}", "deepspeed");
  EXPECT_TRUE(errtest::fails_at(yaml, "dp_shard: 8", 10, "parallel.dp_shard", {"MiCS", "mics_shard_size", "zero: 3"}));
  EXPECT_FALSE(errtest::load_error(with_shard("{tp: 1, pp: 1, zero: 3, dp_shard: 8}", "deepspeed")).thrown);
}

TEST(DpShardErrors, ExpertsMustSpreadOverTheGroup) {
  // Mixtral 8x7B, ep 4 over dp 16: a sharding group of 2 ranks cannot hold 4 expert-parallel ranks.
  const std::string yaml = with_shard("{tp: 1, pp: 1, ep: 4, zero: 1, dp_shard: 2}", "megatron", "mixtral-8x7b");
  EXPECT_TRUE(errtest::fails_at(yaml, "dp_shard: 2", 10, "parallel.dp_shard", {"multiple of ep (4)"}));
}

// dp_shard = dp is full sharding, the default, and what a sweep's CSV writes back for every point: it loads
// whatever the stage (it was refused under DeepSpeed below ZeRO-3 and at zero 0).
TEST(DpShardErrors, AGroupOfAllDpIsFullSharding) {
  for (const char* layout : {"{tp: 1, pp: 1, zero: 1, dp_shard: 16}", "{tp: 1, pp: 1, zero: 0, dp_shard: 16}"}) {
    const auto e = errtest::load_error(with_shard(layout, "deepspeed"));
    EXPECT_FALSE(e.thrown) << layout << ": " << e.what;
  }
}

TEST(DpShardErrors, ValidGroupsLoad) {
  for (const char* fw : {"fsdp", "megatron", "pytorch"}) {
    for (const char* shard : {"1", "8", "16"}) {
      // FSDP's groups are HSDP's (zero 3: it has no ZeRO-1); Megatron and PyTorch's shard the optimizer states.
      const std::string zero = std::string(fw) == "fsdp" ? "3" : "1";
      const auto e = errtest::load_error(
          with_shard("{tp: 1, pp: 1, zero: " + zero + ", dp_shard: " + shard + "}", fw));
      EXPECT_FALSE(e.thrown) << fw << " dp_shard " << shard << ": " << e.what;
    }
  }
}

}  // namespace
}  // namespace tp
