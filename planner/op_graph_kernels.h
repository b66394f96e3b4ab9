// The memory-bound kernels the layer code runs beside its GEMMs, as op-graph entries: the kernel classes
// of eager code (with autocast's casts) and FP8 training's quantization kernels. Built by build_op_graph;
// formulas and sources: docs/model.md §20 (eager code) and §21 (FP8 training).
#pragma once

#include <vector>

#include "framework_rules.h"
#include "layer_code_rules.h"
#include "kernel_class.h"
#include "op_graph.h"

namespace tp {

// How many Linear modules read the output of `block`'s norm: under autocast each casts (and keeps) its own
// copy of it (Hugging Face's separate q, k, v projections; separate gate and up projections).
double norm_output_readers(Block block, const SavedTensorRules& r);

// Times `op` by kernel classes `fwd` / `bwd` (model/kernel_class.h) over `passes` x its minimal traffic,
// launching `kernels` kernels in the forward; the backward moves 1.5x the forward's bytes.
void set_kernels(Op& op, KernelClass fwd, KernelClass bwd, double passes, double kernels);

// Eager code: kernel classes and memory passes of the non-GEMM ops of `ops`, the casts autocast adds
// and the biased Linears' gradient sums over output gradients of `grad_bytes` per element (sequences of
// `s` tokens).
void apply_eager_kernels(std::vector<Op>& ops, const ModelSpec& m, const SavedTensorRules& r, double s, double grad_bytes);

// FP8 training: the quantization kernels around every FP8 GEMM of `ops` (`norm_fused`: qkv and fc1 read a
// fused norm, Transformer Engine's LayerNormLinear), with the extra amax passes, norm-output casts and TP
// amax all-reduces of `recipe` current.
void add_fp8_quantization(std::vector<Op>& ops, bool norm_fused, Fp8Recipe recipe);

}  // namespace tp
