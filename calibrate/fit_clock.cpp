// The clock the fit states its rates at, and GEMM and attention cases timed below it scaled to it
// (docs/calibration.md, "The fit": `clock`).
#include <algorithm>
#include <string>

#include "fit_internal.h"

namespace tp::fit_detail {

double busy_clock_mhz(const Measurements& m) {
  double highest = m.clocks.sm_mhz_max;
  for (const Measurement& x : m.items) {
    if (follows_sm_clock(x)) highest = std::max(highest, x.sm_mhz);
  }
  return highest > 0 ? highest : m.device.sm_clock_max_mhz;
}

Measurements at_profile_clock(const Measurements& m, double clock_mhz, std::vector<std::string>& notes) {
  Measurements out = m;
  int scaled = 0;
  double lowest = clock_mhz;
  for (Measurement& x : out.items) {
    const double k = clock_time_scale(x, clock_mhz);
    if (k == 1.0) continue;
    TimeStats& t = x.time;
    for (double* v : {&t.median, &t.mean, &t.min, &t.max, &t.p10, &t.p90, &t.stddev}) *v *= k;
    x.rate /= k;
    ++scaled;
    lowest = std::min(lowest, x.sm_mhz);
  }
  if (scaled > 0) {
    notes.push_back(std::to_string(scaled) + " GEMM and attention cases ended below the profile's clock (down to " +
                    fmt(lowest) + " MHz); their times are scaled to " + fmt(clock_mhz) + " MHz");
  }
  return out;
}

}  // namespace tp::fit_detail
