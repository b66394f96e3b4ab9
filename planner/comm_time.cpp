#include "comm_time.h"

#include <algorithm>

namespace tp {

CommLayout comm_layout(const Scenario& s, const HardwareProfile& hw) {
  const ParallelSpec& p = s.parallel;
  CommLayout l;
  l.topo = make_topology(s.cluster, hw.intra_node.bandwidth_efficiency, hw.inter_node.bandwidth_efficiency,
                         s.cluster.oversubscription);
  if (hw.intra_node.latency.value > 0) l.topo.intra.latency = hw.intra_node.latency;
  if (hw.inter_node.latency.value > 0) l.topo.inter.latency = hw.inter_node.latency;
  const int gpn = s.cluster.gpus_per_node;
  // Strides follow parallel.placement; the gradient group spans dp x cp from the inner of the two
  // (exact for the default order, where cp sits right inside dp).
  l.groups[static_cast<int>(CommGroup::tp)] = group_shape(p.tp, p.stride_of(MeshDim::tp), gpn);
  l.groups[static_cast<int>(CommGroup::cp)] = group_shape(p.cp, p.stride_of(MeshDim::cp), gpn);
  // Hierarchical CP: the all-to-all level is the inner cp_a2a of the cp ranks (Megatron-Core
  // parallel_state.py, create_hierarchical_parallel_groups: consecutive ranks of the cp group).
  l.groups[static_cast<int>(CommGroup::cp_inner)] = group_shape(p.cp_inner(), p.stride_of(MeshDim::cp), gpn);
  l.groups[static_cast<int>(CommGroup::cp_outer)] =
      group_shape(p.cp_outer(), p.stride_of(MeshDim::cp) * p.cp_inner(), gpn);
  const int gradient_stride = std::min(p.stride_of(MeshDim::dp), p.cp > 1 ? p.stride_of(MeshDim::cp) : p.stride_of(MeshDim::dp));
  // The experts' ranks fold the dp x cp ranks (ep divides dp x cp): Megatron-Core lays them out as
  // tp-ep-dp-pp with cp = 1 (parallel_state.py, the expert RankGenerator), so ep adjacent ranks of the
  // gradient group; with the dp stride instead, cp 2 x ep 2 on one node was priced on the inter-node network.
  l.groups[static_cast<int>(CommGroup::ep)] = group_shape(p.ep, gradient_stride, gpn);
  l.groups[static_cast<int>(CommGroup::dp)] = group_shape(p.dp * p.cp, gradient_stride, gpn);
  // Hybrid sharding: the sharding group is the innermost dp_shard x cp of those ranks (FSDP's HYBRID_SHARD
  // shards within the node, torchtitan's mesh puts dp_shard inside dp_replicate); the replicas of a
  // shard lie dp_shard x cp ranks apart.
  l.groups[static_cast<int>(CommGroup::dp_shard)] = group_shape(p.shard_ranks(), gradient_stride, gpn);
  l.groups[static_cast<int>(CommGroup::dp_replica)] = group_shape(p.replicas(), gradient_stride * p.shard_ranks(), gpn);
  const int ep = std::max(1, p.ep);
  l.expert_dp = group_shape(std::max(1, p.dp * p.cp / ep), gradient_stride * ep, gpn);
  l.expert_dp_shard = group_shape(std::max(1, p.shard_ranks() / ep), gradient_stride * ep, gpn);
  l.groups[static_cast<int>(CommGroup::pp)] = group_shape(2, p.stride_of(MeshDim::pp), gpn);
  // Megatron's embedding group: the first and last rank of each pipeline group (parallel_state.py,
  // initialize_model_parallel, embedding_ranks = [ranks[0], ranks[-1]]). On one node when the pipeline
  // group is, else on two.
  const GroupShape pipeline = group_shape(p.pp, p.stride_of(MeshDim::pp), gpn);
  const int ends = p.pp > 1 ? 2 : 1;
  l.groups[static_cast<int>(CommGroup::pp_ends)] =
      pipeline.nodes == 1 ? GroupShape{ends, ends, 1} : GroupShape{ends, 1, ends};
  // No group spans more nodes than the cluster has (a safety net under every layout rule above: a one-node
  // cluster may have no inter-node link at all).
  auto within_cluster = [&](GroupShape& g) {
    if (g.nodes <= s.cluster.nodes) return;
    g.nodes = std::max(1, s.cluster.nodes);
    g.ranks_per_node = (g.size + g.nodes - 1) / g.nodes;
  };
  for (GroupShape& g : l.groups) within_cluster(g);
  within_cluster(l.expert_dp);
  within_cluster(l.expert_dp_shard);
  l.tp = p.tp;
  l.pp = p.pp;
  l.cp = p.cp;
  l.zero = p.zero;
  l.sp = p.sequence_parallel && p.tp > 1;
  l.cp_comm = cp_comm_of(p, s.training.framework);
  l.b = static_cast<double>(s.training.micro_batch);
  l.weight_bytes = parameter_bytes(s.training);
  l.grad_precision = s.training.grad_precision;
  l.deduplicated_dispatch = s.model.moe.enabled() && s.training.moe_dispatcher == MoeDispatcher::deepep;
  l.experts = static_cast<int>(s.model.moe.experts);
  l.top_k = static_cast<int>(s.model.moe.top_k);
  return l;
}

CommLayout expert_comm_layout(const CommLayout& l) {
  CommLayout e = l;
  e.groups[static_cast<int>(CommGroup::dp)] = l.expert_dp;
  e.groups[static_cast<int>(CommGroup::dp_shard)] = l.expert_dp_shard;
  return e;
}

bool applies(const Comm& c, const CommLayout& l) {
  switch (c.when) {
    case CommWhen::always: return true;
    case CommWhen::zero0: return l.zero == 0;
    case CommWhen::zero1_or_2: return l.zero == 1 || l.zero == 2;
    case CommWhen::zero_any: return l.zero >= 1;
    case CommWhen::zero3: return l.zero >= 3;
    case CommWhen::pipelined: return l.pp > 1;
    case CommWhen::sequence_parallel: return l.sp;
    case CommWhen::no_sequence_parallel: return !l.sp;
    case CommWhen::cp_p2p: return l.cp_comm == CpComm::p2p;
    case CommWhen::cp_all_gather: return l.cp_comm == CpComm::all_gather;
    case CommWhen::cp_a2a: return l.cp_comm == CpComm::a2a;
    case CommWhen::cp_ring_all_gather: return l.cp_comm == CpComm::ring_all_gather;
    case CommWhen::cp_a2a_p2p: return l.cp_comm == CpComm::a2a_p2p;
  }
  return false;
}

double comm_bytes(const Comm& c, const CommLayout& l, double stage_parameters) {
  switch (c.source) {
    case CommBytes::activations: return tp_share(c.bytes, c.split, l.tp, l.sp) * l.b / l.cp;
    case CommBytes::sequence: return tp_share(c.bytes, c.split, l.tp, l.sp) * l.b;
    case CommBytes::gradients: return stage_parameters * element_bytes(l.grad_precision);
    case CommBytes::weights: return stage_parameters * l.weight_bytes;
    case CommBytes::fixed: return c.bytes;
    case CommBytes::parameter_gradients: return tp_share(c.bytes, c.split, l.tp, l.sp) * element_bytes(l.grad_precision);
    case CommBytes::gradient_shard:
      return stage_parameters * element_bytes(l.grad_precision) / l.group(CommGroup::dp_shard).size;
  }
  return 0.0;
}

namespace {

double repeats(const Comm& c, const CommCall& call, const CommLayout& l) {
  return static_cast<double>(call.count) * (c.per_peer ? l.group(c.group).size - 1 : 1);
}

double one_collective(Collective kind, CommGroup group, const CommLayout& l, double bytes) {
  if (l.deduplicated_dispatch && group == CommGroup::ep && kind == Collective::all_to_all) {
    return deduplicated_dispatch_time(Bytes(bytes / l.top_k), l.experts, l.top_k, l.group(group), l.topo).value;
  }
  return collective_time(kind, Bytes(bytes), l.group(group), l.topo).time.value;
}

// The few distinct (collective, group, bytes) of a layer, each timed once (no heap allocation).
class CollectiveMemo {
 public:
  double seconds(Collective kind, CommGroup group, const CommLayout& l, double bytes) {
    for (int i = 0; i < used_; ++i) {
      const Entry& e = entries_[i];
      if (e.kind == kind && e.group == group && e.bytes == bytes) return e.seconds;
    }
    const double t = one_collective(kind, group, l, bytes);
    if (used_ < kSize) entries_[used_++] = {kind, group, bytes, t};
    return t;
  }

