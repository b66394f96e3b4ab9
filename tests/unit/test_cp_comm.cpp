// Context-parallel exchanges of the op graph (parallel.cp_comm) and the exposed time the step reads from
// them. Oracles, by hand computation written below:
// - What each exchange sends per layer and micro-batch: Transformer Engine's context-parallel attention
//   (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py):
//   AttnFuncWithCPAndKVAllGather all-gathers K and V before the attention ("KV all-gather between CP
//   ranks is exposed"; Llama 3, Dubey et al. 2024, §3.3.2), gathers them again in the backward and
//   reduce-scatters dK, dV; AttnFuncWithCPAndQKVOA2A and DeepSpeed-Ulysses (Jacobs et al. 2023, §3.1)
//   all-to-all Q, K, V before the attention and the output after, and the four gradients in the backward.
// - Ring all-gather / reduce-scatter of S bytes (the whole gathered array) and all-to-all of a rank's
//   send buffer S over n ranks on one tier: (n - 1) alpha + (n - 1)/n x S / beta (Thakur, Rabenseifner
//   & Gropp 2005; nccl-tests doc/PERFORMANCE.md).
#include <gtest/gtest.h>

#include <algorithm>

#include "attention_curves.h"
#include "comm_time.h"
#include "estimate.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "op_times.h"
#include "step_time.h"
#include "sustained_clock.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// 2 layers, h = 4096, 32 query heads and 8 KV heads of 128 (q_dim 4096, kv_dim 1024), s = 8192 in bf16,
// cp = 8 on one node of 8 GPUs whose NVLink tier is 100 GB/s per direction with 5 us latency; 4
// sequences of 1 = 4 micro-batches; no recompute, no data parallelism.
const char* kCp8 =
    "model: {layers: 2, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336, vocab: 32000, activation: swiglu,\n"
    "        norm: rmsnorm, position: rope}\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 8, intra_node: {bandwidth: 100 GB/s, latency: 5 us}}\n"
    "training: {sequence_length: 8192, global_batch: 4, micro_batch: 1, precision: bf16}\n"
    "parallel: {tp: 1, pp: 1, cp: 8, zero: 0, recompute: none}\n";

constexpr double kLayers = 2, kMicroBatches = 4, kRanks = 8, kAlpha = 5e-6, kBeta = 100e9;

// One ring step sequence of S bytes over the 8 ranks: 7 x 5 us + 7/8 x S / 100 GB/s.
constexpr double ring(double bytes) { return (kRanks - 1) * kAlpha + (kRanks - 1) / kRanks * bytes / kBeta; }

// The profile with the link at its datasheet rate and the cluster's latency.
HardwareProfile simple_profile(const Scenario& s) {
  HardwareProfile hw = default_profile(s.cluster.gpu);
  hw.intra_node.bandwidth_efficiency = 1.0;
  hw.intra_node.latency = Seconds(0);
  return hw;
}

StepTime step_of(const Scenario& s) {
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  return step_time(s, g, estimate(s, g), simple_profile(s));
}

TEST(CpComm, AllGatherIsExposedOnBothPasses) {
  // K and V of the whole sequence: 8192 x 2 x 1024 x 2 B = 33,554,432 B, gathered forward; gathered
  // again backward and their gradients reduce-scattered: 3 ring passes per layer and micro-batch.
  const double kv = 8192.0 * 2 * 1024 * 2;
  const double per_layer = 3 * ring(kv);  // 3 x (35 us + 293.6 us) = 985.8 us
  const StepTime t = step_of(test::scenario(kCp8, {"parallel.cp_comm=all_gather"}));
  EXPECT_NEAR(t.exposed.cp.value, kMicroBatches * kLayers * per_layer, 1e-12);
  EXPECT_NEAR(t.exposed.cp.value, 7.887e-3, 1e-6);
}

TEST(CpComm, AllToAllMovesTheLocalQKVAndOutput) {
  // Each rank sends its own 1,024 tokens: K and V 1024 x 1024 x 2 B = 2,097,152 B each, Q and the output
  // 1024 x 4096 x 2 B = 8,388,608 B each, one all-to-all per tensor; the backward moves their gradients.
  const double kv = 1024.0 * 1024 * 2, qo = 1024.0 * 4096 * 2;
  const double per_pass = 2 * ring(kv) + 2 * ring(qo);  // 2 x 53.35 us + 2 x 108.40 us
  const StepTime t = step_of(test::scenario(kCp8, {"parallel.cp_comm=a2a"}));
  EXPECT_NEAR(t.exposed.cp.value, kMicroBatches * kLayers * 2 * per_pass, 1e-12);
  EXPECT_NEAR(t.exposed.cp.value, 5.176e-3, 1e-6);
}

