// Step-time model: closed forms of the pipeline schedules and monotonic properties.
// Oracles: bubble of GPipe/1F1B = (p - 1)/m of the ideal time, interleaved (p - 1)/(v m)
// (Narayanan et al. 2021, sec. 2.2); ZB-H1 (p - 1)(F + B - W) instead of (p - 1)(F + B + W)
// (Qi et al. 2023, sec. 3); with uniform stages and no communication the step is (m + p - 1)(f + b).
#include <gtest/gtest.h>

#include "collectives.h"
#include "op_graph.h"
#include "op_times.h"
#include "plan.h"
#include "sustained_clock.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// Uniform stages: 32 layers on 4 stages, no embedding/head imbalance is avoided by comparing
// bubbles, not absolute times; communication-free by using one GPU per stage and pp only.
const char* kBase =
    "model: {layers: 32, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000, activation: gelu}\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 4}\n"
    "training: {sequence_length: 2048, global_batch: 16, micro_batch: 1}\n"
    "parallel: {tp: 1, pp: 4, zero: 0, recompute: none}\n";

Plan plan_of(const std::vector<std::string>& sets) {
  Scenario s = test::scenario(kBase, sets);
  return make_plan(s, default_profile(s.cluster.gpu));
}

TEST(StepTime, BubbleMatchesTheScheduleClosedForms) {
  const double m = 16, p = 4;
  Plan one = plan_of({"parallel.schedule=1f1b"});
  Plan gpipe = plan_of({"parallel.schedule=gpipe"});
  Plan inter = plan_of({"parallel.schedule=interleaved", "parallel.vpp=2"});
  // Bubble relative to the paced compute m (f + b) of the slowest stage; the first and last
  // stages carry the embedding and the head, so the ratio is close to, and at most, (p-1)/m.
  const double paced = one.time.step.value - one.time.bubble.value - one.time.exposed.total().value - one.time.optimizer.value;
  EXPECT_NEAR(one.time.bubble.value / paced, (p - 1) / m, 0.02);
  EXPECT_LE(one.time.bubble.value / paced, (p - 1) / m + 1e-12);
  EXPECT_DOUBLE_EQ(gpipe.time.bubble.value, one.time.bubble.value);
  EXPECT_NEAR(inter.time.bubble.value / one.time.bubble.value, 0.5, 1e-9);
  // ZB-H1: each of the p - 1 stages on 1F1B's fill gives its F + B + W less 2 W (m >= p; B here is a stage's
  // input and weight gradients): 1F1B's bubble less 2 (p - 1) W, since every stage holds 8 layers and only the
  // slowest, the last, a head. W, the deferred weight gradients, is half the layers' GEMM backward time, from
  // one layer's op times. With GEMMs only and F = B/2 = W the ratio would be 1/3.
  Plan zb = plan_of({"parallel.schedule=zb-h1"});
  const Scenario s = test::scenario(kBase, {});
  const HardwareProfile hw = default_profile(s.cluster.gpu);
  OpTimeContext c{s, hw, 1, 1, false, 1.0, s.cluster.gpu.peak_for(s.training.precision).value,
                  attention_peak(s.cluster.gpu, s.training.precision).value,
                  s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency};
  c.tensor_time_scale = tensor_time_scale(s.cluster, hw);  // a busy 4-GPU node: the sustained clock
  const OpTimes layer = time_ops(build_op_graph(s.model, s.training, 1).layer, c);
  const double wgrad = 8 * 0.5 * layer.gemm_bwd;
  const double closed_form = (one.time.bubble.value - 2 * (p - 1) * wgrad) / one.time.bubble.value;
  EXPECT_GT(closed_form, 1.0 / 3.0);
  EXPECT_NEAR(zb.time.bubble.value / one.time.bubble.value, closed_form, 1e-6);
}

TEST(StepTime, FasterLinksNeverSlowAStep) {
  const std::vector<std::string> layouts[] = {{"parallel.pp=1", "parallel.tp=4"}, {"parallel.pp=2", "parallel.tp=2"}};
  for (const auto& layout : layouts) {
    std::vector<std::string> slow = layout, fast = layout;
    slow.push_back("cluster.intra_node={bandwidth: 100 GB/s, latency: 5 us}");
    fast.push_back("cluster.intra_node={bandwidth: 900 GB/s, latency: 2 us}");
    EXPECT_LE(plan_of(fast).time.step.value, plan_of(slow).time.step.value);
  }
}

TEST(StepTime, MoreGpusAtFixedPerGpuWorkNeverLowerTotalFlops) {
  Plan small = plan_of({"parallel.pp=1", "cluster.gpus_per_node=2", "training.global_batch=16"});
  Plan large = plan_of({"parallel.pp=1", "cluster.gpus_per_node=4", "training.global_batch=32"});
  EXPECT_GE(large.estimate.flops.model_per_step.value, small.estimate.flops.model_per_step.value);
  EXPECT_NEAR(large.time.tflops_per_gpu / small.time.tflops_per_gpu, 1.0, 0.05);
}

