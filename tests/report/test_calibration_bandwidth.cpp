// The report's memory-bandwidth chart draws what the profile predicts at each measured case's size and
// row length (the kernel-class model with its shape terms, model/kernel_class_time.h), not the class's
// long-row bandwidth.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "calibration_view.h"
#include "catalog.h"
#include "kernel_class_time.h"
#include "report_sections.h"

namespace tp {
namespace {

GpuSpec h100() { return Catalog::builtin().gpu("h100-sxm-80gb", {"test", 0, 0}, "gpu"); }  // 3.35 TB/s HBM

Measurement kernel_case(KernelClass k, std::int64_t cols, double bytes, double rate) {
  Measurement m;
  m.op = MeasuredOp::memory_kernel;
  m.kernel = k;
  m.rows = 8192;
  m.cols = cols;
  m.bytes = bytes;
  m.rate = rate;
  return m;
}

// A hand-written profile: rmsnorm_fwd at 0.5 of HBM with row_half 4096 (no latency); gelu_fwd at 0.9 with
// a 10 us fixed cost (no row term).
HardwareProfile hand_profile() {
  HardwareProfile hw;
  hw.kernel_efficiency[static_cast<size_t>(KernelClass::rmsnorm_fwd)] = 0.5;
  hw.kernel_shape[static_cast<size_t>(KernelClass::rmsnorm_fwd)] = {Seconds(0), 4096};
  hw.kernel_efficiency[static_cast<size_t>(KernelClass::gelu_fwd)] = 0.9;
  hw.kernel_shape[static_cast<size_t>(KernelClass::gelu_fwd)] = {Seconds(10e-6), 0};
  return hw;
}

// Oracle: hand computation of t = latency + bytes / (eff HBM) (1 + (row_half / row)^4)^(1/4)
// (docs/calibration.md, "The kernel-class model") on the H100's 3.35 TB/s datasheet bandwidth.
TEST(ReportCalibrationBandwidth, PredictionAtEachCaseFollowsTheShapeTerms) {
  Measurements m;
  m.items = {kernel_case(KernelClass::rmsnorm_fwd, 2048, 64e6, 0.8e12),
             kernel_case(KernelClass::rmsnorm_fwd, 65536, 2e9, 1.6e12),
             kernel_case(KernelClass::gelu_fwd, 8192, 1e9, 2.8e12)};
  const HardwareProfile hw = hand_profile();
  const std::vector<BandwidthView> v = bandwidth_views(m, hw, h100());
  ASSERT_EQ(v.size(), 2u);
  ASSERT_EQ(v[0].kernel, "rmsnorm_fwd");
  ASSERT_EQ(v[0].cases.size(), 2u);
  // Row 2048 = row_half / 2: factor (1 + 2^4)^(1/4) = 17^(1/4) = 2.030543; 0.5 x 3.35e12 / 2.030543.
  EXPECT_NEAR(v[0].cases[0].profile, 0.5 * 3.35e12 / 2.030543, 1e6);
  EXPECT_NEAR(v[0].cases[0].profile, kernel_class_bandwidth(hw, h100(), KernelClass::rmsnorm_fwd, 2048), 1e3);
  EXPECT_DOUBLE_EQ(v[0].cases[0].row_length, 2048);
  // Row 65536 = 16 row_half: factor (1 + 16^-4)^(1/4) = 1.0000038, the long-row bandwidth.
  EXPECT_NEAR(v[0].cases[1].profile, 0.5 * 3.35e12, 1e7);
  // Two cases: the median is their mean.
  EXPECT_NEAR(v[0].profile, 0.5 * (0.5 * 3.35e12 / 2.030543 + 0.5 * 3.35e12), 1e7);
  EXPECT_DOUBLE_EQ(v[0].measured_median, 1.2e12);
  // gelu_fwd: 1e9 B at 0.9 x 3.35e12 B/s = 331.675 us, + 10 us latency = 341.675 us -> 2.92676e12 B/s.
  ASSERT_EQ(v[1].cases.size(), 1u);
  EXPECT_NEAR(v[1].cases[0].profile, 1e9 / 341.675e-6, 1e8);
}

// The chart's tooltip of the short-row case carries the hand-computed prediction, 0.825 TB/s
// (0.5 x 3.35 / 2.030543 = 0.82489), and the long-row one 1.675 TB/s.
TEST(ReportCalibrationBandwidth, ChartShowsThePredictionAtTheCaseRow) {
  Measurements m;
  m.items = {kernel_case(KernelClass::rmsnorm_fwd, 2048, 64e6, 0.8e12),
             kernel_case(KernelClass::rmsnorm_fwd, 65536, 2e9, 1.6e12)};
  CalibrationView view;
  view.hbm_datasheet = 3.35e12;
  view.bandwidth = bandwidth_views(m, hand_profile(), h100());
  const std::string html = calibration_section(view);
  EXPECT_NE(html.find("rmsnorm_fwd, row 2048 elements, 64.0 MB: measured 0.800 TB/s, profile 0.825 TB/s"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("row 65536 elements, 2000.0 MB: measured 1.600 TB/s, profile 1.675 TB/s"), std::string::npos)
      << html;
  EXPECT_NE(html.find("profile at each measured case"), std::string::npos);
}

}  // namespace
}  // namespace tp
