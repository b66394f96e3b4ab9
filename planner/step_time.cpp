#include "step_time.h"

#include <algorithm>
#include <cmath>

#include "comm_time.h"
#include "early_stop.h"
#include "estimate_parts.h"
#include "framework_rules.h"
#include "fsdp_copies.h"
#include "op_times.h"
#include "overlap_contention.h"
#include "pipeline_time.h"
#include "selective_op.h"
#include "step_time_parts.h"
#include "sustained_clock.h"
#include "tp_overlap.h"

namespace tp {
namespace {

// The exposed communication a recompute repeats per layer, by group.
struct RerunComm {
  double tp = 0, cp = 0, ep = 0;
  double total() const { return tp + cp + ep; }
  void add(double k, double tp_f, double cp_f, double ep_f) {
    tp += k * tp_f;
    cp += k * cp_f;
    ep += k * ep_f;
  }
  void add(double k, const LayerComm& c) { add(k, c.tp_f, c.cp_f, c.ep_f); }
};

// Compute and exposed layer communication per layer and micro-batch, and what recompute repeats.
struct LayerWork {
  OpTimes layer, emb, head;
  LayerComm comm;
  double tp_layer_f = 0, tp_layer_b = 0, cp_layer_f = 0, cp_layer_b = 0, ep_layer_f = 0, ep_layer_b = 0;
  double recompute_layer = 0;  // forward work repeated in the backward pass
  double recompute_gemm = 0, recompute_attention = 0;  // its GEMMs and attention core
  RerunComm recompute_comm;    // its communication (full recompute repeats the forward's collectives)
  double host_copy = 0;        // the checkpointed input's copy to (forward) or from (backward) the host
  FsdpCopies shard_copies;     // FSDP's copies around its gathers and reduce-scatters (planner/fsdp_copies.h)
};

// The forward work the recompute repeats in the backward, per layer, and its communication: `tp_rerun_f`
// is the forward's TP time as the rerun pays it, `backward_overlap` whether the backward hides TP collectives.
void add_recompute_work(const Scenario& s, const OpGraph& g, const OpTimeContext& c, const CommLayout& cl,
                        double tp_rerun_f, bool backward_overlap, LayerWork& w) {
  switch (s.parallel.recompute.mode) {
    case RecomputeMode::none: break;
    case RecomputeMode::selective:
      // The checkpointed core attention holds the context-parallel exchange (Megatron-Core attention.py
      // _checkpointed_attention_forward reruns core_attention, TEDotProductAttention with the cp_group).
      w.recompute_layer = w.layer.attention_core_fwd;
      w.recompute_attention = w.layer.attention;
      w.recompute_comm.add(1.0, 0.0, w.cp_layer_f, 0.0);
      break;
    case RecomputeMode::selective_op: {  // what torchtitan's op-level policy runs again (planner/selective_op.h)
      const std::vector<Op> rerun = selective_op_checkpoint(s, g).rerun;
      const OpTimes t = time_ops(rerun, c);
      w.recompute_layer = t.fwd;
      w.recompute_gemm = t.gemm_fwd;
      w.recompute_attention = t.attention;
      w.recompute_comm.add(1.0, layer_comm(rerun, cl, t, backward_overlap));
      break;
    }
    case RecomputeMode::full:
    case RecomputeMode::every:
    case RecomputeMode::one_in: {
      // Per layer on average: one in k layers runs its forward again under one-in-k, and with the early stop
      // each checkpointed region's last layer only up to its last save (early_stop.h).
      const LayerRecompute r = layer_recompute(s);
      w.recompute_layer = r.whole * w.layer.fwd;
      w.recompute_gemm = r.whole * w.layer.gemm_fwd;
      w.recompute_attention = r.whole * w.layer.attention;
      w.recompute_comm.add(r.whole, tp_rerun_f, w.cp_layer_f, w.ep_layer_f);
      if (r.stopped > 0) {
        const std::vector<Op> rerun = early_stop_rerun(g.layer);
        const OpTimes t = time_ops(rerun, c);
        w.recompute_layer += r.stopped * t.fwd;
        w.recompute_gemm += r.stopped * t.gemm_fwd;
        w.recompute_attention += r.stopped * t.attention;
        w.recompute_comm.add(r.stopped, layer_comm(rerun, cl, t, backward_overlap));
      }
      break;
    }
  }
}

LayerWork layer_work(const Scenario& s, const OpGraph& g, const OpTimeContext& context, const CommLayout& cl,
                     const HardwareProfile& hw, const Zero3Layer& zero3) {
  const ParallelSpec& p = s.parallel;
  const bool fused_code = layer_code_of(s.training) == LayerCode::fused;
  OpTimeContext c = context;
  // Transformer Engine's TP overlap covers the layer's TE modules only (not the embedding or the output layer).
  const bool te_overlap = p.tp > 1 && p.overlap_tp_comm && fused_code;
  // Without Transformer Engine's layers the overlap is PyTorch's async TP (torch.compile's micro-pipeline
  // pass, torchtitan's enable_async_tensor_parallel), which hides the forward's TP collectives only; the
  // backward graph, the recompute included, keeps them exposed (docs/model.md §15, "PyTorch's async TP").
  const bool async_tp = p.tp > 1 && p.overlap_tp_comm && !fused_code;
  const bool backward_overlap = p.overlap_tp_comm && !async_tp;
  c.te_tp_overlap = te_overlap;
  LayerWork w;
  w.layer = time_ops(g.layer, c);
  c.te_tp_overlap = false;
  w.emb = time_ops(g.embedding, c);
  w.head = time_ops(g.head, c);
  // Per layer, per micro-batch communication: the graph's collective entries (TP, CP, EP), each
  // overlap window hiding at most its compute (planner/comm_time.h).
  w.comm = layer_comm(g.layer, cl, w.layer, p.overlap_tp_comm);
  double plain_tp_f = 0;  // under async TP: the forward's TP time with nothing hidden
  if (async_tp) {
    const LayerComm plain = layer_comm(g.layer, cl, w.layer, false);
    w.comm.tp_b = plain.tp_b;
    plain_tp_f = plain.tp_f;
  }
  w.tp_layer_f = w.comm.tp_f;
  w.tp_layer_b = w.comm.tp_b;
  if (te_overlap) {
    // TE's pipeline (forward reduce-scatters) and bulk (backward) overlaps run their collective on SMs
    // the GEMMs then lack: half of each direction's TP traffic (tp_overlap.h, ub_sm_cost).
    w.tp_layer_f += ub_sm_cost(0.5 * w.comm.tp_traffic_f, w.layer.gemm_fwd, s.cluster.gpu);
    w.tp_layer_b += ub_sm_cost(0.5 * w.comm.tp_traffic_b, w.layer.gemm_bwd, s.cluster.gpu);
  }
  const double tp_rerun_f = async_tp ? plain_tp_f : w.tp_layer_f;  // a full recompute runs in the backward graph
  w.cp_layer_f = w.comm.cp_f;
  w.cp_layer_b = w.comm.cp_b;
  w.ep_layer_f = w.comm.ep_f;
  w.ep_layer_b = w.comm.ep_b;
  add_recompute_work(s, g, c, cl, tp_rerun_f, backward_overlap, w);
  w.host_copy = activation_offload_seconds(s, hw, g);  // planner/offload_time.h: synchronous, exposed
  w.shard_copies = fsdp_copies(s, zero3, hw, cl.group(CommGroup::dp_shard).size);
  return w;
}

// The slowest pipeline stage (per micro-batch) and the sum over all stages.
struct SlowestStage {
  double sum = 0;  // all stages' per-micro-batch time
  double worst = -1;
  double worst_f = 0, worst_b = 0, worst_compute = 0, worst_recompute = 0, worst_tp = 0, worst_cp = 0, worst_ep = 0;
  double worst_wgrad = 0;
  double worst_host_copy = 0;  // activation offload copies, both directions
  double worst_gemm = 0, worst_attention = 0;  // of its compute and recompute
};

// Stage times per micro-batch: one StageTiming per stage into r.stages, and the slowest stage.
SlowestStage stage_loop(const ParallelSpec& p, const LayerWork& w, StepTime& r) {
  const OpTimes& layer = w.layer;
  const double tp_layer_f = w.tp_layer_f, tp_layer_b = w.tp_layer_b, cp_layer_f = w.cp_layer_f, cp_layer_b = w.cp_layer_b;
  const double ep_layer_f = w.ep_layer_f, ep_layer_b = w.ep_layer_b;
  const double recompute_layer = w.recompute_layer, recompute_comm = w.recompute_comm.total();
  const RerunComm& rerun = w.recompute_comm;
  SlowestStage x;
  r.stages.reserve(static_cast<size_t>(p.pp));
  for (int i = 0; i < p.pp; ++i) {
    const double L = p.layers_per_stage[static_cast<size_t>(i)];
    // FSDP's copies are compute-stream kernels: part of the compute, in the pass that runs them.
    const double copy_f = w.shard_copies.forward, copy_b = w.shard_copies.backward;
    double f = L * (layer.fwd + copy_f + tp_layer_f + cp_layer_f + ep_layer_f + w.host_copy);
    double bwd = L * (layer.bwd + copy_b + tp_layer_b + cp_layer_b + ep_layer_b + recompute_layer + recompute_comm + w.host_copy);
    double compute = L * (layer.fwd + layer.bwd + copy_f + copy_b);
    // Of compute and recompute, the GEMMs' and the attention core's (StepTime::compute_by_kind).
    double gemm = L * (layer.gemm_fwd + layer.gemm_bwd + w.recompute_gemm);
    double attention = L * (layer.attention + layer.attention_bwd + w.recompute_attention);
    for (const OpTimes* end : {i == 0 ? &w.emb : nullptr, i == p.pp - 1 ? &w.head : nullptr}) {
      if (!end) continue;  // the embedding on the first stage, the head on the last
      f += end->fwd;
      bwd += end->bwd;
      compute += end->fwd + end->bwd;
      gemm += end->gemm_fwd + end->gemm_bwd;
      attention += end->attention + end->attention_bwd;
    }
    x.sum += f + bwd;
    StageTiming st;
    const double wgrad = 0.5 * L * layer.gemm_bwd;
    const double comm_f = L * (tp_layer_f + cp_layer_f + ep_layer_f);
    const double comm_b = L * (tp_layer_b + cp_layer_b + ep_layer_b + recompute_comm);
    // The activation offload copies sit on the compute stream at each layer's start (forward) and before its
    // recompute (backward): inside the forward and recompute durations the simulator splits per layer.
    st.forward = Seconds(f - comm_f);
    st.recompute = Seconds(L * (recompute_layer + w.host_copy));
    st.backward_weight = Seconds(wgrad);
    st.backward_input = Seconds(bwd - comm_b - L * (recompute_layer + w.host_copy) - wgrad);
    st.comm_forward = Seconds(comm_f);
    st.comm_backward = Seconds(comm_b);
    r.stages.push_back(st);
    if (f + bwd > x.worst) {
      x.worst = f + bwd;
      r.slowest_stage = i;
      x.worst_f = f;
      x.worst_b = bwd;
      x.worst_compute = compute;
      x.worst_recompute = L * recompute_layer;
      x.worst_tp = L * (tp_layer_f + tp_layer_b + rerun.tp);
      x.worst_cp = L * (cp_layer_f + cp_layer_b + rerun.cp);
      x.worst_ep = L * (ep_layer_f + ep_layer_b + rerun.ep);
      x.worst_wgrad = 0.5 * L * layer.gemm_bwd;
      x.worst_host_copy = 2 * L * w.host_copy;
      x.worst_gemm = gemm;
      x.worst_attention = attention;
    }
  }
  return x;
}

// End-of-step gradient syncs (sequence-parallel gradients over TP; a tied embedding's between the first
// and last stage): on the critical path after the last backward and the gradient reduce, before the
// optimizer. Each stage's into r.stages; returns those of the stage where they take longest, which the
// step waits for (planner/comm_time.h, step_end_comm).
StepEndComm step_end_syncs(const ParallelSpec& p, const OpGraph& g, const CommLayout& cl, StepTime& r) {
  StepEndComm longest;
  const double sp_layer = sequence_parallel_parameters(g, 1, false, p.ep), sp_head = sequence_parallel_parameters(g, 0, true, p.ep);
  // Stages with the same parameters and the same place in the pipeline's ends sync alike: the middle
  // stages of a long pipeline reuse the stage before's (a sweep evaluates this for every layout).
  StepEndComm end;
  double end_params = -1;
  bool end_is_end = false;
  for (int i = 0; i < p.pp; ++i) {
    StageTiming& st = r.stages[static_cast<size_t>(i)];
    const double sp_params = p.layers_per_stage[static_cast<size_t>(i)] * sp_layer + (i == p.pp - 1 ? sp_head : 0.0);
    const bool is_end = i == 0 || i == p.pp - 1;
    if (sp_params != end_params || is_end != end_is_end) {
      end = step_end_comm(g.step, cl, i, sp_params);
      end_params = sp_params;
      end_is_end = is_end;
    }
    st.step_end_tp = Seconds(end.tp);
    st.step_end_ends = Seconds(end.pp_ends);
    if (end.total() > longest.total()) longest = end;
  }
  return longest;
}

// Utilisation, throughput and power from the step's parts.
void summarize(const Scenario& s, const Estimate& e, const HardwareProfile& hw, StepTime& r) {
  const GpuSpec& gpu = s.cluster.gpu;
  const double gpus = s.gpus();
  const double peak = gpu.peak_for(s.training.precision).value;
  r.mfu = e.flops.model_per_step.value / (gpus * peak * r.step.value);
  r.hfu = e.flops.hardware_per_step.value / (gpus * peak * r.step.value);
  r.tflops_per_gpu = e.flops.model_per_step.value / (gpus * r.step.value) / 1e12;
  r.tokens_per_second = e.tokens_per_step / r.step.value;
  r.tokens_per_second_per_gpu = r.tokens_per_second / gpus;
  // Power: idle plus the busy increment in proportion to the time the GPU computes.
  const double busy = std::min(1.0, (r.compute + r.recompute).value / r.step.value);
  const double busy_w = gpu.tdp.value * hw.busy_power_fraction;
  r.gpu_power = Watts(hw.idle_power.value + (busy_w - hw.idle_power.value) * busy);
}

// The per-GPU rates every op's time is read against.
OpTimeContext op_time_context(const Scenario& s, const HardwareProfile& hw) {
  const ParallelSpec& p = s.parallel;
  const TrainingSpec& t = s.training;
  const GpuSpec& gpu = s.cluster.gpu;
  const bool sp = p.sequence_parallel && p.tp > 1;
  OpTimeContext c{s, hw, p.tp, p.cp, sp, static_cast<double>(t.micro_batch), gpu.peak_for(t.precision).value,
                  attention_peak(gpu, t.precision).value, gpu.memory_bandwidth.value * hw.memory_efficiency};
  c.tensor_time_scale = tensor_time_scale(s.cluster, hw);
  return c;
}

// The data-parallel collectives' whole times, for the simulator and the report.
void record_data_parallel(const ParallelSpec& p, const DataParallelComm& dp, const OffloadTimes& offload, StepTime& r) {
  r.dp_reduce = Seconds(dp.reduce);
  r.dp_buckets = dp.buckets;
  // ZeRO-3: with the host-to-device copy of an offloaded shard, as the planner's gather pass (data_parallel_time.cpp).
  if (p.zero >= 1) r.dp_gather = Seconds(dp.gather + (p.zero >= 3 ? offload.gather_h2d : 0.0));
}

}  // namespace

StepTime step_time(const Scenario& s, const OpGraph& g, const Estimate& e, const HardwareProfile& hw) {
  StepTime r;
  step_time_into(s, g, e, hw, r);
  return r;
}

void step_time_into(const Scenario& s, const OpGraph& g, const Estimate& e, const HardwareProfile& hw, StepTime& r) {
  {  // start from a default StepTime but keep the vector's capacity
    std::vector<StageTiming> stages = std::move(r.stages);
    stages.clear();
    r = StepTime{};
    r.stages = std::move(stages);
  }
  const ParallelSpec& p = s.parallel;
  const OpTimeContext c = op_time_context(s, hw);
  const double m = static_cast<double>(e.micro_batches);
  // Topology and process groups (TP innermost, then CP, EP inside DP, DP, PP outermost).
  const CommLayout cl = comm_layout(s, hw);

  // ZeRO-3's (and SHARD_GRAD_OP's) units of one layer, for its gathers and FSDP's copies
  // (planner/zero3_modules.h); empty otherwise.
  Zero3Layer zero3;
  if (gathers_per_unit(framework_rules(s.training.framework), p)) zero3 = zero3_layer(s, g.layer, p.tp, p.ep);

  const LayerWork w = layer_work(s, g, c, cl, hw, zero3);
  const SlowestStage x = stage_loop(p, w, r);
  r.forward_per_micro_batch = Seconds(x.worst_f);
  r.backward_per_micro_batch = Seconds(x.worst_b);

  const double v = p.chunks();
  const PipelineComm pipe = pipeline_comm(g.step, cl, p.pp, v);  // the graph's boundary send/receive entries
  const StepEndComm step_end = step_end_syncs(p, g, cl, r);
  const PipelineTime pipe_time = pipeline_time(p, {x.worst, x.sum}, r.stages, m, pipe.hop);
  const double pp_exposed = pipe.exposed + pipe_time.steady_transfers + step_end.pp_ends;
  if (p.pp > 1) r.p2p_hop = Seconds(pipe.hop);
  r.dp_shares_pipeline_link = (cl.group(CommGroup::dp).nodes > 1) == (cl.group(CommGroup::pp).nodes > 1);
  const double pipeline = pipe_time.paced;

  // Data-parallel gradient reduction and parameter gathers (ZeRO), with overlap windows.
  const MemoryBreakdown& stage = e.stages[static_cast<size_t>(r.slowest_stage)];
  // Host offload: PCIe transfers and the CPU optimizer of the GPU's shard (planner/offload_time.h).
  const double shard = p.zero >= 1 ? stage.parameters / p.shard_ranks() : stage.parameters;
  const OffloadTimes offload = offload_times(s, hw, shard, m);
  MicroBatchPasses passes{x.worst_f, x.worst_b, x.worst_wgrad};
  if (r.dp_shares_pipeline_link) {
    const PipelineSends sends = pipeline_sends_per_micro_batch(p, r.slowest_stage);
    passes.forward_sends = sends.forward * pipe.hop;
    passes.backward_sends = sends.backward * pipe.hop;
  }
  passes.pipeline_wait = m > 1 ? pipe_time.steady_transfers / (m - 1) : 0.0;
  const DataParallelComm dp = data_parallel_comm(s, g, cl, {stage.parameters, stage.expert_parameters}, m, passes,
                                                 r.slowest_stage, offload.gather_h2d, zero3);
  const double dp_exposed = dp.exposed;
  // The fill runs through the first micro-batch's forward on p - 1 stages, each of its v chunks in turn under
  // the interleaved schedule; with unit-by-unit gathers each such chunk forward waits for its own (the
  // simulator's fill; random planner-simulator sweeps, 2026-12-01). The slowest stage's wait is in
  // dp_exposed; the other stages' lengthen the fill.
  const double gathered_fill = p.pp > 1 ? (p.pp - 1) * dp.first_forward : 0.0;
  // What the data-parallel collectives hide, they still slow (overlap_contention.h): the slowest stage's.
  const double contention = overlap_contention_seconds(dp.traffic - (dp_exposed - dp.behind_sends));
  if (cl.group(CommGroup::dp).size > 1) record_data_parallel(p, dp, offload, r);

  const OptimizerTime optimizer_time =
      optimizer_step_seconds(s, g, hw, stage, r.slowest_stage, c.bw, offload, m * x.worst_b, m);
  const double optimizer = optimizer_time.total();

  r.optimizer_step = Seconds(optimizer);
  r.compute = Seconds(m * x.worst_compute);
  r.recompute = Seconds(m * x.worst_recompute);
  r.compute_by_kind.gemm = Seconds(m * x.worst_gemm);
  r.compute_by_kind.attention = Seconds(m * x.worst_attention);
  r.compute_by_kind.optimizer = Seconds(optimizer_time.update);
  r.compute_by_kind.memory_bound = r.compute + r.recompute - r.compute_by_kind.gemm - r.compute_by_kind.attention +
                                   Seconds(optimizer_time.weight_passes);
  r.exposed.tp = Seconds(m * x.worst_tp + step_end.tp);
  r.exposed.cp = Seconds(m * x.worst_cp);
  r.exposed.ep = Seconds(m * x.worst_ep);
  r.exposed.pp = Seconds(pp_exposed);
  r.exposed.dp = Seconds(dp_exposed);
  r.exposed.offload = Seconds(m * x.worst_host_copy);
  r.bubble = Seconds(pipeline + gathered_fill - m * x.worst);
  r.optimizer = Seconds(optimizer);
  r.overlap_contention = Seconds(contention);
  r.step = Seconds(pipeline + gathered_fill + pp_exposed + step_end.tp + dp_exposed + contention + optimizer);
  summarize(s, e, hw, r);
}

}  // namespace tp
