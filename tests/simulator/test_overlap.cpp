// Overlap of the data-parallel gradient reduce with the backward pass.
// Model (simulator/step_graph.h): the reduce r of a stage is split into k buckets of r/k; with
// overlap_grad_reduce bucket i becomes ready when i/k of the last micro-batch's backward b has run,
// and the buckets run one after another on the DP communicator. The last bucket can only start
// when the backward ends, so the exposed part is
//     r/k + (1 − 1/k)·max(0, r − b)
// (all of it hidden but the last bucket when r ≤ b; the remainder when the link is too slow), and
// r without overlap. In a pipeline, a stage whose backward ends early hides its whole reduce in the
// drain: it adds nothing to the step.
#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace tp {
namespace {

using simtest::pipeline;
using simtest::plan_with;
using simtest::timing;
using simtest::uniform;

const std::vector<std::string> kOverlap = {"parallel.overlap={grad_reduce: true, param_gather: true}"};
const std::vector<std::string> kNoOverlap = {"parallel.overlap={grad_reduce: false, param_gather: false}"};

// One stage, m = 4 micro-batches of f = 1, b = 2, optimizer 0.5: without DP the step is 12.5 s.
Seconds step_with_reduce(double r, int k, const std::vector<std::string>& overlap, sim::LinkSharing sharing = sim::LinkSharing::fair) {
  const Scenario s = pipeline(1, 4, "1f1b", 1, overlap);
  Plan p = plan_with(s, uniform(1, timing(1, 2)));
  p.time.dp_reduce = Seconds(r);
  p.time.dp_buckets = k;
  p.time.optimizer_step = Seconds(0.5);
  SimOptions o;
  o.link_sharing = sharing;
  return simulate_step(s, p, o).step_seconds;
}

TEST(Overlap, ReduceHiddenBehindBackwardAddsOnlyItsLastBucket) {
  const double base = 4 * 3.0 + 0.5;
  EXPECT_EQ(step_with_reduce(0, 4, kOverlap).value, base);
  for (int k : {1, 4, 16}) {
    for (double r : {0.5, 1.0, 2.0}) {  // r <= b: everything before the last bucket is hidden
      EXPECT_EQ(step_with_reduce(r, k, kOverlap).value, base + r / k) << "r " << r << " k " << k;
    }
  }
}

TEST(Overlap, TooSlowLinkShowsExactlyTheExposedRemainder) {
  const double base = 4 * 3.0 + 0.5, b = 2.0;
  for (int k : {1, 4, 16}) {
    for (double r : {3.0, 6.0, 10.0}) {
      const double exposed = r / k + (1.0 - 1.0 / k) * (r - b);
      EXPECT_NEAR(step_with_reduce(r, k, kOverlap).value, base + exposed, 1e-12 * base) << "r " << r << " k " << k;
      EXPECT_NEAR(step_with_reduce(r, k, kOverlap, sim::LinkSharing::fifo).value, base + exposed, 1e-12 * base);
    }
  }
}

TEST(Overlap, WithoutOverlapTheWholeReduceIsExposed) {
  const double base = 4 * 3.0 + 0.5;
  for (int k : {1, 4}) {
    for (double r : {1.0, 6.0}) EXPECT_EQ(step_with_reduce(r, k, kNoOverlap).value, base + r);
  }
}

TEST(Overlap, ExposedReduceIsReportedOnTheStage) {
  const Scenario s = pipeline(1, 4, "1f1b", 1, kOverlap);
  Plan p = plan_with(s, uniform(1, timing(1, 2)));
  p.time.dp_reduce = Seconds(6);
  p.time.dp_buckets = 4;
  p.time.optimizer_step = Seconds(0.5);
  const SimResult r = simulate_step(s, p, SimOptions{});
  const SimStage& st = r.stages[0];
  EXPECT_EQ(st.busy.value, 12.5);
  EXPECT_NEAR(st.exposed_dp.value, 6.0 - 1.5, 1e-12);
  EXPECT_NEAR(st.bubble.value, 0.0, 1e-12);
  EXPECT_NEAR(st.busy.value + st.exposed_comm.value + st.bubble.value, r.step_seconds.value, 1e-12);
}

// Four stages, 1F1B, m = 8, f = 1, b = 2: stages 1-3 finish their backward 2, 4, 6 s before stage 0,
// so their reduce (2.5 s, slower than their own 2 s backward: 1 s would be exposed on its own) ends
// inside the drain; only stage 0's own last bucket (1 s / 4) lengthens the step.
TEST(Overlap, ReduceHiddenInThePipelineDrainAddsNothing) {
  const int p = 4, m = 8;
  const Scenario s = pipeline(p, m, "1f1b", 1, kOverlap);
  const double no_dp = (m + p - 1) * 3.0;
  Plan plan = plan_with(s, uniform(p, timing(1, 2)), {1, 2.5, 2.5, 2.5});
  plan.time.dp_reduce = Seconds(1);  // stage 0 (the reference); the others have 2.5x the parameters
  plan.time.dp_buckets = 4;
  const SimResult r = simulate_step(s, plan, SimOptions{});
  EXPECT_EQ(r.step_seconds.value, no_dp + 0.25);
  EXPECT_EQ(r.critical_path.back(), "reduce s0 c0 b3");
  // Without stage 0's reduce the step is the no-DP step: the others' reduce adds nothing.
  Plan others = plan_with(s, uniform(p, timing(1, 2)), {0, 1, 1, 1});
  others.time.dp_reduce = Seconds(2.5);
  others.time.dp_buckets = 4;
  others.time.slowest_stage = 1;  // the reference stage: its reduce is 2.5 s
  const SimResult o = simulate_step(s, others, SimOptions{});
  EXPECT_EQ(o.step_seconds.value, no_dp);
}

// A reduce after every micro-batch (DeepSpeed ZeRO-2, Megatron-FSDP: planner/framework_rules.h,
// reduces_every_micro_batch), one stage, m = 4 micro-batches of f = 1, b = 2, optimizer 0.5 (base 12.5 s),
// reduce r per micro-batch in k buckets. By hand:
//  - DeepSpeed's default (overlap_comm off below ZeRO-3): each reduce holds the stream after its backward,
//    4 (3 + r) + 0.5;
//  - DeepSpeed with overlap asked for: the backward's epilogue still waits for the reduce
//    (FrameworkRules::waits_for_reduce_after_backward), so each micro-batch ends with what its reduce takes
//    beyond the backward: k = 1, 4 (3 + r) + 0.5 (22.5 at r = 2.5, 28.5 at r = 4); k = 4 at r = 4, the first
//    bucket ready at 1/4 of the backward (0.5 s into it), the last bucket done 0.5 + 4 = 4.5 s after the
//    backward starts: 4 (1 + 4.5) + 0.5 = 22.5;
//  - Megatron-FSDP (zero 2, no wait): r = 2.5 < f + b, k = 1: each reduce hides behind the next micro-batch;
//    the last one's 2.5 s show: 15.0; r = 4 > f + b, k = 1: the channel runs from the first backward's end
//    (3 s) for 4 x 4 s, to 19 s, while the compute ends at 12 s: 19.5; k = 4: the first bucket is ready at
//    1/4 of the first backward (1.5 s), 19 - 1.5 = 17.5 s: 18.0. The planner's grad_reduce_exposed gives
//    the same 7 and 5.5 s.
Seconds step_with_micro_batch_reduces(double r, int k, std::vector<std::string> sets,
                                      const std::string& framework = "deepspeed") {
  sets.push_back("training.framework=" + framework);
  sets.push_back("parallel.zero=2");
  const Scenario s = pipeline(1, 4, "1f1b", 1, sets);
  Plan p = plan_with(s, uniform(1, timing(1, 2)));
  p.time.dp_reduce = Seconds(r);
  p.time.dp_buckets = k;
  p.time.optimizer_step = Seconds(0.5);
  return simulate_step(s, p, SimOptions{}).step_seconds;
}

TEST(Overlap, DeepspeedZero2ReducesAfterEveryMicroBatchOnTheStream) {
  for (int k : {1, 4}) {
    for (double r : {0.5, 4.0}) EXPECT_EQ(step_with_micro_batch_reduces(r, k, {}).value, 4 * (3 + r) + 0.5) << r << " " << k;
  }
}

TEST(Overlap, DeepspeedOverlappedReducesEndWithTheirBackward) {
  const std::vector<std::string> overlap = {"parallel.overlap={grad_reduce: true}"};
  EXPECT_EQ(step_with_micro_batch_reduces(2.5, 1, overlap).value, 22.5);
  EXPECT_EQ(step_with_micro_batch_reduces(4.0, 1, overlap).value, 28.5);
  EXPECT_EQ(step_with_micro_batch_reduces(4.0, 4, overlap).value, 22.5);
}

TEST(Overlap, MicroBatchReducesHideBehindTheNextMicroBatchesUntilTheLinkFallsBehind) {
  EXPECT_EQ(step_with_micro_batch_reduces(2.5, 1, {}, "megatron").value, 15.0);
  EXPECT_EQ(step_with_micro_batch_reduces(4.0, 1, {}, "megatron").value, 19.5);
  EXPECT_EQ(step_with_micro_batch_reduces(4.0, 4, {}, "megatron").value, 18.0);
}

// Which task a bucket's readiness follows (one stage, one micro-batch, f = 1, b = 2, optimizer 0.5, overlap
// on). The gradients come out of the backward's GEMMs, so buckets follow the backward compute, not the
// exposed TP collective the stage runs after it (comm-B, 0.5 s): with r = 2 in k = 2 buckets they are ready
// at 2 and 3 s and run [2, 3] and [3, 4], while the stream ends its comm-B at 3.5 s: 4 + 0.5 = 4.5 s. (Had
// they followed comm-B: ready at 3.25 and 3.5 s, done at 5.25 s.)
// One stage, one micro-batch of `t`, optimizer 0.5 s, overlap on: the step with a reduce of r in k buckets.
double one_micro_batch_step(const StageTiming& t, double r, int k) {
  const Scenario s = pipeline(1, 1, "1f1b", 1, kOverlap);
  Plan p = plan_with(s, {t});
  p.time.dp_reduce = Seconds(r);
  p.time.dp_buckets = k;
  p.time.optimizer_step = Seconds(0.5);
  return simulate_step(s, p, SimOptions{}).step_seconds.value;
}

TEST(Overlap, BucketsFollowTheBackwardComputeNotItsCollective) {
  StageTiming t = timing(1, 2);
  t.comm_backward = Seconds(0.5);
  EXPECT_EQ(one_micro_batch_step(t, 2, 2), 4.5);
}

// Without overlap the reduce runs once the backward has returned, its exposed collective included (DeepSpeed
// on the compute stream, Megatron's finish_grad_sync): f = 1, b = 2, the backward's collective 0.5, reduce 2,
// optimizer 0.5: 1 + 2 + 0.5 + 2 + 0.5 = 6 s. Until 2026-12 the reduce started beside the collective (5.5 s),
// the simulator below the planner by it (DeepSpeed ZeRO-0, Llama 2 13B tp 4 on 4 nodes: -5.8 %).
TEST(Overlap, WithoutOverlapTheReduceFollowsTheBackwardsCollective) {
  StageTiming t = timing(1, 2);
  t.comm_backward = Seconds(0.5);
  const Scenario s = pipeline(1, 1, "1f1b", 1, kNoOverlap);
  Plan p = plan_with(s, {t});
  p.time.dp_reduce = Seconds(2);
  p.time.dp_buckets = 2;
  p.time.optimizer_step = Seconds(0.5);
  EXPECT_EQ(simulate_step(s, p, SimOptions{}).step_seconds.value, 6.0);
}

// Under layer recompute each layer's backward follows its own recompute, so the gradients come out over the
// recompute and the backward together (the planner's window, planner/data_parallel_time.cpp). f = 1,
// recompute 1, b = 2, r = 4 in k = 4 buckets: ready at 1 + (1/4 … 4/4) × 3 s = 1.75, 2.5, 3.25, 4 s; each
// bucket 1 s on the channel from 1.75 s: done at 5.75 s, + 0.5 optimizer = 6.25 s. (Over the backward alone:
// ready from 2.5 s, done at 6.5 s.)
TEST(Overlap, UnderRecomputeBucketsFollowRecomputeAndBackward) {
  StageTiming t = timing(1, 2);
  t.recompute = Seconds(1);
  EXPECT_EQ(one_micro_batch_step(t, 4, 4), 6.25);
}

// The planner against the simulator where FSDP reduces after every micro-batch and the reduces outrun the
// compute (Llama 3.1 8B, tp 8 · pp 4 · dp 16 on H200, 32 micro-batches of one 2,048-token sequence: 24 ms of
// reduce per micro-batch against 15 ms of compute). Under 1F1B a micro-batch's reduce hides behind the next
// micro-batch's forward and backward; GPipe runs every forward first, so only the backwards after it are
// left (planner/data_parallel_time.cpp). Before that rule the planner was 20.9 % short of the simulator
// under GPipe.
// A Llama 3.1 8B layout with tp 8 and sequence parallelism under `schedule`: the planner's exposed
// data-parallel time, and the simulated over the planned step less one.
struct PlannedAndSimulated {
  double exposed_dp = 0;
  double difference = 0;
};
PlannedAndSimulated llama8b_tp8(const std::string& cluster_and_training, const std::string& layout,
                                const char* schedule) {
  const Scenario s = test::scenario("model: llama3.1-8b\n" + cluster_and_training + "parallel: {tp: 8, " + layout +
                                    ", recompute: none, sequence_parallel: true, schedule: " + schedule + "}\n");
  const Plan p = make_plan(s, profile_for(s));
  const SimResult r = simulate_step(s, p, SimOptions{});
  return {p.time.exposed.dp.value, r.step_seconds.value / r.analytic_step_seconds.value - 1};
}

// An overlapped reduce after every micro-batch (not FSDP's pipelined default, which syncs once: written out).
TEST(Overlap, PlannerFollowsTheSimulatorForMicroBatchReduces) {
  for (const char* schedule : {"gpipe", "1f1b"}) {
    const PlannedAndSimulated r = llama8b_tp8(
        "cluster: {preset: hgx-h200, nodes: 64}\n"
        "training: {framework: fsdp, sequence_length: 2048, micro_batch: 1, global_batch: 512, "
        "gradient_sync: every_micro_batch}\n",
        "pp: 4, dp: 16, zero: 0, overlap: {grad_reduce: true}", schedule);
    EXPECT_GT(r.exposed_dp, 0.15) << schedule;  // the regime: the reduces outrun the compute (0.20 s exposed)
    EXPECT_NEAR(r.difference, 0.0, 0.01) << schedule;
  }
}

// ZeRO-1's parameter all-gather overlaps the first forward pass, its exposed TP collective included (one
// stage, one micro-batch: f = 1 with comm-F 0.5, b = 2, gather 3 s in 2 buckets, optimizer 0.5). The first
// bucket gates the forward ([0, 1.5], F [1.5, 2.5], comm-F [2.5, 3]); the second ends at 3, so the backward
// runs [3, 5]: 5.5 s, the planner's 3.5 + (3 − 1.5) + 0.5. (Had comm-F waited for the last bucket: 6 s.)
TEST(Overlap, ParameterGatherOverlapsTheWholeFirstForwardPass) {
  std::vector<std::string> sets = kOverlap;
  sets.push_back("parallel.zero=1");
  const Scenario s = pipeline(1, 1, "1f1b", 1, sets);
  StageTiming t = timing(1, 2);
  t.comm_forward = Seconds(0.5);
  Plan p = plan_with(s, {t});
  p.time.dp_gather = Seconds(3);
  p.time.dp_buckets = 2;
  p.time.optimizer_step = Seconds(0.5);
  EXPECT_EQ(simulate_step(s, p, SimOptions{}).step_seconds.value, 5.5);
}

// Under the interleaved schedule each model chunk's forward waits for its own buckets of the parameter gather,
// chained in forward order (Megatron-Core's forward pre-hook waits for a bucket and dispatches the next): a
// chunk's buckets after the first wait for its first forward to start, its first for the chunk before's last.
// p = 2, v = 2, m = 2, per stage f = 2 (1 a chunk), b = 2, gather 8 s in 4 buckets (2 a chunk, 2 s each), no
// hop, reduce or optimizer. By hand: stage 0's link [0, 2], [2, 4] (chunk 0), [4, 6], [6, 8] (chunk 1); its
// F c0 mb0 [2, 3], F c0 mb1 waits for chunk 0's last bucket [4, 5], F c1 mb0 for chunk 1's first [6, 7],
// F c1 mb1 for its last [8, 9]. Stage 1: F c0 mb0 [3, 4] (its input at 3), so its chunk 0's second bucket
// [3, 5] and chunk 1's [5, 7], [7, 9]; F c0 mb1 [5, 6], F c1 mb0 [7, 8], B c1 mb0 waits for the last bucket
// [9, 10], F c1 mb1 [10, 11], B c1 mb1 [11, 12], B c0 [12, 13], [13, 14]; stage 0's backwards B c1 [10, 11],
// [12, 13], B c0 [13, 14], [14, 15]. Step 15 s. Before 2026-12-01 chunk 0's second forward waited for the
// whole gather (chunk 1's too) and stage 1's gather ran ahead of its first forward: 17 s.
TEST(Overlap, EachChunksForwardWaitsForItsOwnGatherBuckets) {
  std::vector<std::string> sets = kOverlap;
  sets.push_back("parallel.zero=1");
  const Scenario s = pipeline(2, 2, "interleaved", 2, sets);
  Plan p = plan_with(s, uniform(2, timing(2, 2)));
  p.time.dp_gather = Seconds(8);
  p.time.dp_buckets = 4;
  EXPECT_EQ(simulate_step(s, p, SimOptions{}).step_seconds.value, 15.0);
}

// The same on a whole scenario against the planner, which charges the gather less one forward pass (the chain's
// bound, planner/data_parallel_time.cpp): Llama 3.1 8B, pp 2 x dp 16 on four nodes at 100 Gbit/s, ZeRO-1
// with the interleaved schedule, 16 micro-batches. The simulator was 4.7 % (vpp 4) and 2.6 % (vpp 2) over the
// planner; now 1.1 % and 0.1 %.
TEST(Overlap, PlannerFollowsTheSimulatorForChunkedGathers) {
  for (int vpp : {2, 4}) {
    const Scenario s = test::scenario(
        "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 4, inter_node: {bandwidth: 100 Gbit/s}}\n"
        "training: {framework: megatron, sequence_length: 4096, global_batch: 64, micro_batch: 1}\n"
        "parallel: {tp: 1, pp: 2, dp: 16, schedule: interleaved, vpp: " + std::to_string(vpp) +
        ", zero: 1, recompute: none, overlap: {param_gather: true, grad_reduce: true}}\n");
    EXPECT_NEAR(simtest::simulated_over_planned(s), 1.0, 0.02) << vpp;
  }
}

// ZB-H1 splits the weight gradients off into W, so the last micro-batch's gradients come out over W alone
// and the reduce hides behind W, not B + W (planner/data_parallel_time.cpp). Llama 3.1 8B, tp 8 · pp 2 · dp 4
// on H100, 8 micro-batches of 2: the planner was 13.6 % under the simulator with the B + W window.
TEST(Overlap, PlannerFollowsTheSimulatorUnderZbH1) {
  const std::string cluster = "cluster: {preset: dgx-h100, nodes: 8}\ntraining: {sequence_length: 2048, micro_batch: 2, global_batch: 16}\n";
  const PlannedAndSimulated zb = llama8b_tp8(cluster, "pp: 2, dp: 4, zero: 0", "zb-h1");
  const PlannedAndSimulated one = llama8b_tp8(cluster, "pp: 2, dp: 4, zero: 0", "1f1b");
  EXPECT_NEAR(zb.difference, 0.0, 0.02);
  EXPECT_NEAR(one.difference, 0.0, 0.02);
  EXPECT_GT(zb.exposed_dp, one.exposed_dp + 0.01);  // W hides less of the reduce than the whole backward does
}

}  // namespace
}  // namespace tp
