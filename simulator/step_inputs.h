// What the simulator needs to know about one training step of one data-parallel replica, taken
// from the planner's Plan (per-stage micro-batch durations and step-level transfers, planner/
// step_time.h) so that the planner and the simulator share one cost model.
#pragma once

#include <vector>

#include "plan.h"
#include "specs.h"

namespace tp::sim {

struct StageInputs {
  StageTiming timing;  // one micro-batch through the whole stage (all its chunks)
  Seconds dp_reduce;   // the stage's gradient reduce, unoverlapped
  Seconds dp_gather;   // the stage's parameter all-gather (ZeRO), unoverlapped
  Seconds optimizer;   // the stage's optimizer step
  Seconds overlap_contention;  // compute the stage loses to the data-parallel collectives it hides
  double planner_in_flight = 0;  // micro-batches the planner's memory model holds at the peak
  Bytes planner_activations;     // the planner's activation bytes of the stage
  int layers = 1;                // transformer layers of the stage (ZeRO-3 runs them as separate tasks)
};

// ZeRO-3 / FSDP: what one layer gathers, unit by unit, in forward order (docs/model.md §19). FSDP gathers
// the whole layer as one unit; DeepSpeed gathers module by module (planner/zero3_modules.h, the list the
// planner's memory and step time read).
struct GatherUnit {
  double gather_share = 1;    // of the layer's gather (and gradient reduce-scatter) bytes
  double compute_share = 1;   // of the layer's compute
  bool blocks_prefetch = false;  // while it is gathered nothing is prefetched (DeepSpeed's live-parameter limit)
  bool kept_for_backward = false;  // after a recompute pass, still gathered for its backward (reuse distance)
};

struct Zero3Rules {
  std::vector<GatherUnit> units;  // empty: the whole layer is one unit (FSDP)
  bool reduce_every_micro_batch = false;  // reduce-scatter after every micro-batch's backward (DeepSpeed)
  bool recompute_regathers = false;       // the recompute forward gathers every unit again (DeepSpeed, full recompute)
  BackwardPrefetch backward_prefetch = BackwardPrefetch::pre;  // Zero3Settings::backward_prefetch
  // The piece after a reduce-scatter waits for it: the host blocks on the gradient's copy
  // (planner/framework_rules.h, host_gradient_copy_holds_backward).
  bool reduce_holds_backward = false;
  // false: the forward's gathered units are kept for the backward, which gathers nothing (FSDP's
  // SHARD_GRAD_OP, zero 2: planner/framework_rules.h, zero2_gathers_per_unit).
  bool gathers_in_backward = true;
  // false: only micro-batch 0's forward gathers (SHARD_GRAD_OP with the gradient sync on the last micro-batch
  // only keeps the units gathered: planner/sharded_time.h, Zero3Inputs::gathers_every_micro_batch).
  bool gathers_every_micro_batch = true;
};

// The units of one layer: z.units, or the whole layer as one unit.
const std::vector<GatherUnit>& gather_units(const Zero3Rules& z);

struct StepInputs {
  Schedule schedule = Schedule::one_f_one_b;
  int stages = 1;          // p
  int chunks = 1;          // v (interleaved), else 1
  int micro_batches = 1;   // m per replica per step
  std::vector<StageInputs> stage;
  Seconds p2p_hop;         // one activation or gradient transfer between adjacent stages
  int dp_buckets = 1;
  // The data-parallel collectives on a link of their own per stage, not the pipeline sends' (StepTime::
  // dp_shares_pipeline_link false: one of the two within the node, the other across nodes).
  bool dp_own_link = false;
  int zero = 0;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  // The data-parallel collectives go unit by unit with the layers (ZeRO-3, FSDP's SHARD_GRAD_OP:
  // planner/framework_rules.h, gathers_per_unit): each layer's pieces are tasks of their own, read from zero3.
  bool per_unit = false;
  // Otherwise: the gradient reduce follows every micro-batch's backward, not only the last (DeepSpeed ZeRO-2,
  // FSDP without no_sync: planner/framework_rules.h, reduces_every_micro_batch); per unit, zero3 says.
  bool reduce_every_micro_batch = false;
  // A backward that reduces returns only once its reduce is done: the next compute waits for it
  // (planner/framework_rules.h, reduce_waited_after_each_backward).
  bool reduce_waited_after_backward = false;
  Zero3Rules zero3;  // read when per_unit
};

// From the plan. The planner gives the DP reduce, gather and optimizer times of its slowest stage;
// other stages get them scaled by their parameter count relative to that stage (the transfers and
// the optimizer sweep are proportional to the bytes, latency aside).
StepInputs step_inputs(const Scenario& s, const Plan& p);

}  // namespace tp::sim