TEST(StepTime, ThroughputAndMfuAreConsistent) {
  Plan p = plan_of({});
  const double gpus = 4;
  EXPECT_NEAR(p.time.tokens_per_second, 16 * 2048 / p.time.step.value, 1e-6);
  EXPECT_NEAR(p.time.mfu, p.estimate.flops.model_per_step.value / (gpus * 989.4e12 * p.time.step.value), 1e-9);
  EXPECT_GT(p.time.hfu, 0.0);
  EXPECT_LT(p.time.mfu, 1.0);
  // Run totals use the step time: steps x step = failure-free seconds.
  EXPECT_NEAR(p.run.seconds.value, p.run.steps * p.time.step.value, 1e-6 * p.run.seconds.value);
}

TEST(StepTime, OverlapHidesDataParallelReduce) {
  Plan hidden = plan_of({"parallel.pp=1", "parallel.overlap={grad_reduce: true, param_gather: true}"});
  Plan exposed = plan_of({"parallel.pp=1", "parallel.overlap={grad_reduce: false, param_gather: false}"});
  EXPECT_LT(hidden.time.exposed.dp.value, exposed.time.exposed.dp.value);
  EXPECT_GT(exposed.time.exposed.dp.value, 0.0);
}

TEST(StepTime, PlacementAndOversubscriptionChangeTheGroupsLinks) {
  const char* two_nodes =
      "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 2}\n"
      "training: {sequence_length: 4096, global_batch: 32, micro_batch: 1}\n"
      "parallel: {tp: 8, pp: 1, zero: 1, overlap: {grad_reduce: false, param_gather: false}}\n";
  auto step = [&](const std::vector<std::string>& sets) {
    Scenario s = test::scenario(two_nodes, sets);
    return make_plan(s, default_profile(s.cluster.gpu)).time;
  };
  // TP innermost keeps the 8 TP ranks on one node's NVLink; placing DP innermost spreads them over
  // both nodes, so tensor-parallel traffic crosses the network.
  const StepTime inner = step({});
  const StepTime outer = step({"parallel.placement=[dp, tp, cp, pp]"});
  EXPECT_GT(outer.exposed.tp.value, inner.exposed.tp.value);
  Scenario spread = test::scenario(two_nodes, {"parallel.placement=[dp, tp, cp, pp]"});
  EXPECT_EQ(spread.parallel.stride_of(MeshDim::tp), 2);  // dp = 2 placed inside: TP ranks 0, 2, 4, ...
  EXPECT_EQ(group_shape(8, 2, 8).nodes, 2);
  // A 4:1 oversubscribed fabric slows the cross-node gradient reduce, never speeds anything up.
  const StepTime over = step({"cluster.inter_node.oversubscription=4"});
  EXPECT_GT(over.exposed.dp.value, inner.exposed.dp.value);
  EXPECT_GE(over.step.value, inner.step.value);
}

}  // namespace
}  // namespace tp

namespace tp {
namespace {

// Interleaved gradient-reduce overlap (docs/model.md §15), by hand: the last group of g = min(m, p)
// micro-batches runs its backward chunk by chunk, so chunk k's 1/v of the reduce traffic R overlaps the
// (v-1-k)·g chunk-backwards (B/v each) still to run plus its own; with one reduce channel the exposed
// time is max(R/v - B/v, R - ((v-1)g + 1)·B/v), at least the last bucket. Slow links make R large.
TEST(StepTime, InterleavedGradientReduceHidesBehindTheLaterChunks) {
  const std::vector<std::string> sets = {"cluster.gpus_per_node=8", "parallel.schedule=interleaved", "parallel.vpp=2",
                                         "parallel.overlap.grad_reduce=true", "memory.comm_bucket=1 MB",
                                         "cluster.intra_node={bandwidth: 5 GB/s, latency: 5 us}"};
  const Plan p = plan_of(sets);
  ASSERT_EQ(p.estimate.micro_batches, 8);  // 16 sequences over dp 2
  const double R = p.time.dp_reduce.value, B = p.time.backward_per_micro_batch.value, v = 2, g = 4;
  const double hand = std::max(R / v - B / v, R - ((v - 1) * g + 1) * B / v);
  ASSERT_GT(hand, 0.0);  // the links are slow enough that some of it shows
  EXPECT_NEAR(p.time.exposed.dp.value, hand, 1e-3 * hand);
  // 1F1B hides the same traffic behind one micro-batch's backward only: more is exposed.
  std::vector<std::string> one = sets;
  one[1] = "parallel.schedule=1f1b";
  one[2] = "parallel.vpp=1";
  EXPECT_GT(plan_of(one).time.exposed.dp.value, p.time.exposed.dp.value);
}

}  // namespace
}  // namespace tp
