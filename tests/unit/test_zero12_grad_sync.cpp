// Data-parallel gradient sync below ZeRO-3, by framework (planner/data_parallel_time.cpp; framework rules
// reduces_every_micro_batch, grad_reduce_overlapped, param_gather_overlapped; docs/model.md §15).
// Oracles by hand from the framework's source:
//  - DeepSpeed: overlap_comm defaults to stage == 3 (runtime/zero/config.py, overlap_comm_valid), so at
//    stages 0-2 the reduce runs on the compute stream: exposed in full. Stage 2 partitions the gradients and
//    reduces after every micro-batch (engine.py allreduce_gradients: "ZeRO stage >= 2 communicates during
//    non gradient accumulation boundaries as well"); stage 1 once, at the accumulation boundary; and
//    optimizer.step() all-gathers the updated partitions before it returns (stage_1_and_2.py step):
//      stage 2: exposed dp = m x r + g        stage 1: exposed dp = r + g
//    with r the one-pass reduce and g the gather the plan reports (their bytes and rates: tested elsewhere).
//  - overlap asked for (parallel.overlap), one bucket (memory.comm_bucket above the gradient bytes): each
//    micro-batch's reduce starts when its backward ends and runs while the next micro-batches compute; the
//    channel owes m x r against (m - 1) x (f + b) of compute after the first one:
//      exposed dp = max(r, m x r - (m - 1)(f + b)) + max(0, g - f)
//  - Megatron's distributed optimizer reduces once per step, overlapped (unchanged by the framework rules);
//    Megatron-FSDP at zero 2 and 3 (optim_grads, optim_grads_params) in every backward (megatron_fsdp.py:
//    grad_reduce_every_bprop).
//  - training.gradient_sync, the loop's choice under pytorch and fsdp: DDP synchronised every micro-batch copies
//    its buckets in and out m times instead of once (one sync's copies = the dp 2 plan's optimizer part less
//    the dp 1 plan's at m = 1); FSDP with the sync on the last micro-batch only holds the whole gradients in the
//    gathered dtype, P x 2 B, where the sharded fp32 ones are P x 4 / 16 B (P the stage's parameters).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "estimate.h"
#include "framework_rules.h"
#include "hardware_profile.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// Llama 2 7B over two DGX H100 nodes: dp 16, four micro-batches of one 2,048-token sequence per replica.
Scenario zero_scenario(const char* framework, int zero, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> sets = {std::string("training.framework=") + framework, "parallel.zero=" + std::to_string(zero)};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return test::scenario(
      "model: llama2-7b\n"
      "cluster: {preset: dgx-h100, nodes: 2}\n"
      "training: {sequence_length: 2048, global_batch: 64, micro_batch: 1, precision: bf16}\n"
      "parallel: {tp: 1, pp: 1, recompute: none}\n",
      sets);
}

StepTime time_of(const Scenario& s) { return make_plan(s, profile_for(s)).time; }

TEST(Zero12GradSync, DeepspeedDefaultsExposeEveryReduceAndTheGather) {
  const StepTime z2 = time_of(zero_scenario("deepspeed", 2));
  ASSERT_GT(z2.dp_reduce.value, 0.0);
  ASSERT_GT(z2.dp_gather.value, 0.0);
  EXPECT_NEAR(z2.exposed.dp.value, 4 * z2.dp_reduce.value + z2.dp_gather.value, 1e-12);
  const StepTime z1 = time_of(zero_scenario("deepspeed", 1));
  EXPECT_NEAR(z1.exposed.dp.value, z1.dp_reduce.value + z1.dp_gather.value, 1e-12);
  // ZeRO-2 reduces the same bytes as ZeRO-1 per pass, three passes more per step; their passes over the
  // gradients differ (ZeRO-1: autograd's adds into whole gradients; ZeRO-2: the reduce-bucket copies and adds
  // into the partition), counted in the optimizer time (test_gradient_accumulation.cpp).
  EXPECT_NEAR(z2.dp_reduce.value, z1.dp_reduce.value, 1e-12);
  EXPECT_NE(z2.optimizer.value, z1.optimizer.value);
  EXPECT_NEAR(z2.step.value - z1.step.value, 3 * z1.dp_reduce.value + (z2.optimizer.value - z1.optimizer.value),
              1e-3 * z1.step.value);
}

