// FP8 training in the op graph (docs/model.md, "FP8 training"). Oracles by hand from Transformer
// Engine 1.x's code (transformer_engine/pytorch/module/linear.py, layernorm_linear.py, base.py
// grad_output_preprocess) and Megatron-Core's model (gpt_model.py: the output layer is a plain
// ColumnParallelLinear):
// - qkv and fc1 read a fused norm that writes FP8 itself; their input is transposed in the backward
//   (fp8_transpose: 1 B read + 1 B written per element of the gathered input);
// - attention_out and fc2 cast their input with fp8_cast_transpose_fused (2 B read, 1 + 1 B written);
// - column-parallel output gradients: cast + transpose (4 B per element); row-parallel: cast of the
//   local shard (3 B) and transpose of the gathered tensor (2 B);
// - the output layer (LM head) stays bf16; nothing is added to a bf16 graph.
#include <gtest/gtest.h>

#include <string>

#include "op_graph.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// llama-like: h 1024, 8 heads of 128 (4 KV heads), SwiGLU with f 2816, vocab 32000.
const char* kModel =
    "model: {layers: 2, hidden: 1024, heads: 8, kv_heads: 4, ffn_hidden: 2816, vocab: 32000, activation: swiglu, "
    "norm: rmsnorm, position: rope}\n";

const Op* find(const std::vector<Op>& ops, const std::string& name, int nth = 0) {
  for (const Op& op : ops) {
    if (name == op.name && nth-- == 0) return &op;
  }
  return nullptr;
}

ModelSpec model() {
  return test::scenario(std::string(kModel) +
                        "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
                        "training: {sequence_length: 512, global_batch: 1, micro_batch: 1}\n"
                        "parallel: {tp: 1, pp: 1}\n")
      .model;
}

TEST(Fp8Ops, QuantizationBytesFollowTransformerEngine) {
  const double s = 512, h = 1024, q = 8 * 128, kv = 4 * 128, f = 2816;
  const OpGraph g = build_op_graph(model(), 512, Precision::fp8, true);
  // qkv: backward transpose of its (gathered) input, column-parallel output gradient.
  const Op* t_qkv = find(g.layer, "fp8_transpose_input", 0);
  ASSERT_NE(t_qkv, nullptr);
  EXPECT_DOUBLE_EQ(t_qkv->bytes_moved, 2.0 * s * h);
  EXPECT_EQ(t_qkv->forward_share, 0.0);
  EXPECT_EQ(t_qkv->flops_split, TpSplit::none);
  const Op* g_qkv = find(g.layer, "fp8_cast_transpose_grad_output", 0);
  ASSERT_NE(g_qkv, nullptr);
  EXPECT_DOUBLE_EQ(g_qkv->bytes_moved, 4.0 * s * (q + 2 * kv));
  EXPECT_EQ(g_qkv->flops_split, TpSplit::tp);
  // attention_out: forward cast-transpose of the attention output, row-parallel gradient.
  const Op* c_out = find(g.layer, "fp8_cast_transpose_input", 0);
  ASSERT_NE(c_out, nullptr);
  EXPECT_DOUBLE_EQ(c_out->bytes_moved, 4.0 * s * q);
  EXPECT_EQ(c_out->backward_share, 0.0);
  EXPECT_DOUBLE_EQ(find(g.layer, "fp8_cast_grad_output", 0)->bytes_moved, 3.0 * s * h);
  EXPECT_DOUBLE_EQ(find(g.layer, "fp8_transpose_grad_output", 0)->bytes_moved, 2.0 * s * h);
  // fc1 (gate + up) and fc2.
  EXPECT_DOUBLE_EQ(find(g.layer, "fp8_transpose_input", 1)->bytes_moved, 2.0 * s * h);
  EXPECT_DOUBLE_EQ(find(g.layer, "fp8_cast_transpose_grad_output", 1)->bytes_moved, 4.0 * s * 2 * f);
  EXPECT_DOUBLE_EQ(find(g.layer, "fp8_cast_transpose_input", 1)->bytes_moved, 4.0 * s * f);
  // Quantization kernels keep nothing for backward: activation memory is unchanged.
  double saved = 0;
  for (const Op& op : g.layer) {
    if (std::string(op.name).rfind("fp8_", 0) == 0) saved += op.saved_bytes;
  }
  EXPECT_EQ(saved, 0.0);
}

TEST(Fp8Ops, TransformerLayersRunInFp8AndTheOutputLayerInBf16) {
  const OpGraph g = build_op_graph(model(), 512, Precision::fp8, true);
  for (const char* name : {"qkv", "attention_out", "fc1", "fc2"}) {
    EXPECT_EQ(find(g.layer, name)->compute_precision, Precision::fp8) << name;
  }
  EXPECT_EQ(find(g.head, "output")->compute_precision, Precision::bf16);
  const OpGraph b = build_op_graph(model(), 512, Precision::bf16, true);
  EXPECT_EQ(find(b.layer, "fp8_cast_transpose_input"), nullptr);
  // + 2 kernels per column-parallel GEMM (qkv, fc1), + 3 per row-parallel GEMM (attention_out, fc2)
  EXPECT_EQ(b.layer.size() + 10, g.layer.size());
  EXPECT_EQ(find(b.head, "output")->compute_precision, Precision::bf16);
}

TEST(Fp8Ops, QuantizationAddsItsBytesAtTheCastBandwidth) {
  // The same scenario in fp8 with and without the quantization kernels' bytes: the step grows by at
  // least the bytes of one layer's quantization at the datasheet HBM bandwidth (a lower bound: the
  // cast class runs below the datasheet), times layers and micro-batches.
  const std::string yaml = std::string(kModel) +
                           "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
                           "training: {sequence_length: 512, global_batch: 4, micro_batch: 1, precision: fp8}\n"
                           "parallel: {tp: 1, pp: 1}\n";
  const Scenario sc = test::scenario(yaml);
  const HardwareProfile hw = default_profile(sc.cluster.gpu);
  const OpGraph with = build_op_graph(sc.model, sc.training, sc.parallel.tp);
  OpGraph without = with;
  double bytes = 0;
  for (Op& op : without.layer) {
    if (std::string(op.name).rfind("fp8_", 0) == 0) {
      bytes += op.bytes_moved;
      op.bytes_moved = 0;
      op.forward_share = op.backward_share = 0;
    }
  }
  const Estimate e = estimate(sc);
  const double dt = step_time(sc, with, e, hw).step.value - step_time(sc, without, e, hw).step.value;
  EXPECT_GE(dt, bytes * 2 /* layers */ * 4 /* micro-batches */ / sc.cluster.gpu.memory_bandwidth.value);
  EXPECT_LE(dt, 3.0 * bytes * 2 * 4 / sc.cluster.gpu.memory_bandwidth.value + 1e-3);
}

}  // namespace
}  // namespace tp