 private:
  struct Entry {
    Collective kind;
    CommGroup group;
    double bytes;
    double seconds;
  };
  static constexpr int kSize = 8;
  Entry entries_[kSize];
  int used_ = 0;
};

constexpr int kLayerOverlaps = 4;  // none, layer_gemms, attention_core, attention_local_block

int overlap_index(CommOverlap o) {
  switch (o) {
    case CommOverlap::layer_gemms: return 1;
    case CommOverlap::attention_core: return 2;
    case CommOverlap::attention_local_block: return 3;
    default: return 0;
  }
}

// The compute an overlap window offers in one pass, or a negative value when the window is closed. The
// attention of a pass (its forward or its backward kernel) splits into c equal blocks under context
// parallelism (load-balanced causal chunks): a ring's c - 1 passes each hide behind one block, the first
// block has nothing left to hide (TE AttnFuncWithCPAndKVP2P.backward sends each step's K/V and dK/dV beside
// that step's backward attention kernel).
double window(int overlap, bool backward, const OpTimes& compute, bool overlap_tp_comm, int ranks) {
  const double attention = backward ? compute.attention_bwd : compute.attention;
  const double block = attention / std::max(1, ranks);
  switch (overlap) {
    case 1: return overlap_tp_comm ? (backward ? compute.gemm_bwd : compute.gemm_fwd) : -1.0;
    case 2: return attention - block;
    case 3: return block;
    default: return -1.0;
  }
}

}  // namespace

double comm_seconds(const Comm& c, CommPass pass, const CommLayout& l, double stage_parameters) {
  return comm_seconds_in_calls(c, pass, l, stage_parameters, 1.0);
}

double comm_seconds_in_calls(const Comm& c, CommPass pass, const CommLayout& l, double stage_parameters, double calls) {
  const CommCall& call = c.call(pass, l.sp);
  if (!applies(c, l) || call.count <= 0) return 0.0;
  const double n = std::max(1.0, calls);
  return repeats(c, call, l) * n * one_collective(call.kind, c.group, l, comm_bytes(c, l, stage_parameters) / n);
}

LayerComm layer_comm(const std::vector<Op>& layer, const CommLayout& l, const OpTimes& compute, bool overlap_tp_comm) {
  // Sums per group, pass, overlap window and block (attention, MLP): the blocks are added last, so
  // that the two blocks' identical collectives add exactly.
  double sum[kCommGroupCount][2][kLayerOverlaps][2] = {};
  CollectiveMemo memo;
  for (const Op& op : layer) {
    if (op.kind != OpKind::collective || !applies(op.comm, l)) continue;
    const Comm& c = op.comm;
    const double bytes = comm_bytes(c, l);
    for (int pass = 0; pass < 2; ++pass) {
      const CommCall& call = c.call(pass == 0 ? CommPass::forward : CommPass::backward, l.sp);
      if (call.count <= 0) continue;
      const double t = repeats(c, call, l) * memo.seconds(call.kind, c.group, l, bytes);
      sum[static_cast<int>(c.group)][pass][overlap_index(c.overlap)][op.block == Block::attention ? 0 : 1] += t;
    }
  }
  // One window's collectives of a group in a pass, both blocks.
  auto total = [&](CommGroup g, int pass, int o) { return sum[static_cast<int>(g)][pass][o][0] + sum[static_cast<int>(g)][pass][o][1]; };
  auto exposed = [&](CommGroup g, int pass) {
    double e = 0;
    for (int o = 0; o < kLayerOverlaps; ++o) {
      const double w = window(o, pass == 1, compute, overlap_tp_comm, l.group(g).size);
      e += w < 0 ? total(g, pass, o) : std::max(0.0, total(g, pass, o) - w);
    }
    return e;
  };
  // What Transformer Engine's userbuffers carry: the collectives that may overlap the layer's GEMMs (the
  // FP8 amax all-reduces on the critical path are NCCL calls of their own).
  auto traffic = [&](CommGroup g, int pass) { return total(g, pass, overlap_index(CommOverlap::layer_gemms)); };
  LayerComm r;
  r.tp_traffic_f = traffic(CommGroup::tp, 0);
  r.tp_traffic_b = traffic(CommGroup::tp, 1);
  r.tp_f = exposed(CommGroup::tp, 0);
  r.tp_b = exposed(CommGroup::tp, 1);
  // Context parallelism: one group, or the two levels of a hierarchical exchange.
  r.cp_f = exposed(CommGroup::cp, 0) + exposed(CommGroup::cp_inner, 0) + exposed(CommGroup::cp_outer, 0);
  r.cp_b = exposed(CommGroup::cp, 1) + exposed(CommGroup::cp_inner, 1) + exposed(CommGroup::cp_outer, 1);
  r.ep_f = exposed(CommGroup::ep, 0);
  r.ep_b = exposed(CommGroup::ep, 1);
  return r;
}

PipelineComm pipeline_comm(const std::vector<Op>& step, const CommLayout& l, int pp, double v) {
  PipelineComm r;
  if (pp <= 1) return r;
  for (const Op& op : step) {
    if (op.kind != OpKind::collective || op.comm.group != CommGroup::pp) continue;
    // Steady-state transfers overlap compute; the fill and drain chain pays one hop per stage boundary,
    // the activations forward and their gradients backward.
    for (const CommPass pass : {CommPass::forward, CommPass::backward}) {
      const double hop = comm_seconds(op.comm, pass, l);
      if (pass == CommPass::forward) r.hop = hop;
      r.exposed += (pp - 1) * hop * v;
    }
  }
  return r;
}

StepEndComm step_end_comm(const std::vector<Op>& step, const CommLayout& l, int stage, double sequence_parallel_params) {
  StepEndComm r;
  for (const Op& op : step) {
    if (op.kind != OpKind::collective || op.comm.overlap != CommOverlap::step_end) continue;
    // The pipeline's ends: only the first and the last stage are in the group.
    const bool ends = op.comm.group == CommGroup::pp_ends;
    if (ends && stage != 0 && stage != l.pp - 1) continue;
    (ends ? r.pp_ends : r.tp) += comm_seconds(op.comm, CommPass::backward, l, sequence_parallel_params);
  }
  return r;
}

}  // namespace tp
