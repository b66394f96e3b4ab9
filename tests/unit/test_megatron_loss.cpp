// Megatron-Core's vocab-parallel cross-entropy (core_r0.8.0 megatron/core/tensor_parallel/cross_entropy.py,
// _VocabParallelCrossEntropy) timed from its own traffic. Oracle: the torch ops of that file counted by
// hand, bytes per logit of the local shard with bf16 logits:
//   forward  .float() 2 + 4, max 4, -= max 4 + 4, exp(out=) 4 + 4, sum 4, div_ 4 + 4        = 38 B
//   backward mul_(grad_output) 4 + 4, autograd's cast back to bf16 4 + 2                     = 14 B
// fp32 logits skip both casts: 32 B and 8 B. The op is memory-bound at the profile's generic efficiency:
// forward = 38 s V / tp / (HBM x efficiency) + one launch, backward the same with 14 B.
// With fused_loss (Megatron-Bridge: cross_entropy_fusion_impl "te"), Transformer Engine 2.9's Triton kernels
// (transformer_engine/pytorch/triton/cross_entropy.py) counted by hand, lb = bytes of a logit:
//   forward  online_softmax_kernel reads lb; cross_entropy_kernel reads lb, writes the gradient in place lb
//                                                                                            = 3 lb (6 B)
//   backward element_mul_kernel reads lb, writes lb                                          = 2 lb (4 B)
//   saved: the logits' storage (lb per logit), no working memory (in place).
#include <gtest/gtest.h>

#include <cstring>

#include "hardware_profile.h"
#include "op_graph.h"
#include "op_times.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

Scenario llama8b(const char* precision, const char* framework = "megatron") {
  return test::scenario(
      "model: llama3-8b\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 2048, global_batch: 8, micro_batch: 1}\n"
      "parallel: {tp: 8, pp: 1, zero: 0, recompute: none}\n",
      {std::string("training.precision=") + precision, std::string("training.framework=") + framework});
}

// By value: callers pass a temporary graph.
Op loss_of(const OpGraph& g) {
  for (const Op& op : g.head) {
    if (op.kind == OpKind::loss) return op;
  }
  ADD_FAILURE() << "no loss op";
  return g.head.back();
}

// One op timed alone on the generation's default profile, one sequence per micro-batch; also returns
// the effective HBM bandwidth the memory-bound ops run at.
OpTimes time_alone(const Scenario& s, const Op& op, double& bw) {
  const HardwareProfile hw = default_profile(s.cluster.gpu);
  bw = s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency;
  const OpTimeContext c{s, hw, s.parallel.tp, 1, false, 1.0, s.cluster.gpu.peak_for(Precision::bf16).value,
                        attention_peak(s.cluster.gpu, Precision::bf16).value, bw};
  return time_ops({op}, c);
}

TEST(MegatronLoss, BytesPerLogitCountedFromTheTorchOps) {
  const double s = 2048, v = 129024;  // llama3-8b padded at tp 8
  for (const char* p : {"bf16", "fp8"}) {  // fp8: the output layer and its logits stay bf16
    const Scenario sc = llama8b(p);
    const Op& loss = loss_of(build_op_graph(sc.model, sc.training, sc.parallel.tp));
    EXPECT_DOUBLE_EQ(loss.bytes_moved, 38.0 * s * v) << p;
    EXPECT_DOUBLE_EQ(loss.bytes_moved * loss.backward_share, 14.0 * s * v) << p;
    EXPECT_EQ(loss.kernel_class, -1) << p;
  }
  const Scenario fp32 = llama8b("fp32");
  const Op& loss = loss_of(build_op_graph(fp32.model, fp32.training, fp32.parallel.tp));
  EXPECT_DOUBLE_EQ(loss.bytes_moved, 32.0 * s * v);
  EXPECT_DOUBLE_EQ(loss.bytes_moved * loss.backward_share, 8.0 * s * v);
}

TEST(MegatronLoss, FusedLossBytesPerLogitCountedFromTransformerEnginesKernels) {
  const double s = 2048, v = 129024;  // llama3-8b padded at tp 8
  for (const char* p : {"bf16", "fp8"}) {  // 16-bit logits: 6 B forward, 4 B backward, 2 B kept
    Scenario sc = llama8b(p);
    sc.training.fused_loss = true;
    const Op& loss = loss_of(build_op_graph(sc.model, sc.training, sc.parallel.tp));
    EXPECT_DOUBLE_EQ(loss.bytes_moved, 6.0 * s * v) << p;
    EXPECT_DOUBLE_EQ(loss.bytes_moved * loss.backward_share, 4.0 * s * v) << p;
    EXPECT_DOUBLE_EQ(loss.saved_bytes, 2.0 * s * v) << p;
    EXPECT_EQ(loss.saved_split, TpSplit::tp) << p;
    EXPECT_EQ(loss.working_forward, 0.0) << p;
    EXPECT_EQ(loss.working_backward, 0.0) << p;
  }
  Scenario fp32 = llama8b("fp32");  // fp32 logits: 12 B forward, 8 B backward, 4 B kept
  fp32.training.fused_loss = true;
  const Op& loss = loss_of(build_op_graph(fp32.model, fp32.training, fp32.parallel.tp));
  EXPECT_DOUBLE_EQ(loss.bytes_moved, 12.0 * s * v);
  EXPECT_DOUBLE_EQ(loss.bytes_moved * loss.backward_share, 8.0 * s * v);
  EXPECT_DOUBLE_EQ(loss.saved_bytes, 4.0 * s * v);
}

