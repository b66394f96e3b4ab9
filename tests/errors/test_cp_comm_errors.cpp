// parallel.cp_comm (docs/scenario-reference.md): a word of p2p | all_gather | a2a; a2a (Ulysses, and
// DeepSpeed's default) gives each context-parallel rank whole heads, so the query and key/value heads of a
// TP rank must divide by cp (Transformer Engine AttnFuncWithCPAndQKVOA2A asserts both). Base scenario:
// llama3.1-8b (32 heads, 8 KV heads) on two DGX H100 nodes = 16 GPUs, tp 2 x cp 8.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "error_test_support.h"

namespace tp {
namespace {

using errtest::fails_at;
using errtest::load_error;
using errtest::Yaml;

Yaml two_nodes(const std::string& parallel, const std::string& framework = "") {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 2}";
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1" + framework + "}";
  y.parallel = parallel;
  return y;
}

TEST(CpCommErrors, AllToAllNeedsHeadsDivisibleByCp) {
  // tp 2 leaves 16 query and 4 KV heads per rank: cp 8 does not divide 4.
  const Yaml y = two_nodes("{tp: 2, pp: 1, cp: 8, cp_comm: a2a}");
  EXPECT_TRUE(fails_at(y.str(), "cp: 8", 4, "parallel.cp",
                       {"16 query and 4 key/value heads per TP rank", "cp (8)", "cp_comm: p2p, all_gather or ring_all_gather",
                        "conflicts with parallel.cp_comm"}));
  // The ring and the all-gather keep whole sequences of heads: both load.
  EXPECT_FALSE(load_error(two_nodes("{tp: 2, pp: 1, cp: 8, cp_comm: p2p}").str()).thrown);
  EXPECT_FALSE(load_error(two_nodes("{tp: 2, pp: 1, cp: 8, cp_comm: all_gather}").str()).thrown);
  // tp 4 x cp 4 leaves 2 KV heads per TP rank, which cp 4 does not divide; tp 2 x cp 4 (16 and 4) loads.
  EXPECT_TRUE(load_error(two_nodes("{tp: 4, pp: 1, cp: 4, cp_comm: a2a}").str()).thrown);
  const Yaml fits = two_nodes("{tp: 2, pp: 2, cp: 4, cp_comm: a2a}");
  EXPECT_FALSE(load_error(fits.str()).thrown) << load_error(fits.str()).what;
}

TEST(CpCommErrors, DeepSpeedsDefaultIsCheckedToo) {
  // No cp_comm: DeepSpeed's Ulysses applies, and the same rule; naming the ring lifts it.
  const Yaml y = two_nodes("{tp: 2, pp: 1, cp: 8}", ", framework: deepspeed");
  EXPECT_TRUE(fails_at(y.str(), "cp: 8", 4, "parallel.cp", {"DeepSpeed-Ulysses", "conflicts with training.framework"}));
  EXPECT_FALSE(load_error(two_nodes("{tp: 2, pp: 1, cp: 8}").str()).thrown);  // Megatron: the ring
  EXPECT_FALSE(load_error(two_nodes("{tp: 2, pp: 1, cp: 8, cp_comm: p2p}", ", framework: deepspeed").str()).thrown);
}

TEST(CpCommErrors, UnknownExchangeIsNamed) {
  const Yaml y = two_nodes("{tp: 2, pp: 1, cp: 8, cp_comm: allgather}");
  EXPECT_TRUE(fails_at(y.str(), "allgather}", 0, "parallel.cp_comm", {"all_gather"}));
}

TEST(CpCommErrors, HierarchicalNeedsItsAllToAllLevel) {
  // a2a+p2p (Megatron-Core --hierarchical-context-parallel-sizes): cp_a2a ranks of all-to-all, at least 2
  // and dividing cp; its heads rule is the all-to-all level's only, so tp 2 x cp 8 loads with cp_a2a 4
  // (16 and 4 heads per TP rank) where plain a2a would not.
  EXPECT_TRUE(fails_at(two_nodes("{tp: 2, pp: 1, cp: 8, cp_comm: a2a+p2p}").str(), "a2a+p2p}", 0, "parallel.cp_comm",
                       {"needs parallel.cp_a2a", "dividing cp (8)"}));
  EXPECT_TRUE(fails_at(two_nodes("{tp: 2, pp: 1, cp: 8, cp_comm: a2a+p2p, cp_a2a: 3}").str(), "3}", 0,
                       "parallel.cp_a2a", {"here 3"}));
  EXPECT_TRUE(fails_at(two_nodes("{tp: 2, pp: 1, cp: 8, cp_comm: a2a+p2p, cp_a2a: 8}").str(), "8}", 0,
                       "parallel.cp_a2a", {"4 key/value heads per TP rank", "cp_a2a (8)"}));
  const Yaml fits = two_nodes("{tp: 2, pp: 1, cp: 8, cp_comm: a2a+p2p, cp_a2a: 4}");
  EXPECT_FALSE(load_error(fits.str()).thrown) << load_error(fits.str()).what;
  // cp_a2a without the hierarchical exchange is named.
  EXPECT_TRUE(fails_at(two_nodes("{tp: 2, pp: 1, cp: 8, cp_comm: p2p, cp_a2a: 4}").str(), "4}", 0, "parallel.cp_a2a",
                       {"a2a+p2p"}));
}

}  // namespace
}  // namespace tp
