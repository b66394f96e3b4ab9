#include "timing_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tp {

double percentile_sorted(const std::vector<double>& v, double q) {
  if (v.empty()) return 0.0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

TimeStats summarize(std::vector<double> samples) {
  TimeStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  s.reps = static_cast<int>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.median = percentile_sorted(samples, 0.5);
  s.p10 = percentile_sorted(samples, 0.1);
  s.p90 = percentile_sorted(samples, 0.9);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  double ss = 0;
  for (double x : samples) ss += (x - s.mean) * (x - s.mean);
  s.stddev = samples.size() > 1 ? std::sqrt(ss / (n - 1.0)) : 0.0;
  return s;
}

bool enough_repetitions(const std::vector<double>& samples, const RepetitionPolicy& policy) {
  const int n = static_cast<int>(samples.size());
  if (n >= policy.max_reps) return true;
  const double total = std::accumulate(samples.begin(), samples.end(), 0.0);
  if (total >= policy.max_seconds && n >= 1) return true;
  if (n < std::max(1, policy.min_reps)) return false;
  return summarize(samples).relative_spread() <= policy.target_spread;
}

}  // namespace tp