// A reduce in one bucket over a link that keeps up (400 Gbit/s) and one that falls behind (4 Gbit/s), m = 4.
// By hand, from the plan's own f, b, r and g: DeepSpeed with overlap asked for still synchronizes at the end
// of every backward (stage_1_and_2.py independent_gradient_partition_epilogue: FrameworkRules::
// waits_for_reduce_after_backward), so each pass's reduce, which starts when its one bucket is full at the
// backward's end, is exposed: 4 r, plus the gather beyond the first forward. Megatron-FSDP (zero 2) leaves
// the reduce-scatters running into the next micro-batch: the channel owes 4 r from the first backward's
// end against the 3 (f + b) of compute after it, at least the last r.
std::vector<std::string> one_bucket_over(const char* link) {
  return {"memory.comm_bucket=1 TB", "parallel.overlap={grad_reduce: true, param_gather: true}",
          std::string("cluster.inter_node={bandwidth: ") + link + ", nics_per_node: 8}"};
}

TEST(Zero12GradSync, DeepspeedOverlapAskedForStillEndsEveryBackwardWithItsReduce) {
  for (const char* link : {"400 Gbit/s", "4 Gbit/s"}) {
    const StepTime t = time_of(zero_scenario("deepspeed", 2, one_bucket_over(link)));
    const double r = t.dp_reduce.value, g = t.dp_gather.value, f = t.forward_per_micro_batch.value;
    const double expected = 4 * r + std::max(0.0, g - f);
    EXPECT_NEAR(t.exposed.dp.value, expected, 1e-9 * expected) << link;
  }
}

TEST(Zero12GradSync, MegatronFsdpReducesHideBehindTheNextMicroBatchesUntilTheLinkFallsBehind) {
  for (const char* link : {"400 Gbit/s", "4 Gbit/s"}) {
    const StepTime t = time_of(zero_scenario("megatron", 2, one_bucket_over(link)));
    const double r = t.dp_reduce.value, g = t.dp_gather.value;
    const double f = t.forward_per_micro_batch.value, b = t.backward_per_micro_batch.value;
    const double expected = std::max(r, 4 * r - 3 * (f + b)) + std::max(0.0, g - f);
    EXPECT_NEAR(t.exposed.dp.value, expected, 1e-9 * expected) << link;
    if (std::string(link) == "4 Gbit/s") {
      EXPECT_GT(4 * r - 3 * (f + b), r);  // the backlog branch is the one tested
    }
  }
}

// The same Megatron-FSDP backlog with the pipeline's sends on the reduces' link (tp 8 fills a node, so both the
// data-parallel pair and the two stages sit on different nodes, behind one NIC each: StepTime::
// dp_shares_pipeline_link). A link carries one transfer's bytes at a time: each later micro-batch's send
// (1F1B on pp 2: one boundary tensor per micro-batch on either stage, of p2p_hop seconds) takes its hop from
// the channel, and the stage's path between two reduces is f + b plus the pipeline's steady wait w, the part
// of the exposed pipeline time beyond the fill's 2 (p - 1) hops, spread over the m - 1 later micro-batches:
//   exposed dp = max(r, m r - (m - 1)(f + b + w - hop)) + max(0, g - f)
// (the planner had m r - (m - 1)(f + b): the simulator, which shares the link, was up to +24 % over it,
// docs/model.md §19 (N8)).
TEST(Zero12GradSync, PipelineSendsOnTheReducesLinkTakeTheirTurnOnIt) {
  const Scenario s = test::scenario(
      "model: llama2-7b\n"
      "cluster: {preset: dgx-h100, nodes: 4, inter_node: {bandwidth: 25 Gbit/s, nics_per_node: 1}}\n"
      "training: {framework: megatron, sequence_length: 2048, global_batch: 16, micro_batch: 1, precision: bf16}\n"
      "parallel: {tp: 8, pp: 2, zero: 2, schedule: 1f1b, recompute: none}\n"
      "memory: {comm_bucket: 1 TB}\n");
  const StepTime t = time_of(s);
  ASSERT_TRUE(t.dp_shares_pipeline_link);
  const double m = 8, r = t.dp_reduce.value, g = t.dp_gather.value, hop = t.p2p_hop.value;
  const double f = t.forward_per_micro_batch.value, b = t.backward_per_micro_batch.value;
  const double w = (t.exposed.pp.value - 2 * hop) / (m - 1);
  ASSERT_GT(hop, 0.0);
  EXPECT_GE(w, -1e-12);
  EXPECT_GT(m * r - (m - 1) * (f + b + w - hop), r);  // the backlog branch is the one tested
  const double expected = std::max(r, m * r - (m - 1) * (f + b + w - hop)) + std::max(0.0, g - f);
  EXPECT_NEAR(t.exposed.dp.value, expected, 1e-9 * expected);
}

