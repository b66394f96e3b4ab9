// Constructors of the op graph's GEMM, norm and elementwise entries (planner/op_builders.h).
#include "op_builders.h"

namespace tp {
namespace {

// Norm weights: LayerNorm has a gain and a bias per hidden unit, RMSNorm a gain only.
double norm_params(const ModelSpec& m) {
  return static_cast<double>(m.hidden) * (m.norm == Norm::layernorm ? 2.0 : 1.0);
}

constexpr Op kDefaultOp{};  // constant-initialized: usable from any translation unit's start-up

}  // namespace

Op& add_op(std::vector<Op>& ops) { return ops.emplace_back(kDefaultOp); }

Op& add_gemm(std::vector<Op>& ops, const char* name, Block block, double in, double out, double tokens, bool bias,
             bool row_parallel, double saved_input_bytes, TpSplit saved_split, double copies) {
  Op& op = add_op(ops);
  op.name = name;
  op.kind = OpKind::gemm;
  op.block = block;
  op.params_split = copies * in * out;
  if (bias) {
    if (row_parallel) op.params_replicated = copies * out;
    else op.params_split += copies * out;
  }
  op.bias = bias;
  op.gemm_rows = in;
  op.gemm_cols = out;
  op.gemm_count = copies;
  op.row_parallel = row_parallel;
  op.fwd_flops = 2.0 * tokens * in * out;  // per token: in x out MACs
  op.bwd_flops = 2.0 * op.fwd_flops;       // input gradient + weight gradient
  op.saved_bytes = saved_input_bytes;
  op.saved_split = saved_split;
  op.bytes_moved = 2.0 * (tokens * in + copies * in * out + tokens * out);  // 16-bit operands
  return op;
}

double gemm_tokens(const Op& gemm) { return gemm.fwd_flops / (2.0 * gemm.gemm_rows * gemm.gemm_cols); }

Op& add_norm(std::vector<Op>& ops, const char* name, Block block, const ModelSpec& m, double s, double bpv,
             double saved_per_element) {
  Op& op = add_op(ops);
  op.name = name;
  op.kind = OpKind::norm;
  op.block = block;
  op.role = OpRole::block_norm;
  op.params_replicated = norm_params(m);
  op.flops_split = TpSplit::seq_tp;
  op.saved_bytes = s * static_cast<double>(m.hidden) * saved_per_element;  // its input (and eager copies)
  op.saved_split = TpSplit::seq_tp;
  op.bytes_moved = 2.0 * s * static_cast<double>(m.hidden) * bpv;  // read x, write y
  return op;
}

// Qwen3's q_norm / k_norm (transformers modeling_qwen3.py: Qwen3RMSNorm(head_dim) over q and k viewed as
// [tokens, heads, head_dim], before RoPE; Megatron-Core's qk_layernorm alike): one weight of head_dim per
// tensor, shared by its heads; it runs over the width of q (or k), split by tp with the heads. Timed per
// element like the layer's norms: the eager chain (pow, mean, rsqrt, mul) and the fused kernels stream
// their rows the same way at any row length of 128 or more (measured down to 2,048 only).
Op& add_head_norm(std::vector<Op>& ops, const char* name, const ModelSpec& m, double s, double width, double bpv,
                  double saved_per_element) {
  Op& op = add_op(ops);
  op.name = name;
  op.kind = OpKind::norm;
  op.block = Block::attention;
  op.role = OpRole::head_norm;
  op.params_replicated = static_cast<double>(m.head_dim) * (m.norm == Norm::layernorm ? 2.0 : 1.0);
  op.flops_split = TpSplit::tp;
  op.saved_bytes = s * width * saved_per_element;  // its input (and eager copies)
  op.saved_split = TpSplit::tp;
  op.bytes_moved = 2.0 * s * width * bpv;  // read x, write y
  return op;
}

Op& add_elementwise(std::vector<Op>& ops, const char* name, Block block, double saved, TpSplit split, double moved) {
  Op& op = add_op(ops);
  op.name = name;
  op.kind = OpKind::elementwise;
  op.block = block;
  op.flops_split = split;
  op.saved_bytes = saved;
  op.saved_split = split;
  op.bytes_moved = moved;
  return op;
}

}  // namespace tp
