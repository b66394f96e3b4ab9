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
  double planner_in_flight = 0;  // micro-batches the planner's memory model holds at the peak
  Bytes planner_activations;     // the planner's activation bytes of the stage
};

struct StepInputs {
  Schedule schedule = Schedule::one_f_one_b;
  int stages = 1;          // p
  int chunks = 1;          // v (interleaved), else 1
  int micro_batches = 1;   // m per replica per step
  std::vector<StageInputs> stage;
  Seconds p2p_hop;         // one activation or gradient transfer between adjacent stages
  int dp_buckets = 1;
  int zero = 0;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
};

// From the plan. The planner gives the DP reduce, gather and optimizer times of its slowest stage;
// other stages get them scaled by their parameter count relative to that stage (the transfers and
// the optimizer sweep are proportional to the bytes, latency aside).
StepInputs step_inputs(const Scenario& s, const Plan& p);

}  // namespace tp::sim
