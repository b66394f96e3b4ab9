#include "fixes.h"

#include <functional>

#include "checks.h"
#include "format_units.h"

namespace tp {

namespace {

// One change to try: its text as the scenario keys it sets, and the change itself.
struct Candidate {
  std::string change;
  std::function<void(Scenario&)> apply;
};

// The single changes worth trying on `s`, ordered roughly by their cost to throughput: sharding first, then
// recompute, then model parallelism, then offload.
std::vector<Candidate> fix_candidates(const Scenario& s) {
  const ParallelSpec& p = s.parallel;
  std::vector<Candidate> candidates;
  // Hybrid sharding: twice the sharding group (the states over twice the ranks).
  if (p.shard_dp() < p.dp && p.dp % (2 * p.dp_shard) == 0) {
    const int wider = 2 * p.dp_shard;
    candidates.push_back({"parallel.dp_shard: " + std::to_string(wider), [wider](Scenario& c) { c.parallel.dp_shard = wider; }});
  }
  for (int z = p.zero + 1; z <= 3; ++z) {
    candidates.push_back({"parallel.zero: " + std::to_string(z), [z](Scenario& c) {
                            c.parallel.zero = z;
                            c.parallel.zero_given = true;
                          }});
  }
  if (p.recompute.mode == RecomputeMode::none && !s.training.flash_attention) {
    candidates.push_back({"parallel.recompute: selective",
                          [](Scenario& c) { c.parallel.recompute = {RecomputeMode::selective, 0}; }});
  }
  if (p.recompute.mode != RecomputeMode::full) {
    candidates.push_back({"parallel.recompute: full", [](Scenario& c) { c.parallel.recompute = {RecomputeMode::full, 0}; }});
  }
  if (p.tp > 1 && !p.sequence_parallel) {
    candidates.push_back({"parallel.sequence_parallel: true", [](Scenario& c) {
                            c.parallel.sequence_parallel = true;
                            c.parallel.sequence_parallel_given = true;
                          }});
  }
  if (s.training.micro_batch > 1) {
    candidates.push_back({"training.micro_batch: " + std::to_string(s.training.micro_batch / 2),
                          [](Scenario& c) { c.training.micro_batch /= 2; }});
  }
  // More tensor parallelism runs with sequence parallelism: the default (resolve_layout) unless the scenario
  // turned it off, which the fix then says. More pipeline stages take ZeRO-2 where the scenario gave ZeRO-3
  // (no framework pipelines ZeRO-3), which the fix says; an unsaid stage takes the framework's default.
  const bool sp_off_given = p.sequence_parallel_given && !p.sequence_parallel;
  const bool zero3_given = p.zero_given && p.zero == 3;
  for (int k = 2; k <= 8; k *= 2) {
    candidates.push_back({"parallel.tp: " + std::to_string(p.tp * k) + (sp_off_given ? ", parallel.sequence_parallel: true" : ""),
                          [k, sp_off_given](Scenario& c) {
                            c.parallel.tp *= k;
                            if (sp_off_given) c.parallel.sequence_parallel = true;
                            c.parallel.dp_auto = true;
                          }});
  }
  for (int k = 2; k <= 8; k *= 2) {
    candidates.push_back({"parallel.pp: " + std::to_string(p.pp * k) + (zero3_given ? ", parallel.zero: 2" : ""),
                          [k, zero3_given](Scenario& c) {
                            c.parallel.pp *= k;
                            c.parallel.dp_auto = true;
                            c.parallel.layers_auto = true;
                            if (zero3_given) c.parallel.zero = 2;
                          }});
  }
  if (s.training.sequence_length % (4LL * p.cp) == 0) {
    candidates.push_back({"parallel.cp: " + std::to_string(p.cp * 2), [](Scenario& c) {
                            c.parallel.cp *= 2;
                            c.parallel.dp_auto = true;
                          }});
  }
  if (p.offload_optimizer == OffloadTarget::none) {
    candidates.push_back({"parallel.offload.optimizer: cpu",
                          [](Scenario& c) { c.parallel.offload_optimizer = OffloadTarget::cpu; }});
  }
  return candidates;
}

}  // namespace

std::vector<Fix> suggest_fixes(const Scenario& s, int limit) {
  std::vector<Fix> fixes;
  for (const Candidate& cand : fix_candidates(s)) {
    if (static_cast<int>(fixes.size()) >= limit) break;
    Scenario c = s;
    cand.apply(c);
    if (!resolve_layout(c).empty() || !check_scenario(c, true).empty()) continue;
    if (c.parallel.tp > c.cluster.gpus_per_node) continue;  // keep tensor parallelism inside a node
    Estimate e = estimate(c);
    if (e.feasible) fixes.push_back({cand.change, e.memory.total});
  }
  return fixes;
}

void attach_fixes(const Scenario& s, Estimate& e) {
  bool needs = false;
  for (const auto& v : e.violations) needs = needs || v.kind == Violation::Kind::out_of_memory;
  if (!needs) return;
  std::vector<Fix> fixes = suggest_fixes(s);
  for (auto& v : e.violations) {
    if (v.kind != Violation::Kind::out_of_memory) continue;
    for (const Fix& f : fixes) v.fixes.push_back(f.change + " (" + format_bytes(f.total.value) + " per GPU)");
  }
}

}  // namespace tp