// FSDP under pipeline parallelism, left to its defaults, is torchtitan's layout (torch.distributed.pipelining
// stage.py backward_maybe_with_nosync: one sync after the last backward, not overlapped; parallelize.py:
// reshard_after_forward off, zero 2): the same plan as those keys written out, whole gradients held meanwhile.
// Until 2026-12 it reduced every micro-batch, overlapped, holding only the shards (~6 GiB less on Llama 3.1 8B).
TEST(Zero12GradSync, FsdpUnderPipelineParallelismIsTorchtitansLayout) {
  const std::string base =
      "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {framework: fsdp, sequence_length: 8192, global_batch: 16, micro_batch: 1}\n"
      "parallel: {tp: 2, pp: 2, recompute: full}\n";
  const Scenario unsaid = test::scenario(base);
  const Scenario written = test::scenario(
      base, {"training.gradient_sync=last_micro_batch", "parallel.overlap={grad_reduce: false}", "parallel.zero=2"});
  EXPECT_EQ(unsaid.parallel.zero, 2);
  const FrameworkRules& fsdp = framework_rules(Framework::fsdp);
  EXPECT_FALSE(reduces_every_micro_batch(fsdp, unsaid.training, unsaid.parallel));
  EXPECT_FALSE(grad_reduce_overlapped(fsdp, unsaid.parallel));
  const Plan a = make_plan(unsaid, profile_for(unsaid)), b = make_plan(written, profile_for(written));
  EXPECT_DOUBLE_EQ(a.time.step.value, b.time.step.value);
  EXPECT_DOUBLE_EQ(a.estimate.memory.total.value, b.estimate.memory.total.value);
  // Without pipelining FSDP keeps its every-micro-batch, overlapped reduce.
  const Scenario flat = test::scenario(base, {"parallel.pp=1"});
  EXPECT_TRUE(reduces_every_micro_batch(fsdp, flat.training, flat.parallel));
  EXPECT_TRUE(grad_reduce_overlapped(fsdp, flat.parallel));
}

TEST(Zero12GradSync, FrameworkDefaultsAndTheScenarioSetting) {
  const FrameworkRules& ds = framework_rules(Framework::deepspeed);
  const FrameworkRules& mg = framework_rules(Framework::megatron);
  const FrameworkRules& fsdp = framework_rules(Framework::fsdp);
  const FrameworkRules& torch = framework_rules(Framework::pytorch);
  for (int zero : {0, 1, 2, 3}) {
    const Scenario sc = zero_scenario("deepspeed", zero);
    const ParallelSpec& p = sc.parallel;
    const TrainingSpec& t = sc.training;
    EXPECT_EQ(grad_reduce_overlapped(ds, p), zero == 3) << zero;
    EXPECT_EQ(param_gather_overlapped(ds, p), zero == 3) << zero;
    EXPECT_EQ(reduces_every_micro_batch(ds, t, p), zero >= 2) << zero;
    EXPECT_TRUE(grad_reduce_overlapped(mg, p));
    EXPECT_EQ(reduces_every_micro_batch(mg, t, p), zero >= 2) << zero;
    EXPECT_TRUE(reduces_every_micro_batch(fsdp, t, p));  // no no_sync unless the loop asks for it
    EXPECT_FALSE(reduces_every_micro_batch(torch, t, p));  // DDP under no_sync, as Accelerate and Trainer run it
  }
  const ParallelSpec asked = zero_scenario("deepspeed", 2, {"parallel.overlap={grad_reduce: true}"}).parallel;
  EXPECT_TRUE(grad_reduce_overlapped(ds, asked));
  EXPECT_FALSE(param_gather_overlapped(ds, asked));
  const ParallelSpec off = zero_scenario("megatron", 1, {"parallel.overlap={grad_reduce: false}"}).parallel;
  EXPECT_FALSE(grad_reduce_overlapped(mg, off));
}

