// estimate(): parameters, FLOPs and per-GPU memory of every pipeline stage, and the verdict. The
// memory of one stage is put together in stage_memory.cpp from memory_states.cpp (parameters and
// model states) and activation_memory.cpp (stored activations).
#include "estimate.h"

#include <algorithm>

#include "early_stop.h"
#include "estimate_parts.h"
#include "format_units.h"
#include "selective_op.h"

namespace tp {
namespace {

// What the estimate sums over an op list, in one pass: forward + backward FLOPs executed and the part model
// FLOPs count (the output layer over the model's vocabulary, not the framework's padded one), the forward
// FLOPs alone and the attention core's (what full and selective recompute run again), and the MoE experts'
// parameters.
struct OpListSums {
  double executed = 0, model = 0, forward = 0, attention_forward = 0, expert_parameters = 0;
};
OpListSums op_list_sums(const std::vector<Op>& ops) {
  OpListSums f;
  for (const Op& op : ops) {
    const double fb = op.fwd_flops + op.bwd_flops;
    f.executed += fb;
    f.model += fb * op.model_flops_share;
    f.forward += op.fwd_flops;
    if (op.kind == OpKind::attention_core) f.attention_forward += op.fwd_flops;
    if (op.expert) f.expert_parameters += op.params_split + op.params_replicated;
  }
  return f;
}

// Start from a default Estimate but keep the vectors' capacity (sweeps reuse one per thread): copying
// from an empty vector keeps the target's capacity. A copy of a constant blank rather than `Estimate{}`,
// whose value-initialization zeroes every byte first (bench/README.md).
void reset_keeping_capacity(Estimate& e) {
  static const Estimate blank;
  e = blank;
}

// Unique parameters, and those active per token (MoE: top_k of the experts).
void count_parameters(const Scenario& s, const OpGraph& g, const OpListSums& layer, Estimate& e) {
  e.parameters_total = total_parameters(g, s.model.layers);
  e.parameters_active = e.parameters_total;
  if (s.model.moe.enabled()) {
    const double idle = 1.0 - static_cast<double>(s.model.moe.top_k) / s.model.moe.experts;
    e.parameters_active -= s.model.layers * layer.expert_parameters * idle;
  }
}

// FLOPs per step (Narayanan et al. 2021, eq. 3 for GPT: 72 B s l h^2 (1 + s/6h + V/12lh)), with what
// recompute and the padded vocabulary add to the hardware's work. Needs e.tokens_per_step.
void count_flops(const Scenario& s, const OpGraph& g, const OpListSums& layer, Estimate& e) {
  const double seqs = static_cast<double>(s.training.global_batch);
  const OpListSums embedding = op_list_sums(g.embedding), head = op_list_sums(g.head);
  const double executed = seqs * (s.model.layers * layer.executed + embedding.executed + head.executed);
  const double model = seqs * (s.model.layers * layer.model + embedding.model + head.model);
  double recompute = 0;
  switch (s.parallel.recompute.mode) {
    case RecomputeMode::none: break;
    case RecomputeMode::selective:  // the attention core's forward runs again (Korthikanti sec. 5)
      recompute = seqs * s.model.layers * layer.attention_forward;
      break;
    case RecomputeMode::selective_op:  // the GEMM calls whose outputs were not kept (planner/selective_op.h)
      recompute = seqs * s.model.layers * op_list_sums(selective_op_checkpoint(s, g).rerun).forward;
      break;
    case RecomputeMode::full:
    case RecomputeMode::every:  // one more forward of every layer (Megatron: 96 B s l h^2 (...))
    case RecomputeMode::one_in: {  // of every k-th layer; each region's last up to the early stop (early_stop.h)
      const LayerRecompute r = layer_recompute(s);
      const double stopped = r.stopped > 0 ? r.stopped * op_list_sums(early_stop_rerun(g.layer)).forward : 0.0;
      recompute = seqs * s.model.layers * (r.whole * layer.forward + stopped);
      break;
    }
  }
  e.flops.model_per_step = Flop(model);
  e.flops.recompute_per_step = Flop(recompute);
  e.flops.hardware_per_step = Flop(executed + recompute);
  e.flops.model_per_token = model / e.tokens_per_step;
}

// The worst stage's memory and parameters, and the host RAM one node needs for offload.
void summarize_stages(const Scenario& s, Estimate& e) {
  size_t worst = 0;
  double host_max = 0;
  for (size_t i = 0; i < e.stages.size(); ++i) {
    if (e.stages[i].total > e.stages[worst].total) worst = i;
    host_max = std::max(host_max, e.stages[i].host.value);
  }
  e.memory = e.stages[worst];
  e.parameters_per_gpu = 0;
  for (const auto& st : e.stages) e.parameters_per_gpu = std::max(e.parameters_per_gpu, st.parameters);
  e.host_per_node = Bytes(host_max * s.cluster.gpus_per_node);
}

void add_violations(const Scenario& s, Estimate& e) {
  if (e.memory.total > e.usable) {
    Violation v;
    v.kind = Violation::Kind::out_of_memory;
    v.stage = e.memory.stage;
    v.needed = e.memory.total.value;
    v.available = e.usable.value;
    e.violations.push_back(std::move(v));
  }
  if (s.cluster.host_memory.value > 0 && e.host_per_node > s.cluster.host_memory) {
    Violation v;
    v.kind = Violation::Kind::host_memory;
    v.needed = e.host_per_node.value;
    v.available = s.cluster.host_memory.value;
    e.violations.push_back(std::move(v));
  }
  e.feasible = e.violations.empty();
}

}  // namespace

const char* to_string(Violation::Kind k) {
  switch (k) {
    case Violation::Kind::out_of_memory: return "out_of_memory";
    case Violation::Kind::host_memory: return "host_memory";
    case Violation::Kind::no_progress: return "no_progress";
  }
  return "?";
}

bool fits_in_memory(const Estimate& e) {
  for (const Violation& v : e.violations) {
    if (v.kind != Violation::Kind::no_progress) return false;
  }
  return true;
}

std::string violation_message(const Violation& v) {
  if (v.kind == Violation::Kind::no_progress) {
    return "this job cannot make progress: a failure is expected every " + format_seconds(v.available) +
           " (job MTBF) but each one costs " + format_seconds(v.needed) +
           " of lost work and restart; use fewer GPUs, a larger costs.failures.gpu_mtbf, a faster "
           "checkpoint_bandwidth or a shorter step";
  }
  if (v.kind == Violation::Kind::host_memory) {
    return "offloaded states need " + format_bytes(v.needed) + " of host RAM per node but a node has " +
           format_bytes(v.available);
  }
  return "stage " + std::to_string(v.stage) + " needs " + format_bytes(v.needed) + " per GPU but " +
         format_bytes(v.available) + " is usable (" + format_bytes(v.needed - v.available) + " more needed)";
}

Estimate estimate(const Scenario& s) {
  return estimate(s, build_op_graph(s.model, s.training, s.parallel.tp));
}

Estimate estimate(const Scenario& s, const OpGraph& g) {
  Estimate e;
  estimate_into(s, g, e);
  return e;
}

// `flatten`: the sweep's hot path is compiled as one function again, as before the split into files
// (they are compiled as one unit, planner/CMakeLists.txt).
[[gnu::flatten]] void estimate_into(const Scenario& s, const OpGraph& g, Estimate& e) {
  reset_keeping_capacity(e);
  e.micro_batches = s.micro_batches();
  e.tokens_per_step = static_cast<double>(s.training.global_batch) * static_cast<double>(s.training.sequence_length);
  const OpListSums layer = op_list_sums(g.layer);
  count_parameters(s, g, layer, e);
  count_flops(s, g, layer, e);

  const StageMemoryInputs in = stage_memory_inputs(s, g, e.micro_batches);
  e.capacity = s.cluster.gpu.memory;
  e.usable = Bytes(e.capacity.value * (1.0 - s.memory.headroom));
  e.stages.reserve(static_cast<size_t>(s.parallel.pp));
  for (int i = 0; i < s.parallel.pp; ++i) e.stages.push_back(stage_memory(s, in, i));

  summarize_stages(s, e);
  add_violations(s, e);
}

}  // namespace tp
