// Summary statistics of repeated timings and the stop rule of the measurement loop. Pure CPU code:
// the CUDA timing helpers (timing.cuh) feed it the per-run times that CUDA events give.
#pragma once

#include <vector>

namespace tp {

// Median and spread of the timed repetitions of one case (seconds).
struct TimeStats {
  double median = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
  double p10 = 0;  // 10th percentile
  double p90 = 0;  // 90th percentile
  double stddev = 0;
  int reps = 0;         // timed repetitions (warm-up runs excluded)
  bool stable = false;  // the stop rule was met before max_reps / max_seconds

  // (p90 - p10) / median: the spread the stop rule looks at.
  double relative_spread() const { return median > 0 ? (p90 - p10) / median : 0.0; }
};

// Warm-up, repetitions and the stop rule of one measured case.
struct RepetitionPolicy {
  int warmup = 3;               // untimed runs before the first timed one
  int min_reps = 5;             // timed runs at least
  int max_reps = 100;           // timed runs at most
  double target_spread = 0.03;  // stop once (p90 - p10) / median of the runs so far is at most this
  double max_seconds = 2.0;     // and stop anyway once the timed runs took this long in total
};

// Statistics of `samples` (seconds; any order). Empty input gives all zeros. Percentiles interpolate
// linearly between the sorted samples.
TimeStats summarize(std::vector<double> samples);

// The stop rule: true once max_reps runs were taken, or the total time reached max_seconds, or
// (with at least min_reps runs) the relative spread is within target_spread.
bool enough_repetitions(const std::vector<double>& samples, const RepetitionPolicy& policy);

// Percentile q in [0, 1] of sorted `v` with linear interpolation.
double percentile_sorted(const std::vector<double>& v, double q);

}  // namespace tp
