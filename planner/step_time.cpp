#include "step_time.h"

#include <algorithm>
#include <cmath>

#include "collectives.h"
#include "framework_rules.h"
#include "gemm_time.h"
#include "tp_overlap.h"
#include "unfused_attention.h"

namespace tp {
namespace {

struct OpTimes {
  double fwd = 0, bwd = 0;
  double gemm_fwd = 0, gemm_bwd = 0;   // part spent in GEMMs (TP overlap window, weight-gradient share)
  double attention = 0;                // fused attention forward (CP overlap window)
  double attention_core_fwd = 0;       // what selective recompute repeats
};

struct Ctx {
  const Scenario& s;
  const HardwareProfile& hw;
  int tp, cp;
  bool sp;
  double b;
  double peak_gemm, peak_attn, bw;
  bool te_tp_overlap = false;  // the layer's TP GEMMs run as Transformer Engine's overlap chunks (tp_overlap.h)
  bool back_to_back_gemms = false;  // fused layer code: GEMMs at most at the sustained rate (gemm_time.h)
};

OpTimes time_ops(const std::vector<Op>& ops, const Ctx& c) {
  OpTimes t;
  const double tokens = c.b * static_cast<double>(c.s.training.sequence_length) / c.cp;
  const double launch = c.hw.kernel_launch.value;
  for (const Op& op : ops) {
    const double moved = tp_share(op.bytes_moved, op.saved_split == TpSplit::none ? TpSplit::none : op.flops_split, c.tp, c.sp) *
                         c.b / c.cp;
    const double mem_time = moved / c.bw;
    switch (op.kind) {
      case OpKind::gemm: {
        const double split = op.flops_split == TpSplit::none ? 1.0 : c.tp;
        const double flops = op.fwd_flops * c.b / c.cp / split;
        // The op's FLOPs at the time per FLOP of its (tokens x rows x cols/split) GEMM (model/gemm_time.h).
        const GemmDims dims{tokens, op.gemm_cols / split, op.gemm_rows};
        // Timed at the GEMM's own dtype (op_graph.h: FP8 training keeps the output layer in bf16).
        const double floor = c.back_to_back_gemms ? sustained_seconds_per_flop(c.hw, c.s.cluster.gpu, op.compute_precision) : 0.0;
        const double per_flop = std::max(floor, dims.flops() > 0 ? (gemm_seconds(c.hw, c.s.cluster.gpu, op.compute_precision, dims).value - launch) / dims.flops() : 0.0);
        // TE's TP-communication overlap runs the forward and input-gradient GEMMs in token chunks
        // (tp_overlap.h); the weight gradient (half the backward FLOPs) stays whole.
        const bool chunked = c.te_tp_overlap && op.flops_split == TpSplit::tp && !op.expert;
        const TpOverlapGemmPlan ub = chunked ? tp_overlap_gemm_plan(op.row_parallel, c.tp) : TpOverlapGemmPlan{};
        const auto per_flop_in = [&](double splits) {
          return splits > 1 ? std::max(floor, chunked_gemm_seconds_per_flop(c.hw, c.s.cluster.gpu, op.compute_precision, dims, splits, launch)) : per_flop;
        };
        const double bwd_flops = op.bwd_flops * c.b / c.cp / split;
        const double fwd = std::max(flops * per_flop_in(ub.forward_splits), mem_time) + launch;
        const double bwd = std::max(0.5 * bwd_flops * (per_flop_in(ub.dgrad_splits) + per_flop), 2 * mem_time) + 2 * launch;
        t.fwd += fwd;
        t.bwd += bwd;
        t.gemm_fwd += fwd;
        t.gemm_bwd += bwd;
        break;
      }
      case OpKind::attention_core: {
        const bool fused = c.s.training.flash_attention;
        // Causal masking: fused kernels skip the masked half of the score blocks.
        const double causal = fused ? 0.5 : 1.0;
        const double flops = op.fwd_flops * c.b / c.cp / c.tp * causal;
        // Fused: the profile's curve over the (context-parallel local) sequence and head dim, causal, at the
        // framework's attention kernel throughput relative to the profile's (framework_rules.h).
        const double seq = static_cast<double>(c.s.training.sequence_length) / c.cp;
        const double hd = static_cast<double>(c.s.model.head_dim);
        const double speed = fused ? framework_rules(c.s.training.framework).attention_throughput : 1.0;
        const double eff_f = fused ? c.hw.attention_forward.efficiency(seq, hd) * speed : c.hw.attention_unfused;
        const double eff_b = fused ? c.hw.attention_backward.efficiency(seq, hd) * speed : c.hw.attention_unfused;
        double fwd = std::max(flops / (c.peak_attn * eff_f), mem_time) + launch * (fused ? 1 : 3);
        double bwd = std::max(2.0 * flops / (c.peak_attn * eff_b), 2 * mem_time) + launch * (fused ? 1 : 4);
        if (!fused && !c.hw.attention_unfused_measured) {
          // Not measured: the unfused chain's kernels one after the other (unfused_attention.h).
          const double scores = c.b / c.cp * static_cast<double>(c.s.model.heads) / c.tp * seq * static_cast<double>(c.s.training.sequence_length);
          const UnfusedAttentionTime u = unfused_attention_time(flops, scores, stored_bytes(c.s.training.precision), c.s.model.dropout,
                                                                c.s.training.precision, c.hw, c.s.cluster.gpu, launch);
          fwd = u.forward;
          bwd = u.backward;
        }
        t.fwd += fwd;
        t.bwd += bwd;
        t.attention += fwd;
        t.attention_core_fwd += fwd;
        break;
      }
      default: {
        if (op.bytes_moved <= 0 && op.saved_bytes <= 0) break;
        if (op.kernel_class >= 0) {
          // Eager kernels (framework_rules.h) and FP8 quantization: passes over the minimal traffic at the
          // class's bandwidth; the backward of an elementwise op moves 1.5x the forward's bytes (reads the
          // output gradient and the input, writes the input gradient), as the class measurements count it
          // (docs/model.md §20); quantization kernels run in one pass only (op.forward/backward_share).
          const double peak_bw = c.s.cluster.gpu.memory_bandwidth.value;
          const double bytes = moved * op.passes;
          const double fwd = op.forward_share > 0 ? op.forward_share * bytes / (peak_bw * c.hw.efficiency_of(static_cast<KernelClass>(op.kernel_class))) +
                                                        launch * op.kernels
                                                  : 0.0;
          const bool once = op.kind == OpKind::loss;  // the loss class is timed forward + backward together
          const double bwd = once || op.backward_share <= 0
                                 ? 0.0
                                 : op.backward_share * bytes / (peak_bw * c.hw.efficiency_of(static_cast<KernelClass>(op.kernel_class_backward))) +
                                       2 * launch * op.kernels;
          t.fwd += fwd;
          t.bwd += bwd;
          break;
        }
        t.fwd += mem_time + launch;
        t.bwd += 2 * mem_time + launch;
        if (op.attention_scores) t.attention_core_fwd += mem_time + launch;
        break;
      }
    }
  }
  return t;
}

// Gradient reduce traffic `reduce` overlapped with the backward work after each part of it is ready,
// returned as the work that hides it (exposed = reduce - window). 1F1B: the buckets fill during the last
// micro-batch's backward (window: one backward). Interleaved (Narayanan et al. 2021, Fig. 4): the last
// group of min(m, pp) micro-batches runs its backward chunk by chunk, v-1 down to 0, so chunk k's
// gradients are final (v-1-k) x group chunk-backwards before the stage's end and its 1/v of the traffic
// overlaps all of them; with the reduce channel serial, the exposed time is the larger of the last
// chunk's share and the whole traffic less everything after the first chunk (docs/model.md §15).
double reduce_overlap_window(const ParallelSpec& p, double micro_batches, double backward, double reduce) {
  const double v = p.schedule == Schedule::interleaved ? std::max(1, p.vpp) : 1.0;
  if (v <= 1) return backward;
  const double unit = backward / v;  // one chunk's backward of one micro-batch
  const double group = std::min(micro_batches, static_cast<double>(p.pp));
  const double exposed = std::max(reduce / v - unit, reduce - ((v - 1) * group + 1) * unit);
  return reduce - exposed;
}

// Parameters of the FP8 GEMMs one GPU of `stage` holds (split by tp, experts further by ep).
double fp8_weight_parameters(const OpGraph& g, const Scenario& s, int stage) {
  const ParallelSpec& p = s.parallel;
  if (stage < 0 || static_cast<size_t>(stage) >= p.layers_per_stage.size()) return 0.0;
  double per_layer = 0;
  for (const Op& op : g.layer) {
    if (op.kind != OpKind::gemm || op.compute_precision != Precision::fp8) continue;
    per_layer += op.params_split / p.tp / (op.expert ? std::max(1, p.ep) : 1) + op.params_replicated;
  }
  return per_layer * p.layers_per_stage[static_cast<size_t>(stage)];
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
  const TrainingSpec& t = s.training;
  const GpuSpec& gpu = s.cluster.gpu;
  const bool sp = p.sequence_parallel && p.tp > 1;
  Ctx c{s, hw, p.tp, p.cp, sp, static_cast<double>(t.micro_batch), gpu.peak_for(t.precision).value,
        attention_peak(gpu, t.precision).value, gpu.memory_bandwidth.value * hw.memory_efficiency};
  const double m = static_cast<double>(e.micro_batches);
  const double bpv = stored_bytes(t.precision);
  const double seq_local = static_cast<double>(t.sequence_length) / p.cp;

  // Transformer Engine's TP overlap covers the layer's TE modules only (not the embedding or the output layer).
  c.te_tp_overlap = p.tp > 1 && p.overlap_tp_comm && framework_rules(t.framework).layer_code == LayerCode::fused;
  c.back_to_back_gemms = framework_rules(t.framework).layer_code == LayerCode::fused;
  const OpTimes layer = time_ops(g.layer, c);
  const bool te_overlap = c.te_tp_overlap;
  c.te_tp_overlap = false;
  const OpTimes emb = time_ops(g.embedding, c);
  const OpTimes head = time_ops(g.head, c);

  // Topology and process groups (TP innermost, then CP, EP inside DP, DP, PP outermost).
  Topology topo = make_topology(s.cluster, hw.intra_node.bandwidth_efficiency, hw.inter_node.bandwidth_efficiency,
                                s.cluster.oversubscription);
  if (hw.intra_node.latency.value > 0) topo.intra.latency = hw.intra_node.latency;
  if (hw.inter_node.latency.value > 0) topo.inter.latency = hw.inter_node.latency;
  const int gpn = s.cluster.gpus_per_node;
  // Strides follow parallel.placement; the gradient group spans dp x cp from the inner of the two
  // (exact for the default order, where cp sits right inside dp).
  const GroupShape tp_group = group_shape(p.tp, p.stride_of(MeshDim::tp), gpn);
  const GroupShape cp_group = group_shape(p.cp, p.stride_of(MeshDim::cp), gpn);
  const GroupShape ep_group = group_shape(p.ep, p.stride_of(MeshDim::dp), gpn);
  const GroupShape dp_group =
      group_shape(p.dp * p.cp, std::min(p.stride_of(MeshDim::dp), p.cp > 1 ? p.stride_of(MeshDim::cp) : p.stride_of(MeshDim::dp)), gpn);
  const GroupShape pp_group = group_shape(2, p.stride_of(MeshDim::pp), gpn);

  // Per layer, per micro-batch communication.
  const double act_bytes = c.b * seq_local * static_cast<double>(s.model.hidden) * bpv;
  double tp_layer_f = 0, tp_layer_b = 0;
  if (p.tp > 1) {
    // Megatron: 2 all-reduces forward, 2 backward; with SP each becomes all-gather + reduce-scatter.
    const double one = sp ? (collective_time(Collective::all_gather, Bytes(act_bytes), tp_group, topo).time +
                             collective_time(Collective::reduce_scatter, Bytes(act_bytes), tp_group, topo).time).value
                          : collective_time(Collective::all_reduce, Bytes(act_bytes), tp_group, topo).time.value;
    tp_layer_f = 2 * one;
    tp_layer_b = 2 * one;
    if (p.overlap_tp_comm) {
      // TE's pipeline (forward reduce-scatters) and bulk (backward) overlaps run their collective on SMs
      // the GEMMs then lack: half of each direction's TP traffic (tp_overlap.h, ub_sm_cost).
      const double sm_f = te_overlap ? ub_sm_cost(0.5 * tp_layer_f, layer.gemm_fwd, gpu) : 0.0;
      const double sm_b = te_overlap ? ub_sm_cost(0.5 * tp_layer_b, layer.gemm_bwd, gpu) : 0.0;
      tp_layer_f = std::max(0.0, tp_layer_f - layer.gemm_fwd) + sm_f;
      tp_layer_b = std::max(0.0, tp_layer_b - layer.gemm_bwd) + sm_b;
    }
  }
  double cp_layer_f = 0, cp_layer_b = 0;
  if (p.cp > 1) {
    // Ring attention: cp - 1 exchanges of the local K and V chunk, overlapped with attention compute.
    const double kv = c.b * seq_local * 2.0 * s.model.kv_heads * s.model.head_dim / p.tp * bpv;
    const double ring = (p.cp - 1) * collective_time(Collective::send_recv, Bytes(kv), cp_group, topo).time.value;
    cp_layer_f = std::max(0.0, ring - layer.attention);
    cp_layer_b = std::max(0.0, 2 * ring - 2 * layer.attention);
  }
  double ep_layer_f = 0, ep_layer_b = 0;
  if (p.ep > 1 && s.model.moe.enabled()) {
    // Token dispatch and combine: two all-to-alls forward, two backward (GShard / Megatron MoE).
    const double routed = s.model.moe.top_k * act_bytes / (sp ? p.tp : 1);
    const double a2a = collective_time(Collective::all_to_all, Bytes(routed), ep_group, topo).time.value;
    ep_layer_f = 2 * a2a;
    ep_layer_b = 2 * a2a;
  }

  // Recompute per layer (forward work repeated in the backward pass).
  double recompute_layer = 0;
  double recompute_comm = 0;
  switch (p.recompute.mode) {
    case RecomputeMode::none: break;
    case RecomputeMode::selective: recompute_layer = layer.attention_core_fwd; break;
    case RecomputeMode::full:
    case RecomputeMode::every:
      recompute_layer = layer.fwd;
      recompute_comm = tp_layer_f + cp_layer_f + ep_layer_f;
      break;
  }

  // Stage times per micro-batch.
  double sum = 0;  // all stages' per-micro-batch time
  r.stages.reserve(static_cast<size_t>(p.pp));
  double worst = -1;
  double worst_f = 0, worst_b = 0, worst_compute = 0, worst_recompute = 0, worst_tp = 0, worst_cp = 0, worst_ep = 0;
  double worst_wgrad = 0;
  for (int i = 0; i < p.pp; ++i) {
    const double L = p.layers_per_stage[static_cast<size_t>(i)];
    double f = L * (layer.fwd + tp_layer_f + cp_layer_f + ep_layer_f);
    double bwd = L * (layer.bwd + tp_layer_b + cp_layer_b + ep_layer_b + recompute_layer + recompute_comm);
    double compute = L * (layer.fwd + layer.bwd);
    if (i == 0) {
      f += emb.fwd;
      bwd += emb.bwd;
      compute += emb.fwd + emb.bwd;
    }
    if (i == p.pp - 1) {
      f += head.fwd;
      bwd += head.bwd;
      compute += head.fwd + head.bwd;
    }
    sum += f + bwd;
    StageTiming st;
    const double wgrad = 0.5 * L * layer.gemm_bwd;
    const double comm_f = L * (tp_layer_f + cp_layer_f + ep_layer_f);
    const double comm_b = L * (tp_layer_b + cp_layer_b + ep_layer_b + recompute_comm);
    st.forward = Seconds(f - comm_f);
    st.recompute = Seconds(L * recompute_layer);
    st.backward_weight = Seconds(wgrad);
    st.backward_input = Seconds(bwd - comm_b - L * recompute_layer - wgrad);
    st.comm_forward = Seconds(comm_f);
    st.comm_backward = Seconds(comm_b);
    r.stages.push_back(st);
    if (f + bwd > worst) {
      worst = f + bwd;
      r.slowest_stage = i;
      worst_f = f;
      worst_b = bwd;
      worst_compute = compute;
      worst_recompute = L * recompute_layer;
      worst_tp = L * (tp_layer_f + tp_layer_b + (recompute_comm > 0 ? tp_layer_f : 0));
      worst_cp = L * (cp_layer_f + cp_layer_b + (recompute_comm > 0 ? cp_layer_f : 0));
      worst_ep = L * (ep_layer_f + ep_layer_b + (recompute_comm > 0 ? ep_layer_f : 0));
      worst_wgrad = 0.5 * L * layer.gemm_bwd;
    }
  }
  r.forward_per_micro_batch = Seconds(worst_f);
  r.backward_per_micro_batch = Seconds(worst_b);

  // Pipeline: the slowest stage paces m micro-batches; the other stages' work is the fill and
  // drain, divided by v for the interleaved schedule (Narayanan et al. 2021) and shrunk for
  // ZB-H1, whose bubble is (p-1)(F + B - W) instead of (p-1)(F + B + W) (Qi et al. 2023).
  const double v = p.schedule == Schedule::interleaved ? p.vpp : 1.0;
  double fill = (sum - worst) / v;
  if (p.schedule == Schedule::zb_h1 && worst > 0) fill *= std::max(0.0, worst - 2 * worst_wgrad) / worst;
  double pp_exposed = 0;
  if (p.pp > 1) {
    const double boundary = act_bytes / (sp ? p.tp : 1);
    const double hop = collective_time(Collective::send_recv, Bytes(boundary), pp_group, topo).time.value;
    // Steady-state transfers overlap compute; the fill and drain chain pays one hop per stage
    // boundary each way (v times more boundaries when interleaved).
    pp_exposed = 2.0 * (p.pp - 1) * hop * v;
    r.p2p_hop = Seconds(hop);
  }
  const double pipeline = m * worst + fill;

  // Data-parallel gradient reduction and parameter gathers (ZeRO), with overlap windows.
  const MemoryBreakdown& stage = e.stages[static_cast<size_t>(r.slowest_stage)];
  const double params = stage.parameters;
  const double grad_bytes = params * element_bytes(t.grad_precision);
  const double weight_bytes = params * stored_bytes(t.precision);
  double dp_exposed = 0;
  if (dp_group.size > 1) {
    const double reduce = p.zero == 0
                              ? collective_time(Collective::all_reduce, Bytes(grad_bytes), dp_group, topo).time.value
                              : collective_time(Collective::reduce_scatter, Bytes(grad_bytes), dp_group, topo).time.value;
    const double last_bucket = reduce * std::min(1.0, s.memory.comm_bucket.value / std::max(grad_bytes, 1.0));
    dp_exposed += p.overlap_grad_reduce ? std::max(last_bucket, reduce - reduce_overlap_window(p, m, worst_b, reduce)) : reduce;
    r.dp_reduce = Seconds(reduce);
    r.dp_buckets = static_cast<int>(std::max(1.0, std::ceil(grad_bytes / std::max(s.memory.comm_bucket.value, 1.0))));
    const double gather =
        p.zero >= 1 ? collective_time(Collective::all_gather, Bytes(weight_bytes), dp_group, topo).time.value : 0.0;
    if (p.zero >= 1) r.dp_gather = Seconds(gather);
    if (p.zero >= 1 && p.zero < 3) dp_exposed += p.overlap_param_gather ? std::max(0.0, gather - worst_f) : gather;
    if (p.zero == 3) {
      // ZeRO-3 / FSDP: no gather after the optimizer; every micro-batch gathers the weights for forward
      // and again for backward, and the gradients are reduce-scattered. Bounded overlap: what overlaps
      // hides at most behind the step's compute, the rest is exposed (docs/model.md §15); per-GPU
      // traffic does not shrink as GPUs are added, the compute per GPU does.
      const double gathers = m * 2.0 * gather;
      const double hidden_traffic = (p.overlap_param_gather ? gathers : 0.0) + (p.overlap_grad_reduce ? reduce : 0.0);
      const double exposed_traffic = (p.overlap_param_gather ? 0.0 : gathers) + (p.overlap_grad_reduce ? 0.0 : reduce);
      const double window = m * (worst_f + worst_b);
      dp_exposed = exposed_traffic + std::max(hidden_traffic - window, p.overlap_grad_reduce ? last_bucket : 0.0);
    }
  }

  // Optimizer step: memory-bound sweep over the local shard (read master, states, gradient; write them back).
  const double shard = p.zero >= 1 ? params / (p.dp * p.cp) : params;
  const double state_bytes = (stage.master_weights + stage.optimizer).value / std::max(1.0, shard);
  const double per_param = 2.0 * state_bytes + element_bytes(t.grad_precision) + 2.0;
  double optimizer = shard * per_param / c.bw;
  if (framework_rules(t.framework).layer_code == LayerCode::eager) {
    // torch's fused AdamW: one pass reading and writing parameters and both states, reading gradients
    // (the adamw kernel class: 7 x the parameter bytes with states in the parameter dtype).
    const double wb = t.autocast ? 4.0 : stored_bytes(t.precision);
    const double eager_per_param = 2.0 * wb + element_bytes(t.grad_precision) + 2.0 * state_bytes;
    optimizer = shard * eager_per_param / (gpu.memory_bandwidth.value * hw.efficiency_of(KernelClass::adamw));
  }
  if (t.autocast) {
    // Autocast casts every fp32 weight to 16 bits once per step (read 4, write 2 B) and each 16-bit
    // weight gradient back to fp32 for accumulation (read 2, write 4 B).
    optimizer += params * 6.0 / (gpu.memory_bandwidth.value * hw.efficiency_of(KernelClass::cast_to_16bit)) +
                 params * 6.0 / (gpu.memory_bandwidth.value * hw.efficiency_of(KernelClass::cast_to_fp32));
  }
  // FP8 training: Transformer Engine casts each FP8 GEMM's bf16 weight to FP8 with its transpose once
  // per step (fp8_cast_transpose_fused; read 2 B, write 2 B per parameter): Megatron-Core's schedules
  // set is_first_microbatch on the first micro-batch only, later ones reuse the cached FP8 weights
  // (docs/model.md, "FP8 training").
  optimizer += fp8_weight_parameters(g, s, r.slowest_stage) * 4.0 /
               (gpu.memory_bandwidth.value * hw.efficiency_of(KernelClass::cast_to_16bit));
  if (p.offload_optimizer == OffloadTarget::cpu) {
    // Gradients go down and updated weights come up over PCIe; the CPU update itself at host
    // memory speed (~100 GB/s per node, shared by the node's GPUs).
    const double pcie = gpu.pcie.value > 0 ? gpu.pcie.value * hw.pcie_efficiency : 16e9;
    const double host_bw = 100e9 / s.cluster.gpus_per_node;
    optimizer = shard * (4.0 + 2.0) / pcie + shard * (2.0 * 16.0 + 4.0) / host_bw;
  }

  r.optimizer_step = Seconds(optimizer);
  r.compute = Seconds(m * worst_compute);
  r.recompute = Seconds(m * worst_recompute);
  r.exposed.tp = Seconds(m * worst_tp);
  r.exposed.cp = Seconds(m * worst_cp);
  r.exposed.ep = Seconds(m * worst_ep);
  r.exposed.pp = Seconds(pp_exposed);
  r.exposed.dp = Seconds(dp_exposed);
  r.bubble = Seconds(pipeline - m * worst);
  r.optimizer = Seconds(optimizer);
  r.step = Seconds(pipeline + pp_exposed + dp_exposed + optimizer);

  const double gpus = s.gpus();
  const double peak = gpu.peak_for(t.precision).value;
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

}  // namespace tp