TEST(Zero12GradSync, MegatronStillReducesOnceOverlapped) {
  const StepTime t = time_of(zero_scenario("megatron", 1, {"memory.comm_bucket=1 TB"}));
  const double r = t.dp_reduce.value, g = t.dp_gather.value;
  const double f = t.forward_per_micro_batch.value, b = t.backward_per_micro_batch.value;
  EXPECT_NEAR(t.exposed.dp.value, std::max(r, r - b) + std::max(0.0, g - f), 1e-12);
}

TEST(Zero12GradSync, DdpSynchronisedEveryMicroBatchCopiesItsBucketsEachTime) {
  const auto ddp = [](int dp, int m, const char* sync) {
    return test::scenario("model: llama2-7b\n"
                          "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: " + std::to_string(dp) + "}\n"
                          "training: {framework: pytorch, sequence_length: 2048, micro_batch: 1, precision: bf16, global_batch: " +
                              std::to_string(dp * m) + ", gradient_sync: " + sync + "}\n"
                          "parallel: {tp: 1, pp: 1, zero: 0, recompute: none}\n");
  };
  const double one_sync = time_of(ddp(2, 1, "every_micro_batch")).optimizer_step.value - time_of(ddp(1, 1, "every_micro_batch")).optimizer_step.value;
  ASSERT_GT(one_sync, 0.0);
  const StepTime every = time_of(ddp(2, 4, "every_micro_batch")), last = time_of(ddp(2, 4, "last_micro_batch"));
  EXPECT_NEAR(every.optimizer_step.value - last.optimizer_step.value, 3 * one_sync, 1e-12);
  // Four all-reduces instead of one, and DDP's Reducer::finalize_backward waits for each: the last bucket
  // exposed at the end of every backward, four times the traffic hidden.
  EXPECT_NEAR(every.exposed.dp.value, 4 * last.exposed.dp.value, 1e-12);
  EXPECT_GT(every.overlap_contention.value, 3 * last.overlap_contention.value);
}

// FSDP1 accumulates the whole gradients in the gathered bf16 dtype; FSDP2 in the reduce dtype, here fp32
// (_fsdp_param.py to_accumulated_grad_if_needed: grad.to(reduce_dtype)).
TEST(Zero12GradSync, FsdpWithoutSyncHoldsWholeGradientsInItsAccumulationDtype) {
  const auto fsdp = [](const char* sync, const char* version = "1") {
    return zero_scenario("fsdp", 3, {std::string("training.gradient_sync=") + sync, "training.grad_precision=fp32",
                                     std::string("memory.fsdp_version=") + version});
  };
  EXPECT_NEAR(estimate(fsdp("last_micro_batch", "2")).memory.gradients.value,
              estimate(fsdp("last_micro_batch")).memory.gradients.value * 2, 1e-3);
  const Plan every = make_plan(fsdp("every_micro_batch"), profile_for(fsdp("every_micro_batch")));
  const Plan last = make_plan(fsdp("last_micro_batch"), profile_for(fsdp("last_micro_batch")));
  const double params = every.estimate.memory.parameters;
  ASSERT_GT(params, 6e9);
  EXPECT_NEAR(every.estimate.memory.gradients.value, params * 4 / 16, 1e-3 * params);
  EXPECT_NEAR(last.estimate.memory.gradients.value, params * 2, 1e-3 * params);
  // One reduce-scatter per step instead of four: less data-parallel traffic to hide.
  EXPECT_LT(last.time.exposed.dp.value + last.time.overlap_contention.value,
            every.time.exposed.dp.value + every.time.overlap_contention.value);
}

}  // namespace
}  // namespace tp
