// Megatron's end-of-step gradient syncs. The tied word embedding's gradient all-reduce between the first
// and the last pipeline stage
// (Megatron-Core finalize_model_grads -> _allreduce_word_embedding_grads; DeepSpeed's pipeline engine
// ReduceTiedGrads): an entry of the op graph's step list, on the critical path before the optimizer.
// Oracles, by hand computation written below:
// - bytes: the gradient buffer's elements of the embedding on one rank, V_padded / tp x h, x the gradient
//   element bytes (fp32 here: 4 B);
// - time: an all-reduce of S bytes over 2 ranks, each on its own node, on the inter-node tier: the ring's
//   2(n - 1) = 2 latencies + 2(n - 1)/n x S = S bytes at the per-GPU rate (NIC rate x NICs per node / GPUs
//   per node); the double binary tree's 2 latencies + 2 S is slower (Thakur, Rabenseifner & Gropp 2005;
//   planner/collectives.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "comm_time.h"
#include "estimate.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "step_time.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// A tied GPT (vocabulary 50257, h 4096) on 4 nodes of 8 GPUs: tp 8 inside a node, pp 4 across the
// nodes (each stage on its own node), dp 1; NICs of 400 Gbit/s, 8 per node, 10 us latency.
const char* kTiedGpt =
    "model: {layers: 8, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 50257, activation: gelu,\n"
    "        norm: layernorm, position: rope, tied_embeddings: true}\n"
    "cluster: {preset: dgx-h100, nodes: 4, gpus_per_node: 8,\n"
    "          inter_node: {bandwidth: 400 Gbit/s, latency: 10 us, nics_per_node: 8}}\n"
    "training: {sequence_length: 2048, global_batch: 8, micro_batch: 1, precision: bf16, grad_precision: fp32,\n"
    "           framework: megatron}\n"
    "parallel: {tp: 8, pp: 4, zero: 0, sequence_parallel: true, recompute: none}\n";

// Megatron pads 50257 to a multiple of 128 x tp = 1024: 51200 rows, 6400 per TP rank.
constexpr double kRowsPerRank = 51200.0 / 8;
constexpr double kBytes = kRowsPerRank * 4096 * 4;  // fp32 main_grad: 104,857,600 B
// Inter-node tier per GPU: 400 Gbit/s x 8 NICs / 8 GPUs = 50 GB/s; ring all-reduce over 2 ranks:
// 2 x 10 us + 104,857,600 B / 50e9 B/s = 20 us + 2097.152 us = 2117.152 us.
constexpr double kSeconds = 2 * 10e-6 + kBytes / 50e9;

HardwareProfile datasheet_profile(const Scenario& s) {
  HardwareProfile hw = default_profile(s.cluster.gpu);
  hw.intra_node.bandwidth_efficiency = 1.0;
  hw.inter_node.bandwidth_efficiency = 1.0;
  hw.intra_node.latency = Seconds(0);  // the cluster's latencies
  hw.inter_node.latency = Seconds(0);
  return hw;
}

const Op* tied_entry(const OpGraph& g) {
  const auto it = std::find_if(g.step.begin(), g.step.end(),
                               [](const Op& op) { return std::strcmp(op.name, "tied_embedding_grad_all_reduce") == 0; });
  return it == g.step.end() ? nullptr : &*it;
}

// The same graph without the entry: the step time the layout had before it.
OpGraph without_entry(OpGraph g) {
  std::erase_if(g.step, [](const Op& op) { return std::strcmp(op.name, "tied_embedding_grad_all_reduce") == 0; });
  return g;
}

TEST(TiedEmbeddingSync, EntryBytesAndGroupForATiedGptWithPp4Tp8) {
  const Scenario s = test::scenario(kTiedGpt);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  ASSERT_EQ(g.vocab, 51200);
  const Op* op = tied_entry(g);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->comm.group, CommGroup::pp_ends);
  EXPECT_EQ(op->comm.overlap, CommOverlap::step_end);
  EXPECT_EQ(op->comm.call(CommPass::backward, true).kind, Collective::all_reduce);
  EXPECT_EQ(op->comm.call(CommPass::backward, true).count, 1.0f);
  EXPECT_EQ(op->comm.call(CommPass::forward, true).count, 0.0f);
  const CommLayout l = comm_layout(s, datasheet_profile(s));
  ASSERT_TRUE(applies(op->comm, l));
  EXPECT_DOUBLE_EQ(comm_bytes(op->comm, l), kBytes);
  // First and last stage, on nodes 0 and 3.
  const GroupShape& ends = l.group(CommGroup::pp_ends);
  EXPECT_EQ(ends.size, 2);
  EXPECT_EQ(ends.ranks_per_node, 1);
  EXPECT_EQ(ends.nodes, 2);
  EXPECT_NEAR(comm_seconds(op->comm, CommPass::backward, l), kSeconds, 1e-12);
  // Only the first and the last stage take part.
  EXPECT_NEAR(step_end_comm(g.step, l, 0).pp_ends, kSeconds, 1e-12);
  EXPECT_EQ(step_end_comm(g.step, l, 1).pp_ends, 0.0);
  EXPECT_EQ(step_end_comm(g.step, l, 2).pp_ends, 0.0);
  EXPECT_NEAR(step_end_comm(g.step, l, 3).pp_ends, kSeconds, 1e-12);
  // The gradient buffer in bf16 halves the bytes.
  const Scenario bf16 = test::scenario(kTiedGpt, {"training.grad_precision=bf16"});
  EXPECT_DOUBLE_EQ(comm_bytes(op->comm, comm_layout(bf16, datasheet_profile(bf16))), kBytes / 2);
}

