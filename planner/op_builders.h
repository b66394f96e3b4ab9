// The constructors of the op graph's common entries (planner/op_graph.h): GEMMs, norms and elementwise
// (memory-bound) ops, each from the sizes that define it. The graph builders (op_graph.cpp,
// op_graph_kernels.cpp) build every such op through these, so each op kind's parameters, FLOPs and
// traffic are written once. Formulas and sources: docs/model.md §2-3 (parameters and FLOPs) and §5
// (activation memory).
//
// Each appends its entry to `ops` and returns it, to be adjusted in place; the reference holds until the
// next append. Built in place: copying an Op just written (248 bytes) into a vector took longer than
// building it, and value-initializing one (`emplace_back()`) zeroes all its bytes first (bench/README.md).
#pragma once

#include <vector>

#include "op_graph.h"
#include "specs.h"

namespace tp {

// An entry with the defaults of op_graph.h.
Op& add_op(std::vector<Op>& ops);

// A GEMM y = x W with W of shape `in` x `out`, applied to `tokens` tokens; `copies` parallel matrices
// (experts). Column-parallel GEMMs split the output, row-parallel ones (`row_parallel`) the input; either
// way the weight is divided by tp. Row-parallel biases are replicated. Keeps `saved_input_bytes` split as
// `saved_split`; its traffic counts 16-bit operands.
Op& add_gemm(std::vector<Op>& ops, const char* name, Block block, double in, double out, double tokens, bool bias,
             bool row_parallel, double saved_input_bytes, TpSplit saved_split, double copies = 1.0);

// Tokens of one sequence a GEMM op's forward runs over, all its copies (experts) together:
// fwd_flops = 2 x tokens x in x out (add_gemm).
double gemm_tokens(const Op& gemm);

// The norm of `m` (LayerNorm: weight and bias; RMSNorm: weight) over `s` tokens stored at `bpv` bytes per
// value, keeping `saved_per_element` bytes per element of its input; reads x and writes y.
Op& add_norm(std::vector<Op>& ops, const char* name, Block block, const ModelSpec& m, double s, double bpv,
             double saved_per_element);
Op& add_head_norm(std::vector<Op>& ops, const char* name, const ModelSpec& m, double s, double width, double bpv,
                  double saved_per_element);

// A memory-bound elementwise op without parameters or FLOPs: keeps `saved` bytes and moves `moved` bytes
// in the forward, both split as `split` over the TP ranks.
Op& add_elementwise(std::vector<Op>& ops, const char* name, Block block, double saved, TpSplit split,
                    double moved = 0.0);

}  // namespace tp
