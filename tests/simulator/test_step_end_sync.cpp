// The end-of-step gradient sync in the step simulator (the tied embedding's all-reduce between the first
// and the last pipeline stage, StageTiming::step_end_ends from the planner's op graph entry): one task on
// each stage that takes part, started when every one of them has its gradients, ended before their
// optimizer. Oracles: event times worked out by hand below; the planner's step, which adds the same entry.
#include <gtest/gtest.h>

#include <string>

#include "sim_test_support.h"
#include "step_graph.h"

namespace tp {
namespace {

// 1F1B, 2 stages, 2 micro-batches, forward 1 s and backward 2 s per micro-batch and stage, no transfers,
// optimizer 1 s on each stage.
sim::StepInputs two_stages(double sync) {
  sim::StepInputs in;
  in.schedule = Schedule::one_f_one_b;
  in.stages = 2;
  in.micro_batches = 2;
  for (int s = 0; s < 2; ++s) {
    sim::StageInputs st;
    st.timing = simtest::timing(1, 2);
    st.timing.step_end_ends = Seconds(sync);
    st.optimizer = Seconds(1);
    in.stage.push_back(st);
  }
  return in;
}

TEST(StepEndSync, WaitsForBothEndsAndDelaysTheOptimizer) {
  // By hand: stage 1 runs F0 [1, 2], B0 [2, 4], F1 [4, 5], B1 [5, 7]; stage 0 runs F0 [0, 1], F1 [1, 2],
  // B0 [4, 6] (after stage 1's B0), B1 [7, 9]. Without the sync stage 0's optimizer runs [9, 10]: step 10.
  // With a 0.5 s sync: both stages' syncs start when both have their gradients, at max(9, 7) = 9, end at
  // 9.5; stage 0's optimizer runs [9.5, 10.5]: step 10.5.
  EXPECT_DOUBLE_EQ(sim::simulate(two_stages(0), SimOptions{}).step_seconds.value, 10.0);
  const SimResult r = sim::simulate(two_stages(0.5), SimOptions{});
  EXPECT_DOUBLE_EQ(r.step_seconds.value, 10.5);
  int syncs = 0;
  const sim::StepGraph graph = sim::build_step_graph(two_stages(0.5));
  for (const sim::Task& t : graph.graph.tasks()) {
    if (t.kind != sim::TaskKind::step_end_sync) continue;
    ++syncs;
    EXPECT_DOUBLE_EQ(t.duration, 0.5);
  }
  EXPECT_EQ(syncs, 2);
}

// A tied GPT on 4 stages (one node each, tp 8): the planner's entry reaches the simulated step.
const char* kTiedGpt =
    "model: {layers: 8, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 50257, activation: gelu,\n"
    "        norm: layernorm, position: rope, tied_embeddings: true}\n"
    "cluster: {preset: dgx-h100, nodes: 4, gpus_per_node: 8}\n"
    "training: {sequence_length: 2048, global_batch: 8, micro_batch: 1, precision: bf16, framework: megatron}\n"
    "parallel: {tp: 8, pp: 4, zero: 0, sequence_parallel: true, recompute: none}\n";

TEST(StepEndSync, ScenarioStepContainsTheTiedEmbeddingSync) {
  const Scenario s = test::scenario(kTiedGpt);
  const Plan plan = make_plan(s, default_profile(s.cluster.gpu));
  const double sync = plan.time.stages.front().step_end_ends.value;
  ASSERT_GT(sync, 0.0);
  EXPECT_EQ(plan.time.stages.back().step_end_ends.value, sync);
  EXPECT_EQ(plan.time.stages[1].step_end_ends.value, 0.0);
  const SimResult with = simulate_step(s, plan, SimOptions{});
  bool on_path = false;
  for (const std::string& name : with.critical_path) on_path = on_path || name.rfind("grad-sync s", 0) == 0;
  EXPECT_TRUE(on_path);
  // 1F1B: the first stage's backward ends the compute; the sync then ties the last stage's optimizer (the
  // longer one: it holds the output layer's copy of the embedding) to it. The step grows by the sync and
  // at most the optimizer's time, and stays the planner's, which adds the sync to the slowest stage's end.
  Plan bare = plan;
  for (StageTiming& st : bare.time.stages) st.step_end_ends = Seconds(0);
  const SimResult without = simulate_step(s, bare, SimOptions{});
  const double grown = with.step_seconds.value - without.step_seconds.value;
  EXPECT_GE(grown, sync - 1e-12);
  EXPECT_LE(grown, sync + plan.time.optimizer_step.value);
  EXPECT_NEAR(with.step_seconds.value / plan.time.step.value, 1.0, 1e-3);
}

}  // namespace
}  // namespace tp
