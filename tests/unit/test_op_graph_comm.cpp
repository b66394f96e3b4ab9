// Communication entries of the op graph and the step time read from them.
// Oracles, by hand computation written below:
// - Megatron's tensor-parallel collectives per layer (Shoeybi et al. 2019, Fig. 3; Korthikanti et al.
//   2022, Fig. 5): 2 all-reduces forward and 2 backward, or with sequence parallelism an all-gather and a
//   reduce-scatter per block and pass, each over the block's whole s x b x h activation (2 B per bf16 value).
// - Ring all-gather / reduce-scatter of S bytes over n ranks on one tier: (n - 1) alpha + (n - 1)/n x S / beta
//   (Thakur, Rabenseifner & Gropp 2005; nccl-tests doc/PERFORMANCE.md).
// - Bounded overlap: a collective overlapped with the layer's GEMMs hides at most their time.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "comm_time.h"
#include "estimate.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "op_times.h"
#include "sustained_clock.h"
#include "step_time.h"
#include "tp_overlap.h"
#include "tests/op_lookup.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// 2 layers, h = 4096, s = 2048, bf16, tp = 8 with sequence parallelism on one node of 8 GPUs whose
// NVLink tier is 100 GB/s per direction with 5 us latency; 8 sequences of 1 = 8 micro-batches.
const char* kTp8 =
    "model: {layers: 2, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000, activation: gelu}\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 8, intra_node: {bandwidth: 100 GB/s, latency: 5 us}}\n"
    "training: {sequence_length: 2048, global_batch: 8, micro_batch: 1, precision: bf16}\n"
    "parallel: {tp: 8, pp: 1, zero: 0, sequence_parallel: true, recompute: none,\n"
    "           overlap: {grad_reduce: true, param_gather: true, tp_comm: false}}\n";

constexpr double kAct = 2048.0 * 4096.0 * 2.0;  // s x h x 2 B = 16,777,216 B per micro-batch

// The profile with the link at its datasheet rate and the cluster's latency.
HardwareProfile simple_profile(const Scenario& s) {
  HardwareProfile hw = default_profile(s.cluster.gpu);
  hw.intra_node.bandwidth_efficiency = 1.0;
  hw.intra_node.latency = Seconds(0);
  return hw;
}

struct Counted {
  int all_gather = 0, reduce_scatter = 0, all_reduce = 0, other = 0;
};

Counted tp_entries(const OpGraph& g, const CommLayout& l, CommPass pass) {
  Counted c;
  for (const Op& op : g.layer) {
    if (op.kind != OpKind::collective || op.comm.group != CommGroup::tp || !applies(op.comm, l)) continue;
    EXPECT_DOUBLE_EQ(comm_bytes(op.comm, l), kAct) << op.name;
    EXPECT_EQ(op.comm.overlap, CommOverlap::layer_gemms) << op.name;
    const CommCall& call = op.comm.call(pass, l.sp);
    if (call.count <= 0) continue;
    EXPECT_EQ(call.count, 1.0f) << op.name;
    switch (call.kind) {
      case Collective::all_gather: ++c.all_gather; break;
      case Collective::reduce_scatter: ++c.reduce_scatter; break;
      case Collective::all_reduce: ++c.all_reduce; break;
      default: ++c.other;
    }
  }
  return c;
}

TEST(OpGraphComm, Tp8SequenceParallelLayerEntries) {
  const Scenario s = test::scenario(kTp8);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const CommLayout l = comm_layout(s, simple_profile(s));
  ASSERT_TRUE(l.sp);
  for (CommPass pass : {CommPass::forward, CommPass::backward}) {
    const Counted c = tp_entries(g, l, pass);
    EXPECT_EQ(c.all_gather, 2);
    EXPECT_EQ(c.reduce_scatter, 2);
    EXPECT_EQ(c.all_reduce, 0);
    EXPECT_EQ(c.other, 0);
  }
  // Without sequence parallelism: one all-reduce per block and pass.
  const Scenario no_sp = test::scenario(kTp8, {"parallel.sequence_parallel=false"});
  const CommLayout l2 = comm_layout(no_sp, simple_profile(no_sp));
  for (CommPass pass : {CommPass::forward, CommPass::backward}) {
    const Counted c = tp_entries(g, l2, pass);
    EXPECT_EQ(c.all_reduce, 2);
    EXPECT_EQ(c.all_gather + c.reduce_scatter + c.other, 0);
  }
  // The pipeline boundary is the layer's output, split by tp with sequence parallelism: 16 MiB / 8,
  // sent forward and its gradient backward.
  int pp_entries = 0;
  for (const Op& op : g.step) {
    if (op.comm.group != CommGroup::pp) continue;
    ++pp_entries;
    EXPECT_EQ(op.comm.call(CommPass::forward, true).kind, Collective::send_recv);
    EXPECT_EQ(op.comm.call(CommPass::backward, true).kind, Collective::send_recv);
    EXPECT_DOUBLE_EQ(comm_bytes(op.comm, l), kAct / 8);
  }
  EXPECT_EQ(pp_entries, 1);
}

// A small MoE model: 4 experts, top 2, hidden 1024, sequences of 512 tokens.
const char* kSmallMoe =
    "model: {layers: 2, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 32000, activation: swiglu,\n"
    "        moe: {experts: 4, top_k: 2, expert_ffn_hidden: 2048}}\n"
    "cluster: {preset: dgx-h100, nodes: 1}\n"
    "training: {sequence_length: 512, global_batch: 8}\n";

