// The fit states its GEMM and attention rates at one clock, the highest SM clock sampled while busy; a case
// that ended below it (its `sm_mhz`, sampled by `calibrate run` as the case's timed calls end) is scaled to
// it (calibrate/fit_clock.cpp, docs/calibration.md "The fit", `clock`). Oracle: the synthetic constants of
// tests/calibrate/synthetic.h, timed at the profile's clock, and the same cases timed again by hand as if a
// power-capped GPU had run them at a lower clock: time x clock / lower clock.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "check.h"
#include "fitter.h"
#include "synthetic.h"

namespace tp {
namespace {

constexpr double kThrottledMhz = 1400;

// The case timed at `mhz` instead of `clock_mhz`: a compute-bound kernel's time scales as the clock's inverse.
void run_at(Measurement& x, double mhz, double clock_mhz) {
  const double k = clock_mhz / mhz;
  TimeStats& t = x.time;
  for (double* v : {&t.median, &t.mean, &t.min, &t.max, &t.p10, &t.p90, &t.stddev}) *v *= k;
  x.rate /= k;
}

bool long_call(const Measurement& x) {
  return (x.op == MeasuredOp::gemm && x.gemm.flops() >= 1e12) || is_attention(x.op);
}

FitOptions options() {
  FitOptions o;
  o.cluster = test::dgx_h100();
  o.holdout_every = 0;
  return o;
}

bool has_note(const FitResult& r, const std::string& part) {
  for (const std::string& n : r.report.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

// The GEMMs of a TFLOP and more and every attention case ran at 1,400 MHz of the 1,950 the short ones held.
// With each case's clock in the file the fit gives the constants back exactly; the same times without it
// (a file from before the sample) fit them slower: bf16 efficiency low, attention at 1,400 / 1,950 of it.
TEST(FitClock, CasesEndingBelowTheClockAreFittedAsAtIt) {
  const test::SyntheticTruth truth;
  const Measurements exact = test::synthetic_measurements(truth, 0.0);
  Measurements sampled = exact, unsampled = exact;
  int throttled = 0;
  for (size_t i = 0; i < exact.items.size(); ++i) {
    Measurement& x = sampled.items[i];
    if (x.op != MeasuredOp::gemm && !is_attention(x.op)) continue;
    x.sm_mhz = truth.sm_clock_mhz;
    if (!long_call(x)) continue;
    run_at(x, kThrottledMhz, truth.sm_clock_mhz);
    x.sm_mhz = kThrottledMhz;
    run_at(unsampled.items[i], kThrottledMhz, truth.sm_clock_mhz);
    ++throttled;
  }
  ASSERT_GT(throttled, 20);
  const FitResult with = fit_profile(sampled, options());
  const FitResult without = fit_profile(unsampled, options());
  const double bf16 = truth.gemm[0].max;
  ASSERT_EQ(truth.gemm[0].p, Precision::bf16);
  EXPECT_NEAR(with.profile.gemm_for(Precision::bf16).efficiency, bf16, 1e-4 * bf16);
  EXPECT_NEAR(with.profile.attention_forward.efficiency(4096, 128), truth.attention_forward, 1e-3);
  EXPECT_DOUBLE_EQ(with.profile.clock_hz, truth.sm_clock_mhz * 1e6);
  EXPECT_TRUE(has_note(with, std::to_string(throttled) + " GEMM and attention cases ended below the profile's clock "
                                                         "(down to 1400 MHz); their times are scaled to 1950 MHz"));
  EXPECT_LT(without.profile.gemm_for(Precision::bf16).efficiency, 0.97 * bf16);
  EXPECT_NEAR(without.profile.attention_forward.efficiency(4096, 128),
              truth.attention_forward * kThrottledMhz / truth.sm_clock_mhz, 1e-3);
  EXPECT_FALSE(has_note(without, "below the profile's clock"));
}

// `calibrate check` predicts a case that ended below the profile's clock at its own clock: the sampled file
// checks at 0 % against the profile fitted from the exact one; without the samples its long GEMMs are
// 1,950 / 1,400 - 1 = 39 % slower than predicted.
TEST(FitClock, CheckPredictsEachCaseAtItsClock) {
  const test::SyntheticTruth truth;
  const Measurements exact = test::synthetic_measurements(truth, 0.0);
  const FitResult fitted = fit_profile(exact, options());
  Measurements sampled, unsampled;
  for (Measurement x : exact.items) {
    if (x.op != MeasuredOp::gemm || x.dtype != Precision::bf16 || !long_call(x)) continue;
    run_at(x, kThrottledMhz, truth.sm_clock_mhz);
    unsampled.items.push_back(x);
    x.sm_mhz = kThrottledMhz;
    sampled.items.push_back(x);
  }
  ASSERT_EQ(sampled.items.size(), 2u);  // 8,192³ and 16,384³
  const ClusterSpec cluster = test::dgx_h100();
  const std::vector<CheckFamily> at_clock = check_profile(fitted.profile, cluster, sampled);
  const std::vector<CheckFamily> as_burst = check_profile(fitted.profile, cluster, unsampled);
  ASSERT_EQ(at_clock.size(), 1u);
  ASSERT_EQ(as_burst.size(), 1u);
  EXPECT_NEAR(at_clock[0].mape_percent, 0.0, 1e-6);
  // |pred - t| / t with t = pred x 1950 / 1400: 1 - 1400 / 1950 = 28.2 %.
  EXPECT_NEAR(as_burst[0].mape_percent, 100.0 * (1.0 - kThrottledMhz / truth.sm_clock_mhz), 1e-6);
}

}  // namespace
}  // namespace tp
