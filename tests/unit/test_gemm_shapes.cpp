// The three GEMMs of a weight op on one GPU (planner/gemm_shapes.h), the shapes the planner times and the
// calibration suite measures. Oracles by hand: Megatron's ColumnParallelLinear splits the output features,
// RowParallelLinear the input features (tensor_parallel/layers.py); forward C[tokens x out] = X[tokens x in]
// W[in x out], input gradient dX[tokens x in] = dY[tokens x out] W^T, weight gradient
// dW[in x out] = X^T[in x tokens] dY[tokens x out].
#include <gtest/gtest.h>


#include "gemm_shapes.h"
#include "op_graph.h"
#include "tests/op_lookup.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const Op& op_named(const OpGraph& g, const char* name) {
  if (const Op* op = test::find_layer_op(g, name)) return *op;
  ADD_FAILURE() << name;
  return g.layer.front();
}

void expect_dims(const GemmDims& d, double m, double n, double k) {
  EXPECT_DOUBLE_EQ(d.m, m);
  EXPECT_DOUBLE_EQ(d.n, n);
  EXPECT_DOUBLE_EQ(d.k, k);
}

// GPT layer h 4096, ffn 16384, sequence 2048, micro-batch 2: 4096 tokens; tp 8.
TEST(GemmShapes, ColumnParallelSplitsOutputsRowParallelSplitsInputs) {
  const Scenario s = test::scenario(
      "model: {layers: 2, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 50304, activation: gelu, bias: false}\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 2048, global_batch: 2, micro_batch: 2}\n"
      "parallel: {tp: 8, pp: 1}\n");
  const OpGraph g = build_op_graph(s.model, s.training, 8);
  // fc1 (column-parallel, 4096 -> 16384): 16384 / 8 = 2048 output features per GPU.
  const GemmPassShapes fc1 = gemm_pass_shapes(op_named(g, "fc1"), 8, 1, 2.0);
  expect_dims(fc1.forward, 4096, 2048, 4096);
  expect_dims(fc1.input_grad, 4096, 4096, 2048);
  expect_dims(fc1.weight_grad, 4096, 2048, 4096);
  // fc2 (row-parallel, 16384 -> 4096): 16384 / 8 = 2048 input features per GPU.
  const GemmPassShapes fc2 = gemm_pass_shapes(op_named(g, "fc2"), 8, 1, 2.0);
  expect_dims(fc2.forward, 4096, 4096, 2048);
  expect_dims(fc2.input_grad, 4096, 2048, 4096);
  expect_dims(fc2.weight_grad, 2048, 4096, 4096);
  // Every pass of an op does the same FLOPs: 2 x 4096 x 2048 x 4096.
  EXPECT_DOUBLE_EQ(fc2.forward.flops(), 2.0 * 4096 * 2048 * 4096);
  EXPECT_DOUBLE_EQ(fc2.weight_grad.flops(), fc2.forward.flops());
}

// Mixtral 8x7B (8 experts, top 2, h 4096, expert ffn 14336, SwiGLU), sequence 4096, one sequence:
// 2 x 4096 / 8 = 1024 tokens per expert; with ep 4 each GPU's experts receive four ranks' tokens: 4096.
TEST(GemmShapes, ExpertMatricesSeeTheirShareOfRoutedTokens) {
  const Scenario s = test::scenario(
      "model: mixtral-8x7b\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 4096, global_batch: 8, micro_batch: 1}\n"
      "parallel: {tp: 1, pp: 1, ep: 4}\n");
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  const Op& fc1 = op_named(g, "expert_fc1");
  expect_dims(gemm_pass_shapes(fc1, 1, 1, 1.0).forward, 1024, 2 * 14336, 4096);
  expect_dims(gemm_pass_shapes(fc1, 1, 4, 1.0).forward, 4096, 2 * 14336, 4096);
}

}  // namespace
}  // namespace tp
