// torchtitan's op-level selective activation checkpointing (`parallel.recompute: selective_op`,
// planner/selective_op.h). Oracle: hand computation from the policy in torchtitan's checkpoint_wrapper
// (parallelisms/parallelize_llama.py at 157a12c56: keep the outputs of aten.mm except every second call of
// the block, and of the SDPA kernels and reduce-scatters) applied to the block's calls in the order
// torchtitan's Llama makes them (models/llama/model.py: wq, wk, wv, wo, w1, w3, w2). Sizes by hand below.
#include <gtest/gtest.h>

#include <string>

#include "estimate.h"
#include "hardware_profile.h"
#include "selective_op.h"
#include "step_time.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// A GQA Llama block: h 4096, 32 heads of 128 (q 4096), 8 KV heads (kv 1024), SwiGLU f 14336, no bias.
constexpr double kS = 2048, kH = 4096, kQ = 4096, kKv = 1024, kF = 14336, kA = 32, kLayers = 4;

std::string llama(const std::string& extra_training, const std::string& parallel) {
  return "model: {layers: 4, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336, vocab: 32000, "
         "activation: swiglu, norm: rmsnorm, position: rope}\n"
         "cluster: {preset: dgx-h100, nodes: 1}\n"
         "training: {framework: fsdp, precision: bf16, sequence_length: 2048, micro_batch: 1, global_batch: 8" +
         extra_training + "}\nparallel: {" + parallel + "}\n";
}

double bytes_of(const std::vector<Op>& ops) {
  double b = 0;
  for (const Op& op : ops) b += op.saved_bytes;
  return b;
}

double forward_flops_of(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& op : ops) f += op.fwd_flops;
  return f;
}

TEST(SelectiveOp, KeepsTheOddMatmulOutputsAndTheAttentionOutputs) {
  const Scenario s = test::scenario(llama("", "tp: 1, pp: 1, dp: 8, zero: 3, recompute: selective_op"));
  const SelectiveOpCheckpoint c = selective_op_checkpoint(s, build_op_graph(s.model, s.training, 1));
  // Kept, 2 B per value: the block input (h), wq (q), wv (kv), SDPA's output (q), w1 (f), w2 (h), plus
  // SDPA's fp32 log-sum-exp (4 B per head and token).
  EXPECT_DOUBLE_EQ(bytes_of(c.kept), kS * 2 * (kH + kQ + kKv + kQ + kF + kH) + kS * kA * 4);
  // Run again: wk (h x kv), wo (q x h), w3 (h x f); not the attention, which is cached.
  EXPECT_DOUBLE_EQ(forward_flops_of(c.rerun), 2 * kS * (kH * kKv + kQ * kH + kH * kF));
  for (const Op& op : c.rerun) EXPECT_NE(op.kind, OpKind::attention_core) << op.name;
}

TEST(SelectiveOp, BiasedLinearsAreAddmmAndRunAgain) {
  // A Linear with a bias dispatches to aten.addmm, which the policy neither keeps nor counts.
  const Scenario s = test::scenario("model: {layers: 4, hidden: 1024, heads: 16, ffn_hidden: 4096, vocab: 32000, "
                                    "activation: gelu, bias: true}\ncluster: {preset: dgx-h100, nodes: 1}\n"
                                    "training: {framework: pytorch, precision: bf16, sequence_length: 1024, "
                                    "micro_batch: 1, global_batch: 8}\nparallel: {dp: 8, recompute: selective_op}\n");
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  const SelectiveOpCheckpoint c = selective_op_checkpoint(s, g);
  double gemm_flops = 0;
  for (const Op& op : g.layer) {
    if (op.kind == OpKind::gemm) gemm_flops += op.fwd_flops;
  }
  EXPECT_DOUBLE_EQ(forward_flops_of(c.rerun), gemm_flops);
  // Kept: the input and the fused attention's output and log-sum-exp only.
  EXPECT_DOUBLE_EQ(bytes_of(c.kept), 1024.0 * 2 * (1024 + 1024) + 1024.0 * 16 * 4);
}

TEST(SelectiveOp, SequenceParallelReduceScatterOutputsAreKeptNotRepeated) {
  const Scenario s =
      test::scenario(llama("", "tp: 2, pp: 1, dp: 4, sequence_parallel: true, recompute: selective_op"));
  const SelectiveOpCheckpoint c = selective_op_checkpoint(s, build_op_graph(s.model, s.training, 2));
  // Two reduce-scatters (after wo and after w2), each s x h x 2 B before the split.
  EXPECT_DOUBLE_EQ(bytes_of(c.kept), kS * 2 * (kH + kQ + kKv + kQ + kF + kH) + kS * kA * 4 + 2 * kS * kH * 2);
  for (const Op& op : c.rerun) {
    if (op.kind != OpKind::collective) continue;
    EXPECT_FALSE(op.comm.forward_sp.count > 0 && op.comm.forward_sp.kind == Collective::reduce_scatter) << op.name;
  }
}

TEST(SelectiveOp, MemoryFlopsAndTimeOfTheStep) {
  const Scenario op = test::scenario(llama("", "tp: 1, pp: 1, dp: 8, zero: 3, recompute: selective_op"));
  const Scenario none = test::scenario(llama("", "tp: 1, pp: 1, dp: 8, zero: 3, recompute: none"));
  const Scenario full = test::scenario(llama("", "tp: 1, pp: 1, dp: 8, zero: 3, recompute: full"));
  const Estimate eo = estimate(op), e0 = estimate(none), ef = estimate(full);
  // FLOPs: the three repeated GEMM calls of every layer for all 8 sequences; model FLOPs unchanged.
  EXPECT_DOUBLE_EQ(eo.flops.recompute_per_step.value, 8 * kLayers * 2 * kS * (kH * kKv + kQ * kH + kH * kF));
  EXPECT_DOUBLE_EQ(eo.flops.model_per_step.value, e0.flops.model_per_step.value);
  // Memory: each layer keeps its selective set instead of everything (none) or its input (full).
  const double kept = kS * 2 * (kH + kQ + kKv + kQ + kF + kH) + kS * kA * 4, input = kS * kH * 2;
  EXPECT_DOUBLE_EQ(eo.memory.activations.value - ef.memory.activations.value, kLayers * (kept - input));
  EXPECT_LT(eo.memory.activations.value, e0.memory.activations.value);
  // Time: more than no recompute, less than a whole forward again.
  const auto time = [](const Scenario& s, const Estimate& e) {
    return step_time(s, build_op_graph(s.model, s.training, 1), e, profile_for(s)).recompute.value;
  };
  const double t_op = time(op, eo), t_full = time(full, ef);
  EXPECT_GT(t_op, 0.0);
  EXPECT_LT(t_op, t_full);
}

}  // namespace
}  // namespace tp
