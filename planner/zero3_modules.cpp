#include "zero3_modules.h"

#include <algorithm>
#include <cmath>

namespace tp {
namespace {

// One op's parameter tensors on one GPU (op_builders.cpp add_gemm / add_norm): `gemm_count` weight matrices of
// rows x cols, tp-split when they are counted in params_split (column- and row-parallel Linears) and whole
// when in params_replicated (the MoE router); the rest are vectors per copy (a column-parallel bias is
// split, a row-parallel bias or a norm weight is not). Experts: gemm_count / ep copies on one GPU. Each
// group is `count` tensors of `numel` elements.
struct TensorGroup {
  double numel = 0, count = 0;
};
struct OpTensors {
  TensorGroup matrices, split_vectors, replicated_vectors;
};

OpTensors op_tensors(const Op& op, int tp, int ep) {
  const double tp_size = std::max(1, tp);
  const double copies = std::max(1.0, op.gemm_count);
  const double local_copies = op.expert ? copies / std::max(1, ep) : copies;
  const double matrices = op.gemm_rows * op.gemm_cols * op.gemm_count;
  const bool matrix_split = matrices > 0 && op.params_split >= matrices;
  const double split_vectors = std::max(0.0, op.params_split - (matrix_split ? matrices : 0.0));
  const double replicated_vectors = std::max(0.0, op.params_replicated - (matrix_split ? 0.0 : matrices));
  OpTensors t;
  if (matrices > 0) t.matrices = {op.gemm_rows * op.gemm_cols / (matrix_split ? tp_size : 1.0), local_copies};
  t.split_vectors = {split_vectors / copies / tp_size, local_copies};
  t.replicated_vectors = {replicated_vectors / copies, local_copies};
  return t;
}

// One op's parameters on one GPU, split into what a ZeRO-3 gather fetches and what stays persistent.
struct OpParameters {
  double gathered = 0, persistent = 0;
};

void add_group(OpParameters& p, const TensorGroup& g, double persistence_threshold) {
  if (g.numel <= 0 || g.count <= 0) return;
  (g.numel > persistence_threshold ? p.gathered : p.persistent) += g.numel * g.count;
}

OpParameters op_parameters(const Op& op, int tp, int ep, double persistence_threshold) {
  const OpTensors t = op_tensors(op, tp, ep);
  OpParameters p;
  for (const TensorGroup* g : {&t.matrices, &t.split_vectors, &t.replicated_vectors}) add_group(p, *g, persistence_threshold);
  return p;
}

// DeepSpeed's gradient bucket (FrameworkRules::zero3_reduce_bucket) as the backward fills it: `calls`
// counts the reduce-scatters issued.
struct GradientBucket {
  double size = 0, fill = 0, calls = 0;
  double added = 0;  // elements added so far
  void add(const TensorGroup& g) {
    if (g.numel <= 0 || g.count <= 0) return;
    added += g.numel * g.count;
    if (g.numel >= size) {  // each tensor of the group is reduce-scattered on its own
      calls += (fill > 0 ? 1.0 : 0.0) + std::max(0.0, g.count - 1.0);
      fill = g.numel;
      return;
    }
    for (double k = 0; k < g.count; ++k) {
      if (fill > 0 && fill + g.numel > size) {
        calls += 1.0;
        fill = 0;
      }
      fill += g.numel;
    }
  }
};

}  // namespace

Zero3Modules zero3_modules(const std::vector<Op>& layer, int tp, int ep, double persistence_threshold) {
  Zero3Modules r;
  std::array<double, Zero3Modules::capacity> flops{};
  double total_flops = 0;
  for (const Op& op : layer) {
    if (op.kind == OpKind::collective) continue;  // communication entries hold no parameters
    const OpParameters p = op_parameters(op, tp, ep, persistence_threshold);
    r.persistent += p.persistent;
    if (p.gathered <= 0) continue;
    const double op_flops = op.fwd_flops / (op.flops_split == TpSplit::none ? 1.0 : std::max(1, tp));
    const std::size_t i = r.count < Zero3Modules::capacity ? r.count++ : r.count - 1;
    r.items[i].parameters += p.gathered;
    flops[i] += op_flops;
    r.gathered += p.gathered;
    total_flops += op_flops;
  }
  for (std::size_t i = 0; i < r.count; ++i) {
    Zero3Module& m = r.items[i];
    r.largest = std::max(r.largest, m.parameters);
    m.gather_share = m.parameters / r.gathered;
    m.compute_share = total_flops > 0 ? flops[i] / total_flops : m.gather_share;
  }
  return r;
}

double zero3_reduce_calls_per_layer(const std::vector<Op>& layer, int tp, int ep, double bucket) {
  std::vector<TensorGroup> backward_order;  // the layer's tensors as the backward produces their gradients
  for (auto op = layer.rbegin(); op != layer.rend(); ++op) {
    if (op->kind == OpKind::collective) continue;
    const OpTensors t = op_tensors(*op, tp, ep);
    backward_order.insert(backward_order.end(), {t.split_vectors, t.replicated_vectors, t.matrices});
  }
  GradientBucket b{bucket};
  auto backward_pass = [&] {
    for (const TensorGroup& g : backward_order) b.add(g);
  };
  // Layers repeat: the first pass fills the bucket from empty, the next ones count the steady state, over
  // enough layers for a bucket that spans several of them to fill twice.
  backward_pass();
  if (b.added <= 0) return 0.0;
  const double layers_per_bucket = std::ceil(bucket / b.added);
  const int counted = static_cast<int>(std::clamp(2.0 * layers_per_bucket + 2.0, 3.0, 1000.0));
  const double before = b.calls;
  for (int pass = 0; pass < counted; ++pass) backward_pass();
  return (b.calls - before) / counted;
}

Zero3Layer zero3_layer(const Scenario& s, const std::vector<Op>& layer, int tp, int ep) {
  Zero3Layer z;
  z.settings = zero3_settings_of(framework_rules(s.training.framework), s.memory);
  z.modules = zero3_modules(layer, tp, ep, z.settings.persistence_threshold);
  return z;
}

double zero3_reduce_calls(const Zero3Layer& z, const std::vector<Op>& layer, int tp, int ep) {
  if (z.settings.reduce_bucket > 0) return zero3_reduce_calls_per_layer(layer, tp, ep, z.settings.reduce_bucket);
  return z.units_per_layer();
}

}  // namespace tp
