// Properties the memory model must have whatever the numbers: more sharding, more tensor
// parallelism or more recompute never needs more memory; weights shrink about 1/tp.
#include <gtest/gtest.h>

#include "estimate.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const char* kBase =
    "model: llama3.1-70b\n"
    "cluster: {preset: dgx-h100, nodes: 8}\n"
    "training: {sequence_length: 4096, global_batch: 256, micro_batch: 1}\n"
    "parallel: {tp: 4, pp: 2, zero: 1, recompute: none}\n";

Estimate run(const std::vector<std::string>& sets) { return estimate(test::scenario(kBase, sets)); }

TEST(Properties, MemoryNeverGrowsWithZeroStage) {
  for (int pp : {1, 2}) {
    double prev = 1e300;
    for (int z = 0; z <= (pp == 1 ? 3 : 2); ++z) {
      Estimate e = run({"parallel.pp=" + std::to_string(pp), "parallel.zero=" + std::to_string(z)});
      EXPECT_LE(e.memory.total.value, prev) << "pp " << pp << " zero " << z;
      prev = e.memory.total.value;
    }
  }
}

TEST(Properties, MemoryNeverGrowsWithRecomputeLevel) {
  for (bool flash : {true, false}) {
    double prev = 1e300;
    for (const char* r : {"none", "selective", "full"}) {
      Estimate e = run({std::string("parallel.recompute=") + r,
                        std::string("training.flash_attention=") + (flash ? "true" : "false")});
      EXPECT_LE(e.memory.total.value, prev) << r;
      prev = e.memory.total.value;
    }
  }
}

TEST(Properties, MemoryNeverGrowsWithTensorParallelism) {
  double prev = 1e300;
  double weights_tp1 = 0;
  for (int tp : {1, 2, 4, 8}) {
    Estimate e = run({"parallel.tp=" + std::to_string(tp), "parallel.sequence_parallel=true"});
    EXPECT_LE(e.memory.total.value, prev) << "tp " << tp;
    prev = e.memory.total.value;
    if (tp == 1) weights_tp1 = e.memory.weights.value;
    // Weights shrink as 1/tp up to the replicated norms: within 1% of the ideal.
    EXPECT_NEAR(e.memory.weights.value * tp / weights_tp1, 1.0, 0.01) << "tp " << tp;
  }
}

TEST(Properties, ActivationsScaleWithMicroBatchAndSequence) {
  Estimate one = run({"training.micro_batch=1"});
  Estimate two = run({"training.micro_batch=2"});
  EXPECT_NEAR(two.memory.activations.value / one.memory.activations.value, 2.0, 1e-9);
  // With FlashAttention activations are linear in the sequence length too.
  Estimate longer = run({"training.sequence_length=8192", "training.global_batch=128"});
  EXPECT_NEAR(longer.memory.activations.value / one.memory.activations.value, 2.0, 1e-9);
}

TEST(Properties, ContextParallelismDividesActivations) {
  Estimate cp1 = run({"parallel.cp=1"});
  Estimate cp2 = run({"parallel.cp=2", "training.global_batch=128"});
  EXPECT_NEAR(cp2.memory.activations.value / cp1.memory.activations.value, 0.5, 1e-9);
}

TEST(Properties, ExpertParallelismDividesExpertWeights) {
  const char* moe =
      "model: mixtral-8x7b\ncluster: {preset: dgx-h100, nodes: 2}\n"
      "training: {sequence_length: 4096, global_batch: 64}\nparallel: {tp: 2, pp: 1, zero: 1}\n";
  Estimate ep1 = estimate(test::scenario(moe, {"parallel.ep=1"}));
  Estimate ep8 = estimate(test::scenario(moe, {"parallel.ep=8"}));
  EXPECT_LT(ep8.memory.weights.value, ep1.memory.weights.value / 4);
  EXPECT_DOUBLE_EQ(ep1.parameters_total, ep8.parameters_total);
}

TEST(Properties, InfeasibleLayoutIsDataWithFixes) {
  Estimate e = run({"parallel.tp=1", "parallel.pp=1", "parallel.zero=0"});
  ASSERT_FALSE(e.feasible);
  ASSERT_EQ(e.violations.size(), 1u);
  EXPECT_NE(violation_message(e.violations[0]).find("more needed"), std::string::npos);
}

}  // namespace
}  // namespace tp
