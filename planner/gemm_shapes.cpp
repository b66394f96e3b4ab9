#include "gemm_shapes.h"

#include <algorithm>

#include "op_builders.h"

namespace tp {

GemmPassShapes gemm_pass_shapes(const Op& op, int tp, int ep, double sequences) {
  double in = op.gemm_rows, out = op.gemm_cols;
  if (in <= 0 || out <= 0) return {};
  const double copies = std::max(1.0, op.gemm_count);
  // One matrix's share of the tokens all `copies` (the experts) of one sequence run over.
  double tokens = gemm_tokens(op) / copies * sequences;
  if (op.expert) tokens *= std::max(1, ep);
  if (op.flops_split != TpSplit::none) {
    if (op.row_parallel) {
      in /= tp;
    } else {
      out /= tp;
    }
  }
  using Tokens = GemmDims::Tokens;
  return {GemmDims{tokens, out, in, Tokens::m}, GemmDims{tokens, in, out, Tokens::m},
          GemmDims{in, out, tokens, Tokens::k}};
}

}  // namespace tp
