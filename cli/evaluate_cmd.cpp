#include <iostream>

#include "commands.h"
#include "estimate.h"
#include "fixes.h"
#include "hardware_profile.h"
#include "plan.h"
#include "report.h"
#include "scenario.h"
#include "simulate.h"

namespace tp {

int run_evaluate(const EvaluateOptions& o) {
  Scenario s = o.scenario.empty() ? default_scenario(o.sets) : load_scenario_file(o.scenario, o.sets);
  if (!o.profile.empty()) s.profile = o.profile;  // --profile is relative to the working directory
  const HardwareProfile hw = profile_for(s);
  Plan p = make_plan(s, hw);
  attach_fixes(s, p.estimate);
  const Seconds simulated = o.simulate ? simulate_step(s, p, SimOptions{}).step_seconds : Seconds(0);
  if (o.format == "json") {
    nlohmann::json j = plan_json(s, p, hw);
    if (o.simulate) j["time"]["simulated_step_seconds"] = simulated.value;
    print_json(std::cout, j);
  } else {
    print_plan_table(std::cout, s, p, hw, simulated);
  }
  return 0;
}

}  // namespace tp
