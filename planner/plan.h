// The whole answer for one scenario: memory (estimate), step time and run totals. Pure.
#pragma once

#include "estimate.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "run_totals.h"
#include "step_time.h"

namespace tp {

struct Plan {
  Estimate estimate;
  StepTime time;
  RunTotals run;
  Bytes checkpoint_bytes;  // whole model state written per checkpoint
};

Plan make_plan(const Scenario& s, const HardwareProfile& hw);
Plan make_plan(const Scenario& s, const OpGraph& g, const HardwareProfile& hw);
// The same into an existing Plan (a sweep keeps one per thread: no allocation per point).
void make_plan_into(const Scenario& s, const OpGraph& g, const HardwareProfile& hw, Plan& out);

}  // namespace tp