TEST(TiedEmbeddingSync, AbsentWithoutPipelineOrTiedEmbeddings) {
  {  // pp 1: in the graph, but no pipeline ends to sync (4 nodes of tp 8 become dp 4)
    const Scenario s = test::scenario(kTiedGpt, {"parallel.pp=1"});
    const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
    const CommLayout l = comm_layout(s, datasheet_profile(s));
    ASSERT_NE(tied_entry(g), nullptr);
    EXPECT_FALSE(applies(tied_entry(g)->comm, l));
    EXPECT_EQ(step_end_comm(g.step, l, 0).pp_ends, 0.0);
    const StepTime with = step_time(s, g, estimate(s, g), datasheet_profile(s));
    const OpGraph bare = without_entry(g);
    EXPECT_EQ(with.step.value, step_time(s, bare, estimate(s, bare), datasheet_profile(s)).step.value);
  }
  {  // untied: the output layer has its own weight, nothing to sync
    const Scenario s = test::scenario(kTiedGpt, {"model.tied_embeddings=false"});
    EXPECT_EQ(tied_entry(build_op_graph(s.model, s.training, s.parallel.tp)), nullptr);
  }
  {  // FSDP / plain PyTorch: no pipeline engine that ties weights across stages is modelled
    const Scenario s = test::scenario(kTiedGpt, {"training.framework=fsdp", "parallel.sequence_parallel=false"});
    EXPECT_EQ(tied_entry(build_op_graph(s.model, s.training, s.parallel.tp)), nullptr);
  }
  {  // DeepSpeed's pipeline engine all-reduces tied weights' gradients (ReduceTiedGrads)
    const Scenario s = test::scenario(kTiedGpt, {"training.framework=deepspeed", "parallel.sequence_parallel=false"});
    EXPECT_NE(tied_entry(build_op_graph(s.model, s.training, s.parallel.tp)), nullptr);
  }
}

TEST(TiedEmbeddingSync, StepTimeGrowsByExactlyTheAllReduce) {
  const Scenario s = test::scenario(kTiedGpt);
  const HardwareProfile hw = datasheet_profile(s);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const OpGraph bare = without_entry(g);
  const StepTime with = step_time(s, g, estimate(s, g), hw);
  const StepTime before = step_time(s, bare, estimate(s, bare), hw);
  EXPECT_NEAR(with.step.value - before.step.value, kSeconds, 1e-12);
  EXPECT_NEAR(with.exposed.pp.value - before.exposed.pp.value, kSeconds, 1e-12);
  EXPECT_NEAR(with.stages.front().step_end_ends.value, kSeconds, 1e-12);
  EXPECT_NEAR(with.stages.back().step_end_ends.value, kSeconds, 1e-12);
  EXPECT_EQ(with.stages[1].step_end_ends.value, 0.0);
  EXPECT_EQ(before.stages.front().step_end_ends.value, 0.0);
}

