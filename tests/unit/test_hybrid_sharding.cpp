// Hybrid sharding, parallel.dp_shard (docs/model.md §15 "Hybrid sharding"; planner/op_graph_comm.cpp
// add_step_collectives, planner/comm_time.cpp comm_layout). Oracles by hand:
//  - groups: the sharding group is the innermost dp_shard x cp ranks of the gradient group (stride tp), the
//    replicas of one shard lie dp_shard x cp x tp ranks apart (FSDP's HYBRID_SHARD: a group per node);
//  - bytes: ZeRO's states on one GPU divide by dp_shard x cp instead of dp x cp (ZeRO's table, §10);
//  - time: the reduce-scatter runs in the sharding group and its shard, g x P / (dp_shard x cp) bytes, is
//    then all-reduced over the replicas (Megatron-Core param_and_grad_buffer.py start_grad_sync with
//    num_distributed_optimizer_instances > 1; FSDP1 _reduce_grad over _inter_node_pg), the α-β costs of
//    docs/model.md §14 written out below with the cluster's link rates;
//  - physics: ZeRO-3 gathers the weights two or three times per micro-batch; inside a node they cross
//    NVLink instead of the NICs, so at 1,536 GPUs the exposed data-parallel time falls, while the
//    sharded states grow 1,536 / 8 = 192 times.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "collectives.h"
#include "fixes.h"
#include "comm_time.h"
#include "hardware_profile.h"
#include "mesh.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// Llama 2 7B on four DGX A100 nodes (dp 32 at tp 1), Megatron's distributed optimizer with fp32 gradients.
Scenario megatron_scenario(const std::vector<std::string>& sets) {
  return test::scenario(
      "model: llama2-7b\n"
      "cluster: {preset: dgx-a100, nodes: 4}\n"
      "training: {framework: megatron, sequence_length: 4096, global_batch: 128, micro_batch: 1, precision: bf16, "
      "grad_precision: fp32}\n"
      "parallel: {tp: 1, pp: 1, zero: 1, recompute: none}\n",
      sets);
}

void expect_group(const GroupShape& g, int size, int ranks_per_node, int nodes, const char* what) {
  EXPECT_EQ(g.size, size) << what;
  EXPECT_EQ(g.ranks_per_node, ranks_per_node) << what;
  EXPECT_EQ(g.nodes, nodes) << what;
}

TEST(HybridSharding, GroupsByHand) {
  const Scenario a = megatron_scenario({"parallel.dp_shard=8"});
  const CommLayout la = comm_layout(a, profile_for(a));
  expect_group(la.group(CommGroup::dp), 32, 8, 4, "dp 32");
  expect_group(la.group(CommGroup::dp_shard), 8, 8, 1, "a node's 8 ranks");
  expect_group(la.group(CommGroup::dp_replica), 4, 1, 4, "one rank per node");
  // tp 2 inside: dp 16, groups of 4 data-parallel ranks = 8 GPUs, one node; replicas 8 GPUs apart.
  const Scenario b = megatron_scenario({"parallel.tp=2", "parallel.dp_shard=4"});
  const CommLayout lb = comm_layout(b, profile_for(b));
  expect_group(lb.group(CommGroup::dp_shard), 4, 4, 1, "tp 2: 4 data-parallel ranks of a node");
  expect_group(lb.group(CommGroup::dp_replica), 4, 1, 4, "tp 2: replicas on 4 nodes");
  // cp 2 inside the gradient group: groups of 2 x 2 ranks, two groups per node, replicas 4 ranks apart.
  const Scenario c = megatron_scenario({"parallel.cp=2", "parallel.dp_shard=2"});
  const CommLayout lc = comm_layout(c, profile_for(c));
  expect_group(lc.group(CommGroup::dp_shard), 4, 4, 1, "cp 2 x dp_shard 2");
  expect_group(lc.group(CommGroup::dp_replica), 8, 2, 4, "8 replicas, 2 per node");
  // Unset: the sharding group is the gradient group, one replica.
  const Scenario d = megatron_scenario({});
  const CommLayout ld = comm_layout(d, profile_for(d));
  expect_group(ld.group(CommGroup::dp_shard), 32, 8, 4, "full sharding");
  expect_group(ld.group(CommGroup::dp_replica), 1, 1, 1, "no replicas");
}

