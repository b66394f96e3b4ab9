// Cluster topology and process-group layout for the collective cost model (planner/collectives.h).
// Oracles:
//   [DGX] scenarios/catalog/clusters.yaml dgx-h100 (DGX H100 datasheet): NVLink4 450 GB/s per GPU per
//         direction, 8 x 400 Gbit/s ConnectX-7 per node; latencies from NCCL tuning.cc hwLat (3.4 / 14 us).
//   Megatron's group order (docs/model.md §14): TP innermost, then CP, EP (inside DP), DP, PP outermost; a
//   group of size n and stride k has min(n, gpus_per_node / k) ranks per node when k < gpus_per_node, else 1,
//   worked out by hand in each case below.
#include <gtest/gtest.h>

#include <utility>

#include "catalog.h"
#include "collectives.h"
#include "comm_time.h"
#include "hardware_profile.h"
#include "test_support.h"

namespace tp {
namespace {

TEST(CollectiveTopology, FromDgxH100Cluster) {
  // [DGX]: 8 NICs x 400 Gbit/s (50 GB/s) for 8 GPUs -> 50 GB/s per GPU; NVLink 450 GB/s per GPU.
  ClusterSpec c;
  c.gpus_per_node = 8;
  c.nics_per_node = 8;
  c.intra_node = LinkSpec{ByteRate(450e9), Seconds(3.4e-6)};
  c.inter_node = LinkSpec{ByteRate(50e9), Seconds(14e-6)};
  const Topology t = make_topology(c, 0.8, 0.9, 2.0);
  EXPECT_EQ(t.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(t.intra.bandwidth.value, 450e9);
  EXPECT_DOUBLE_EQ(t.inter.bandwidth.value, 50e9);
  EXPECT_DOUBLE_EQ(t.inter.latency.value, 14e-6);
  EXPECT_DOUBLE_EQ(intra_bandwidth(t).value, 0.8 * 450e9);
  EXPECT_DOUBLE_EQ(inter_bandwidth(t).value, 0.9 * 50e9 / 2.0);  // oversubscription 2:1 halves it once
  // Fewer NICs than GPUs share them: 4 NICs for 8 GPUs -> 25 GB/s each.
  c.nics_per_node = 4;
  EXPECT_DOUBLE_EQ(make_topology(c).inter.bandwidth.value, 25e9);
  // Oversubscription below 1 is not a speed-up.
  EXPECT_DOUBLE_EQ(inter_bandwidth(make_topology(c, 1.0, 1.0, 0.5)).value, 25e9);
  // No intra_node link given: the GPU's PCIe link.
  c.intra_node.bandwidth = ByteRate(0);
  c.gpu.pcie = ByteRate(32e9);
  EXPECT_DOUBLE_EQ(make_topology(c).intra.bandwidth.value, 32e9);
}

TEST(CollectiveTopology, BuiltinDgxH100PresetUnits) {
  // clusters.yaml gives inter_node per NIC in Gbit/s; the per-GPU share must come out at 50 GB/s [DGX].
  const ClusterSpec& c = Catalog::builtin().cluster("dgx-h100", SourceLocation{"test", 0, 0}, "cluster");
  const Topology t = make_topology(c);
  EXPECT_NEAR(t.intra.bandwidth.value, 450e9, 1.0);
  EXPECT_NEAR(t.inter.bandwidth.value, 50e9, 1.0);
  EXPECT_NEAR(t.intra.latency.value, 3.4e-6, 1e-15);
  EXPECT_NEAR(t.inter.latency.value, 14e-6, 1e-15);
}

// {ranks_per_node, nodes} of group_shape(size, stride, gpus_per_node): one comparison shows both.
std::pair<int, int> ranks_per_node_and_nodes(int size, int stride, int gpus_per_node) {
  const GroupShape g = group_shape(size, stride, gpus_per_node);
  return {g.ranks_per_node, g.nodes};
}

TEST(CollectiveGroupShape, MegatronLayout) {
  // TP 8 innermost on 8-GPU nodes: the whole group on one node.
  EXPECT_EQ(ranks_per_node_and_nodes(8, 1, 8), std::make_pair(8, 1));
  // DP 16 outside TP 8: one rank per node, 16 nodes.
  EXPECT_EQ(ranks_per_node_and_nodes(16, 8, 8), std::make_pair(1, 16));
  // DP 4 outside TP 2: 8 / 2 = 4 DP ranks share a node.
  EXPECT_EQ(ranks_per_node_and_nodes(4, 2, 8), std::make_pair(4, 1));
  // DP 16 outside TP 2: 4 per node on 4 nodes.
  EXPECT_EQ(ranks_per_node_and_nodes(16, 2, 8), std::make_pair(4, 4));
  // A group smaller than the node: clamped to its size.
  EXPECT_EQ(ranks_per_node_and_nodes(2, 1, 8), std::make_pair(2, 1));
  // Stride larger than the node (PP outside TP 8 x DP 4).
  EXPECT_EQ(ranks_per_node_and_nodes(4, 32, 8), std::make_pair(1, 4));
}

// The groups the planner prices (comm_layout) on 128 GPUs: tp 2, cp 2, dp 8 with ep 4 folded over dp x cp,
// pp 4, on 8-GPU nodes. Ranks by hand: tp stride 1, cp stride 2, dp stride 4, pp stride 32; the gradient
// group dp x cp from the inner of the two (stride 2); the experts' ranks are ep adjacent ranks of it
// (Megatron-Core's expert rank generator, tp-ep-dp-pp with cp folded): stride 2, 4 on a node.
TEST(CollectiveGroupShape, CommLayoutFollowsMegatronOrder) {
  const Scenario s = test::scenario(
      "model: mixtral-8x7b\ncluster: {preset: dgx-h100, nodes: 16}\n"
      "training: {sequence_length: 4096, global_batch: 256, micro_batch: 1}\n"
      "parallel: {tp: 2, cp: 2, dp: 8, ep: 4, pp: 4}\n");
  const CommLayout l = comm_layout(s, profile_for(s));
  EXPECT_EQ(l.group(CommGroup::tp).ranks_per_node, 2);
  EXPECT_EQ(l.group(CommGroup::cp).ranks_per_node, 2);  // stride 2: 8/2 = 4, clamped to cp = 2
  EXPECT_EQ(l.group(CommGroup::ep).ranks_per_node, 4);  // stride 2: 8/2 = 4 = ep
  EXPECT_EQ(l.group(CommGroup::ep).nodes, 1);
  EXPECT_EQ(l.group(CommGroup::dp).size, 16);           // dp x cp, stride 2: 4 a node
  EXPECT_EQ(l.group(CommGroup::dp).ranks_per_node, 4);
  EXPECT_EQ(l.group(CommGroup::dp).nodes, 4);
  EXPECT_EQ(l.group(CommGroup::pp).ranks_per_node, 1);  // stride 32
  // An expert's replicas are the gradient group's ranks ep apart: 16 / 4 = 4 of them, stride 2 x 4 = 8, one
  // a node (Megatron-Core's expert data-parallel group).
  EXPECT_EQ(l.expert_dp.size, 4);
  EXPECT_EQ(l.expert_dp.ranks_per_node, 1);
  EXPECT_EQ(l.expert_dp.nodes, 4);
}

// Found by black-box testing, 2026-12-01: the experts' gradients were reduced over the whole dp x cp group
// (8 ranks a node, the hierarchical ring's 1/8 of the bytes on the NICs), where only the expert's replicas
// hold it: 4 nodes x 8 GPUs, tp 1, ep 8 leaves one replica a node, so every byte of the GPU's expert gradients
// crosses its NIC. Oracle by hand: a ring reduce-scatter over 4 ranks moves 3/4 of the bytes S over a
// 10 Gbit/s NIC (1.25 GB/s), at least 0.75 S / 1.25 GB/s. Before: 1/8 of that (exposed dp 1.62 s, now 14.7 s).
TEST(CollectiveGroupShape, ExpertGradientsAreReducedOverTheExpertsReplicas) {
  const std::string yaml =
      "model: mixtral-8x7b\ncluster: {preset: dgx-h100, nodes: 4, inter_node: {bandwidth: 10 Gbit/s}}\n"
      "training: {sequence_length: 4096, global_batch: 256, micro_batch: 1}\n"
      "parallel: {tp: 1, pp: 1, ep: 8, zero: 1, recompute: full}\n";
  const Plan plan = test::plan(yaml);
  const MemoryBreakdown& stage = plan.estimate.stages.front();
  ASSERT_GT(stage.expert_parameters, 0.5 * stage.parameters);
  const double expert_bytes = stage.expert_parameters * 2;  // bf16 gradients
  EXPECT_GT(plan.time.dp_reduce.value, 0.75 * expert_bytes / 1.25e9);
  EXPECT_LT(plan.time.dp_reduce.value, 2.0 * stage.parameters * 2 / 1.25e9);
}

// Found by black-box testing, 2026-11-30: cp 2 x ep 2 on one node of two GPUs with no inter-node link was
// priced over that missing link (NaN times, exit 70); on one DGX H100 cp 2 x ep 8 changed with the NICs.
TEST(CollectiveGroupShape, ExpertsFoldedOverContextRanksStayOnTheNode) {
  const std::string yaml =
      "model: mixtral-8x7b\ncluster: dgx-h100\ntraining: {sequence_length: 8192, global_batch: 64, micro_batch: 1}\n"
      "parallel: {tp: 1, cp: 2, dp: 4, ep: 8, pp: 1, zero: 3}\n";
  const Scenario s = test::scenario(yaml);
  const CommLayout l = comm_layout(s, profile_for(s));
  EXPECT_EQ(l.group(CommGroup::ep).nodes, 1);
  const Plan slow_nics = test::plan(yaml, {"cluster.inter_node.bandwidth=10 Gbit/s"});
  const Plan fast_nics = test::plan(yaml, {"cluster.inter_node.bandwidth=1 Tbit/s"});
  EXPECT_DOUBLE_EQ(slow_nics.time.exposed.ep.value, fast_nics.time.exposed.ep.value);
  EXPECT_GT(slow_nics.time.exposed.ep.value, 0);
}

}  // namespace
}  // namespace tp
