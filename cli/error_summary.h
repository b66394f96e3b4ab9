// Mean and worst absolute relative error of a validation set (`trainplan validate`, every set).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tp {

struct ErrorSummary {
  double sum = 0, worst = 0;
  int n = 0;
  void add(double relative_error) {
    sum += std::fabs(relative_error);
    worst = std::max(worst, std::fabs(relative_error));
    ++n;
  }
  double mean() const { return n > 0 ? sum / n : 0.0; }
  // "what: mean absolute error 4.0%, max 11.3% over 18 runs" (nothing for an empty set).
  void print(const char* what) const {
    if (n > 0) std::printf("%s: mean absolute error %.1f%%, max %.1f%% over %d runs\n", what, 100 * mean(), 100 * worst, n);
  }
};

}  // namespace tp
