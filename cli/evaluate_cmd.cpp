#include <iostream>

#include "commands.h"
#include "estimate.h"
#include "fixes.h"
#include "hardware_profile.h"
#include "plan.h"
#include "report.h"
#include "scenario.h"

namespace tp {

int run_evaluate(const EvaluateOptions& o) {
  Scenario s = o.scenario.empty() ? default_scenario(o.sets) : load_scenario_file(o.scenario, o.sets);
  if (!o.profile.empty()) s.profile = o.profile;  // --profile is relative to the working directory
  const HardwareProfile hw = profile_for(s);
  Plan p = make_plan(s, hw);
  attach_fixes(s, p.estimate);
  if (o.format == "json") {
    std::cout << plan_json(s, p, hw).dump(2) << "\n";
  } else {
    print_plan_table(std::cout, s, p, hw);
  }
  return 0;
}

}  // namespace tp
