// Gathers the problems a scenario check finds (model/checks.cpp, layout_resolve.cpp): all of them, or the
// first only (a sweep classifying layouts needs only one reason).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "checks.h"

namespace tp {

// An integer as the messages write it.
inline std::string num(long long v) { return std::to_string(v); }

struct Collector {
  bool first_only;
  std::vector<Problem> out;
  bool full() const { return first_only && !out.empty(); }
  void add(std::string field, std::string other, std::string message) {
    if (!full()) out.push_back({std::move(field), std::move(other), std::move(message)});
  }
};

}  // namespace tp
