#include "mesh.h"

namespace tp {
namespace {

bool pow2(long long v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

std::vector<LayoutChoice> auto_layouts(const Scenario& s, const AutoOptions& o) {
  std::vector<LayoutChoice> out;
  const ModelSpec& m = s.model;
  const long long gpus = s.gpus();
  const long long seq = s.training.sequence_length;
  const int tp_max = o.tp_within_node ? s.cluster.gpus_per_node : static_cast<int>(gpus);
  for (int tp = 1; tp <= tp_max && tp <= m.heads; tp *= 2) {
    if (m.heads % tp != 0 || gpus % tp != 0) continue;
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
        for (int ep = 1; ep <= (m.moe.enabled() ? m.moe.experts : 1); ++ep) {
          if (m.moe.enabled() && (m.moe.experts % ep != 0 || (dp * cp) % ep != 0)) continue;
          // Schedules: 1F1B and ZB-H1 with one chunk; interleaved with v chunks when the layers divide, or
          // divide with the embedding and the output layer each counted as one (first and last stage one
          // layer lighter, as Llama 3 405B: 126 layers, pp 16, docs/model.md §7).
          struct Sched { Schedule schedule; int vpp; };
          std::vector<Sched> schedules = {{Schedule::one_f_one_b, 1}};
          if (pp > 1) {
            schedules.push_back({Schedule::gpipe, 1});
            schedules.push_back({Schedule::zb_h1, 1});
            for (int v = 2; v <= o.max_vpp; ++v) {
              if (m.layers % (pp * v) == 0 || (m.layers + 2) % (pp * v) == 0) {
                schedules.push_back({Schedule::interleaved, v});
              }
            }
          }
          for (const Sched& sc : schedules) {
            for (int zero = 0; zero <= (pp == 1 ? 3 : 2); ++zero) {
              for (RecomputeMode rc : {RecomputeMode::none, RecomputeMode::selective, RecomputeMode::full}) {
                for (long long mb = 1; mb <= o.max_micro_batch && mb <= per_replica; mb *= 2) {
                  if (per_replica % mb != 0) continue;
                  if (sc.schedule == Schedule::interleaved && (per_replica / mb) % pp != 0) continue;
                  if (tp == 1 || (seq / cp) % tp == 0) {
                    out.push_back({tp, pp, cp, ep, sc.vpp, sc.schedule, zero, rc, mb, tp > 1});
                  }
                  if (tp > 1) out.push_back({tp, pp, cp, ep, sc.vpp, sc.schedule, zero, rc, mb, false});
                }
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
  p.recompute = {c.recompute, 0};
  p.sequence_parallel = c.sequence_parallel;
  p.dp_auto = true;
  p.layers_auto = true;
  s.training.micro_batch = c.micro_batch;
}

}  // namespace tp