// The layer's fused attention forward and backward from the compute model (tested elsewhere), as the step
// times them.
struct AttentionTimes {
  double forward, backward;
};
AttentionTimes attention_times(const Scenario& s) {
  const HardwareProfile hw = simple_profile(s);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  OpTimeContext c{s, hw, s.parallel.tp, s.parallel.cp, false, 1.0, s.cluster.gpu.peak_for(Precision::bf16).value,
                  attention_peak(s.cluster.gpu, Precision::bf16).value,
                  s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency};
  c.tensor_time_scale = tensor_time_scale(s.cluster, hw);
  const OpTimes t = time_ops(g.layer, c);
  return {t.attention, t.attention_bwd};
}

// One send of the local K/V chunk, 8192 / 8 tokens: 5 us + 4,194,304 B / 100 GB/s = 46.9 us.
constexpr double kChunkSend = kAlpha + 8192.0 / kRanks * 2 * 1024 * 2 / kBeta;

TEST(CpComm, TheRingHidesEachPassBehindOneBlock) {
  // Ring attention splits a pass's attention into 8 blocks; each of the 7 K/V passes hides behind the
  // block before it, so the window is 7/8 of the pass's attention kernel: the forward's, and in the backward
  // the backward kernel's, behind which two passes per step go (K/V and dK/dV; TE AttnFuncWithCPAndKVP2P).
  // Until 2026-12 the backward's window was twice the forward's, a third short of the backward kernel.
  const Scenario s = test::scenario(kCp8, {"parallel.cp_comm=p2p"});
  const AttentionTimes a = attention_times(s);
  ASSERT_GT(a.forward, 0.0);
  ASSERT_GT(a.backward, 2 * a.forward);
  const double forward = std::max(0.0, 7 * kChunkSend - 7.0 / 8.0 * a.forward);
  const double backward = std::max(0.0, 14 * kChunkSend - 7.0 / 8.0 * a.backward);
  ASSERT_GT(forward, 0.0);  // this slow link outlasts the window
  EXPECT_NEAR(step_of(s).exposed.cp.value, kMicroBatches * kLayers * (forward + backward), 1e-12);
  // Less than the all-gather, which hides behind nothing, and the whole step too.
  const Scenario gather = test::scenario(kCp8, {"parallel.cp_comm=all_gather"});
  EXPECT_LT(step_of(s).exposed.cp.value, step_of(gather).exposed.cp.value);
  EXPECT_LT(step_of(s).step.value, step_of(gather).step.value);
  // Without context parallelism no entry applies, whatever the exchange.
  const Scenario no_cp = test::scenario(kCp8, {"parallel.cp=1", "parallel.cp_comm=all_gather", "cluster.gpus_per_node=1"});
  EXPECT_EQ(step_of(no_cp).exposed.cp.value, 0.0);
}

TEST(CpComm, PyTorchsRotationHidesTheGatherBehindTheLocalBlock) {
  // torch's _AllGatherRotater gathers K and V at the first block and waits at the second: the gather
  // (the 33,554,432 B of the whole sequence) hides behind 1/8 of the attention, in each pass; the
  // backward's dK/dV go round the ring in their fp32 accumulators (convert_to_f32), 7 sends of
  // 1,024 x 2 x 1,024 x 4 B = 8,388,608 B (88.9 us) behind the other 7/8.
  const Scenario s = test::scenario(kCp8, {"parallel.cp_comm=ring_all_gather"});
  const AttentionTimes a = attention_times(s);
  const double gather = ring(8192.0 * 2 * 1024 * 2);
  const double grad_send = kAlpha + 8192.0 / kRanks * 2 * 1024 * 4 / kBeta;
  const double forward = std::max(0.0, gather - a.forward / 8);
  const double backward =
      std::max(0.0, gather - a.backward / 8) + std::max(0.0, 7 * grad_send - 7.0 / 8.0 * a.backward);
  EXPECT_NEAR(step_of(s).exposed.cp.value, kMicroBatches * kLayers * (forward + backward), 1e-12);
}