TEST(HybridSharding, StatesShardOverTheGroup) {
  // Megatron's distributed optimizer: fp32 master (4 B) and Adam's two fp32 moments (8 B) per parameter
  // are sharded from ZeRO-1 on: 12 x P / 8 in groups of 8, 12 x P / 32 over the whole of dp.
  const Plan hybrid = make_plan(megatron_scenario({"parallel.dp_shard=8"}), profile_for(megatron_scenario({})));
  const Plan full = make_plan(megatron_scenario({}), profile_for(megatron_scenario({})));
  const MemoryBreakdown& h = hybrid.estimate.stages[0];
  const MemoryBreakdown& f = full.estimate.stages[0];
  const double p = h.parameters;
  EXPECT_NEAR((h.master_weights + h.optimizer).value, 12.0 * p / 8.0, 1e-6 * p);
  EXPECT_NEAR((f.master_weights + f.optimizer).value, 12.0 * p / 32.0, 1e-6 * p);
  EXPECT_DOUBLE_EQ(h.weights.value, f.weights.value);      // 16-bit weights: whole below ZeRO-3
  EXPECT_DOUBLE_EQ(h.gradients.value, f.gradients.value);  // fp32 gradients: whole below ZeRO-2
}

TEST(HybridSharding, ReduceIsTheGroupReduceScatterThenTheReplicaAllReduce) {
  const Scenario s = megatron_scenario({"parallel.dp_shard=8"});
  const HardwareProfile hw = profile_for(s);
  const Plan plan = make_plan(s, hw);
  const Topology& t = comm_layout(s, hw).topo;
  const double ai = t.intra.latency.value, bi = intra_bandwidth(t).value;
  const double ae = t.inter.latency.value, be = inter_bandwidth(t).value;
  const double grads = plan.estimate.stages[0].parameters * 4.0;  // fp32 gradients, one call per step
  // Ring reduce-scatter over the node's 8 ranks: 7 steps and 7/8 of the bytes through NVLink.
  const double reduce_scatter = 7 * ai + 7.0 / 8.0 * grads / bi;
  // All-reduce of the 1/8 shard over 4 replicas, one per node: NCCL's ring or tree, whichever is faster.
  const double shard = grads / 8.0;
  const double ring = 2 * 3 * ae + 2 * 3.0 / 4.0 * shard / be;
  const double tree = 2 * 2 * ae + 2 * shard / be;
  EXPECT_NEAR(plan.time.dp_reduce.value, reduce_scatter + std::min(ring, tree), 1e-9);
  // The all-gather of the updated 16-bit weights stays in the node.
  const double gather = 7 * ai + 7.0 / 8.0 * plan.estimate.stages[0].parameters * 2.0 / bi;
  EXPECT_NEAR(plan.time.dp_gather.value, gather, 1e-9);
}

TEST(HybridSharding, FsdpPipelinesTheReplicaAllReduceBehindTheNextReduceScatter) {
  // FSDP all-reduces each unit's shard on a stream of its own (FSDP1 _reduce_grad, _all_reduce_stream):
  // over the 32 whole-layer units the channel takes max(R, A) + min(R, A) / 32, R the units' ring
  // reduce-scatters in the node, A their shards' all-reduces over the 4 replicas.
  const Scenario s = megatron_scenario({"training.framework=fsdp", "parallel.zero=3", "parallel.dp_shard=8"});
  const HardwareProfile hw = profile_for(s);
  const Plan plan = make_plan(s, hw);
  const Topology& t = comm_layout(s, hw).topo;
  const double ai = t.intra.latency.value, bi = intra_bandwidth(t).value;
  const double ae = t.inter.latency.value, be = inter_bandwidth(t).value;
  const double n = 32;
  const double unit = plan.estimate.stages[0].parameters * 4.0 / n;  // fp32 gradients of one layer's unit
  const double scatter = n * (7 * ai + 7.0 / 8.0 * unit / bi);
  const double shard = unit / 8.0;
  const double replica = n * std::min(2 * 3 * ae + 2 * 3.0 / 4.0 * shard / be, 2 * 2 * ae + 2 * shard / be);
  // FSDP reduce-scatters after every micro-batch: dp_reduce is one pass.
  EXPECT_NEAR(plan.time.dp_reduce.value, std::max(scatter, replica) + std::min(scatter, replica) / n, 1e-9);
}

