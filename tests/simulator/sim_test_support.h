// Helpers of the simulator tests: a pipeline scenario of a chosen shape, and its plan with chosen
// per-stage timings and no step-level communication, so that closed forms apply exactly. Times are
// whole or binary-fraction seconds, so sums are exact in floating point.
#pragma once

#include <string>
#include <vector>

#include "plan.h"
#include "simulate.h"
#include "test_support.h"

namespace tp::simtest {

// p stages on p GPUs (tp 1, dp 1), m micro-batches of one sequence, v chunks per stage when
// interleaved; a 48-layer model (divisible by p·v for the shapes used).
inline Scenario pipeline(int p, int m, const std::string& schedule, int v = 1, std::vector<std::string> sets = {}) {
  const std::string yaml =
      "model: {layers: 48, hidden: 1024, heads: 16, ffn_hidden: 4096, vocab: 32000, activation: gelu}\n"
      "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: " + std::to_string(p) + "}\n"
      "training: {sequence_length: 1024, global_batch: " + std::to_string(m) + ", micro_batch: 1}\n"
      "parallel: {tp: 1, pp: " + std::to_string(p) + ", zero: 0, recompute: none, schedule: " + schedule +
      ", vpp: " + std::to_string(v) + "}\n";
  return test::scenario(yaml, sets);
}

// The simulated step of `s` over the planner's (the scenario's own plan and profile): 1 where they agree.
inline double simulated_over_planned(const Scenario& s) {
  const SimResult r = simulate_step(s, make_plan(s, profile_for(s)), SimOptions{});
  return r.step_seconds / r.analytic_step_seconds;
}

// One micro-batch through a stage: forward f, backward b (input gradient), weight gradient w.
inline StageTiming timing(double f, double b, double w = 0) {
  StageTiming t;
  t.forward = Seconds(f);
  t.backward_input = Seconds(b);
  t.backward_weight = Seconds(w);
  return t;
}

// The plan of `s` with these stage timings, equal parameters on every stage (so DP times are the
// same on every stage unless `params` says otherwise) and no transfers or optimizer step.
inline Plan plan_with(const Scenario& s, const std::vector<StageTiming>& stages, const std::vector<double>& params = {}) {
  Plan plan = make_plan(s, default_profile(s.cluster.gpu));
  plan.time.stages = stages;
  plan.time.slowest_stage = 0;
  plan.time.p2p_hop = Seconds(0);
  plan.time.dp_reduce = Seconds(0);
  plan.time.dp_gather = Seconds(0);
  plan.time.dp_buckets = 1;
  plan.time.optimizer_step = Seconds(0);
  for (std::size_t i = 0; i < plan.estimate.stages.size(); ++i) {
    plan.estimate.stages[i].parameters = i < params.size() ? params[i] : 1.0;
  }
  return plan;
}

inline std::vector<StageTiming> uniform(int p, const StageTiming& t) { return std::vector<StageTiming>(static_cast<std::size_t>(p), t); }

}  // namespace tp::simtest
