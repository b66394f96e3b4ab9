// Consistency of a scenario: derived layout values (model/layout_resolve.cpp) and cross-field rules
// (model/checks.cpp).
// Pure and non-throwing so that a sweep can classify millions of layouts.
#pragma once

#include <string>
#include <vector>

#include "specs.h"

namespace tp {

struct Problem {
  std::string field;        // dotted path of the field the message is about
  std::string other_field;  // the field it contradicts, "" when none
  std::string message;
};

// Fills parallel.dp (when auto) and parallel.layers_per_stage (when auto): as even as possible,
// the first and last stages lighter (they also hold the embedding and the output layer).
// Returns problems that prevent resolving (GPUs not divisible, more stages than layers ...).
std::vector<Problem> resolve_layout(Scenario& s);

// The default split of `layers` over `stages`: as even as possible, lighter stages placed
// first, last, second, second-to-last ... (Llama 3.1 405B: 126 layers on 16 stages = 7, 8 x 14, 7).
std::vector<int> auto_layers_per_stage(int layers, int stages);
void auto_layers_per_stage(int layers, int stages, std::vector<int>& out);  // reuses `out`

// The fewest layers stage `stage` of `stages` may hold when the interleaved schedule splits each stage
// into `vpp` chunks (model/layout_resolve.cpp).
int fewest_stage_layers(int stage, int stages, int vpp);

// Whether `framework` shards within groups at this ZeRO stage (parallel.dp_shard): every framework from
// ZeRO-1 on, but DeepSpeed only at ZeRO-3 (MiCS, zero_optimization.mics_shard_size).
bool shards_in_groups(Framework framework, int zero);

// All cross-field rule violations (tp dividing heads, batch divisibility, schedule/vpp ...).
// Stops after the first problem when `first_only`.
std::vector<Problem> check_scenario(const Scenario& s, bool first_only = false);

}  // namespace tp