// DeepSpeed's MiCS reduce-scatters in the sharding group every micro-batch but all-reduces over the replicas
// once, at the accumulation boundary (runtime/zero/mics.py, allreduce_mics_shard_grads returns unless
// is_gradient_accumulation_boundary): one pass carries R + A/m, so with R and A fixed by the layout,
// dp_reduce(1) - dp_reduce(2) = A/2 and dp_reduce(8) = dp_reduce(1) - 7A/8 (algebra on the rule). Before, A ran
// every micro-batch: dp_reduce did not depend on m and the exposed data-parallel time grew with m
// (the 70B HSDP example at 50 Gbit/s: 3.7 / 7.3 / 14.6 / 29.2 s at 1 / 2 / 4 / 8 micro-batches).
TEST(HybridSharding, DeepSpeedMicsAllReducesOverTheReplicasOncePerStep) {
  auto per_pass = [](int micro_batches) {
    const Scenario s = megatron_scenario({"training.framework=deepspeed", "parallel.zero=3", "parallel.dp_shard=8",
                                          "training.global_batch=" + std::to_string(32 * micro_batches)});
    return make_plan(s, profile_for(s)).time.dp_reduce.value;
  };
  const double one = per_pass(1), two = per_pass(2), eight = per_pass(8);
  const double replica = 2 * (one - two);
  ASSERT_GT(replica, 0.0);
  EXPECT_NEAR(eight, one - 7.0 / 8.0 * replica, 1e-9 * one);
}

TEST(HybridSharding, TheWholeGroupIsFullSharding) {
  const Scenario unset = megatron_scenario({});
  const Scenario whole = megatron_scenario({"parallel.dp_shard=32"});
  const Plan a = make_plan(unset, profile_for(unset));
  const Plan b = make_plan(whole, profile_for(whole));
  EXPECT_DOUBLE_EQ(a.time.step.value, b.time.step.value);
  EXPECT_DOUBLE_EQ(a.time.dp_reduce.value, b.time.dp_reduce.value);
  EXPECT_DOUBLE_EQ(a.estimate.stages[0].total.value, b.estimate.stages[0].total.value);
}

// llama2-70b under FSDP (ZeRO-3) on 1,536 GPUs of nodes of 8 x 200 Gb/s NICs, one micro-batch per GPU.
Plan fsdp_at_scale(const std::vector<std::string>& sets) {
  return test::plan(
      "model: llama2-70b\n"
      "cluster: {preset: dgx-h100, nodes: 192, inter_node: {bandwidth: 200 Gbit/s, latency: 14 us, nics_per_node: 8}}\n"
      "training: {framework: fsdp, sequence_length: 2048, global_batch: 1536, micro_batch: 1, precision: bf16}\n"
      "parallel: {tp: 1, pp: 1, zero: 3, recompute: none}\n",
      sets);
}

TEST(HybridSharding, Zero3GathersInTheNodeAtScale) {
  const Plan full = fsdp_at_scale({});
  const Plan hybrid = fsdp_at_scale({"parallel.dp_shard=8"});
  EXPECT_LT(hybrid.time.exposed.dp.value, full.time.exposed.dp.value);
  EXPECT_LT(hybrid.time.dp_gather.value, full.time.dp_gather.value);
  EXPECT_LT(hybrid.time.step.value, full.time.step.value);
  // Every sharded state (FSDP's fp32 parameter shard, Adam's moments, the gradient shard) on 8 ranks
  // instead of 1,536: 192 times the bytes.
  const auto states = [](const MemoryBreakdown& m) { return (m.weights + m.gradients + m.master_weights + m.optimizer).value; };
  EXPECT_GT(states(full.estimate.stages[0]), 0.0);
  EXPECT_NEAR(states(hybrid.estimate.stages[0]), 192.0 * states(full.estimate.stages[0]),
              1e-9 * states(hybrid.estimate.stages[0]));
}

