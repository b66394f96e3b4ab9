// parallel: auto — every valid layout of a scenario's GPUs: tensor parallelism dividing the heads
// inside the NVLink domain (with and without sequence parallelism), pipeline stages dividing the
// layers (or powers of two, with the default uneven split), context and expert parallelism, the
// schedules (1F1B, GPipe, ZB-H1, interleaved with v dividing the layers per stage), ZeRO 0-3 (3 only
// without pipelining), each ZeRO stage also sharded within a node when dp spans several (hybrid
// sharding, parallel.dp_shard), recompute none / selective / full, and the micro-batch sizes that divide
// the per-replica batch.
#pragma once

#include <string>
#include <vector>

#include "specs.h"

namespace tp {

struct LayoutChoice {
  int tp = 1, pp = 1, cp = 1, ep = 1, vpp = 1;
  Schedule schedule = Schedule::one_f_one_b;
  int zero = 1;
  RecomputeMode recompute = RecomputeMode::none;
  std::int64_t micro_batch = 1;
  bool sequence_parallel = false;
  int dp_shard = 0;  // 0: ZeRO shards over all of dp
};

struct AutoOptions {
  bool tp_within_node = true;  // keep tensor parallelism inside the NVLink domain
  int max_micro_batch = 16;
  int max_cp = 16;
  int max_vpp = 8;
};

// In a fixed order (deterministic). Choices still go through check_scenario() per point.
std::vector<LayoutChoice> auto_layouts(const Scenario& s, const AutoOptions& o = {});

// Writes a choice into the scenario (dp and layers_per_stage become auto).
void apply_layout(Scenario& s, const LayoutChoice& c);

// Whether apply_layout writes the scenario key (a grid axis over it would be overwritten by every layout).
bool chosen_by_auto_layouts(const std::string& key);

}  // namespace tp