TEST(MegatronLoss, FusedLossKeepsTheSixteenBitLogitsInsteadOfTheFp32Softmax) {
  // One GPU holding the whole model: the unfused loss keeps the fp32 softmax (4 B per logit), the fused
  // one the bf16 logits holding the gradient (2 B): activations differ by 2 B x s x V (one sequence).
  const std::string yaml =
      "model: {layers: 2, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 32768}\n"
      "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
      "training: {sequence_length: 2048, global_batch: 1, micro_batch: 1}\n"
      "parallel: {tp: 1, pp: 1, zero: 0, recompute: none}\n";
  const Estimate unfused = estimate(test::scenario(yaml));
  const Estimate fused = estimate(test::scenario(yaml, {"training.fused_loss=true"}));
  EXPECT_NEAR(unfused.memory.activations.value - fused.memory.activations.value, 2.0 * 2048 * 32768, 1.0);
}

TEST(MegatronLoss, TimedFromItsTraffic) {
  const Scenario s = llama8b("bf16");
  double bw = 0;
  const OpTimes t = time_alone(s, loss_of(build_op_graph(s.model, s.training, s.parallel.tp)), bw);
  const double logits = 2048.0 * 129024 / 8;  // one sequence, the local vocabulary shard
  const double launch = default_profile(s.cluster.gpu).kernel_launch.value;
  EXPECT_NEAR(t.fwd, 38.0 * logits / bw + launch, 1e-12);
  EXPECT_NEAR(t.bwd, 14.0 * logits / bw + launch, 1e-12);
}

TEST(MegatronLoss, EagerLossStaysTheMeasuredClass) {
  // Hugging Face's loss is the measured cross_entropy class over 12 B per logit of the config vocabulary.
  const Scenario s = test::scenario(
      "model: llama3-8b\n"
      "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
      "training: {framework: pytorch, sequence_length: 2048, global_batch: 1, micro_batch: 1, precision: bf16}\n"
      "parallel: {tp: 1, pp: 1, zero: 0}\n");
  const Op& loss = loss_of(build_op_graph(s.model, s.training, s.parallel.tp));
  EXPECT_DOUBLE_EQ(loss.bytes_moved, 12.0 * 2048 * 128256);
  EXPECT_GE(loss.kernel_class, 0);
}

TEST(MegatronLoss, EagerFusedLossIsFlashAttnsTritonKernelTimedFromItsTraffic) {
  // llm-foundry's `fused_crossentropy` (flash_attn/ops/triton/cross_entropy.py) counted by hand, 16-bit
  // logits: cross_entropy_fwd_kernel reads each row once (2 B), cross_entropy_bwd_kernel reads the logits
  // and writes their gradient (2 + 2 B). It is one kernel each way, timed at the profile's generic memory
  // efficiency, not as the measured eager class (the fp32-upcast torch ops, 12 B per logit).
  const Scenario s = test::scenario(
      "model: llama3-8b\n"
      "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
      "training: {framework: fsdp, sequence_length: 2048, global_batch: 1, micro_batch: 1, precision: bf16,"
      " fused_loss: true}\n"
      "parallel: {tp: 1, pp: 1, zero: 0}\n");
  const double logits = 2048.0 * 128256;  // the config vocabulary: eager code does not pad it
  const Op loss = loss_of(build_op_graph(s.model, s.training, s.parallel.tp));
  EXPECT_EQ(loss.kernel_class, -1);
  EXPECT_DOUBLE_EQ(loss.bytes_moved, 2.0 * logits);
  EXPECT_DOUBLE_EQ(loss.bytes_moved * loss.backward_share, 4.0 * logits);
  double bw = 0;
  const OpTimes t = time_alone(s, loss, bw);
  const double launch = default_profile(s.cluster.gpu).kernel_launch.value;
  EXPECT_NEAR(t.fwd, 2.0 * logits / bw + launch, 1e-12);
  EXPECT_NEAR(t.bwd, 4.0 * logits / bw + launch, 1e-12);
}

}  // namespace
}  // namespace tp
