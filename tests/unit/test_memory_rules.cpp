// Memory rules, each checked against a hand computation written here (docs/model.md §9, §20, §21):
// - Transformer Engine FP8 saved tensors of one layer (TE 1.8 layernorm_linear.py / linear.py
//   save_for_backward: FP8 `ln_out` and FP8 Linear inputs, 1 B; the attention keeps its bf16 output);
// - torch's one-kernel GELU (`gelu`) keeps its input only, HF's composed `gelu_tanh` four tensors;
// - flash-attn's fused cross-entropy keeps the 16-bit logits (`fused_loss`);
// - DeepSpeed ZeRO-3 gathers the largest submodule plus a 5e7-element prefetch bucket;
// - activation offload moves the checkpointed layer inputs to the host;
// - the allocator slack covers only memory allocated during the step, and with layer recompute one more
//   loss-sized block (the stranded segment);
// - gradients freed by zero_grad once per step stay allocated beside every later micro-batch's
//   activations when gradients accumulate (torch .grad accumulation; FSDP's sharded gradient).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "estimate.h"
#include "op_graph.h"
#include "tests/test_support.h"
#include "layer_code_rules.h"

namespace tp {
namespace {

double layer_saved(const OpGraph& g) {
  double bytes = 0;
  for (const Op& op : g.layer) bytes += op.saved_bytes;
  return bytes;
}

// GPT-like layer: h 1024, 16 heads of 64 (MHA), f 4096, LayerNorm, no dropout, flash attention, s = 1.
ModelSpec gpt_layer(Activation a) {
  ModelSpec m;
  m.layers = 1;
  m.hidden = 1024;
  m.heads = m.kv_heads = 16;
  m.head_dim = 64;
  m.ffn_hidden = 4096;
  m.vocab = 1000;
  m.activation = a;
  m.norm = Norm::layernorm;
  m.position = Position::learned;
  m.max_positions = 16;
  return m;
}

TEST(MemoryRules, TransformerEngineFp8SavedBytesOfOneLayer) {
  const double h = 1024, f = 4096, lse = 16 * 4.0;  // fp32 log-sum-exp per head and token
  // bf16 (Korthikanti Table 2 without dropout): norm 2h, qkv input 2h, Q K V 6h, attention output 2h,
  // norm 2h, fc1 input 2h, GeLU input 2f, fc2 input 2f.
  const double bf16 = 2 * h + 2 * h + 6 * h + 2 * h + 2 * h + 2 * h + 2 * f + 2 * f + lse;
  // FP8: qkv and fc1 keep FP8 ln_out (1 B), the out-projection an FP8 copy beside the bf16 output (+1 B),
  // fc2 its FP8 input (1 B); norms, Q K V and the GeLU input stay 16-bit.
  const double fp8 = 2 * h + 1 * h + 6 * h + (2 + 1) * h + 2 * h + 1 * h + 2 * f + 1 * f + lse;
  EXPECT_DOUBLE_EQ(layer_saved(build_op_graph(gpt_layer(Activation::gelu), 1, Precision::bf16, true)), bf16);
  EXPECT_DOUBLE_EQ(layer_saved(build_op_graph(gpt_layer(Activation::gelu), 1, Precision::fp8, true)), fp8);
  EXPECT_DOUBLE_EQ(bf16, 32832.0);
  EXPECT_DOUBLE_EQ(fp8, 27712.0);
}

// Dropout with FlashAttention: the attention dropout lives inside the kernel, which keeps only the random
// generator state and regenerates the mask in backward (Dao et al. 2022, arXiv:2205.14135 §3.1 and
// Algorithm 2), so no s^2 tensor is saved; the two bias-dropout-adds keep a 1-byte mask each (Korthikanti
// Table 2). By hand, s = 1, h = 1024: 2 masks x 1024 x 1 B = 2048 B more per layer, in bf16 and fp8 alike.
// Without FlashAttention the s^2 scores add a mask (1 B) and the dropout output (bpv) per score:
// 16 heads x 1 x 1 x (1 + 2) = 48 B more on top.
TEST(MemoryRules, DropoutAddsTwoMasksPerLayerAndTheScoreMaskOnlyWithoutFlashAttention) {
  ModelSpec with = gpt_layer(Activation::gelu);
  with.dropout = true;
  const ModelSpec without = gpt_layer(Activation::gelu);
  for (Precision p : {Precision::bf16, Precision::fp8}) {
    EXPECT_DOUBLE_EQ(layer_saved(build_op_graph(with, 1, p, true)) - layer_saved(build_op_graph(without, 1, p, true)),
                     2048.0);
  }
  EXPECT_DOUBLE_EQ(
      layer_saved(build_op_graph(with, 1, Precision::bf16, false)) - layer_saved(build_op_graph(without, 1, Precision::bf16, false)),
      2048.0 + 48.0);
}

TEST(MemoryRules, EagerGeluKeepsItsInputAndGeluTanhFourTensors) {
  TrainingSpec t;
  t.framework = Framework::fsdp;
  t.precision = Precision::bf16;
  // bf16: F.gelu keeps its 2 B input; NewGELUActivation keeps pow's input, tanh's output, 0.5x, 1+tanh.
  EXPECT_DOUBLE_EQ(saved_tensor_rules(t, gpt_layer(Activation::gelu)).activation, 2.0);
  EXPECT_DOUBLE_EQ(saved_tensor_rules(t, gpt_layer(Activation::gelu_tanh)).activation, 8.0);
  // One kernel and one pass for torch's GELU, nine kernels for the composed chain.
  EXPECT_DOUBLE_EQ(saved_tensor_rules(t, gpt_layer(Activation::gelu)).activation_kernels, 1.0);
  EXPECT_DOUBLE_EQ(saved_tensor_rules(t, gpt_layer(Activation::gelu_tanh)).activation_kernels, 9.0);
}

TEST(MemoryRules, FusedLossKeepsSixteenBitLogits) {
  TrainingSpec t;
  t.framework = Framework::fsdp;
  t.fused_loss = true;
  const SavedTensorRules r = saved_tensor_rules(t, gpt_layer(Activation::gelu));
  EXPECT_DOUBLE_EQ(r.loss_saved, 2.0);           // the bf16 logits (+ one fp32 lse per row)
  EXPECT_DOUBLE_EQ(r.loss_forward_extra, 0.0);   // no fp32 copy
  EXPECT_DOUBLE_EQ(r.loss_backward_extra, 2.0);  // torch.empty_like(logits) for the gradient
}

TEST(MemoryRules, FusedLossIsAcceptedUnderMegatronExceptInFp16) {
  // Megatron's fused loss (Transformer Engine parallel_cross_entropy) loads in bf16 and fp8 (bf16 logits);
  // TE documents and tests bf16 and fp32 logits only, so fp16 is refused. Eager frameworks accept it.
  const std::string model =
      "model: {layers: 2, hidden: 1024, heads: 16, ffn_hidden: 4096, vocab: 32000}\n"
      "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n";
  EXPECT_TRUE(test::scenario(model + "training: {global_batch: 1, fused_loss: true}\n").training.fused_loss);
  EXPECT_TRUE(test::scenario(model + "training: {global_batch: 1, precision: fp8, fused_loss: true}\n").training.fused_loss);
  EXPECT_THROW(test::scenario(model + "training: {global_batch: 1, precision: fp16, fused_loss: true}\n"), std::exception);
  EXPECT_TRUE(test::scenario(model + "training: {framework: fsdp, global_batch: 1, fused_loss: true}\n").training.fused_loss);
}

const char* kDeepSpeed1T =
    "model: {layers: 4, hidden: 25600, heads: 160, ffn_hidden: 102400, vocab: 50304, activation: gelu, "
    "norm: layernorm, position: learned, max_positions: 1024, tied_embeddings: true, bias: true}\n"
    "cluster: {preset: dgx-a100, nodes: 128}\n"
    "training: {framework: deepspeed, precision: fp16, sequence_length: 1024, global_batch: 8192, "
    "micro_batch: 8, optimizer: adamw}\n";

TEST(MemoryRules, DeepSpeedZero3GathersTheLargestSubmodulePlusPrefetch) {
  const Scenario s = test::scenario(std::string(kDeepSpeed1T) +
                                    "parallel: {dp: 1024, recompute: full, zero: 3, offload: {optimizer: cpu}}\n");
  const Estimate e = estimate(s);
  // fc1 is the largest submodule: 25600 x 102400 weights + its 102400 bias (over DeepSpeed's persistence
  // threshold of 1e5); + 5e7 prefetched. Each of the 4 layers also holds its persistent tensors whole
  // (<= 1e5 elements, partition_parameters.py ds_persist): two LayerNorms 2 x 25600 each, the qkv bias
  // 76800, the proj and fc2 biases 25600 each: 230,400 per layer. fp16 (2 B).
  const double persistent = 2 * 51200.0 + 76800.0 + 2 * 25600.0;
  const double gathered = 2.0 * (25600.0 * 102400.0 + 102400.0 + 5e7 + 4 * persistent);
  // Buffers with full recompute = one layer's full activations + DeepSpeed's ZeRO-3 reduce bucket, allocated
  // once (stage3.py: torch.empty(reduce_bucket_size), 5e8 fp16 elements; until 2026-12 the generic 2 x 25 MB)
  // + gathers.
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const double one_layer = 8.0 * layer_saved(g);  // micro-batch 8, tp 1
  EXPECT_NEAR(e.memory.buffers.value, one_layer + 5e8 * 2 + gathered, 1.0);
}

// DeepSpeed with the optimizer offloaded sends the reduced gradient partitions to the host (stage_1_and_2.py
// copy_grads_in_partition returns first under cpu_offload; stage3.py grad_partitions_flat_buffer on the CPU):
// from ZeRO-2 on the GPU keeps none (until 2026-12 it kept them beside the host's fp32 copy). Megatron keeps
// its gradient buffer.
TEST(MemoryRules, DeepSpeedOffloadKeepsNoGradientPartitionOnTheGpu) {
  const std::string base = std::string(kDeepSpeed1T) + "parallel: {dp: 1024, recompute: full, offload: {optimizer: cpu}, zero: ";
  for (const char* zero : {"2", "3"}) {
    const Estimate e = estimate(test::scenario(base + zero + "}\n"));
    EXPECT_EQ(e.memory.gradients.value, 0.0) << zero;
    EXPECT_GT(e.memory.host.value, 0.0) << zero;
  }
  EXPECT_GT(estimate(test::scenario(base + "2}\n", {"training.framework=megatron"})).memory.gradients.value, 0.0);
}

TEST(MemoryRules, ActivationOffloadMovesCheckpointedInputsToTheHost) {
  const std::string par = "parallel: {dp: 1024, recompute: full, zero: 3, offload: {optimizer: cpu";
  const Estimate on = estimate(test::scenario(std::string(kDeepSpeed1T) + par + ", activations: cpu}}\n"));
  const Estimate off = estimate(test::scenario(std::string(kDeepSpeed1T) + par + "}}\n"));
  // 4 layer inputs of s x b x h x 2 B (fp16) each move to the host.
  const double inputs = 4 * 1024.0 * 8 * 25600 * 2;
  EXPECT_NEAR(off.memory.activations.value - on.memory.activations.value, inputs, 1.0);
  EXPECT_NEAR(on.memory.host.value - off.memory.host.value, inputs, 1.0);
}

TEST(MemoryRules, OffloadingActivationsNeedsLayerRecompute) {
  EXPECT_THROW(test::scenario(std::string(kDeepSpeed1T) +
                              "parallel: {dp: 1024, recompute: none, zero: 3, offload: {activations: cpu}}\n"),
               std::exception);
}

TEST(MemoryRules, AllocatorSlackCoversTransientMemoryAndTheStrandedLossBlock) {
  // Megatron, one GPU: weights, gradients, master and optimizer are allocated once (no slack).
  const std::string base =
      "model: {layers: 2, hidden: 1024, heads: 16, ffn_hidden: 4096, vocab: 32000}\n"
      "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
      "training: {sequence_length: 1024, global_batch: 2, micro_batch: 2}\n";
  const Estimate none = estimate(test::scenario(base + "parallel: {recompute: none}\n"));
  const MemoryBreakdown& b = none.memory;
  EXPECT_NEAR(b.overhead.value, 0.5 * kGiB + 0.05 * (b.activations.value + b.buffers.value), 1.0);
  // Full recompute: plus one fp32 logit tensor of the micro-batch (2 x 1024 tokens x 32000 x 4 B).
  const Estimate full = estimate(test::scenario(base + "parallel: {recompute: full}\n"));
  const MemoryBreakdown& f = full.memory;
  EXPECT_NEAR(f.overhead.value,
              0.5 * kGiB + 0.05 * (f.activations.value + f.buffers.value) + 2.0 * 1024 * 32000 * 4, 1.0);
}

TEST(MemoryRules, AccumulatedGradientsSitBesideLaterMicroBatches) {
  // FSDP (gradients freed by zero_grad, not kept in a buffer), 8 GPUs, ZeRO-3, micro-batch 1. With one
  // micro-batch per step the peak (the recompute of a layer) comes before any gradient exists; with
  // two, the second micro-batch reaches the same peak beside the first one's sharded gradients.
  const std::string base =
      "model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000}\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1, dp: 8, recompute: full, zero: 3}\n";
  const auto with_batch = [&](int global) {
    return estimate(test::scenario(base + "training: {framework: fsdp, precision: bf16, sequence_length: 4096, "
                                          "micro_batch: 1, global_batch: " + std::to_string(global) + "}\n"));
  };
  const Estimate one = with_batch(8), two = with_batch(16);
  ASSERT_EQ(one.micro_batches, 1);
  ASSERT_EQ(two.micro_batches, 2);
  EXPECT_EQ(one.memory.gradients.value, 0.0);
  // The sharded gradients: every parameter of the GPU's stage at 4 B, over 8 ranks: the reduce runs in bf16
  // (grad_precision = bf16) but FSDP casts each reduced shard back to the fp32 master's dtype.
  const double grads = 4.0 * static_cast<double>(one.memory.parameters) / 8.0;
  EXPECT_NEAR(two.memory.gradients.value, grads, 1.0);
  EXPECT_NEAR(two.memory.activations.value + two.memory.buffers.value,
              one.memory.activations.value + one.memory.buffers.value, 1.0);
  // They are allocated during the step, so the allocator slack (5 %) covers them too.
  EXPECT_NEAR(two.memory.total.value - one.memory.total.value, 1.05 * grads, 1.0);
}

TEST(MemoryRules, FsdpKeepsItsGradientShardsInTheParameterDtype) {
  // Hand computation: 8 GPUs, ZeRO-3, two micro-batches, so the sharded gradients are held at the peak.
  // FSDP1 _cast_grad_to_param_dtype / FSDP2 foreach_reduce cast each reduced shard to the sharded
  // parameter's dtype: the fp32 master (4 B) under mixed precision whatever the reduce dtype, the parameter's
  // own (2 B) for a model cast to bf16 (master_weights: none). DeepSpeed keeps its 16-bit partitions (2 B).
  const std::string base =
      "model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000}\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1, dp: 8, recompute: full, zero: 3}\n";
  const auto gradient_bytes = [&](const std::string& training) {
    const Estimate e = estimate(test::scenario(base + "training: {precision: bf16, sequence_length: 4096, "
                                                      "micro_batch: 1, global_batch: 16, " + training + "}\n"));
    return e.memory.gradients.value / (static_cast<double>(e.memory.parameters) / 8.0);
  };
  EXPECT_NEAR(gradient_bytes("framework: fsdp"), 4.0, 1e-9);
  EXPECT_NEAR(gradient_bytes("framework: fsdp, grad_precision: fp32"), 4.0, 1e-9);
  EXPECT_NEAR(gradient_bytes("framework: fsdp, master_weights: none"), 2.0, 1e-9);
  EXPECT_NEAR(gradient_bytes("framework: deepspeed"), 2.0, 1e-9);
}

TEST(MemoryRules, FsdpNoShardKeepsItsGradientsInTheParameterDtype) {
  // Hand computation: NO_SHARD (zero 0) all-reduces each whole gradient in the reduce dtype and casts it
  // back to the fp32 parameter (FSDP1 _runtime_utils.py _reduce_grad_no_shard, _cast_grad_to_param_dtype):
  // 4 B per parameter on every GPU, whatever grad_precision says; DDP (framework: pytorch) keeps bf16 (2 B).
  const std::string base =
      "model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000}\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "parallel: {tp: 1, pp: 1, dp: 8, recompute: full, zero: 0}\n";
  const auto gradient_bytes = [&](const std::string& training) {
    const Estimate e = estimate(test::scenario(base + "training: {precision: bf16, sequence_length: 4096, "
                                                      "micro_batch: 1, global_batch: 16, " + training + "}\n"));
    return e.memory.gradients.value / static_cast<double>(e.memory.parameters);
  };
  EXPECT_NEAR(gradient_bytes("framework: fsdp"), 4.0, 1e-9);
  EXPECT_NEAR(gradient_bytes("framework: fsdp, grad_precision: bf16"), 4.0, 1e-9);
  EXPECT_NEAR(gradient_bytes("framework: pytorch"), 2.0, 1e-9);
}

TEST(MemoryRules, DeepSpeedBf16OptimizerKeepsBf16GradientsBesideItsFp32Ones) {
  // Hand computation: 8 GPUs at ZeRO-1 keep whole gradients. bf16 with fp32 gradients runs DeepSpeed's
  // BF16_Optimizer: the fp32 accumulator (4 B) and each bf16 .grad, kept until the next backward sets it to
  // None (bf16_optimizer.py clear_lp_grads), 2 B: 6 B per parameter. fp16 at ZeRO-1 frees each 16-bit
  // gradient once added to its fp32 copy (stage_1_and_2.py fill_grad_accum_attribute): 4 B. 16-bit
  // gradients alone: 2 B. ZeRO-2 partitions them: the bf16 copies are not counted there.
  const std::string base =
      "model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000}\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n";
  const auto gradient_bytes = [&](const std::string& training, int zero) {
    const Estimate e = estimate(test::scenario(
        base + "training: {framework: deepspeed, sequence_length: 4096, micro_batch: 1, global_batch: 16, " + training +
        "}\nparallel: {tp: 1, pp: 1, dp: 8, zero: " + std::to_string(zero) + "}\n"));
    return e.memory.gradients.value / static_cast<double>(e.memory.parameters) * (zero >= 2 ? 8.0 : 1.0);
  };
  EXPECT_NEAR(gradient_bytes("precision: bf16, grad_precision: fp32", 1), 6.0, 1e-9);
  EXPECT_NEAR(gradient_bytes("precision: fp16, grad_precision: fp32", 1), 4.0, 1e-9);
  EXPECT_NEAR(gradient_bytes("precision: bf16", 1), 2.0, 1e-9);
  EXPECT_NEAR(gradient_bytes("precision: bf16, grad_precision: fp32", 2), 4.0, 1e-9);
}

TEST(MemoryRules, DeepSpeedZero12ReduceBucketHoldsReduceBucketSizeElements) {
  // Hand computation: DeepSpeed's ZeRO-1/2 optimizer allocates its reduce bucket at each backward,
  // reduce_bucket_size elements in the parameters' dtype (stage_1_and_2.py backward, ipg_buffer; 5e8 by
  // default), a second one with overlap_comm. Measured against a bucket of one element (2 B), which leaves
  // the rest of the buffers as they are: (5e8 - 1) x 2 B more, twice that with the overlap; BF16_Optimizer
  // (bf16 with fp32 gradients at ZeRO-1) has no bucket.
  const std::string base =
      "model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000}\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n";
  const auto buffers = [&](const std::string& training, int zero, const std::string& extra, const std::string& memory) {
    return estimate(test::scenario(base + "training: {framework: deepspeed, sequence_length: 4096, micro_batch: 1, " +
                                   training + "}\nparallel: {tp: 1, pp: 1, dp: 8, zero: " + std::to_string(zero) +
                                   extra + "}\n" + memory))
        .memory.buffers.value;
  };
  const auto bucket_bytes = [&](const std::string& training, int zero, const std::string& extra = "") {
    return buffers(training, zero, extra, "") - buffers(training, zero, extra, "memory: {zero3_reduce_bucket: 1}\n");
  };
  EXPECT_DOUBLE_EQ(bucket_bytes("precision: bf16", 1), (5e8 - 1.0) * 2.0);
  EXPECT_DOUBLE_EQ(bucket_bytes("precision: bf16", 2), (5e8 - 1.0) * 2.0);
  EXPECT_DOUBLE_EQ(bucket_bytes("precision: bf16", 2, ", overlap: {grad_reduce: true}"), 2.0 * (5e8 - 1.0) * 2.0);
  EXPECT_DOUBLE_EQ(bucket_bytes("precision: bf16, grad_precision: fp32", 1), 0.0);
}

TEST(MemoryRules, DeepSpeedsOwnAllReduceNeedsABufferAtTheStepEnd) {
  // Hand computation (engine.py allreduce_bucket; docs/model.md §9): where DeepSpeed's engine all-reduces the
  // gradients itself, the step's end holds the model states and the all-reduce's buffer, the backward's
  // activations gone. BF16_Optimizer casts its fp32 flat gradients to bf16 for it: 2 B per parameter; fp16 at
  // ZeRO 0 flattens a bucket of 5e8 gradient elements (2 B each) into a new tensor. Short sequences and full
  // recompute keep the backward's activations below either. stage_1_and_2.py's ZeRO-1 (16-bit gradients)
  // reduces through its own bucket: its peak keeps the activations.
  const std::string base =
      "model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000}\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n";
  const auto memory = [&](const std::string& training, int zero) {
    return estimate(test::scenario(base + "training: {framework: deepspeed, sequence_length: 512, micro_batch: 1, " +
                                   training + "}\nparallel: {tp: 1, pp: 1, dp: 8, zero: " + std::to_string(zero) +
                                   ", recompute: full}\n"))
        .memory;
  };
  const MemoryBreakdown bf16_optimizer = memory("precision: bf16, grad_precision: fp32", 1);
  const double p = bf16_optimizer.parameters;
  ASSERT_GT(p, 5e8);  // 4 layers of 201 M and two 131 M vocabulary matrices: 1.07 B
  EXPECT_DOUBLE_EQ(bf16_optimizer.buffers.value, 2.0 * p);
  EXPECT_DOUBLE_EQ(bf16_optimizer.activations.value, 0.0);
  EXPECT_DOUBLE_EQ(memory("precision: bf16, grad_precision: fp32", 0).buffers.value, 2.0 * p);
  // fp16 at ZeRO 0: after the all-reduce's 5e8-element bucket (2 B each) the optimizer step (FP16_Optimizer,
  // fp16/fused_optimizer.py) flattens fp32 copies of the whole fp16 gradients beside them, the per-parameter
  // .to(fp32) copies and their concatenation: 8 B per parameter, the larger (until 2026-12 the bucket alone).
  const MemoryBreakdown fp16_zero0 = memory("precision: fp16", 0);
  EXPECT_DOUBLE_EQ(fp16_zero0.buffers.value, 8.0 * p);
  EXPECT_GT(8.0 * p, 5e8 * 2.0);
  EXPECT_DOUBLE_EQ(fp16_zero0.activations.value, 0.0);
  // A model without an fp32 master has no such copies: the bucket.
  EXPECT_DOUBLE_EQ(memory("precision: fp16, master_weights: none", 0).buffers.value, 5e8 * 2.0);
  EXPECT_GT(memory("precision: bf16", 1).activations.value, 0.0);
}

}  // namespace
}  // namespace tp
