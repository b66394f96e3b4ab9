// MoE token traffic: NCCL's all-to-all across nodes and DeepEP's deduplicated dispatch (planner/collectives.h,
// docs/model.md §14, "All-to-all across nodes" and "MoE token dispatch"). Oracles: hand computation in each
// test, on a DGX H100 topology ([DGX] scenarios/catalog/clusters.yaml: NVLink 450 GB/s and one 400 Gbit/s NIC
// per GPU; NCCL tuning.cc hwLat 3.4 / 14 us).
#include <gtest/gtest.h>

#include <cstring>

#include "collectives.h"
#include "estimate.h"
#include "mesh.h"
#include "op_graph.h"
#include "tests/op_lookup.h"
#include "tests/test_support.h"
#include "tests/unit/dgx_h100_topology.h"

namespace tp {
namespace {

TEST(AllToAll, AcrossNodesSendsOnlyTheRemoteShareThroughTheNics) {
  // NCCL's all-to-all is a grouped send/receive to every peer (NCCL user guide, "Point-to-point
  // communication"), so across nodes only the bytes for peers on other nodes cross the NICs, while those for
  // node mates go over NVLink at the same time. By hand, an MoE dispatch of S = 134,217,728 B (4,096 tokens
  // x top-8 x hidden 2,048 x 2 B) over 16 ranks on 2 DGX H100 nodes: 7 node mates and 8 remote peers get
  // S/16 each. NVLink 7/16 S / 450e9 = 130.5 us; NICs 8/16 S / 50e9 = 1,342.2 us; latency 7 x 3.4 + 8 x 14 us.
  // The flat ring charged (15/16) S / 50e9 + 15 x 14 us = 2,726.8 us, twice as long.
  const Topology t = test::dgx_h100_topology();
  const double s = 4096.0 * 8 * 2048 * 2;
  const GroupShape two_nodes = group_shape(16, 1, 8);
  const CollectiveCost cost = collective_time(Collective::all_to_all, Bytes(s), two_nodes, t);
  EXPECT_NEAR(cost.time.value, 7 * 3.4e-6 + 8 * 14e-6 + 8.0 / 16 * s / 50e9, 1e-12);
  EXPECT_LT(cost.time.value, 0.55 * (15 * 14e-6 + 15.0 / 16 * s / 50e9));
  // On one node, and with one rank per node, it is the flat ring's cost: (n - 1) alpha + (n - 1)/n S / beta.
  EXPECT_NEAR(collective_time(Collective::all_to_all, Bytes(s), group_shape(8, 1, 8), t).time.value,
              7 * 3.4e-6 + 7.0 / 8 * s / 450e9, 1e-12);
  EXPECT_NEAR(collective_time(Collective::all_to_all, Bytes(s), group_shape(16, 8, 8), t).time.value,
              15 * 14e-6 + 15.0 / 16 * s / 50e9, 1e-12);
  // With a slow NVLink the node mates' share is the longer one: 7/16 S / 20e9 = 2,936 us.
  Topology slow_intra = t;
  slow_intra.intra.bandwidth = ByteRate(20e9);
  EXPECT_NEAR(collective_time(Collective::all_to_all, Bytes(s), two_nodes, slow_intra).time.value,
              7 * 3.4e-6 + 8 * 14e-6 + 7.0 / 16 * s / 20e9, 1e-12);
}

TEST(AllToAll, DeepEpDispatchSendsATokenOncePerNodeAndOncePerGpu) {
  // DeepSeek-V3 (arXiv:2412.19437, §3.2.2): a token goes over the network once to each node holding one of its
  // experts, then over NVLink to each GPU holding one. By hand, Qwen3 30B-A3B (128 experts, top-8) over 16
  // ranks on 2 DGX H100 nodes, 4,096 tokens x 2,048 x 2 B = 16,777,216 B on the GPU:
  //   none of a node's 64 experts among a token's 8: q = C(64, 8)/C(128, 8) = 0.0030959;
  //   none of a rank's 8: C(120, 8)/C(128, 8) = 0.5877179;
  //   network 16,777,216 x 1 x (1 - 0.0030959) = 16,725,276 B over 50e9 B/s = 334.5 us;
  //   NVLink 16,777,216 x 2 x 7 x (1 - 0.5877179) = 96,837,230 B over 450e9 B/s = 215.2 us;
  //   + 7 x 3.4 us + 1 x 14 us: 372.3 us. The all-to-all of the 8 copies takes 1,479.9 us (the test above).
  const Topology t = test::dgx_h100_topology();
  const double token_bytes = 4096.0 * 2048 * 2;
  const double q_node = 0.0030958642767920487, q_rank = 0.5877179493123811;
  const double two_nodes = deduplicated_dispatch_time(Bytes(token_bytes), 128, 8, group_shape(16, 1, 8), t).value;
  EXPECT_NEAR(two_nodes, 7 * 3.4e-6 + 14e-6 + token_bytes * (1 - q_node) / 50e9, 1e-12);
  EXPECT_GT(token_bytes * 2 * 7 * (1 - q_rank) / 450e9, 0.6 * token_bytes * (1 - q_node) / 50e9);  // NVLink not far behind
  const double all_to_all = collective_time(Collective::all_to_all, Bytes(8 * token_bytes), group_shape(16, 1, 8), t).time.value;
  EXPECT_LT(two_nodes, all_to_all / 3.9);
  // On one node of 8 (16 experts each): 7 x (1 - C(112, 8)/C(128, 8)) = 4.67 copies over NVLink against the
  // all-to-all's 7: 7 x 3.4 us + 78,382,101 B / 450e9 = 198.0 us against 284.8 us.
  const double one_node = deduplicated_dispatch_time(Bytes(token_bytes), 128, 8, group_shape(8, 1, 8), t).value;
  EXPECT_NEAR(one_node, 7 * 3.4e-6 + token_bytes * 7 * (1 - 0.3325803880770642) / 450e9, 1e-12);
  // Mixtral's top-2 of 8 over 8 ranks, one expert each: no two of a token's experts share a rank, so
  // 7 x (1 - (7/8)(6/7)) = 1.75 copies, as many as the all-to-all's 2 x 7/8: the same time.
  const double mixtral = deduplicated_dispatch_time(Bytes(1e6), 8, 2, group_shape(8, 1, 8), t).value;
  EXPECT_NEAR(mixtral, 7 * 3.4e-6 + 1e6 * 1.75 / 450e9, 1e-12);
  EXPECT_NEAR(mixtral, collective_time(Collective::all_to_all, Bytes(2e6), group_shape(8, 1, 8), t).time.value, 1e-12);
  // Nothing to send with one rank, no tokens or no experts.
  EXPECT_EQ(deduplicated_dispatch_time(Bytes(token_bytes), 128, 8, group_shape(1, 1, 8), t).value, 0.0);
  EXPECT_EQ(deduplicated_dispatch_time(Bytes(0), 128, 8, group_shape(16, 1, 8), t).value, 0.0);
}

// An expert takes capacity_factor x its even share of the routed tokens, padded (GShard's capacity, Megatron-Core
// moe_pad_expert_input_to_capacity): its GEMMs, its saved activations and both all-to-alls carry the whole
// buffer, and model FLOPs count the routed tokens. Before, the activations grew with the factor while the
// GEMMs and the all-to-alls did not (Mixtral at factor 4: activations x3.2, expert-parallel time unchanged).
// By hand at factor 2: twice the expert GEMM FLOPs and all-to-all bytes, model FLOPs unchanged.
TEST(MoeCapacity, TheBufferIsWhatTheExpertsRunAndTheAllToAllsMove) {
  auto scenario = [](const char* factor) {
    return test::scenario(std::string("model: {layers: 2, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 32000,\n"
                                      "  activation: swiglu, moe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024, "
                                      "capacity_factor: ") + factor + "}}\n"
                          "cluster: {preset: dgx-h100, nodes: 1}\n"
                          "training: {sequence_length: 1024, global_batch: 8, micro_batch: 1}\n"
                          "parallel: {tp: 1, pp: 1, ep: 8}\n");
  };
  const Scenario even = scenario("1"), padded = scenario("2");
  const OpGraph g1 = build_op_graph(even.model, even.training, 1), g2 = build_op_graph(padded.model, padded.training, 1);
  for (const char* name : {"expert_fc1", "expert_fc2"}) {
    EXPECT_DOUBLE_EQ(test::find_layer_op(g2, name)->fwd_flops, 2 * test::find_layer_op(g1, name)->fwd_flops) << name;
    EXPECT_DOUBLE_EQ(test::find_layer_op(g2, name)->model_flops_share, 0.5) << name;
  }
  for (const char* name : {"ep_dispatch", "ep_combine"}) {
    EXPECT_DOUBLE_EQ(test::find_layer_op(g2, name)->comm.bytes, 2 * test::find_layer_op(g1, name)->comm.bytes) << name;
  }
  const Estimate e1 = estimate(even), e2 = estimate(padded);
  EXPECT_DOUBLE_EQ(e2.flops.model_per_step.value, e1.flops.model_per_step.value);
  EXPECT_GT(e2.flops.hardware_per_step.value, e1.flops.hardware_per_step.value);
}

// Megatron-Core's all-to-all dispatcher with sequence parallelism (token_dispatcher.py,
// MoEAlltoAllTokenDispatcher: "A2A(EP) -> AG(TP)", "RS(TP) -> A2A(EP)") gathers over TP the tokens the
// all-to-all brought, top_k x capacity_factor copies of each, and reduce-scatters the experts' outputs
// alike. By hand for Mixtral 8x7B (top-2) at capacity 1.25: the MLP block's TP gather and reduce-scatter
// carry 2.5 x the attention block's bytes; without sequence parallelism its operators stay the dense
// all-reduces of the block's own tokens. Until 2026-12 the MoE block moved a dense block's bytes.
TEST(MoeTensorParallel, TheGatherCarriesTheRoutedTokens) {
  const Scenario s = test::scenario(
      "model: mixtral-8x7b\ncluster: {preset: dgx-h100, nodes: 2}\n"
      "training: {sequence_length: 4096, global_batch: 16, micro_batch: 1}\n"
      "parallel: {tp: 2, pp: 1, ep: 8, recompute: full}\n",
      {"model.moe.capacity_factor=1.25"});
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  double attention = 0, mlp_sp = 0, mlp_no_sp = 0;
  for (const Op& op : g.layer) {
    if (op.kind != OpKind::collective || op.comm.group != CommGroup::tp) continue;
    if (std::strcmp(op.name, "tp_input") != 0 && std::strcmp(op.name, "tp_output") != 0) continue;
    if (op.block == Block::attention) attention += op.comm.bytes;
    else if (op.comm.when == CommWhen::sequence_parallel) mlp_sp += op.comm.bytes;
    else if (op.comm.when == CommWhen::no_sequence_parallel) mlp_no_sp += op.comm.bytes;
  }
  ASSERT_GT(attention, 0.0);
  EXPECT_DOUBLE_EQ(mlp_sp, 2.5 * attention);
  EXPECT_DOUBLE_EQ(mlp_no_sp, attention);
}

// Megatron-Core refuses MoE with tp > 1 and sequence parallelism off (moe_layer.py); `parallel=auto` offers
// no such layout.
TEST(MoeTensorParallel, MegatronNeedsSequenceParallelism) {
  const std::string yaml =
      "model: mixtral-8x7b\ncluster: {preset: dgx-h100, nodes: 2}\n"
      "training: {sequence_length: 4096, global_batch: 16, micro_batch: 1}\n"
      "parallel: {tp: 2, pp: 1, ep: 8, recompute: full, sequence_parallel: false}\n";
  EXPECT_THROW((void)test::scenario(yaml), InputError);
  EXPECT_NO_THROW((void)test::scenario(yaml, {"training.framework=deepspeed"}));
  for (const LayoutChoice& c : auto_layouts(test::scenario(yaml, {"parallel.sequence_parallel=true"}))) {
    EXPECT_TRUE(c.tp == 1 || c.sequence_parallel) << c.tp;
  }
}

}  // namespace
}  // namespace tp