TEST(OpGraphComm, EveryGemmSaysColumnOrRowParallel) {
  const Scenario s = test::scenario(kSmallMoe);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  // Megatron: qkv, fc1 and the vocabulary-parallel output layer split their output (column-parallel);
  // attention_out and fc2 split their input (row-parallel); the router is replicated (neither).
  const char* rows[] = {"attention_out", "expert_fc2"};
  int gemms = 0;
  for (const auto* ops : {&g.layer, &g.head}) {
    for (const Op& op : *ops) {
      if (op.kind != OpKind::gemm) continue;
      ++gemms;
      const bool row = std::strcmp(op.name, rows[0]) == 0 || std::strcmp(op.name, rows[1]) == 0;
      EXPECT_EQ(op.row_parallel, row) << op.name;
    }
  }
  EXPECT_EQ(gemms, 6);  // qkv, attention_out, router, expert_fc1, expert_fc2, output
}

TEST(OpGraphComm, MoePermutesTheTopKCopiesBeforeTheDispatch) {
  // Megatron-Core moe_utils.permute: tokens.index_select(0, sorted_indices // topk) reads and writes each
  // of the top_k copies of a token, 16-bit: 2 x (2 x 512) x 1024 x 2 B = 4,194,304 B per sequence, before
  // the ep_dispatch all-to-all; its backward adds the copies back, as many bytes; it keeps no activation.
  const Scenario s = test::scenario(kSmallMoe);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Op* permute = test::find_layer_op(g, "expert_permute");
  const Op* dispatch = test::find_layer_op(g, "ep_dispatch");
  ASSERT_NE(permute, nullptr);
  ASSERT_NE(dispatch, nullptr);
  EXPECT_LT(permute, dispatch);  // earlier in the layer's list
  const Op& op = *permute;
  EXPECT_DOUBLE_EQ(op.bytes_moved, 2.0 * (2 * 512) * 1024 * 2);
  EXPECT_DOUBLE_EQ(op.backward_share, 1.0);
  EXPECT_DOUBLE_EQ(op.saved_bytes, 0.0);
}

// One ring all-gather (or reduce-scatter) of kAct over the 8 GPUs of the node, by hand:
// 7 x 5 us + 7/8 x 16,777,216 B / 100 GB/s = 35 us + 146.8 us = 181.8 us.
constexpr double kRingOne = 7 * 5e-6 + 7.0 / 8.0 * kAct / 100e9;

// Once per step, sequence parallelism's all-reduce of the replicated parameters' gradients over the 8 GPUs
// (Megatron's _allreduce_layernorm_grads; docs/model.md §15): two LayerNorms per layer (weight and bias,
// 4h = 16,384), 2 layers, and the final LayerNorm (2h = 8,192): 40,960 gradients in Megatron's fp32 main_grad
// = 163,840 B; the double binary tree, 6 x 5 us + 2 x 163,840 B / 100 GB/s = 33.277 us, beats the ring's
// 14 x 5 us + ....
constexpr double kSpGradSync = 6 * 5e-6 + 2.0 * 163840.0 / 100e9;

TEST(OpGraphComm, ExposedTpIsTheEntriesLessTheOverlappableGemms) {
  const double layers = 2, m = 8;
  // Per layer and pass: an all-gather and a reduce-scatter in each of the two blocks.
  const double per_pass = 4 * kRingOne;
  {
    const Scenario s = test::scenario(kTp8);
    const HardwareProfile hw = simple_profile(s);
    const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
    const StepTime t = step_time(s, g, estimate(s, g), hw);
    // No overlap: every entry is exposed, m micro-batches x 2 layers x (forward + backward), and the
    // end-of-step gradient sync.
    EXPECT_NEAR(t.exposed.tp.value, m * layers * 2 * per_pass + kSpGradSync, 1e-12);
    EXPECT_NEAR(t.exposed.tp.value, 0.0232705 + 0.0000333, 1e-6);  // 8 x 2 x 2 x 4 x 181.8 us + 33.3 us
  }
  {
    const Scenario s = test::scenario(kTp8, {"parallel.overlap={grad_reduce: true, param_gather: true, tp_comm: true}"});
    const HardwareProfile hw = simple_profile(s);
    const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
    const StepTime t = step_time(s, g, estimate(s, g), hw);
    // The window is the layer's GEMM time of the pass (the compute model, tested elsewhere), with the
    // GEMMs in Transformer Engine's overlap chunks (Megatron layer code, tp_overlap.h); on this slow link
    // the collectives outlast it, so exactly that much is hidden. The pipeline/bulk half of each pass's
    // traffic also costs the GEMMs the SMs its kernels occupy (ub_sm_cost).
    const bool sp = true;
    OpTimeContext c{s, hw, 8, 1, sp, 1.0, s.cluster.gpu.peak_for(Precision::bf16).value,
                    attention_peak(s.cluster.gpu, Precision::bf16).value,
                    s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency};
    c.te_tp_overlap = true;
    c.tensor_time_scale = tensor_time_scale(s.cluster, hw);  // the step's GEMMs run at the sustained clock
    const OpTimes layer = time_ops(g.layer, c);
    ASSERT_GT(layer.gemm_fwd, 0.0);
    ASSERT_LT(layer.gemm_bwd, per_pass);
    const double hidden_per_layer = layer.gemm_fwd + layer.gemm_bwd;
    const double sm_cost = ub_sm_cost(0.5 * per_pass, layer.gemm_fwd, s.cluster.gpu) + ub_sm_cost(0.5 * per_pass, layer.gemm_bwd, s.cluster.gpu);
    ASSERT_GT(sm_cost, 0.0);
    EXPECT_NEAR(t.exposed.tp.value, m * layers * (2 * per_pass - hidden_per_layer + sm_cost) + kSpGradSync, 1e-9);
  }
}

}  // namespace
}  // namespace tp