TEST(TiedEmbeddingSync, EndsShareANodeWhenThePipelineDoes) {
  // tp 2 x pp 4 = 8 GPUs on one node: the whole pipeline group (ranks 0, 2, 4, 6) is on it, so the ends
  // all-reduce over NVLink: 450 GB/s per direction (dgx-h100), 3.4 us; ring over 2 ranks:
  // 2 x 3.4 us + S / 450e9 with S = 50432 / 2 x 4096 x 4 B (Megatron pads 50257 to a multiple of
  // 128 x 2 = 256: 197 x 256 = 50432).
  const Scenario s = test::scenario(kTiedGpt, {"cluster.nodes=1", "parallel.tp=2"});
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const CommLayout l = comm_layout(s, datasheet_profile(s));
  const GroupShape& ends = l.group(CommGroup::pp_ends);
  EXPECT_EQ(ends.ranks_per_node, 2);
  EXPECT_EQ(ends.nodes, 1);
  ASSERT_EQ(g.vocab, 50432);
  const double bytes = 50432.0 / 2 * 4096 * 4;
  EXPECT_NEAR(step_end_comm(g.step, l, 0).pp_ends, 2 * 3.4e-6 + bytes / 450e9, 1e-12);
  // tp 1, dp 4, pp 4 on 2 nodes: the pipeline group (ranks 0, 4, 8, 12) spans both, its ends do too.
  const Scenario wide = test::scenario(kTiedGpt, {"cluster.nodes=2", "parallel.tp=1", "parallel.sequence_parallel=false"});
  const CommLayout wide_layout = comm_layout(wide, datasheet_profile(wide));
  const GroupShape& wide_ends = wide_layout.group(CommGroup::pp_ends);
  EXPECT_EQ(wide_ends.ranks_per_node, 1);
  EXPECT_EQ(wide_ends.nodes, 2);
}

// Sequence parallelism (Megatron-Core finalize_model_grads -> _allreduce_layernorm_grads): the gradients of
// the parameters replicated across TP are partial per rank and summed over the TP group in one coalesced
// all-reduce per stage. With biases, per layer: two LayerNorms (weight and bias: 4h) and the row-parallel
// biases of the attention projection and fc2 (2h) = 6h = 24,576; the last stage adds the final LayerNorm
// (2h = 8,192). Stage of 2 layers: 49,152 fp32 gradients = 196,608 B (last: 57,344 = 229,376 B), over the 8
// GPUs of a node at 450 GB/s, 3.4 us: ring 14 alpha + 2 x 7/8 S / beta, double binary tree 6 alpha + 2 S / beta;
// the faster one (the tree, at these sizes) runs.
double tp8_all_reduce(double bytes) {
  const double ring = 14 * 3.4e-6 + 2.0 * 7.0 / 8.0 * bytes / 450e9;
  const double tree = 6 * 3.4e-6 + 2.0 * bytes / 450e9;
  return std::min(ring, tree);
}

TEST(SequenceParallelGradSync, NormAndRowBiasGradientsAllReducedOverTp) {
  const Scenario s = test::scenario(kTiedGpt, {"model.bias=true"});
  const HardwareProfile hw = datasheet_profile(s);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const double per_layer = 6 * 4096.0;
  EXPECT_DOUBLE_EQ(sequence_parallel_parameters(g, 2, false, 1), 2 * per_layer);
  EXPECT_DOUBLE_EQ(sequence_parallel_parameters(g, 2, true, 1), 2 * per_layer + 2 * 4096.0);
  const CommLayout l = comm_layout(s, hw);
  EXPECT_NEAR(step_end_comm(g.step, l, 0, 2 * per_layer).tp, tp8_all_reduce(2 * per_layer * 4), 1e-12);
  EXPECT_NEAR(step_end_comm(g.step, l, 3, 2 * per_layer + 8192).tp, tp8_all_reduce((2 * per_layer + 8192) * 4), 1e-12);
  // The step waits for the slowest stage's syncs: the last one's (both ends add the tied embedding's).
  const StepTime t = step_time(s, g, estimate(s, g), hw);
  EXPECT_NEAR(t.stages.front().step_end_tp.value, tp8_all_reduce(2 * per_layer * 4), 1e-12);
  EXPECT_NEAR(t.stages.back().step_end_tp.value, tp8_all_reduce((2 * per_layer + 8192) * 4), 1e-12);
  OpGraph bare = g;
  std::erase_if(bare.step, [](const Op& op) { return std::strcmp(op.name, "sequence_parallel_grad_all_reduce") == 0; });
  const StepTime before = step_time(s, bare, estimate(s, bare), hw);
  EXPECT_NEAR(t.step.value - before.step.value, tp8_all_reduce((2 * per_layer + 8192) * 4), 1e-12);
  EXPECT_NEAR(t.exposed.tp.value - before.exposed.tp.value, tp8_all_reduce((2 * per_layer + 8192) * 4), 1e-12);
  // Without sequence parallelism every rank computes the whole gradient: no all-reduce.
  const Scenario no_sp = test::scenario(kTiedGpt, {"model.bias=true", "parallel.sequence_parallel=false"});
  EXPECT_EQ(step_end_comm(g.step, comm_layout(no_sp, datasheet_profile(no_sp)), 0, 2 * per_layer).tp, 0.0);
}

}  // namespace
}  // namespace tp
