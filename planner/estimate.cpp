#include "estimate.h"

#include <algorithm>
#include <cmath>

#include "format_units.h"
#include "framework_rules.h"

namespace tp {
namespace {

struct Layout {
  int tp, cp, ep;
  bool sp;
  double b;  // micro-batch, sequences
};

struct ParamShare {
  double dense = 0;   // per GPU, non-expert
  double expert = 0;  // per GPU, expert
  double adafactor_state = 0;  // bytes of factored second moments for these parameters
  double gemm = 0;  // per GPU, weights of GEMMs (what autocast casts to 16 bits)
  double total() const { return dense + expert; }
};

ParamShare params_of(const std::vector<Op>& ops, const Layout& l) {
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

// Activation bytes of an op list for one micro-batch on one GPU; `drop_scores` leaves out
// what selective recompute discards.
double saved_of(const std::vector<Op>& ops, const Layout& l, bool drop_scores) {
  double bytes = 0;
  for (const Op& op : ops) {
    if (op.kind == OpKind::collective || (drop_scores && op.attention_scores)) continue;
    bytes += tp_share(op.saved_bytes, op.saved_split, l.tp, l.sp);
  }
  return bytes * l.b / l.cp;
}

double scores_of(const std::vector<Op>& ops, const Layout& l) {
  double bytes = 0;
  for (const Op& op : ops) {
    if (op.attention_scores) bytes += tp_share(op.saved_bytes, op.saved_split, l.tp, l.sp);
  }
  return bytes * l.b / l.cp;
}

// Working memory beyond the saved bytes at the forward (or backward) peak of an op list.
double working_of(const std::vector<Op>& ops, const Layout& l, bool backward) {
  double bytes = 0;
  for (const Op& op : ops) {
    bytes += tp_share(backward ? op.working_backward : op.working_forward, op.saved_split, l.tp, l.sp);
  }
  return bytes * l.b / l.cp;
}

double flops_of(const std::vector<Op>& ops, bool with_backward) {
  double f = 0;
  for (const Op& op : ops) f += op.fwd_flops + (with_backward ? op.bwd_flops : 0.0);
  return f;
}

// (chunk, micro-batch) activation sets a stage holds at its peak, and layers per chunk.
// GPipe: all m; 1F1B and ZB-H1: p - i (Narayanan et al. 2021; Qi et al. 2023 keep 1F1B's peak);
// interleaved: Megatron's warm-up 2(p - i - 1) + (v - 1)p plus the one in steady state, which for
// stage 0 gives Korthikanti's factor L(1 + (p - 1)/(p v)).
double in_flight_chunks(const ParallelSpec& p, int stage, std::int64_t m) {
  const double md = static_cast<double>(m);
  if (p.pp == 1) return 1.0;
  switch (p.schedule) {
    case Schedule::gpipe: return md;
    case Schedule::one_f_one_b:
    case Schedule::zb_h1: return std::min<double>(p.pp - stage, md);
    case Schedule::interleaved:
      return std::min<double>(md * p.vpp, 2.0 * (p.pp - stage - 1) + (p.vpp - 1.0) * p.pp + 1.0);
  }
  return 1.0;
}


// Parameters one GPU holds gathered at once under ZeRO-3: whole layers (FSDP units: the current one and
// `prefetch_layers` ahead), or, where the framework gathers per submodule (DeepSpeed), the largest
// submodule plus the prefetch bucket, never more than the whole-layer count.
double zero3_gathered_params(const FrameworkRules& fw, const std::vector<Op>& layer, const Layout& l,
                             double layer_total, int prefetch_layers) {
  const double whole = (1.0 + prefetch_layers) * layer_total;
  if (fw.zero3_prefetch_parameters <= 0) return whole;
  double largest = 0;
  for (const Op& op : layer) {
    const double div = op.expert ? static_cast<double>(l.ep) : 1.0;
    largest = std::max(largest, (op.params_split / l.tp + op.params_replicated) / div);
  }
  return std::min(whole, largest + fw.zero3_prefetch_parameters);
}

// The loss's largest single tensor (its saved fp32 log-probabilities or 16-bit logits) on one GPU.
double largest_loss_block(const std::vector<Op>& head, const Layout& l) {
  double bytes = 0;
  for (const Op& op : head) {
    if (op.kind == OpKind::loss) bytes = std::max(bytes, tp_share(op.saved_bytes, op.saved_split, l.tp, l.sp));
  }
  return bytes * l.b / l.cp;
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

Bytes layer_activation_bytes(const Scenario& s, const OpGraph& g) {
  const Layout l{s.parallel.tp, s.parallel.cp, s.parallel.ep, s.parallel.sequence_parallel && s.parallel.tp > 1,
                 static_cast<double>(s.training.micro_batch)};
  switch (s.parallel.recompute.mode) {
    case RecomputeMode::none: return Bytes(saved_of(g.layer, l, false));
    case RecomputeMode::selective: return Bytes(saved_of(g.layer, l, true));
    case RecomputeMode::full:
    case RecomputeMode::every:
      return Bytes(tp_share(g.layer_input_bytes, TpSplit::seq_tp, l.tp, l.sp) * l.b / l.cp);
  }
  return Bytes(0);
}

const char* to_string(Violation::Kind k) {
  switch (k) {
    case Violation::Kind::out_of_memory: return "out_of_memory";
    case Violation::Kind::host_memory: return "host_memory";
    case Violation::Kind::no_progress: return "no_progress";
  }
  return "?";
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
  return estimate(s, build_op_graph(s.model, s.training));
}

Estimate estimate(const Scenario& s, const OpGraph& g) {
  Estimate e;
  estimate_into(s, g, e);
  return e;
}

void estimate_into(const Scenario& s, const OpGraph& g, Estimate& e) {
  {  // start from a default Estimate but keep the vectors' capacity (sweeps reuse one per thread)
    std::vector<MemoryBreakdown> stages = std::move(e.stages);
    std::vector<Violation> violations = std::move(e.violations);
    stages.clear();
    violations.clear();
    e = Estimate{};
    e.stages = std::move(stages);
    e.violations = std::move(violations);
  }
  const ParallelSpec& p = s.parallel;
  const TrainingSpec& t = s.training;
  const MemorySettings& ms = s.memory;
  const Layout l{p.tp, p.cp, p.ep, p.sequence_parallel && p.tp > 1, static_cast<double>(t.micro_batch)};
  const std::int64_t m = s.micro_batches();
  e.micro_batches = m;
  e.tokens_per_step = static_cast<double>(t.global_batch) * static_cast<double>(t.sequence_length);

  // --- parameters ---
  double expert_per_layer = 0;
  for (const Op& op : g.layer) {
    if (op.expert) expert_per_layer += op.params_split + op.params_replicated;
  }
  e.parameters_total = total_parameters(g, s.model.layers);
  e.parameters_active = e.parameters_total;
  if (s.model.moe.enabled()) {
    const double idle = 1.0 - static_cast<double>(s.model.moe.top_k) / s.model.moe.experts;
    e.parameters_active -= s.model.layers * expert_per_layer * idle;
  }

  // --- FLOPs (Narayanan et al. 2021, eq. 3 for GPT: 72 B s l h^2 (1 + s/6h + V/12lh)) ---
  const double seqs = static_cast<double>(t.global_batch);
  const double layer_fb = flops_of(g.layer, true);
  const double model = seqs * (s.model.layers * layer_fb + flops_of(g.embedding, true) + flops_of(g.head, true));
  double recompute = 0;
  switch (p.recompute.mode) {
    case RecomputeMode::none: break;
    case RecomputeMode::selective:  // the attention core's forward runs again (Korthikanti sec. 5)
      for (const Op& op : g.layer) {
        if (op.kind == OpKind::attention_core) recompute += op.fwd_flops;
      }
      recompute *= seqs * s.model.layers;
      break;
    case RecomputeMode::full:
    case RecomputeMode::every:  // one more forward of every layer (Megatron: 96 B s l h^2 (...))
      recompute = seqs * s.model.layers * flops_of(g.layer, false);
      break;
  }
  e.flops.model_per_step = Flop(model);
  e.flops.recompute_per_step = Flop(recompute);
  e.flops.hardware_per_step = Flop(model + recompute);
  e.flops.model_per_token = model / e.tokens_per_step;

  // --- per-GPU memory of every stage ---
  const ParamShare layer_params = params_of(g.layer, l);
  const ParamShare emb_params = params_of(g.embedding, l);
  ParamShare head_params = params_of(g.head, l);
  if (s.model.tied_embeddings && p.pp > 1) {
    // The last stage keeps its own copy of the word embedding for the output layer (Megatron).
    const double v = static_cast<double>(s.model.vocab), h = static_cast<double>(s.model.hidden);
    head_params.dense += v * h / p.tp;
    head_params.adafactor_state += 4.0 * (v + h / p.tp);
  }

  const FrameworkRules& fw = framework_rules(t.framework);
  const double wb = t.autocast ? 4.0 : stored_bytes(t.precision);  // autocast keeps fp32 parameters
  const double gb = element_bytes(t.grad_precision);
  const double mb = master_bytes(t);
  const double ob = optimizer_bytes_per_param(t.optimizer) * state_scale(t, wb);
  const double copy_bytes = saved_tensor_rules(t, s.model).autocast_weight_copies ? 2.0 : 0.0;
  // Autocast's cached 16-bit weights are kept for backward by the GEMMs that used them, unless the
  // layers are recomputed (then only until the autocast region ends with the forward pass).
  const bool copies_kept = p.recompute.mode == RecomputeMode::none || p.recompute.mode == RecomputeMode::selective;
  const double work_fwd = working_of(g.head, l, false);
  const double work_bwd = working_of(g.head, l, true);
  const double shard = static_cast<double>(p.dp) * p.cp;  // Megatron shards over the data x context group
  const double expert_shard = std::max(1.0, shard / p.ep);
  const double act_layer_full = saved_of(g.layer, l, false);
  const double act_layer_kept = layer_activation_bytes(s, g).value;
  const double scores_layer = scores_of(g.layer, l);
  const double act_emb = saved_of(g.embedding, l, false);
  const double act_head = saved_of(g.head, l, false);
  const double boundary = tp_share(g.layer_input_bytes, TpSplit::seq_tp, l.tp, l.sp) * l.b / l.cp;
  const bool recomputes_layers = p.recompute.mode == RecomputeMode::full || p.recompute.mode == RecomputeMode::every;
  const double gathered = zero3_gathered_params(fw, g.layer, l, layer_params.total(), ms.zero3_prefetch_layers);

  e.capacity = s.cluster.gpu.memory;
  e.usable = Bytes(e.capacity.value * (1.0 - ms.headroom));
  e.stages.reserve(static_cast<size_t>(p.pp));
  for (int i = 0; i < p.pp; ++i) {
    MemoryBreakdown b;
    b.stage = i;
    b.layers = p.layers_per_stage[static_cast<size_t>(i)];
    const bool first = i == 0;
    const bool last = i == p.pp - 1;

    ParamShare ps;
    add(ps, layer_params, b.layers);
    if (first) add(ps, emb_params);
    if (last) add(ps, head_params);
    b.parameters = ps.total();
    b.layer_parameters = layer_params.total() * b.layers;

    const auto sharded = [&](double bytes_per_param, bool is_sharded) {
      return is_sharded ? ps.dense * bytes_per_param / shard + ps.expert * bytes_per_param / expert_shard
                        : ps.total() * bytes_per_param;
    };
    double weights = sharded(wb, p.zero >= 3);
    double grads = sharded(gb, p.zero >= 2);
    double master = sharded(mb, p.zero >= 1);
    double optim = t.optimizer == Optimizer::adafactor
                       ? (p.zero >= 1 ? ps.adafactor_state / shard : ps.adafactor_state)
                       : sharded(ob, p.zero >= 1);

    // Activations: the sets stored for the in-flight micro-batches. What recompute rebuilds during
    // one layer's (or segment's) backward is transient and counted with the buffers.
    const double chunks = in_flight_chunks(p, i, m);
    const int v = p.schedule == Schedule::interleaved ? p.vpp : 1;
    const double chunk_layers = static_cast<double>(b.layers) / v;
    double acts = 0;
    double recompute_working_set = 0;
    switch (p.recompute.mode) {
      case RecomputeMode::none: acts = chunks * chunk_layers * act_layer_full; break;
      case RecomputeMode::selective:
        acts = chunks * chunk_layers * act_layer_kept;
        recompute_working_set = scores_layer;
        break;
      case RecomputeMode::full:
      case RecomputeMode::every: {
        const int k = p.recompute.mode == RecomputeMode::full ? 1 : p.recompute.every;
        acts = chunks * std::ceil(chunk_layers / k) * act_layer_kept;
        recompute_working_set = std::min<double>(k, chunk_layers) * act_layer_full;
        break;
      }
    }
    // Activation offload (DeepSpeed cpu_checkpointing): the checkpointed layer inputs wait on the host.
    double offloaded_acts = 0;
    if (p.offload_activations == OffloadTarget::cpu && recomputes_layers) {
      offloaded_acts = acts;
      acts = 0;
    }
    b.in_flight = chunks / v;
    if (first) acts += b.in_flight * act_emb;
    if (last) acts += (p.pp > 1 ? b.in_flight : 1.0) * act_head;

    // Autocast's 16-bit weight copies of this stage's GEMMs (the tied output layer casts the embedding).
    double copies = copy_bytes * ps.gemm;
    if (last && s.model.tied_embeddings && p.pp == 1) copies += copy_bytes * static_cast<double>(s.model.vocab) * s.model.hidden / p.tp;

    // Buffers: recompute working set, pipeline send/receive, ZeRO buckets and gathered layers.
    double buffers = recompute_working_set;
    if (p.pp > 1) buffers += 2.0 * boundary;
    if (p.zero >= 2) buffers += 2.0 * ms.comm_bucket.value;
    if (p.zero >= 3) buffers += gathered * wb;

    // Offload: optimizer states, master weights and fp32 gradients live on the host (ZeRO-Offload).
    double host = offloaded_acts;
    if (p.offload_optimizer == OffloadTarget::cpu) {
      host += master + optim + sharded(4.0, p.zero >= 2);
      master = 0;
      optim = 0;
    }
    if (p.offload_params == OffloadTarget::cpu) {
      host += weights;
      weights = 0;
    }

    if (!fw.persistent_gradients) {
      // Gradients are freed by zero_grad(set_to_none=True) and exist only from the backward pass on:
      // the peak is the largest of the loss's forward peak (activations, weight copies, logits), its
      // backward peak (before any gradient exists), the recompute of a layer, and the end of the
      // backward pass (all gradients, activations gone). The breakdown is the one at that peak.
      const double loss_fwd = acts + copies + (last ? work_fwd : 0.0);
      const double loss_bwd = acts + (copies_kept ? copies : 0.0) + (last ? work_bwd : 0.0);
      const double recompute_peak = acts + buffers;
      const double phase = std::max({loss_fwd, loss_bwd, recompute_peak, grads});
      if (phase == grads) {
        acts = 0;
        buffers = 0;
      } else {
        grads = 0;
        buffers = phase - acts;
      }
    } else {
      buffers += copies;
    }
    const double tensors = weights + grads + master + optim + acts + buffers;
    // Allocator slack (docs/model.md §9): the caching allocator fragments only what is allocated and
    // freed during the step (activations, buffers, gradients freed by zero_grad); tensors allocated once
    // for the run (weights, kept gradient buffers, master copy, optimizer states) fill their blocks.
    const double transient = acts + buffers + (fw.persistent_gradients ? 0.0 : grads);
    // With layer recompute the backward pass allocates each recomputed layer after the loss has freed
    // its buffers, inside the segments the loss left cached; a split segment is never returned
    // (c10/cuda/CUDACachingAllocator.cpp: release_cached_blocks frees whole free segments only), so the
    // next step's loss needs its largest tensor in a fresh segment: reserved exceeds allocated by it.
    const double stranded = last && recomputes_layers ? largest_loss_block(g.head, l) : 0.0;
    b.weights = Bytes(weights);
    b.gradients = Bytes(grads);
    b.master_weights = Bytes(master);
    b.optimizer = Bytes(optim);
    b.activations = Bytes(acts);
    b.buffers = Bytes(buffers);
    b.overhead = Bytes(ms.cuda_context.value + ms.allocator_overhead * transient + stranded);
    b.total = Bytes(tensors) + b.overhead;
    b.host = Bytes(host);
    e.stages.push_back(b);
  }

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

  // --- verdict ---
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

}  // namespace tp
