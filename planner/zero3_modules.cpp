#include "zero3_modules.h"

#include <algorithm>

namespace tp {
namespace {

// One op's parameters on one GPU, split into what a ZeRO-3 gather fetches and what stays persistent.
struct OpParameters {
  double gathered = 0, persistent = 0;
};

// Adds `tensors` tensors of `numel` elements each (per GPU) to the gathered or the persistent side.
void add_tensors(OpParameters& p, double numel, double tensors, double persistence_threshold) {
  if (numel <= 0 || tensors <= 0) return;
  (numel > persistence_threshold ? p.gathered : p.persistent) += numel * tensors;
}

// The op's tensors (op_graph.cpp gemm_op / norm_op): `gemm_count` weight matrices of rows x cols,
// tp-split when they are counted in params_split (column- and row-parallel Linears) and whole when in
// params_replicated (the MoE router); the rest are vectors per copy (a column-parallel bias is split, a
// row-parallel bias or a norm weight is not). Experts: gemm_count / ep copies on one GPU.
OpParameters op_parameters(const Op& op, int tp, int ep, double persistence_threshold) {
  const double tp_size = std::max(1, tp);
  const double copies = std::max(1.0, op.gemm_count);
  const double local_copies = op.expert ? copies / std::max(1, ep) : copies;
  const double matrices = op.gemm_rows * op.gemm_cols * op.gemm_count;
  const bool matrix_split = matrices > 0 && op.params_split >= matrices;
  const double split_vectors = std::max(0.0, op.params_split - (matrix_split ? matrices : 0.0));
  const double replicated_vectors = std::max(0.0, op.params_replicated - (matrix_split ? 0.0 : matrices));
  OpParameters p;
  if (matrices > 0) {
    const double per_gpu = op.gemm_rows * op.gemm_cols / (matrix_split ? tp_size : 1.0);
    add_tensors(p, per_gpu, local_copies, persistence_threshold);
  }
  add_tensors(p, split_vectors / copies / tp_size, local_copies, persistence_threshold);
  add_tensors(p, replicated_vectors / copies, local_copies, persistence_threshold);
  return p;
}

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

Zero3Layer zero3_layer(const Scenario& s, const std::vector<Op>& layer, int tp, int ep) {
  Zero3Layer z;
  z.settings = zero3_settings_of(framework_rules(s.training.framework), s.memory);
  z.modules = zero3_modules(layer, tp, ep, z.settings.persistence_threshold);
  return z;
}

}  // namespace tp