// PyTorch's ring attention merges each block's output into an fp32 accumulator and accumulates the gradients
// in fp32 (torch/distributed/tensor/experimental/_attention.py, convert_to_f32; planner/op_times.cpp). By hand
// for the slowest rank of the 8, per layer and micro-batch: Eq = 1,024 tokens x 4,096 = 4,194,304 output
// elements, Ekv = 1,024 x 1,024 = 1,048,576; eager, forward (38 x 7 + 12) Eq + 8 x 8 Ekv = 278 Eq + 64 Ekv =
// 1,233,125,376 B, backward (10 x 8 + 10) Eq + (50 x 8 + 14) Ekv = 90 Eq + 414 Ekv = 811,597,824 B, at the
// profile's effective bandwidth, with 6 x 8 and 7 x 8 launches. Compiled, a block's merge is one 10-B pass:
// forward (10 x 7 + 12) Eq + 64 Ekv. The other exchanges run no merge.
TEST(CpComm, PyTorchsRingMergesInFp32) {
  const Scenario s = test::scenario(kCp8, {"parallel.cp_comm=ring_all_gather"});
  const HardwareProfile hw = simple_profile(s);
  const double bw = s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency, launch = hw.kernel_launch.value;
  const double eq = 1024.0 * 4096, ekv = 1024.0 * 1024;
  auto layer_times = [&](const Scenario& x) {
    const OpGraph g = build_op_graph(x.model, x.training, x.parallel.tp);
    const OpTimeContext c{x, hw, x.parallel.tp, x.parallel.cp, false, 1.0, x.cluster.gpu.peak_for(Precision::bf16).value,
                          attention_peak(x.cluster.gpu, Precision::bf16).value, bw};
    return time_ops(g.layer, c);
  };
  const OpTimes ring_times = layer_times(s);
  const OpTimes p2p_times = layer_times(test::scenario(kCp8, {"parallel.cp_comm=p2p"}));
  EXPECT_NEAR(ring_times.fwd - p2p_times.fwd, (278 * eq + 64 * ekv) / bw + 48 * launch, 1e-12);
  EXPECT_NEAR(ring_times.bwd - p2p_times.bwd, (90 * eq + 414 * ekv) / bw + 56 * launch, 1e-12);
  const OpTimes compiled = layer_times(test::scenario(kCp8, {"parallel.cp_comm=ring_all_gather", "training.framework=pytorch", "training.compile=true"}));
  const OpTimes compiled_p2p = layer_times(test::scenario(kCp8, {"parallel.cp_comm=p2p", "training.framework=pytorch", "training.compile=true"}));
  EXPECT_NEAR(compiled.fwd - compiled_p2p.fwd, (82 * eq + 64 * ekv) / bw + 48 * launch, 1e-12);
  // Without context parallelism the op runs nothing.
  const Scenario no_cp = test::scenario(kCp8, {"parallel.cp=1", "cluster.gpus_per_node=1", "parallel.cp_comm=ring_all_gather"});
  const Scenario no_cp_p2p = test::scenario(kCp8, {"parallel.cp=1", "cluster.gpus_per_node=1", "parallel.cp_comm=p2p"});
  EXPECT_EQ(layer_times(no_cp).fwd, layer_times(no_cp_p2p).fwd);
}

TEST(CpComm, HierarchicalAllToAllThenRing) {
  // a2a+p2p with cp_a2a 4: all-to-alls over 4 ranks (3 x 5 us + 3/4 x S / 100 GB/s) of each rank's own
  // 1,024 tokens, K and V 2,097,152 B and Q and the output 8,388,608 B; then a ring over the 2 groups:
  // one pass of a K/V chunk of 4 x 1,024 tokens and 1/4 of the KV columns, as many bytes as the local
  // chunk (4,194,304 B, 46.9 us), behind 1/2 of the attention; twice in the backward.
  const Scenario s = test::scenario(kCp8, {"parallel.cp_comm=a2a+p2p", "parallel.cp_a2a=4"});
  ASSERT_EQ(s.parallel.cp_inner(), 4);
  ASSERT_EQ(s.parallel.cp_outer(), 2);
  auto all_to_all = [](double bytes) { return 3 * kAlpha + 3.0 / 4.0 * bytes / kBeta; };
  const double per_pass = 2 * all_to_all(1024.0 * 1024 * 2) + 2 * all_to_all(1024.0 * 4096 * 2);
  const AttentionTimes a = attention_times(s);
  const double ring_f = std::max(0.0, kChunkSend - a.forward / 2), ring_b = std::max(0.0, 2 * kChunkSend - a.backward / 2);
  EXPECT_NEAR(step_of(s).exposed.cp.value, kMicroBatches * kLayers * (2 * per_pass + ring_f + ring_b), 1e-12);
  // The all-to-alls cross 4 ranks instead of 8, and the ring one pass instead of 7: less exposed than a2a.
  EXPECT_LT(step_of(s).exposed.cp.value, step_of(test::scenario(kCp8, {"parallel.cp_comm=a2a"})).exposed.cp.value);
}

