#include "mesh.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "checks.h"

namespace tp {
namespace {

bool pow2(long long v) { return v > 0 && (v & (v - 1)) == 0; }

// The layout `base` with each recompute mode, each micro-batch size dividing the per-replica batch (a
// multiple of pp micro-batches when interleaved), and sequence parallelism on and, when `sp_optional`, off
// when tp > 1.
void add_recompute_and_micro_batches(std::vector<LayoutChoice>& out, const LayoutChoice& base, long long per_replica,
                                     long long seq, int max_micro_batch, bool sp_optional) {
  for (RecomputeMode rc : {RecomputeMode::none, RecomputeMode::selective, RecomputeMode::full}) {
    for (long long mb = 1; mb <= max_micro_batch && mb <= per_replica; mb *= 2) {
      if (per_replica % mb != 0) continue;
      if (base.schedule == Schedule::interleaved && (per_replica / mb) % base.pp != 0) continue;
      LayoutChoice c = base;
      c.recompute = rc;
      c.micro_batch = mb;
      c.sequence_parallel = base.tp > 1;
      if (base.tp == 1 || (seq / base.cp) % base.tp == 0) out.push_back(c);
      c.sequence_parallel = false;
      if (base.tp > 1 && sp_optional) out.push_back(c);
    }
  }
}

// Hybrid sharding within a node: the data-parallel ranks of one node (gpus_per_node / (tp x cp)) when dp
// spans more than one node's worth and is a multiple of it; 0 when there is no such group (nor for one rank
// per node: a group of one shards nothing, ZeRO-0's layouts already cover it).
int node_shard_of(int gpus_per_node, int tp, int cp, long long dp) {
  const int per_node = gpus_per_node % (tp * cp) == 0 ? gpus_per_node / (tp * cp) : 0;
  return per_node >= 2 && per_node < dp && dp % per_node == 0 ? per_node : 0;
}

}  // namespace

std::vector<LayoutChoice> auto_layouts(const Scenario& s, const AutoOptions& o) {
  std::vector<LayoutChoice> out;
  const ModelSpec& m = s.model;
  const long long gpus = s.gpus();
  const long long seq = s.training.sequence_length;
  const int tp_max = o.tp_within_node ? s.cluster.gpus_per_node : static_cast<int>(gpus);
  // Megatron's MoE layers need sequence parallelism under tp > 1 (model/checks.cpp, check_experts).
  const bool sp_optional = !(m.moe.enabled() && s.training.framework == Framework::megatron);
  for (int tp = 1; tp <= tp_max && tp <= m.heads; tp *= 2) {
    if (m.heads % tp != 0 || m.kv_heads % tp != 0 || gpus % tp != 0) continue;
    for (int pp = 1; pp <= m.layers; ++pp) {
      if (m.layers % pp != 0 && !pow2(pp)) continue;
      if (gpus % (static_cast<long long>(tp) * pp) != 0) continue;
      for (int cp = 1; cp <= o.max_cp; cp *= 2) {
        if (cp > 1 && seq % (2LL * cp) != 0) continue;
        const long long tpc = static_cast<long long>(tp) * pp * cp;
        if (gpus % tpc != 0) continue;
        const long long dp = gpus / tpc;
        const long long global = s.training.global_batch > 0 ? s.training.global_batch : dp;
        if (global % dp != 0) continue;
        const long long per_replica = global / dp;
        const int node_shard = node_shard_of(s.cluster.gpus_per_node, tp, cp, dp);
        for (int ep = 1; ep <= (m.moe.enabled() ? m.moe.experts : 1); ++ep) {
          if (m.moe.enabled() && (m.moe.experts % ep != 0 || (dp * cp) % ep != 0)) continue;
          // Schedules: 1F1B and ZB-H1 with one chunk; interleaved with v chunks when the layers divide, or
          // divide with the embedding and the output layer each counted as one (first and last stage one
          // layer lighter, as Llama 3 405B: 126 layers, pp 16, docs/model.md §7).
          // DeepSpeed's pipeline engine: 1F1B with ZeRO 0 or 1 only (model/checks.cpp, check_schedule).
          const bool deepspeed_pipeline = s.training.framework == Framework::deepspeed && pp > 1;
          struct Sched { Schedule schedule; int vpp; };
          std::vector<Sched> schedules = {{Schedule::one_f_one_b, 1}};
          if (pp > 1 && !deepspeed_pipeline) {
            schedules.push_back({Schedule::gpipe, 1});
            schedules.push_back({Schedule::zb_h1, 1});
            for (int v = 2; v <= o.max_vpp; ++v) {
              if (m.layers % (pp * v) == 0 || (m.layers + 2) % (pp * v) == 0) {
                schedules.push_back({Schedule::interleaved, v});
              }
            }
          }
          for (const Sched& sc : schedules) {
            for (int zero = 0; zero <= (pp == 1 ? 3 : deepspeed_pipeline ? 1 : 2); ++zero) {
              if (!framework_has_zero(s.training.framework, zero)) continue;
              const LayoutChoice base{tp, pp, cp, ep, sc.vpp, sc.schedule, zero};
              add_recompute_and_micro_batches(out, base, per_replica, seq, o.max_micro_batch, sp_optional);
              if (node_shard > 0 && shards_in_groups(s.training.framework, zero)) {
                LayoutChoice hybrid = base;
                hybrid.dp_shard = node_shard;
                add_recompute_and_micro_batches(out, hybrid, per_replica, seq, o.max_micro_batch, sp_optional);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

void apply_layout(Scenario& s, const LayoutChoice& c) {
  ParallelSpec& p = s.parallel;
  p.tp = c.tp;
  p.pp = c.pp;
  p.cp = c.cp;
  p.ep = c.ep;
  p.vpp = c.vpp;
  p.schedule = c.schedule;
  p.zero = c.zero;
  p.zero_given = true;
  p.recompute = {c.recompute, 0};
  p.sequence_parallel = c.sequence_parallel;
  p.sequence_parallel_given = true;
  p.dp_shard = c.dp_shard;
  p.dp_auto = true;
  p.layers_auto = true;
  s.training.micro_batch = c.micro_batch;
}

bool chosen_by_auto_layouts(const std::string& key) {
  static const char* const keys[] = {
      "parallel.tp",   "parallel.pp",        "parallel.dp",         "parallel.cp",       "parallel.ep",
      "parallel.vpp",  "parallel.schedule",  "parallel.zero",       "parallel.recompute", "parallel.sequence_parallel",
      "parallel.dp_shard", "parallel.layers_per_stage", "training.micro_batch"};
  return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

}  // namespace tp
