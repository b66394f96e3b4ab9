// Cheapest changes that make an infeasible layout fit ("try zero: 3, or recompute: full ...").
#pragma once

#include <string>
#include <vector>

#include "estimate.h"
#include "specs.h"

namespace tp {

struct Fix {
  std::string change;  // "parallel.zero: 2"
  Bytes total;         // worst-stage memory per GPU after the change
};

// Tries single changes (a wider sharding group, ZeRO stage, recompute level, tp, pp, micro-batch, optimizer offload),
// keeps the valid ones that fit, cheapest first; at most `limit`.
std::vector<Fix> suggest_fixes(const Scenario& s, int limit = 4);

// Fills the `fixes` of every out-of-memory violation of `e`.
void attach_fixes(const Scenario& s, Estimate& e);

}  // namespace tp
