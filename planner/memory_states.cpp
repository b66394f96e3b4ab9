// Model states of one GPU: the parameters it holds and the bytes of its weights, gradients, master
// weights and optimizer states, sharded by ZeRO. Formulas and sources: docs/model.md, "Memory".
#include <algorithm>

#include "estimate_parts.h"
#include "framework_rules.h"
#include "sharded_time.h"

namespace tp {
namespace {

ParamShare params_of(const std::vector<Op>& ops, const ShardLayout& l) {
  ParamShare p;
  for (const Op& op : ops) {
    if (op.kind == OpKind::collective) continue;  // communication entries hold no parameters
    const double div = op.expert ? static_cast<double>(l.ep) : 1.0;
    const double split = op.params_split / l.tp / div;
    const double repl = op.params_replicated / div;
    (op.expert ? p.expert : p.dense) += split + repl;
    if (op.kind == OpKind::gemm) p.gemm += split + repl;
    // Adafactor (Shazeer & Stern 2018): fp32 row + column statistics per matrix, full fp32
    // second moment for vectors.
    if (op.gemm_rows > 0) {
      p.adafactor_state += 4.0 * op.gemm_count / div * (op.gemm_rows + op.gemm_cols / l.tp);
      p.adafactor_state += 4.0 * repl;
    } else {
      p.adafactor_state += 4.0 * (split + repl);
    }
  }
  return p;
}

void add(ParamShare& a, const ParamShare& b, double k = 1.0) {
  a.dense += k * b.dense;
  a.expert += k * b.expert;
  a.adafactor_state += k * b.adafactor_state;
  a.gemm += k * b.gemm;
}

// Optimizer states kept in the parameters' dtype (`same`, torch.optim's zeros_like(param)) scale with
// its bytes; fp32 states, and the int8 states of adam8bit, do not.
double state_scale(const TrainingSpec& t, double weight_bytes) {
  if (t.optimizer_state_precision != StatePrecision::same || t.optimizer == Optimizer::adam8bit) return 1.0;
  return weight_bytes / 4.0;
}

}  // namespace

double optimizer_bytes_per_param(Optimizer o) {
  switch (o) {
    case Optimizer::sgd: return 0.0;
    case Optimizer::momentum: return 4.0;   // fp32 velocity
    case Optimizer::adam:
    case Optimizer::adamw: return 8.0;      // fp32 m and v (Kingma & Ba 2015; Loshchilov & Hutter 2019)
    case Optimizer::adafactor: return 0.0;  // shape dependent
    case Optimizer::adam8bit: return 2.0 + 2.0 * 4.0 / 2048.0;  // int8 m, v + fp32 absmax per 2048-block (Dettmers 2022)
    case Optimizer::lion: return 4.0;       // fp32 momentum (Chen et al. 2023)
  }
  return 8.0;
}

ShardLayout shard_layout(const Scenario& s) {
  const ParallelSpec& p = s.parallel;
  return ShardLayout{p.tp, p.cp, p.ep, p.sequence_parallel && p.tp > 1, static_cast<double>(s.training.micro_batch)};
}

ModelParamShares model_param_shares(const Scenario& s, const OpGraph& g, const ShardLayout& l) {
  ModelParamShares shares{params_of(g.layer, l), params_of(g.embedding, l), params_of(g.head, l)};
  if (s.model.tied_embeddings && s.parallel.pp > 1) {
    // The last stage keeps its own copy of the word embedding for the output layer (Megatron).
    const double v = static_cast<double>(g.vocab), h = static_cast<double>(s.model.hidden);
    shares.head.dense += v * h / s.parallel.tp;
    shares.head.adafactor_state += 4.0 * (v + h / s.parallel.tp);
  }
  return shares;
}

ParamShare stage_param_share(const ModelParamShares& shares, int layers, bool first, bool last) {
  ParamShare ps;
  add(ps, shares.layer, layers);
  if (first) add(ps, shares.embedding);
  if (last) add(ps, shares.head);
  return ps;
}

StateBytesPerParam state_bytes_per_param(const Scenario& s) {
  const TrainingSpec& t = s.training;
  StateBytesPerParam sb;
  const double parameter = parameter_bytes(t);  // autocast keeps fp32 parameters
  sb.gradients = kept_gradient_bytes(s);  // FSDP keeps its shards in the parameter dtype (framework_rules.h)
  if (keeps_16bit_gradients_beside_fp32_copy(s)) sb.gradients += parameter;  // and BF16_Optimizer its bf16 .grad
  sb.master = master_bytes(t);
  sb.optimizer = optimizer_bytes_per_param(t.optimizer) * state_scale(t, parameter);
  // FSDP's sharded parameter under ZeRO-3 is its master copy: no 16-bit shard is held (framework_rules.h).
  const bool master_is_the_shard =
      s.parallel.zero >= 3 && sb.master > 0 && framework_rules(t.framework).sharded_parameter_is_master;
  sb.weights = master_is_the_shard ? 0.0 : parameter;
  sb.dense_shard = s.parallel.shard_ranks();  // the sharding group: Megatron shards over the data x context group
  sb.expert_shard = std::max(1.0, sb.dense_shard / s.parallel.ep);
  return sb;
}

ZeroCounts zero_counts(const StateBytesPerParam& sb, const ParamShare& ps) {
  return {ps.total(), ps.dense / sb.dense_shard + ps.expert / sb.expert_shard};
}

ModelStates stage_model_states(const Scenario& s, const StateBytesPerParam& sb, const ParamShare& ps) {
  const int zero = s.parallel.zero;
  const ZeroCounts counts = zero_counts(sb, ps);
  ModelStates st;
  st.weights = counts.at(zero, 3) * sb.weights;
  st.gradients = counts.at(zero, 2) * sb.gradients;
  // FSDP under no_sync holds whole gradients (unsharded_gradient_bytes) until the last backward, which
  // reduce-scatters and frees them unit by unit as the sharded ones appear: whichever is larger (one H100,
  // FSDP2 at world size 1, h100-framework-steps.json: the same peak as the synchronised loop).
  if (accumulates_unsharded_gradients(s)) st.gradients = std::max(st.gradients, counts.whole * unsharded_gradient_bytes(s));
  st.master = counts.at(zero, 1) * sb.master;
  st.optimizer = s.training.optimizer == Optimizer::adafactor
                     ? (zero >= 1 ? ps.adafactor_state / sb.dense_shard : ps.adafactor_state)
                     : counts.at(zero, 1) * sb.optimizer;
  return st;
}

// Parameters one GPU holds gathered at once under ZeRO-3, from the layer's gathered modules
// (planner/zero3_modules.h): whole layers (FSDP units: the current one and `prefetch_layers` ahead);
// where DeepSpeed gathers per submodule, the largest module plus the prefetch bucket; FSDP units of one
// submodule each (`memory.fsdp_unit: submodule`), the largest module and `prefetch_layers` units of that
// size ahead (each unit is freed after its forward, the recompute's too: zero3_settings_of); never more
// than the whole-layer count.
double zero3_gathered_params(const Zero3Settings& zero3, const Zero3Modules& modules, int prefetch_layers) {
  const double whole = (1.0 + prefetch_layers) * modules.gathered;
  if (zero3.whole_layers) return whole;
  if (zero3.prefetch_parameters > 0) return std::min(whole, modules.largest + zero3.prefetch_parameters);
  return std::min(whole, (1.0 + prefetch_layers) * modules.largest);
}

}  // namespace tp
