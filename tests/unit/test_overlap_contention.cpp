// Compute slowed by the data-parallel traffic it hides (planner/overlap_contention.h; docs/model.md §15,
// "Overlap contention"). Oracle: Lee et al. 2025 (arXiv 2507.03114), compute overlapped with a collective
// runs 18.9 % slower on average, and hand computation from the plan's own reduce and gather times.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "overlap_contention.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

Plan plan_of(const char* yaml) {
  return test::plan(yaml);
}

TEST(OverlapContention, HiddenTrafficCostsTheMeasuredSlowdown) {
  // 1 s of traffic beside compute: the compute covering it does 1/1.189 s of work, 0.189/1.189 s is lost.
  EXPECT_DOUBLE_EQ(overlap_contention_seconds(1.0), 0.189 / 1.189);
  EXPECT_DOUBLE_EQ(overlap_contention_seconds(0.0), 0.0);
  EXPECT_DOUBLE_EQ(overlap_contention_seconds(-2.0), 0.0);  // nothing hidden, nothing lost
}

// Plain data parallelism: the gradient all-reduce overlapped with the last backward; what it hides of
// its dp_reduce seconds costs 0.189/1.189 of it, on top of what is exposed.
TEST(OverlapContention, DataParallelAllReduceByHand) {
  const Plan p = plan_of(
      "model: llama3-8b\n"
      "cluster: {preset: dgx-h100, nodes: 2}\n"
      "training: {sequence_length: 4096, global_batch: 64, micro_batch: 1}\n"
      "parallel: {tp: 8, pp: 1, dp: 2, recompute: none, zero: 0}\n");
  const StepTime& t = p.time;
  ASSERT_GT(t.dp_reduce.value, t.exposed.dp.value);  // part of the reduce hides behind the backward
  const double hidden = t.dp_reduce.value - t.exposed.dp.value;
  EXPECT_NEAR(t.overlap_contention.value, 0.189 / 1.189 * hidden, 1e-12);
  // The step carries it beside its other parts.
  const double parts = t.compute.value + t.recompute.value + t.bubble.value + t.optimizer.value +
                       t.exposed.total().value + t.overlap_contention.value;
  EXPECT_NEAR(t.step.value, parts, 1e-9 * parts);
}

// FSDP (ZeRO-3): every micro-batch gathers the stage's weights for its forward and again for its
// backward, and reduce-scatters its gradients (FSDP syncs every backward unless told not to,
// planner/framework_rules.h reduce_every_micro_batch): m x (2 x dp_gather + dp_reduce) on the link.
TEST(OverlapContention, Zero3GathersTwicePerMicroBatchByHand) {
  const Plan p = plan_of(
      "model: llama3-8b\n"
      "cluster: {preset: dgx-h100, nodes: 4}\n"
      "training: {framework: fsdp, sequence_length: 4096, global_batch: 128, micro_batch: 2}\n"
      "parallel: {tp: 1, pp: 1, dp: 32, recompute: full, zero: 3}\n");
  const StepTime& t = p.time;
  const double m = static_cast<double>(p.estimate.micro_batches);
  ASSERT_EQ(m, 2.0);  // 128 sequences / (32 replicas x 2)
  const double traffic = m * (2 * t.dp_gather.value + t.dp_reduce.value);
  EXPECT_NEAR(t.overlap_contention.value, 0.189 / 1.189 * (traffic - t.exposed.dp.value), 1e-12);
  EXPECT_GT(t.overlap_contention.value, 0.0);
}

// One replica has no data-parallel traffic: nothing to contend with.
TEST(OverlapContention, OneReplicaLosesNothing) {
  const Plan p = plan_of(
      "model: llama3-8b\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 4096, global_batch: 8, micro_batch: 1}\n"
      "parallel: {tp: 8, pp: 1, dp: 1, recompute: none}\n");
  EXPECT_EQ(p.time.overlap_contention.value, 0.0);
}

// The JSON contract: time.overlap_contention in seconds (docs/json-output.md).
TEST(OverlapContention, JsonCarriesItInSeconds) {
  const std::string file =
      "\"" + test::source_path("scenarios/validation/sharded/llmfoundry-h100-mpt7b-s2048-g8.yaml") + "\"";
  const test::RunResult r = test::run_trainplan("evaluate " + file + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_GT(j.at("time").at("overlap_contention").get<double>(), 0.0);
  EXPECT_EQ(j.at("units").at("time").get<std::string>(), "seconds");
}

}  // namespace
}  // namespace tp
