// trainplan report with a sweep (scatter, Pareto front, feasibility map) and with measurements
// (calibration charts).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "calibrate/synthetic.h"
#include "report_test_support.h"

namespace tp {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// Oracle: `trainplan sweep --format json` on the same file (an independent printer of the sweep).
TEST(ReportSweep, ScatterAndMapAgreeWithTheSweepJson) {
  const std::string sweep = test::source_path("scenarios/examples/sweep-llama3.1-70b.yaml");
  const fs::path out = test::temp_html("sweep");
  fs::remove(out);
  const test::RunResult r = test::run_trainplan("report --sweep " + test::quoted(sweep) + " -o " + test::quoted(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const test::RunResult js = test::run_trainplan("sweep " + test::quoted(sweep) + " --format json");
  ASSERT_EQ(js.exit_code, 0) << js.output;
  const nlohmann::json j = nlohmann::json::parse(js.output);

  const std::string html = test::read_text(out);
  const std::string sec = test::section(html, "sweep");
  ASSERT_FALSE(sec.empty());
  const auto svgs = test::charts(sec);
  ASSERT_EQ(svgs.size(), 2u);  // scatter, feasibility map
  for (const auto& svg : svgs) EXPECT_NE(svg.find("<g class=\"legend\">"), std::string::npos);
  const std::string& scatter = svgs[0];
  // One diamond per Pareto point, plus the legend's.
  EXPECT_EQ(count(scatter, "<path d=\"M"), j.at("pareto_time_cost").size() + 1);
  // Hovering a point shows its layout: the best layout's label is in a <title>.
  const auto& best = j.at("top").at(0).at("layout");
  const std::string best_label = "tp" + std::to_string(best.at("tp").get<int>()) + " pp" + std::to_string(best.at("pp").get<int>()) +
                                 " dp" + std::to_string(best.at("dp").get<int>());
  EXPECT_NE(scatter.find("<title>" + best_label), std::string::npos) << best_label;
  EXPECT_NE(sec.find(std::to_string(j.at("points").at("total").get<int>()) + " layouts"), std::string::npos);
  EXPECT_NE(sec.find(std::to_string(j.at("points").at("feasible").get<int>()) + " feasible"), std::string::npos);
  // The feasibility map: one cell per tp x pp of the grid (3 x 4 in the file), out-of-memory cells
  // hatched grey with their reason.
  const std::string& map = svgs[1];
  EXPECT_EQ(count(map, "stroke=\"#fff\" stroke-width=\"1\""), 12u);
  ASSERT_GT(j.at("points").at("out_of_memory").get<int>(), 0);  // tp 2, pp 1 cannot hold 70B
  EXPECT_NE(map.find("out of memory"), std::string::npos);
  // Without a scenario the other sections show the sweep's best layout.
  EXPECT_NE(html.find("best layout (by cost)"), std::string::npos);
  EXPECT_EQ(test::external_reference(html), "");
}

TEST(ReportSweep, GridOverTheScenarioNamesImpossibleLayouts) {
  // tp 3 cannot divide the 64 heads of Llama 3 70B (model catalog): that cell says why.
  const std::string scenario = test::source_path("scenarios/examples/default.yaml");
  const fs::path out = test::temp_html("grid");
  const test::RunResult r = test::run_trainplan("report " + test::quoted(scenario) +
                                                " --grid parallel.tp=3,8 --grid parallel.pp=2,4 -o " + test::quoted(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string map = test::charts(test::section(test::read_text(out), "sweep")).at(1);
  EXPECT_NE(map.find("impossible"), std::string::npos);
  EXPECT_NE(map.find("parallel.tp"), std::string::npos);
}

// Oracle: synthetic measurements made from known constants (tests/calibrate/synthetic.h), without
// noise: the attention bars must show the truth for both the measurement and the fitted profile: 52 %
// fused forward on a full GPU, times its grids' balance on the H100's 132 SMs (model/attention_grid.h). By
// hand: 12 causal cases at 0.9621, 0.9627, 0.9657 (s 8,192, 4,096, 1,024) and 12 full ones of 4,096 equal
// blocks in 32 waves of 132, 0.9697; the median is (0.9657 + 0.9697) / 2 = 0.9677, and 52 x 0.9677 = 50.32.
TEST(ReportCalibration, ChartsOfSyntheticMeasurements) {
  const test::SyntheticTruth truth;
  const fs::path meas = fs::path(::testing::TempDir()) / "trainplan-report-measurements.json";
  write_measurements(test::synthetic_measurements(truth, 0.0), meas.string());
  const fs::path out = test::temp_html("calibration");
  const test::RunResult r = test::run_trainplan("report --measurements " + test::quoted(meas.string()) + " -o " +
                                                test::quoted(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string sec = test::section(test::read_text(out), "calibration");
  ASSERT_FALSE(sec.empty());
  const auto svgs = test::charts(sec);
  ASSERT_EQ(svgs.size(), 4u);  // GEMM parity, GEMM residuals, attention, memory bandwidth
  for (const auto& svg : svgs) {
    EXPECT_NE(svg.find("<g class=\"legend\">"), std::string::npos);
    for (const auto& t : test::axis_titles(svg)) EXPECT_NE(t.find('['), std::string::npos) << t;
  }
  EXPECT_NE(svgs[0].find("bf16"), std::string::npos);
  EXPECT_NE(svgs[2].find("fused forward"), std::string::npos);
  EXPECT_NE(svgs[2].find("measured 50.32, profile 50.32"), std::string::npos);
  EXPECT_NE(svgs[2].find("unfused"), std::string::npos);
  EXPECT_NE(sec.find("R<sup>2</sup>"), std::string::npos);
}

// The same cases timed as if they had ended at 1,400 MHz of the 1,950 the file's other cases held (times x
// 1950 / 1400, each with its `sm_mhz`): the chart states them at the profile's clock, as the fit does
// (calibrate/fit_clock.cpp), so the bars are the truth again, not 50.32 x 1400 / 1950 = 36.13.
TEST(ReportCalibration, CasesBelowTheClockAreDrawnAtIt) {
  const test::SyntheticTruth truth;
  Measurements m = test::synthetic_measurements(truth, 0.0);
  for (Measurement& x : m.items) {
    if (!is_attention(x.op)) continue;
    x.time = test::stats_of(x.time.median * truth.sm_clock_mhz / 1400.0);
    x.sm_mhz = 1400.0;
  }
  const fs::path meas = fs::path(::testing::TempDir()) / "trainplan-report-throttled-measurements.json";
  write_measurements(m, meas.string());
  const fs::path out = test::temp_html("throttled-calibration");
  const test::RunResult r = test::run_trainplan("report --measurements " + test::quoted(meas.string()) + " -o " +
                                                test::quoted(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto svgs = test::charts(test::section(test::read_text(out), "calibration"));
  ASSERT_EQ(svgs.size(), 4u);
  EXPECT_NE(svgs[2].find("measured 50.32, profile 50.32"), std::string::npos) << svgs[2];
}

TEST(ReportCalibration, BadMeasurementsFileWritesNothing) {
  const fs::path meas = fs::path(::testing::TempDir()) / "trainplan-report-bad-measurements.json";
  std::ofstream(meas) << "{\"schema\": \"trainplan-measurements/1\", \"items\": 3}";
  const fs::path out = test::temp_html("bad-calibration");
  fs::remove(out);
  const test::RunResult r = test::run_trainplan("report --measurements " + test::quoted(meas.string()) + " -o " +
                                                test::quoted(out.string()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr(meas.string()));
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace tp
