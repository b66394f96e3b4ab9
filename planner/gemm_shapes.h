// The three GEMMs one weight op runs on one GPU in a micro-batch, as cuBLAS sees them: the forward
// (tokens x out x in), the input gradient (tokens x in x out) and the weight gradient (in x out x tokens),
// with M x N x K = C[M x N] = A[M x K] B[K x N] (model/gemm_time.h). One definition for the planner, which
// times these shapes (planner/op_times.cpp), and the calibration suite, which measures them
// (calibrate/suite_plan.cpp), so a measured scenario shape is the shape the planner asks for.
#pragma once

#include "gemm_time.h"
#include "op_graph.h"

namespace tp {

struct GemmPassShapes {
  GemmDims forward, input_grad, weight_grad;
};

// Tensor parallelism splits a column-parallel op's output features and a row-parallel op's input
// features across `tp` ranks (Megatron-LM, tensor_parallel/layers.py: ColumnParallelLinear,
// RowParallelLinear). The tokens one matrix sees: the op's tokens per sequence times `sequences` (the
// micro-batch over context parallelism); an expert matrix sees its share of the routed tokens, and with
// expert parallelism a GPU's experts receive the tokens of `ep` ranks (the even split: top_k x tokens x ep
// / experts per expert).
GemmPassShapes gemm_pass_shapes(const Op& op, int tp, int ep, double sequences);

}  // namespace tp
