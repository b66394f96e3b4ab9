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
// Current scaling (training.fp8_recipe: current), from TE 2.9 (pytorch/csrc/quantizer.cpp
// Float8CurrentScalingQuantizer::quantize_impl; csrc/extensions/normalization.cpp FUSED_NORM_AMAX_FP8;
// module/linear.py _customize_quantizers_float8_current_scaling), extra per quantized tensor:
// - a cast input (attention_out, fc2) and every output gradient: one amax read, 2 B per element;
// - a norm-fed input (qkv, fc1): the norm writes 16 bits, a separate cast reads 2 B and writes 1 B;
// - with sequence parallelism, one 4-byte amax all-reduce over TP per column-parallel input (forward)
//   and per row-parallel output gradient (backward).
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

OpGraph fp8_graph(Fp8Recipe recipe) {
  TrainingSpec t;
  t.sequence_length = 512;
  t.precision = Precision::fp8;
  t.fp8_recipe = recipe;
  return build_op_graph(model(), t, 1);
}

double bytes_of(const std::vector<Op>& ops, const std::string& name) {
  double b = 0;
  for (const Op& op : ops) {
    if (name == op.name) b += op.bytes_moved;
  }
  return b;
}

TEST(Fp8Ops, CurrentScalingAddsAnAmaxPassPerQuantizedTensor) {
  const double s = 512, h = 1024, q = 8 * 128, kv = 4 * 128, f = 2816;
  const OpGraph g = fp8_graph(Fp8Recipe::current);
  // Cast inputs: the attention output (s x q) and the fc2 input (s x f), 2 B each, forward only.
  const Op* a_out = find(g.layer, "fp8_amax_input", 0);
  ASSERT_NE(a_out, nullptr);
  EXPECT_DOUBLE_EQ(a_out->bytes_moved, 2.0 * s * q);
  EXPECT_EQ(a_out->backward_share, 0.0);
  EXPECT_EQ(a_out->flops_split, TpSplit::tp);
  EXPECT_DOUBLE_EQ(find(g.layer, "fp8_amax_input", 1)->bytes_moved, 2.0 * s * f);
  // Norm outputs feeding qkv and fc1: read 2 B, write 1 B of the local shard, forward only.
  const Op* n_qkv = find(g.layer, "fp8_cast_norm_output", 0);
  ASSERT_NE(n_qkv, nullptr);
  EXPECT_DOUBLE_EQ(n_qkv->bytes_moved, 3.0 * s * h);
  EXPECT_EQ(n_qkv->flops_split, TpSplit::seq_tp);
  EXPECT_EQ(n_qkv->backward_share, 0.0);
  EXPECT_DOUBLE_EQ(find(g.layer, "fp8_cast_norm_output", 1)->bytes_moved, 3.0 * s * h);
  // Output gradients, 2 B per element, backward only: qkv, attention_out, fc1 (gate + up), fc2.
  const double grads[] = {s * (q + 2 * kv), s * h, s * 2 * f, s * h};
  for (int i = 0; i < 4; ++i) {
    const Op* a = find(g.layer, "fp8_amax_grad_output", i);
    ASSERT_NE(a, nullptr) << i;
    EXPECT_DOUBLE_EQ(a->bytes_moved, 2.0 * grads[i]) << i;
    EXPECT_EQ(a->forward_share, 0.0) << i;
  }
  // Everything else is the delayed recipe's, unchanged; the extra kernels keep nothing.
  const OpGraph d = fp8_graph(Fp8Recipe::delayed);
  for (const char* name : {"fp8_transpose_input", "fp8_cast_transpose_input", "fp8_cast_transpose_grad_output",
                           "fp8_cast_grad_output", "fp8_transpose_grad_output"}) {
    EXPECT_DOUBLE_EQ(bytes_of(g.layer, name), bytes_of(d.layer, name)) << name;
  }
  EXPECT_EQ(find(d.layer, "fp8_amax_input"), nullptr);
  EXPECT_EQ(find(d.layer, "fp8_cast_norm_output"), nullptr);
  EXPECT_EQ(find(d.layer, "fp8_amax_all_reduce"), nullptr);
  for (const Op& op : g.layer) {
    if (std::string(op.name).rfind("fp8_", 0) == 0) {
      EXPECT_EQ(op.saved_bytes, 0.0) << op.name;
    }
  }
}

TEST(Fp8Ops, CurrentScalingReducesTheAmaxOverTpOnlyWithSequenceParallelism) {
  const OpGraph g = fp8_graph(Fp8Recipe::current);
  int forward = 0, backward = 0;
  for (const Op& op : g.layer) {
    if (std::string(op.name) != "fp8_amax_all_reduce") continue;
    EXPECT_EQ(op.kind, OpKind::collective);
    EXPECT_EQ(op.comm.group, CommGroup::tp);
    EXPECT_EQ(op.comm.overlap, CommOverlap::none);
    EXPECT_EQ(op.comm.bytes, 4.0);  // one fp32 amax
    EXPECT_EQ(op.comm.forward.count + op.comm.backward.count, 0.0f);  // nothing without sequence parallelism
    forward += static_cast<int>(op.comm.forward_sp.count);
    backward += static_cast<int>(op.comm.backward_sp.count);
  }
  EXPECT_EQ(forward, 2);   // the inputs of qkv and fc1 (column-parallel)
  EXPECT_EQ(backward, 2);  // the output gradients of attention_out and fc2 (row-parallel)
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

TEST(Fp8Ops, CurrentScalingTimesItsExtraBytesAtTheCastBandwidth) {
  // Delayed against current scaling on one GPU (no amax all-reduce): the step grows by the extra bytes of
  // the layers (hand count above) x layers x micro-batches, plus one extra read of every FP8 weight per step
  // (2 B per parameter of qkv, attention_out, fc1, fc2), at least at the datasheet HBM bandwidth and at
  // most at a third of it (the cast class's measured efficiency is above that).
  const double s = 512, h = 1024, q = 8 * 128, kv = 4 * 128, f = 2816;
  const double layer_bytes = 2.0 * s * q + 2.0 * s * f + 2 * 3.0 * s * h + 2.0 * (s * (q + 2 * kv) + 2 * s * h + s * 2 * f);
  const double weight_bytes = 2.0 * (h * (q + 2 * kv) + q * h + h * 2 * f + f * h);
  const std::string yaml = std::string(kModel) +
                           "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
                           "training: {sequence_length: 512, global_batch: 4, micro_batch: 1, precision: fp8}\n"
                           "parallel: {tp: 1, pp: 1}\n";
  const Scenario sd = test::scenario(yaml);
  const Scenario sc = test::scenario(yaml, {"training.fp8_recipe=current"});
  const double delayed = make_plan(sd, default_profile(sd.cluster.gpu)).time.step.value;
  const double current = make_plan(sc, default_profile(sc.cluster.gpu)).time.step.value;
  const double bytes = layer_bytes * 2 /* layers */ * 4 /* micro-batches */ + 2 /* layers */ * weight_bytes;
  const double hbm = sd.cluster.gpu.memory_bandwidth.value;
  EXPECT_GE(current - delayed, bytes / hbm);
  EXPECT_LE(current - delayed, 3.0 * bytes / hbm + 1e-3);
}

}  // namespace
}  // namespace tp
