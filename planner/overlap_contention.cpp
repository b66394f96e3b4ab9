#include "overlap_contention.h"

#include <algorithm>

namespace tp {

double overlap_contention_seconds(double hidden) {
  return kOverlapComputeSlowdown / (1.0 + kOverlapComputeSlowdown) * std::max(0.0, hidden);
}

}  // namespace tp
