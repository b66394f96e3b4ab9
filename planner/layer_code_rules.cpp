#include "layer_code_rules.h"

namespace tp {
namespace {

// FP8 training through Transformer Engine (TE 1.8 transformer_engine/pytorch/module/layernorm_linear.py
// and linear.py, _LayerNormLinear/_Linear.forward, ctx.save_for_backward): LayerNormLinear (qkv, fc1)
// keeps the norm's 16-bit input and its output `ln_out` in FP8 (1 B) for the weight gradient; Linear
// (attention out-projection, fc2) keeps its input cast to FP8 (1 B: `inputmat`, or its transpose
// `inputmat_t` without sequence parallelism). The fused attention still keeps its 16-bit output for its
// own backward, so the out-projection's FP8 copy is kept beside it. The output layer is a bf16 Megatron
// ColumnParallelLinear (head_input unchanged).
void apply_te_fp8_saved(SavedTensorRules& r) {
  constexpr double kFp8 = 1.0;
  r.gemm_input = kFp8;
  r.fc2_input = kFp8;
  r.attention_out_extra = kFp8;
}

// Megatron-Core's vocab-parallel loss (core_r0.8.0 megatron/core/tensor_parallel/cross_entropy.py,
// _VocabParallelCrossEntropy; the default, --cross-entropy-loss-fusion off): eager torch ops on the local
// logits shard. Bytes per logit, the logits in `logits_bytes` (the output layer's dtype):
//  forward  .float()                  read lb, write 4 (no copy when the logits are fp32 already)
//           max(dim=-1)               read 4
//           -= logits_max (in place)  read 4, write 4
//           exp(out=) (in place)      read 4, write 4
//           sum(dim=-1)               read 4
//           div_(sum_exp) (in place)  read 4, write 4      -> 38 B with 16-bit logits
//  backward grad_2d[arange, target] -= update: one element per row
//           mul_(grad_output)         read 4, write 4
//           autograd casts the fp32 gradient to the logits' dtype (the input's): read 4, write lb
//                                                          -> 14 B with 16-bit logits
// The per-row terms (target masks, the gathered logit, log of the sum, the three TP all-reduces of one
// value per row) are left out: 1/V of the above.
void apply_megatron_loss_traffic(SavedTensorRules& r, double logits_bytes) {
  const bool upcast = logits_bytes < 4.0;
  r.loss_forward_traffic = (upcast ? logits_bytes + 4.0 : 0.0) + 4.0 + 8.0 + 8.0 + 4.0 + 8.0;
  r.loss_backward_traffic = 8.0 + (upcast ? 4.0 + logits_bytes : 0.0);
}

// Megatron's fused loss as Megatron-Bridge runs it (cross_entropy_loss_fusion on, cross_entropy_fusion_impl
// "te": Megatron-Core 0.15 language_module.py compute_language_model_loss -> te_parallel_cross_entropy ->
// Transformer Engine 2.9 transformer_engine/pytorch/cross_entropy.py and triton/cross_entropy.py). Two
// Triton row kernels in the forward and one in the backward, on the logits in `logits_bytes` (lb), fp32
// arithmetic in registers. Bytes per logit:
//  forward  online_softmax_kernel   read lb (running max and sum per row; 3 fp32 per row written)
//           cross_entropy_kernel    read lb, write lb: the gradient softmax - onehot, in place into the logits
//                                                          -> 3 lb (6 B with 16-bit logits)
//  backward element_mul_kernel      read lb, write lb: x grad_output in place (Megatron's per-token loss,
//           reduce_loss=False, so grad_output is not the scalar 1.0 the wrapper skips)
//                                                          -> 2 lb (4 B with 16-bit logits)
// Saved: the logits' own storage, which holds the gradient (ctx.save_for_backward(inp)): lb per logit, no
// fp32 copy and no working memory beyond it (both kernels write in place; the backward returns the same
// storage). The per-row terms (3 fp32 per row, their all-gather over the TP group) are 1/V of the above.
// Megatron's other fused variant (cross_entropy_fusion_impl "native", fusions/fused_cross_entropy.py:
// the r0.8 torch ops under torch.compile, fp32 softmax saved) is not modelled.
void apply_te_fused_loss(SavedTensorRules& r, double logits_bytes) {
  r.loss_forward_traffic = 3.0 * logits_bytes;
  r.loss_backward_traffic = 2.0 * logits_bytes;
  r.loss_saved = logits_bytes;
  r.loss_forward_extra = 0.0;
  r.loss_backward_extra = 0.0;
}

// flash-attn's Triton CrossEntropyLoss (flash_attn/ops/triton/cross_entropy.py; llm-foundry's
// `fused_crossentropy`), bytes per logit of `logits_bytes`:
//  forward  cross_entropy_fwd_kernel  read lb (online softmax in registers; one fp32 loss and log-sum-exp
//                                     per row written)                                   -> lb (2 B)
//  backward cross_entropy_bwd_kernel  read lb, write lb into torch.empty_like(logits) (inplace_backward
//                                     False)                                             -> 2 lb (4 B)
// Saved: the logits (lb per logit) and the per-row log-sum-exp; the backward's new gradient tensor is lb
// of working memory. One Triton kernel each way, timed at the generic memory efficiency like the fused
// layer code's loss, not as the eager cross_entropy class (whose measurement is the fp32-upcast torch
// ops, 12 B per logit at ~0.7 TB/s on an H100).
void apply_flash_attn_fused_loss(SavedTensorRules& r, double logits_bytes) {
  r.loss_saved = logits_bytes;
  r.loss_forward_extra = 0.0;
  r.loss_backward_extra = logits_bytes;
  r.loss_forward_traffic = logits_bytes;
  r.loss_backward_traffic = 2.0 * logits_bytes;
}

// Memory passes and kernels of the eager non-GEMM ops (step time), counted from their torch ops.
void apply_eager_passes(SavedTensorRules& r, const TrainingSpec& t, const ModelSpec& m) {
  // Memory passes of the eager code relative to the op's minimal traffic (read input, write output in
  // the training dtype), counted from the torch ops of the modules named above.
  r.eager_kernels = true;
  if (m.norm == Norm::rmsnorm && !t.fused_norm) {
    // to(fp32), pow, mean, mul(rsqrt), to(dtype), mul(weight): 36 B per element in bf16 against the op's
    // 4 B minimal (read and write 16 bits: 9 passes). Under autocast the residual stream it reads is fp32
    // already and both casts are no-ops: pow 8, mean 4, mul 8, mul(weight) 8 = 28 B (7 passes, 4 kernels).
    r.norm_passes = t.autocast ? 7.0 : 9.0;
    r.norm_kernels = t.autocast ? 4 : 6;
    // q_norm / k_norm read a 16-bit GEMM output in every mode: the whole chain, and under autocast the fp32
    // weight's mul writes fp32 (38 B per element: 9.5 passes).
    r.head_norm_passes = t.autocast ? 9.5 : 9.0;
    r.head_norm_kernels = 6;
  } else if (t.autocast) {
    // One norm kernel (F.layer_norm, or training.fused_norm) under autocast: layer_norm is among the
    // "CUDA ops that can autocast to float32" (torch.amp documentation; aten/src/ATen/autocast_mode.cpp)
    // and its input, the residual stream, is fp32: it reads and writes 4 B per element against the op's
    // 16-bit minimal (2 passes), each way.
    r.norm_passes = 2.0;
    r.head_norm_passes = 1.5;  // reads its 16-bit input, writes fp32
  }
  if (m.activation == Activation::gelu_tanh) {
    // NewGELUActivation: pow, mul, add, mul, tanh, add, mul, mul (9 kernels with autocast's fp32 cast):
    // ~70 B per element under autocast (fp32 intermediates), 36 B in bf16, against 4 B minimal.
    r.activation_passes = t.autocast ? 17.5 : 9.0;
    r.activation_kernels = 9;
  }
  // SwiGLU: silu then mul, the kernel class swiglu_* measures exactly this eager pair (1 pass).
  if (m.activation == Activation::swiglu) r.activation_kernels = 2;
  // Residual add of a 16-bit GEMM output into the fp32 stream under autocast: 2 + 4 read, 4 written
  // against 6 B minimal.
  r.residual_passes = t.autocast ? 10.0 / 6.0 : 1.0;
  // rotate_half RoPE on q and k (Hugging Face apply_rotary_pos_emb), per element against the 4 B minimal:
  // mul(cos) 2+2, neg of one half 1+1, cat 2+2, mul(sin) 2+2, add 4+2 = 20 B (5 passes, 5 kernels per
  // tensor). Under autocast cos and sin are fp32 (the rotary module returns them in the dtype of the fp32
  // hidden states) and the products promote: mul(cos) 2+4, neg 1+1, cat 2+2, mul(sin) 2+4, add 8+4, then
  // SDPA, on autocast's 16-bit list, casts the fp32 q and k back (4+2): 36 B (9 passes, 6 kernels).
  r.rotary_passes = t.autocast ? 9.0 : 5.0;
  r.rotary_kernels = t.autocast ? 12 : 10;
  r.casts_per_norm_output = t.autocast ? 1.0 : 0.0;
  // gelu_new's output is fp32 under autocast (fp32 tanh promotes the product): c_proj casts it.
  r.casts_after_activation = t.autocast && m.activation == Activation::gelu_tanh ? 1.0 : 0.0;
}

// torch.compile: what Inductor fuses and what its min-cut partitioner keeps for backward.
void apply_compile(SavedTensorRules& r, const TrainingSpec& t, bool swiglu, double bpv) {
  const double lo = 2.0;
  r.casts_after_activation = 0.0;
  // Inductor fuses each elementwise chain into one kernel at the class's bandwidth.
  r.norm_passes = r.activation_passes = r.residual_passes = r.rotary_passes = 1.0;
  r.norm_kernels = r.activation_kernels = r.rotary_kernels = 1.0;
  r.head_norm_passes = r.head_norm_kernels = 1.0;
  r.casts_per_norm_output = 0.0;  // the cast fuses into the norm's kernel
  // torch.compile (Inductor's min-cut partitioner): elementwise chains fuse and are recomputed in
  // backward; GEMM inputs are cast once (common subexpressions) and kept, norms keep their input, the
  // activation keeps the fc1 outputs, the loss kernel fuses the upcast into the softmax.
  r.separate_qkv = r.separate_gate_up = false;
  r.norm = r.residual;
  r.head_norm = t.autocast ? lo : bpv;
  r.activation = (swiglu ? 2.0 : 1.0) * (t.autocast ? lo : bpv);
  r.fc2_input = 0.0;
  if (!t.fused_loss) {
    r.loss_forward_extra = 0.0;
    r.loss_backward_extra = 4.0;
  }
}

}  // namespace

int vocab_multiple(LayerCode code) { return code == LayerCode::fused ? 128 : 0; }

std::int64_t padded_vocab(std::int64_t vocab, LayerCode code, int tp) {
  const std::int64_t multiple = static_cast<std::int64_t>(vocab_multiple(code)) * tp;
  if (multiple <= 1) return vocab;
  return (vocab + multiple - 1) / multiple * multiple;  // _vocab_size_with_padding: up to the next multiple
}

namespace {

// Fused layer code: Korthikanti et al. 2022, Table 2: every tensor kept once in 16 bits; fp32 logits for the
// loss. The same for Megatron-DeepSpeed's layer, Megatron-LM's forked (2022-07, megatron/model/transformer.py
// ParallelTransformerLayer: MixedFusedLayerNorm, bias_gelu_impl, FusedScaleMaskSoftmax,
// bias_dropout_add_fused_train), whose loss is the same vocab-parallel cross-entropy on .float() logits
// (megatron/mpu/cross_entropy.py: max, sub_, exp(out=), sum, div_).
void apply_fused_saved(SavedTensorRules& r, const TrainingSpec& t, const ModelSpec& m, double bpv) {
  r.residual = r.norm = r.head_norm = r.gemm_input = r.fc2_input = bpv;
  // The fused activation keeps its input only: bias-GeLU the fc1 output (K22), SwiGLU the fc1 output of
  // width 2f, gate and up together (Megatron-Core fusions/fused_bias_swiglu.py, SwiGLUFunction.forward:
  // ctx.save_for_backward(input); on by default, --no-bias-swiglu-fusion turns it off). Its output is
  // fc2's input, counted there; ReLU needs nothing beyond it.
  const double act_width = m.activation == Activation::swiglu ? 2.0 : m.activation == Activation::relu ? 0.0 : 1.0;
  r.activation = act_width * bpv;
  r.head_input = bpv;
  // The output layer runs in bf16 under FP8 training (op_graph.cpp), so its logits are 16-bit there.
  const double logits_bytes = t.precision == Precision::fp8 ? 2.0 : bpv;
  if (t.fused_loss) apply_te_fused_loss(r, logits_bytes);
  else apply_megatron_loss_traffic(r, logits_bytes);
  if (t.precision == Precision::fp8) apply_te_fp8_saved(r);
}

// Bytes per element of the fc1 output an eager activation keeps (`lo`: autocast's 16-bit copy).
double eager_activation_saved(Activation a, bool autocast, double bpv, double lo) {
  switch (a) {
    case Activation::gelu:
      // torch.nn.GELU / F.gelu (aten gelu, one kernel; not on autocast's lists, so it runs in the 16-bit
      // dtype of the fc1 output): keeps its input only (derivatives.yaml: gelu_backward(grad, self)).
      return autocast ? lo : bpv;
    case Activation::gelu_tanh:
      // NewGELUActivation: pow keeps its input (fp32 under autocast), tanh its output, the final mul
      // keeps 0.5*x and 1+tanh (fp32 under autocast: fp32 tanh promotes); fc2 then keeps its cast input.
      return autocast ? 4.0 + 4.0 + 4.0 + lo : 4.0 * bpv;
    case Activation::swiglu: return 3.0 * bpv;  // silu input, silu output, up
    case Activation::relu: return 0.0;
    case Activation::relu2: return bpv;
  }
  return bpv;
}

// Eager PyTorch code. Under torch.autocast the parameters (and so the embeddings and the residual stream)
// are fp32; linear/addmm cast their inputs to 16 bits (one cast per module call), and pow, layer_norm,
// log_softmax run in fp32 (PyTorch AMP docs, "CUDA Ops that can autocast to float32").
void apply_eager_saved(SavedTensorRules& r, const TrainingSpec& t, const ModelSpec& m, double bpv) {
  const double lo = 2.0;  // 16-bit copy made by an autocast GEMM
  const bool swiglu = m.activation == Activation::swiglu;
  r.residual = t.autocast ? 4.0 : bpv;
  // Separate modules reading one input matter only under autocast, where each casts its own copy:
  // Llama-style code has q_proj/k_proj/v_proj and gate_proj/up_proj; GPT-2 one c_attn and one c_fc.
  r.separate_qkv_modules = m.position != Position::learned;
  r.separate_gate_up_modules = swiglu;
  r.separate_qkv = t.autocast && r.separate_qkv_modules;
  r.separate_gate_up = t.autocast && r.separate_gate_up_modules;
  if (m.norm == Norm::rmsnorm && !t.fused_norm) {
    // hidden_states.to(float32) (kept by pow and mul) + weight * normalized (kept by the weight's mul):
    // fp32 under autocast, the training dtype otherwise.
    r.norm = 4.0 + (t.autocast ? 4.0 : bpv);
    // q_norm / k_norm: their 16-bit input's fp32 copy and the 16-bit normalized tensor, in every mode
    // (measured on one H200, Qwen3 against Llama of its shape: 2.26 GiB more in both modes, 16 layers of
    // 8,192 tokens x (2,048 + 1,024) elements x 6 B; tests/data/h200/qwen3-vs-llama-steps-and-adamw.json).
    r.head_norm = 4.0 + bpv;
  } else {
    // A fused RMSNorm keeps its input and the per-row rstd like native_layer_norm (torchtitan
    // torchtitan/models/norms.py, TritonFusedRMSNorm.forward: ctx.save_for_backward(x, weight, rstd)).
    r.norm = r.residual;  // native_layer_norm keeps its input (and per-row mean/rstd)
    r.head_norm = t.autocast ? lo : bpv;
  }
  r.gemm_input = t.autocast ? lo : bpv;
  r.activation = eager_activation_saved(m.activation, t.autocast, bpv, lo);
  r.fc2_input = t.autocast ? lo : bpv;
  r.head_input = r.gemm_input;
  // HF loss: fp32 upcast of the logits, log_softmax keeps its fp32 output (4 B per logit). Forward peak:
  // 16-bit logits + fp32 copy beside it (6 B more); backward peak: log_softmax backward holds the
  // incoming and outgoing fp32 gradients (8 B more) while the 16-bit logits are gone.
  r.loss_saved = 4.0;
  r.loss_forward_extra = bpv + 4.0;
  r.loss_backward_extra = 8.0;
  r.loss_is_eager_class = !t.fused_loss;
  if (t.fused_loss) apply_flash_attn_fused_loss(r, t.autocast ? lo : bpv);
  r.autocast_weight_copies = t.autocast;
  apply_eager_passes(r, t, m);
  if (t.compile) apply_compile(r, t, swiglu, bpv);
}

}  // namespace

SavedTensorRules saved_tensor_rules(const TrainingSpec& t, const ModelSpec& m) {
  SavedTensorRules r;
  r.fp8_recipe = t.fp8_recipe;
  r.attention_unpad = t.attention_unpad;
  r.repeat_kv = repeat_kv_of(t);
  const double bpv = stored_bytes(t.precision);
  if (layer_code_of(t) == LayerCode::fused) apply_fused_saved(r, t, m, bpv);
  else apply_eager_saved(r, t, m, bpv);
  return r;
}

}  // namespace tp
