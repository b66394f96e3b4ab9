// The op graph's entry constructors (planner/op_builders.h). Oracles by hand from the definitions in
// docs/model.md §3 (parameters: W is in x out per copy; a row-parallel bias is replicated, a
// column-parallel one split; LayerNorm keeps a gain and a bias per hidden unit, RMSNorm a gain),
// §4 (a GEMM runs 2 FLOPs per MAC forward and twice that backward) and §5 (bytes kept and moved).
#include <gtest/gtest.h>

#include "op_builders.h"

namespace tp {
namespace {

TEST(OpBuilders, RowParallelGemmWithBiasReplicatesTheBias) {
  // W 4 x 3, 5 tokens, 2 copies: 2*4*3 = 24 split weights, 2*3 = 6 replicated bias values.
  std::vector<Op> ops;
  const Op& op = add_gemm(ops, "g", Block::mlp, 4, 3, 5, true, true, 7.0, TpSplit::tp, 2);
  EXPECT_EQ(op.kind, OpKind::gemm);
  EXPECT_DOUBLE_EQ(op.params_split, 24);
  EXPECT_DOUBLE_EQ(op.params_replicated, 6);
  EXPECT_DOUBLE_EQ(op.fwd_flops, 2.0 * 5 * 4 * 3);  // 120: 5 tokens x 12 MACs x 2
  EXPECT_DOUBLE_EQ(op.bwd_flops, 240);              // input and weight gradients
  // 16-bit operands: x (5 x 4), both weights (2 x 4 x 3), y (5 x 3): 2 B x (20 + 24 + 15).
  EXPECT_DOUBLE_EQ(op.bytes_moved, 118);
  EXPECT_DOUBLE_EQ(op.gemm_rows, 4);
  EXPECT_DOUBLE_EQ(op.gemm_cols, 3);
  EXPECT_DOUBLE_EQ(op.gemm_count, 2);
  EXPECT_TRUE(op.row_parallel);
  EXPECT_DOUBLE_EQ(op.saved_bytes, 7);
  EXPECT_EQ(op.saved_split, TpSplit::tp);
}

TEST(OpBuilders, ColumnParallelGemmSplitsTheBias) {
  std::vector<Op> ops;
  const Op& op = add_gemm(ops, "g", Block::attention, 4, 3, 5, true, false, 0.0, TpSplit::seq_tp);
  EXPECT_DOUBLE_EQ(op.params_split, 4 * 3 + 3);
  EXPECT_DOUBLE_EQ(op.params_replicated, 0);
  EXPECT_FALSE(op.row_parallel);
}

TEST(OpBuilders, NormParametersAndTraffic) {
  ModelSpec m;
  m.hidden = 8;
  m.norm = Norm::layernorm;
  // 10 tokens of 8 values at 2 B: read x and write y = 2 x 10 x 8 x 2 B; keeps 4 B per input element.
  std::vector<Op> ops;
  const Op ln = add_norm(ops, "n", Block::attention, m, 10, 2.0, 4.0);
  EXPECT_EQ(ln.kind, OpKind::norm);
  EXPECT_DOUBLE_EQ(ln.params_replicated, 16);  // gain + bias
  EXPECT_DOUBLE_EQ(ln.params_split, 0);
  EXPECT_DOUBLE_EQ(ln.bytes_moved, 320);
  EXPECT_DOUBLE_EQ(ln.saved_bytes, 320);
  EXPECT_EQ(ln.saved_split, TpSplit::seq_tp);
  EXPECT_EQ(ln.flops_split, TpSplit::seq_tp);
  m.norm = Norm::rmsnorm;
  EXPECT_DOUBLE_EQ(add_norm(ops, "n", Block::mlp, m, 10, 2.0, 4.0).params_replicated, 8);  // gain only
}

TEST(OpBuilders, ElementwiseKeepsAndMovesWhatItIsGiven) {
  std::vector<Op> ops;
  const Op op = add_elementwise(ops, "e", Block::head, 3.0, TpSplit::seq_tp, 9.0);
  EXPECT_EQ(op.kind, OpKind::elementwise);
  EXPECT_EQ(op.block, Block::head);
  EXPECT_DOUBLE_EQ(op.saved_bytes, 3);
  EXPECT_DOUBLE_EQ(op.bytes_moved, 9);
  EXPECT_EQ(op.saved_split, TpSplit::seq_tp);
  EXPECT_EQ(op.flops_split, TpSplit::seq_tp);
  EXPECT_DOUBLE_EQ(op.params_split + op.params_replicated + op.fwd_flops + op.bwd_flops, 0);
  EXPECT_DOUBLE_EQ(add_elementwise(ops, "e", Block::mlp, 0.0, TpSplit::tp).bytes_moved, 0);
}

// Each constructor appends one entry after those already there and returns it: adjusting the returned
// entry adjusts the list's last one, and an entry appended later starts from op_graph.h's defaults.
TEST(OpBuilders, ConstructorsAppendTheirEntryAndReturnIt) {
  ModelSpec m;
  m.hidden = 8;
  std::vector<Op> ops;
  add_norm(ops, "n", Block::attention, m, 10, 2.0, 4.0).role = OpRole::head_norm;
  Op& gemm = add_gemm(ops, "g", Block::attention, 4, 3, 5, false, false, 0.0, TpSplit::seq_tp);
  gemm.compute_precision = Precision::fp8;
  EXPECT_EQ(&gemm, &ops.back());
  add_elementwise(ops, "e", Block::mlp, 0.0, TpSplit::tp);
  const Op& fresh = add_op(ops);
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_STREQ(ops[0].name, "n");
  EXPECT_EQ(ops[0].role, OpRole::head_norm);
  EXPECT_EQ(ops[1].compute_precision, Precision::fp8);
  EXPECT_STREQ(ops[2].name, "e");
  EXPECT_EQ(ops[2].role, OpRole::none);
  const Op defaults;
  EXPECT_STREQ(fresh.name, defaults.name);
  EXPECT_EQ(fresh.kind, defaults.kind);
  EXPECT_DOUBLE_EQ(fresh.passes, 1.0);
  EXPECT_DOUBLE_EQ(fresh.backward_share, 2.0);
  EXPECT_DOUBLE_EQ(fresh.model_flops_share, 1.0);
  EXPECT_EQ(fresh.kernel_class, -1);
}

}  // namespace
}  // namespace tp
