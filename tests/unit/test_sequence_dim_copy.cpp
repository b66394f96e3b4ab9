// Eager code's TP collectives on the sequence dimension (docs/model.md §15, "Sequence-dimension copies").
// Oracle: the code. PyTorch's functional collectives gather and scatter on dim 0 only, so a [b, s, h] tensor
// sharded on s takes `torch.cat(torch.chunk(...))` of the whole tensor after each all-gather and before each
// reduce-scatter (torch/distributed/_functional_collectives.py, all_gather_tensor / reduce_scatter_tensor):
// per layer and pass, 4 copies (2 per block) of b·s·h values, each read and written, by hand below.
// torchtitan's PR #437 measures two of them around a Llama 70B MLP at s = 8,192, b = 1 on an H100 at
// 0.18 ms: 2 × 2 × 8,192 × 8,192 × 2 B = 0.54 GB at ~3 TB/s, as counted here.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hardware_profile.h"
#include "op_graph.h"
#include "op_times.h"
#include "tests/op_lookup.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const char* kLayer =
    "model: {name: llama-like, layers: 4, hidden: 4096, heads: 32, kv_heads: 8, ffn_hidden: 14336, vocab: 32000, "
    "activation: swiglu, norm: rmsnorm, position: rope, tied_embeddings: false, bias: false}\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 2}\n"
    "training: {framework: fsdp, sequence_length: 2048, global_batch: 2, micro_batch: 2, precision: bf16}\n"
    "parallel: {tp: 2, pp: 1, zero: 0, sequence_parallel: true}\n";

std::vector<Op> without_copies(const std::vector<Op>& layer) {
  std::vector<Op> rest;
  for (const Op& op : layer) {
    if (std::strcmp(op.name, "tp_sequence_copy") != 0) rest.push_back(op);
  }
  return rest;
}

TEST(SequenceDimCopy, FourWholeTensorCopiesPerLayerInEagerCodeOnly) {
  const Scenario s = test::scenario(kLayer);
  const OpGraph g = build_op_graph(s.model, s.training, 2);
  EXPECT_EQ(g.layer.size() - without_copies(g.layer).size(), 4u);  // after each block's two TP collectives
  const Op* copy = test::find_layer_op(g, "tp_sequence_copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_DOUBLE_EQ(copy->bytes_moved, 2.0 * 2048 * 4096 * 2);  // read + write one sequence's s × h in bf16
  EXPECT_DOUBLE_EQ(copy->backward_share, 1.0);                  // the mirror collective of the backward
  EXPECT_EQ(copy->saved_bytes, 0.0);
  // Megatron's layer code ([s, b, h]) gathers on dim 0: nothing to copy.
  const Scenario m = test::scenario(kLayer, {"training.framework=megatron"});
  const OpGraph mg = build_op_graph(m.model, m.training, 2);
  EXPECT_EQ(test::find_layer_op(mg, "tp_sequence_copy"), nullptr);
}

// Timed: each copy is the whole micro-batch's tensor (not split by tp) at the profile's memory bandwidth,
// one launch per pass; without sequence parallelism (all-reduces, no dimension to gather) it is not run.
TEST(SequenceDimCopy, TimedAsTheWholeTensorOnlyWithSequenceParallelism) {
  const Scenario s = test::scenario(kLayer);
  const HardwareProfile hw = profile_for(s);
  const OpGraph g = build_op_graph(s.model, s.training, 2);
  const double bw = s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency;
  OpTimeContext c{s, hw, 2, 1, true, 2.0, 1e15, 1e15, bw};
  const OpTimes with = time_ops(g.layer, c), without = time_ops(without_copies(g.layer), c);
  const double one = 2.0 * 2.0 * 2048 * 4096 * 2 / bw + hw.kernel_launch.value;  // micro-batch of 2
  EXPECT_NEAR(with.fwd - without.fwd, 4 * one, 1e-12);
  EXPECT_NEAR(with.bwd - without.bwd, 4 * one, 1e-12);
  c.sp = false;
  EXPECT_DOUBLE_EQ(time_ops(g.layer, c).fwd, time_ops(without_copies(g.layer), c).fwd);
  c.sp = true;
  c.tp = 1;
  EXPECT_DOUBLE_EQ(time_ops(g.layer, c).bwd, time_ops(without_copies(g.layer), c).bwd);
}

}  // namespace
}  // namespace tp
