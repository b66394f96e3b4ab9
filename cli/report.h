// Printers of an evaluation: a human table (units in every header) and the JSON contract of
// docs/json-output.md.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "estimate.h"
#include "plan.h"
#include "specs.h"

namespace tp {

nlohmann::json estimate_json(const Scenario& s, const Estimate& e);
void print_estimate_table(std::ostream& out, const Scenario& s, const Estimate& e);

// The full plan: memory sections above plus time, throughput and run (cost, energy, failures).
nlohmann::json plan_json(const Scenario& s, const Plan& p, const HardwareProfile& hw);
// `simulated` > 0: the step simulator's step time, printed next to the analytic one.
void print_plan_table(std::ostream& out, const Scenario& s, const Plan& p, const HardwareProfile& hw,
                      Seconds simulated = Seconds(0));

// Throws std::logic_error (an internal error, exit 70) naming the first non-finite number in `j`:
// the model never produces inf or NaN, and JSON would silently turn them into null.
void require_finite_json(const nlohmann::json& j);

// Prints `j` (2-space indent, then a newline) after require_finite_json; text that is not UTF-8 (a name from a
// Latin-1 file) is written with U+FFFD in place of its bad bytes, as JSON must be UTF-8.
void print_json(std::ostream& out, const nlohmann::json& j);

}  // namespace tp
