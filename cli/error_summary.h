// Mean, signed mean and worst relative error of a validation set (`trainplan validate`, every set),
// whole or grouped (per failure class, per GPU). The signed mean shows a bias: a set whose errors share
// one sign (every run predicted fast) has |signed mean| close to the mean absolute error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

namespace tp {

struct ErrorSummary {
  double sum = 0, signed_sum = 0, worst = 0;
  int n = 0;
  void add(double relative_error) {
    sum += std::fabs(relative_error);
    signed_sum += relative_error;
    worst = std::max(worst, std::fabs(relative_error));
    ++n;
  }
  double mean() const { return n > 0 ? sum / n : 0.0; }
  double signed_mean() const { return n > 0 ? signed_sum / n : 0.0; }
  // "what: mean absolute error 4.0%, max 11.3% over 18 runs" (nothing for an empty set).
  // An empty summary says so: no error is no perfect score.
  void print(const char* what) const {
    if (n > 0) std::printf("%s: mean absolute error %.1f%%, max %.1f%% over %d runs\n", what, 100 * mean(), 100 * worst, n);
    else std::printf("%s: no run with a measured value to compare\n", what);
  }
  // "  gpu h100-sxm-80gb   mean absolute error  23.1%, signed mean -22.2%, max  42.2% over 30 runs"
  void print_group(const char* kind, const std::string& name) const {
    if (n > 0) {
      std::printf("  %s %-22s mean absolute error %5.1f%%, signed mean %+6.1f%%, max %5.1f%% over %d runs\n", kind,
                  name.c_str(), 100 * mean(), 100 * signed_mean(), 100 * worst, n);
    }
  }
};

// One summary per group name, printed in name order.
using GroupedErrors = std::map<std::string, ErrorSummary>;

inline void print_groups(const char* kind, const GroupedErrors& groups) {
  for (const auto& [name, e] : groups) e.print_group(kind, name);
}

}  // namespace tp