// The shape one GPU's fused attention runs, by exchange (DeepSpeed-Ulysses, Jacobs et al. 2023, §3.1: after
// the all-to-all each GPU holds the whole sequence of heads / c; a ring holds s / c tokens of every head).
// Hand computation for 32 heads, s = 8,192, cp 8: a2a 4 heads x 8,192 tokens; the rings 32 x 1,024;
// a2a+p2p with all-to-alls in fours: 8 heads x 4,096. The same FLOPs; the longer kernel runs at a better
// point of the fused curve, so a2a's attention time is less than p2p's (until 2026-12 every exchange
// was timed as the ring's chunks).
TEST(CpComm, UlyssesKernelsAttendTheWholeSequenceWithTheirHeads) {
  const auto grid_of = [](const Scenario& s) { return fused_attention_grid(s, 1, s.parallel.tp, s.parallel.cp); };
  const FusedAttentionGrid ulysses = grid_of(test::scenario(kCp8, {"parallel.cp_comm=a2a"}));
  EXPECT_DOUBLE_EQ(ulysses.batch_heads, 4);
  EXPECT_DOUBLE_EQ(ulysses.seq, 8192);
  for (const char* ring : {"p2p", "all_gather", "ring_all_gather"}) {
    const FusedAttentionGrid g = grid_of(test::scenario(kCp8, {std::string("parallel.cp_comm=") + ring}));
    EXPECT_DOUBLE_EQ(g.batch_heads, 32) << ring;
    EXPECT_DOUBLE_EQ(g.seq, 1024) << ring;
  }
  const FusedAttentionGrid both = grid_of(test::scenario(kCp8, {"parallel.cp_comm=a2a+p2p", "parallel.cp_a2a=4"}));
  EXPECT_DOUBLE_EQ(both.batch_heads, 8);
  EXPECT_DOUBLE_EQ(both.seq, 4096);
  const AttentionTimes a2a = attention_times(test::scenario(kCp8, {"parallel.cp_comm=a2a"}));
  const AttentionTimes p2p = attention_times(test::scenario(kCp8, {"parallel.cp_comm=p2p"}));
  EXPECT_LT(a2a.forward, p2p.forward);
  EXPECT_LT(a2a.backward, p2p.backward);
}

// The all-gather exchanges hold one layer's whole-sequence K and V while its attention runs (memory buffers).
// By hand for kCp8 (8 K/V heads of 128, s = 8,192, tp 1, one sequence, bf16): K and V 2 x 8,192 x 1,024 x 2 B =
// 33,554,432 B; TE's all_gather also builds whole dK and dV in its backward: twice that; PyTorch's rotation
// once; the p2p ring passes chunks only. Until 2026-12 none was counted.
TEST(CpComm, AllGatherExchangesHoldTheWholeSequencesKv) {
  const auto buffers = [](const char* exchange) {
    return estimate(test::scenario(kCp8, {std::string("parallel.cp_comm=") + exchange})).memory.buffers.value;
  };
  const double kv = 2.0 * 8192 * 1024 * 2;
  EXPECT_NEAR(buffers("all_gather") - buffers("p2p"), 2 * kv, 1.0);
  EXPECT_NEAR(buffers("ring_all_gather") - buffers("p2p"), kv, 1.0);
  EXPECT_NEAR(buffers("a2a") - buffers("p2p"), 0.0, 1.0);
}

TEST(CpComm, SelectiveRecomputeGathersAgain) {
  // Megatron's selective recompute reruns the core attention, which holds the exchange: one more exposed
  // all-gather per layer and micro-batch.
  const double kv = 8192.0 * 2 * 1024 * 2;
  const StepTime t = step_of(test::scenario(kCp8, {"parallel.cp_comm=all_gather", "parallel.recompute=selective"}));
  EXPECT_NEAR(t.exposed.cp.value, kMicroBatches * kLayers * 4 * ring(kv), 1e-12);
}

TEST(CpComm, EachFrameworkHasItsExchange) {
  // DeepSpeed's sequence parallelism is Ulysses; Megatron-Core's --cp-comm-type defaults to p2p;
  // PyTorch's context_parallel (FSDP, plain PyTorch) rotates its K/V by one all-gather.
  const Scenario s = test::scenario(kCp8);
  EXPECT_EQ(cp_comm_of(s.parallel, Framework::megatron), CpComm::p2p);
  EXPECT_EQ(cp_comm_of(s.parallel, Framework::fsdp), CpComm::ring_all_gather);
  EXPECT_EQ(cp_comm_of(s.parallel, Framework::pytorch), CpComm::ring_all_gather);
  EXPECT_EQ(cp_comm_of(s.parallel, Framework::deepspeed), CpComm::a2a);
  const Scenario set = test::scenario(kCp8, {"parallel.cp_comm=all_gather", "training.framework=deepspeed"});
  EXPECT_EQ(cp_comm_of(set.parallel, set.training.framework), CpComm::all_gather);
  const Scenario ds = test::scenario(kCp8, {"training.framework=deepspeed"});
  EXPECT_EQ(comm_layout(ds, simple_profile(ds)).cp_comm, CpComm::a2a);
}

}  // namespace
}  // namespace tp
