// The modules ZeRO-3 / FSDP gathers in one transformer layer, read from the op graph: the one list
// that both the memory estimate (the gathered-parameter buffer, memory_states.cpp) and the step time
// (the per-module gathers, sharded_time.cpp) use. docs/model.md §8 and §15, "ZeRO-3 gathers per module".
//
// Counting, per GPU once gathered over the module's data-parallel group:
// - every op holding parameters is a module (a Linear of the layer, a norm), in forward order;
// - tensor-parallel shards stay divided by tp (the gather is over the data-parallel group only);
// - expert modules hold the ep-local experts, gemm_count / ep of them: expert parallelism places each
//   expert on one rank of the expert group and ZeRO-3 partitions its parameters over that expert's
//   data-parallel group (DeepSpeed runtime/engine.py _resolve_zero3_param_placement: "autoep_expert"
//   parameters partition over groups._get_expert_data_parallel_group; torchtitan's llama4 / deepseek_v3
//   parallelize.py apply_fsdp shards the MoE experts over `dp_mod_ep_mesh`, the "dp_shard_mod_ep" mesh
//   dimension), so a gather returns the local experts only;
// - a tensor of at most `persistence_threshold` elements (per GPU) is persistent: DeepSpeed keeps it
//   whole on every rank for the whole run and never gathers it (runtime/zero/partition_parameters.py:
//   ds_persist when ds_numel <= stage3_param_persistence_threshold, default 1e5, runtime/zero/config.py;
//   partitioned_param_coordinator.py fetches only parameters that are not ds_persist). Norm weights,
//   biases and small routers are persistent; FSDP has no such threshold (0: everything is gathered).
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "framework_rules.h"
#include "op_graph.h"

namespace tp {

struct Zero3Module {
  double parameters = 0;     // gathered numel on one GPU (tp shard, ep-local experts, unsharded over dp)
  double gather_share = 0;   // its share of the layer's gathered parameters: of the layer's gather bytes
  double compute_share = 0;  // its share of the gathered modules' forward FLOPs on one GPU: of the layer's compute
};

// Fixed capacity, no allocation (the step time runs per sweep point); modules past the capacity join
// the last one.
struct Zero3Modules {
  static constexpr std::size_t capacity = 16;
  std::array<Zero3Module, capacity> items{};
  std::size_t count = 0;
  double gathered = 0;    // parameters of all modules (one layer, one GPU)
  double largest = 0;     // the largest module's parameters
  double persistent = 0;  // parameters of the layer under the threshold: held whole, never gathered
  std::span<const Zero3Module> view() const { return {items.data(), count}; }
};

Zero3Modules zero3_modules(const std::vector<Op>& layer, int tp, int ep, double persistence_threshold);

// Reduce-scatters per layer when the gradients go in DeepSpeed's buckets of `bucket` elements
// (FrameworkRules::zero3_reduce_bucket), in the steady state of a backward over many layers: every tensor of
// the layer, gathered or persistent, in backward order (vectors before the matrices of the same op). A
// fraction when a bucket spans layers.
double zero3_reduce_calls_per_layer(const std::vector<Op>& layer, int tp, int ep, double bucket);

// One layer's ZeRO-3 gathering as the scenario's framework does it: the settings (the scenario's
// memory.zero3_* / fsdp_* or the framework's defaults) and the modules they gather. Built once per
// evaluation and read by the memory estimate, the step time (gathers, FSDP's copies) and the simulator.
struct Zero3Layer {
  Zero3Settings settings;
  Zero3Modules modules;
  // Units gathered (and copied) one at a time per layer: the whole layer, or each module.
  double units_per_layer() const { return settings.whole_layers ? 1.0 : static_cast<double>(modules.count); }
};
Zero3Layer zero3_layer(const Scenario& s, const std::vector<Op>& layer, int tp, int ep);
// Reduce-scatters per layer of `z`: DeepSpeed's buckets (zero3_reduce_calls_per_layer), or one per unit.
// Only the step time reads it, so it is not part of the Zero3Layer the memory estimate builds too.
double zero3_reduce_calls(const Zero3Layer& z, const std::vector<Op>& layer, int tp, int ep);

}  // namespace tp