// A sharding group too small for the states: the fixes offer the group twice as wide, first. Llama 2 70B
// under FSDP with full recompute keeps 12 B per parameter of sharded states (its fp32 parameter shard and
// two Adam moments): 69 B x 12 B / 8 ranks = 103 GB does not fit 80 GB; / 16 = 52 GB does, with room for
// the checkpointed activations.
TEST(HybridSharding, FixesWidenTheShardingGroup) {
  const std::vector<Fix> fixes = suggest_fixes(test::scenario(
      "model: llama2-70b\n"
      "cluster: {preset: dgx-h100, nodes: 192}\n"
      "training: {framework: fsdp, sequence_length: 2048, global_batch: 1536, micro_batch: 1, precision: bf16}\n"
      "parallel: {tp: 1, pp: 1, zero: 3, dp_shard: 8, recompute: full}\n"));
  ASSERT_FALSE(fixes.empty());
  EXPECT_EQ(fixes.front().change, "parallel.dp_shard: 16");
  EXPECT_LT(fixes.front().total.value, 80.0 * (1 << 30));
}

// A fix names every key it changes, so that writing it as given gives the layout it was checked with: more
// stages with ZeRO-3 given take ZeRO-2 (no framework pipelines ZeRO-3); more tp with sequence parallelism
// turned off turns it on (Megatron's MoE needs it). Until 2026-12 "parallel.pp: 2" alone was offered and,
// applied, refused. Oracle: each fix's keys set on the scenario load, and the plan's memory is the fix's.
TEST(HybridSharding, FixesNameEveryKeyTheyChange) {
  const std::vector<std::string> scenarios = {
      "model: llama2-13b\ncluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {framework: fsdp, sequence_length: 4096, global_batch: 64, micro_batch: 2}\n"
      "parallel: {tp: 2, pp: 1, zero: 3, dp_shard: 2, recompute: none}\n",
      "model: mixtral-8x7b\ncluster: {preset: dgx-h100, nodes: 2}\n"
      "training: {sequence_length: 4096, global_batch: 64, micro_batch: 1}\n"
      "parallel: {tp: 1, pp: 1, sequence_parallel: false, recompute: none}\n"};
  for (const std::string& yaml : scenarios) {
    const Scenario s = test::scenario(yaml);
    const std::vector<Fix> fixes = suggest_fixes(s, 8);
    ASSERT_FALSE(fixes.empty()) << yaml;
    for (const Fix& f : fixes) {
      std::vector<std::string> sets;
      std::stringstream keys(f.change);
      for (std::string kv; std::getline(keys, kv, ',');) {
        kv.erase(0, kv.find_first_not_of(' '));
        sets.push_back(kv.replace(kv.find(": "), 2, "="));
      }
      const Scenario fixed = test::scenario(yaml, sets);
      EXPECT_DOUBLE_EQ(estimate(fixed).memory.total.value, f.total.value) << f.change;
    }
  }
}

// parallel: auto offers each ZeRO >= 1 layout a second time sharded within the node, when dp spans more
// than a node: on 4 nodes of 8 GPUs, dp_shard = 8 / (tp x cp) for groups of at least 2 ranks; under
// DeepSpeed only at ZeRO-3.
TEST(HybridSharding, AutoLayoutsAlsoShardWithinTheNode) {
  const Scenario s = megatron_scenario({});
  const std::vector<LayoutChoice> all = auto_layouts(s);
  int hybrid = 0;
  for (const LayoutChoice& c : all) {
    if (c.dp_shard == 0) continue;
    ++hybrid;
    const int dp = 32 / (c.tp * c.pp * c.cp);
    EXPECT_GE(c.zero, 1);
    EXPECT_EQ(c.dp_shard, 8 / (c.tp * c.cp));
    EXPECT_GE(c.dp_shard, 2);
    EXPECT_LT(c.dp_shard, dp);
    LayoutChoice twin = c;
    twin.dp_shard = 0;
    const auto same = [&](const LayoutChoice& o) {
      return o.tp == twin.tp && o.pp == twin.pp && o.cp == twin.cp && o.vpp == twin.vpp && o.schedule == twin.schedule &&
             o.zero == twin.zero && o.recompute == twin.recompute && o.micro_batch == twin.micro_batch &&
             o.sequence_parallel == twin.sequence_parallel && o.dp_shard == 0;
    };
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), same)) << "a hybrid layout without its fully sharded twin";
  }
  EXPECT_GT(hybrid, 0);
  // DeepSpeed's one hybrid mode, MiCS, is ZeRO-3's: no hybrid layout below it.
  for (const LayoutChoice& c : auto_layouts(megatron_scenario({"training.framework=deepspeed"}))) {
    if (c.dp_shard > 0) {
      EXPECT_EQ(c.zero, 3);
    }
  }
}

}  // namespace
}  // namespace tp
