#include <iostream>

#include "commands.h"
#include "estimate.h"
#include "fixes.h"
#include "report.h"
#include "scenario.h"

namespace tp {

int run_evaluate(const EvaluateOptions& o) {
  std::vector<std::string> sets = o.sets;
  if (!o.profile.empty()) sets.push_back("profile=" + o.profile);
  Scenario s = o.scenario.empty() ? default_scenario(sets) : load_scenario_file(o.scenario, sets);
  Estimate e = estimate(s);
  attach_fixes(s, e);
  if (o.format == "json") {
    std::cout << estimate_json(s, e).dump(2) << "\n";
  } else {
    print_estimate_table(std::cout, s, e);
  }
  return 0;
}

}  // namespace tp
