// The memory-bound kernels of the layer code beside its GEMMs (planner/op_graph_kernels.h).
#include "op_graph_kernels.h"

#include <utility>

#include "kernel_class.h"
#include "op_builders.h"
#include "op_graph_comm.h"

namespace tp {
namespace {

// One memory-bound quantization kernel of FP8 training, run in the forward (`forward`) or the backward
// only, moving `bytes` (unsplit) split as `split` over the TP ranks.
void add_fp8_quantize(std::vector<Op>& ops, const char* name, Block block, bool expert, double bytes, TpSplit split,
                      bool forward) {
  Op& op = add_elementwise(ops, name, block, 0.0, split, bytes);  // keeps nothing for backward
  op.expert = expert;
  set_kernels(op, KernelClass::cast_to_16bit, KernelClass::cast_to_16bit, 1, 1);
  op.forward_share = forward ? 1.0 : 0.0;
  op.backward_share = forward ? 0.0 : 1.0;
}

// The bias gradient of an eager Linear: autograd sums the output gradient over the tokens
// (derivatives.yaml, addmm's `self` is broadcast, so the engine's sum_to runs at::sum over dim 0: one
// reduce_kernel per biased Linear in the backward, the `reduce` class of h100-pytorch-kernel-time.json).
// It reads the output gradient once, in the GEMM's dtype; the bias-sized write is left out. Not a measured
// kernel class: timed at the profile's generic memory efficiency. Megatron and Transformer Engine fuse it
// into their GEMM epilogues and fused bias kernels.
// `gemm` must not be an entry of `ops` (the append may move it).
void add_bias_grad(std::vector<Op>& ops, const Op& gemm, double grad_bytes) {
  Op& op = add_elementwise(ops, "bias_grad", gemm.block, 0.0, gemm.row_parallel ? TpSplit::seq_tp : TpSplit::tp,
                           gemm_tokens(gemm) * gemm.gemm_cols * grad_bytes);
  op.expert = gemm.expert;
  op.forward_share = 0.0;
  op.backward_share = 1.0;
}

}  // namespace

double norm_output_readers(Block block, const SavedTensorRules& r) {
  if (block == Block::attention) return r.separate_qkv ? 3.0 : 1.0;
  if (block == Block::mlp) return r.separate_gate_up ? 2.0 : 1.0;
  return 1.0;
}

void set_kernels(Op& op, KernelClass fwd, KernelClass bwd, double passes, double kernels) {
  op.kernel_class = static_cast<int>(fwd);
  op.kernel_class_backward = static_cast<int>(bwd);
  op.passes = passes;
  op.kernels = kernels;
  op.backward_share = 1.5;  // the class measurements count 3 tensors backward against 2 forward
}

// Eager code: kernel classes and memory passes of the non-GEMM ops, and the casts autocast adds
// before the GEMMs that read a norm's output (read fp32, write 16 bits, per reading module).
void apply_eager_kernels(std::vector<Op>& ops, const ModelSpec& m, const SavedTensorRules& r, double s, double grad_bytes) {
  const bool rms = m.norm == Norm::rmsnorm;
  std::vector<Op> out;
  out.reserve(ops.size() + 4);
  for (Op op : ops) {
    if (op.kind == OpKind::norm) {
      // Qwen3's per-head norms over q and k (model.qk_norm): their input is a 16-bit GEMM output.
      const bool head = op.role == OpRole::head_norm;
      set_kernels(op, rms ? KernelClass::rmsnorm_fwd : KernelClass::layernorm_fwd,
                  rms ? KernelClass::rmsnorm_bwd : KernelClass::layernorm_bwd, head ? r.head_norm_passes : r.norm_passes,
                  head ? r.head_norm_kernels : r.norm_kernels);
    } else if (op.role == OpRole::residual) {
      set_kernels(op, KernelClass::residual_add, KernelClass::residual_add, r.residual_passes, 1);
    } else if (op.role == OpRole::activation) {
      const bool glu = m.activation == Activation::swiglu;
      set_kernels(op, glu ? KernelClass::swiglu_fwd : KernelClass::gelu_fwd,
                  glu ? KernelClass::swiglu_bwd : KernelClass::gelu_bwd, r.activation_passes, r.activation_kernels);
    }
    out.push_back(op);
    if (op.kind == OpKind::gemm && op.bias && op.gemm_rows > 0) add_bias_grad(out, op, grad_bytes);
    if (op.kernel_class == static_cast<int>(KernelClass::gelu_fwd) && r.casts_after_activation > 0) {
      Op cast = op;
      cast.name = "autocast_cast_activation";
      cast.saved_bytes = 0;
      cast.bytes_moved = s * static_cast<double>(op.expert ? m.moe.expert_ffn_hidden : m.ffn_hidden) * (4.0 + 2.0);
      set_kernels(cast, KernelClass::cast_to_16bit, KernelClass::cast_to_fp32, 1, 1);
      out.push_back(cast);
    }
    // (q_norm and k_norm feed the attention, not a GEMM.)
    if (op.role == OpRole::block_norm && r.casts_per_norm_output > 0) {
      const double reads = norm_output_readers(op.block, r);
      Op& cast = add_elementwise(out, "autocast_cast", op.block, 0.0, TpSplit::seq_tp,
                                 reads * s * static_cast<double>(m.hidden) * (4.0 + 2.0));
      set_kernels(cast, KernelClass::cast_to_16bit, KernelClass::cast_to_fp32, 1, reads);
    }
  }
  ops = std::move(out);
}

// FP8 training with Transformer Engine (docs/model.md, "FP8 training"): every FP8 GEMM's operands are
// quantized by memory-bound kernels the 16-bit code does not run. Per GEMM with input X [t x in] and
// output Y [t x out] (TE 1.x, transformer_engine/pytorch/module/linear.py, layernorm_linear.py, base.py
// grad_output_preprocess):
//  - input fed by a fused norm (TELayerNormColumnParallelLinear: qkv, fc1): the norm kernel writes FP8
//    itself; the weight-gradient GEMM needs X^T: fp8_transpose of the gathered input in the backward
//    (read 1 B, write 1 B per element, over the full sequence: ln_out_total).
//  - any other input (attention_out, fc2, experts): fp8_cast_transpose_fused in the forward (read 2 B,
//    write FP8 X and FP8 X^T: 4 B per element).
//  - output gradient, column-parallel: fp8_cast_transpose(_bgrad)_fused (4 B per element, split by tp);
//    row-parallel: cast_to_fp8 of the local (sequence-parallel) shard (3 B), gathered in FP8, then
//    fp8_transpose of the gathered tensor (2 B per element of the full sequence).
// All are timed at the cast_to_16bit kernel class (a one-pass cast, the nearest measured class).
//
// Current scaling (Fp8Recipe::current; TE 2.9 pytorch/csrc/quantizer.cpp
// Float8CurrentScalingQuantizer::quantize_impl, csrc/extensions/normalization.cpp layernorm_fwd /
// rmsnorm_fwd, module/linear.py _customize_quantizers_float8_current_scaling) adds, per quantized tensor:
//  - an amax pass before the cast (nvte_compute_amax: read the 16-bit tensor, 2 B per element) for every
//    cast input and output gradient: fp8_amax_input, fp8_amax_grad_output;
//  - for a norm-fed input, the norm cannot write FP8 (its scale is not known until the norm's output is):
//    the norm writes its 16-bit output with the amax (FUSED_NORM_AMAX_FP8) and a separate cast reads it and
//    writes FP8 (read 2 B, write 1 B per element of the local shard): fp8_cast_norm_output;
//  - with sequence parallelism, an all-reduce (max) of the one-value amax over the TP group for the
//    column-parallel inputs (quantized before their FP8 all-gather) and the row-parallel output gradients
//    (with_amax_reduction): fp8_amax_all_reduce, on the critical path.
// The scale computation (nvte_compute_scale_from_amax) is one element per tensor and left out.
void add_fp8_quantization(std::vector<Op>& ops, bool norm_fused, Fp8Recipe recipe) {
  const bool current = recipe == Fp8Recipe::current;
  std::vector<Op> out;
  out.reserve(3 * ops.size());
  for (const Op& op : ops) {
    const bool fp8 = op.kind == OpKind::gemm && op.compute_precision == Precision::fp8 && op.gemm_rows > 0;
    if (!fp8) {
      out.push_back(op);
      continue;
    }
    const double tokens = gemm_tokens(op);  // all copies together
    const double in_elems = tokens * op.gemm_rows;
    const double out_elems = tokens * op.gemm_cols;
    const bool from_norm = norm_fused && op.role == OpRole::norm_fed_gemm;
    if (from_norm) {
      if (current) add_fp8_quantize(out, "fp8_cast_norm_output", op.block, op.expert, 3.0 * in_elems, TpSplit::seq_tp, true);
    } else {
      const TpSplit split = op.row_parallel ? TpSplit::tp : op.saved_split;
      if (current) add_fp8_quantize(out, "fp8_amax_input", op.block, op.expert, 2.0 * in_elems, split, true);
      add_fp8_quantize(out, "fp8_cast_transpose_input", op.block, op.expert, 4.0 * in_elems, split, true);
    }
    if (current && !op.row_parallel && !op.expert) add_tp_amax_all_reduce(out, op.block, CommPass::forward);
    out.push_back(op);
    if (from_norm) add_fp8_quantize(out, "fp8_transpose_input", op.block, op.expert, 2.0 * in_elems, TpSplit::none, false);
    const TpSplit grad_split = op.row_parallel ? TpSplit::seq_tp : TpSplit::tp;
    if (current) add_fp8_quantize(out, "fp8_amax_grad_output", op.block, op.expert, 2.0 * out_elems, grad_split, false);
    if (current && op.row_parallel && !op.expert) add_tp_amax_all_reduce(out, op.block, CommPass::backward);
    if (op.row_parallel) {
      add_fp8_quantize(out, "fp8_cast_grad_output", op.block, op.expert, 3.0 * out_elems, TpSplit::seq_tp, false);
      add_fp8_quantize(out, "fp8_transpose_grad_output", op.block, op.expert, 2.0 * out_elems, TpSplit::none, false);
    } else {
      add_fp8_quantize(out, "fp8_cast_transpose_grad_output", op.block, op.expert, 4.0 * out_elems, TpSplit::tp, false);
    }
  }
  ops = std::move(out);
}

}  // namespace tp
