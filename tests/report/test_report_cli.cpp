// trainplan report on every example scenario: the page is written, each section has its chart with
// axis titles that name units and a legend, nothing is loaded from elsewhere, the numbers are the
// ones `evaluate --format json` prints, and a bad scenario writes no file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "report_test_support.h"

namespace tp {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::vector<std::string> example_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(test::source_path("scenarios/examples"))) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".yaml" && name.rfind("sweep", 0) != 0) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A unit in brackets ("[GiB]", "[s]", "[% of peak]") or a named scale.
bool names_a_unit(const std::string& title) { return title.find('[') != std::string::npos && title.find(']') != std::string::npos; }

void expect_charts_with_units_and_legends(const std::string& html, const std::string& id, size_t at_least) {
  const std::string sec = test::section(html, id);
  ASSERT_FALSE(sec.empty()) << "no section " << id;
  const std::vector<std::string> svgs = test::charts(sec);
  ASSERT_GE(svgs.size(), at_least) << id;
  for (const std::string& svg : svgs) {
    const auto titles = test::axis_titles(svg);
    EXPECT_FALSE(titles.empty()) << id << ": a chart without axis titles";
    for (const auto& t : titles) EXPECT_TRUE(names_a_unit(t)) << id << ": axis title without a unit: " << t;
    EXPECT_NE(svg.find("<g class=\"legend\">"), std::string::npos) << id << ": a chart without a legend";
  }
}

class ReportOfExample : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportOfExample, HasEverySectionWithChartsAndNoExternalReference) {
  const fs::path out = test::temp_html(fs::path(GetParam()).stem().string());
  fs::remove(out);
  const test::RunResult r = test::run_trainplan("report " + test::quoted(GetParam()) + " -o " + test::quoted(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = test::read_text(out);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  expect_charts_with_units_and_legends(html, "memory", 1);
  expect_charts_with_units_and_legends(html, "step", 1);
  expect_charts_with_units_and_legends(html, "timeline", 1);
  EXPECT_FALSE(test::section(html, "totals").empty());
  EXPECT_EQ(test::external_reference(html), "");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find(GetParam()), std::string::npos);  // names the scenario file
  EXPECT_NE(html.find("hardware profile <code>"), std::string::npos);
  EXPECT_NE(html.find("trainplan 0."), std::string::npos);  // the version
  std::smatch bad;
  EXPECT_FALSE(std::regex_search(html, bad, std::regex("[^a-z](nan|inf)[^a-z]", std::regex::icase))) << bad.str();
}

INSTANTIATE_TEST_SUITE_P(Examples, ReportOfExample, ::testing::ValuesIn(example_scenarios()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = fs::path(info.param).stem().string();
                           for (char& c : n) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// The oracle is the JSON of `trainplan evaluate --format json` on the same scenario: every number
// the page marks with its JSON path must equal the JSON's value there.
// `scenario` "" = the built-in one.
// The page is written to temp_html(name).
void expect_page_numbers_equal_json(const std::string& scenario, const std::string& sets, const std::string& name) {
  const fs::path out = test::temp_html(name);
  const std::string arg = scenario.empty() ? "" : " " + test::quoted(scenario);
  const test::RunResult page = test::run_trainplan("report" + arg + sets + " -o " + test::quoted(out.string()));
  ASSERT_EQ(page.exit_code, 0) << page.output;
  const test::RunResult json = test::run_trainplan("evaluate" + arg + sets + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json j = nlohmann::json::parse(json.output);
  const auto numbers = test::json_numbers(test::read_text(out));
  ASSERT_GE(numbers.size(), 15u);
  int spot = 0;
  for (const auto& [path, value] : numbers) {
    if (path == "run.spot_cost_usd" && !j.at("run").contains("spot_cost_usd")) continue;
    const nlohmann::json::json_pointer ptr("/" + std::regex_replace(path, std::regex("\\."), "/"));
    ASSERT_TRUE(j.contains(ptr)) << path;
    EXPECT_DOUBLE_EQ(value, j.at(ptr).get<double>()) << path;
    spot += path == "time.step_seconds" || path == "time.mfu" || path == "run.cost_usd" || path == "memory.per_gpu.total";
  }
  EXPECT_EQ(spot, 4) << "the step time, MFU, cost and memory total must be on the page";
}

TEST(ReportNumbers, EqualEvaluateJson) {
  expect_page_numbers_equal_json(test::source_path("scenarios/examples/default.yaml"), "", "numbers-default");
}

// The text of a marked number, e.g. "178.34 days" for data-json="run.seconds".
std::string shown_text(const std::string& html, const std::string& path) {
  const std::regex re("data-json=\"" + std::regex_replace(path, std::regex("\\."), "\\.") + "\" data-value=\"[^\"]*\">([^<]*)<");
  std::smatch m;
  return std::regex_search(html, m, re) ? m[1].str() : "";
}

// Units by hand: the JSON's seconds, bytes, kWh and fractions converted in the test.
TEST(ReportNumbers, PrintTheJsonValuesInTheirUnits) {
  const fs::path out = test::temp_html("units");
  const std::string scenario = test::quoted(test::source_path("scenarios/examples/default.yaml"));
  ASSERT_EQ(test::run_trainplan("report " + scenario + " -o " + test::quoted(out.string())).exit_code, 0);
  const test::RunResult json = test::run_trainplan("evaluate " + scenario + " --format json");
  const nlohmann::json j = nlohmann::json::parse(json.output);
  const std::string html = test::read_text(out);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f days", j["run"]["seconds"].get<double>() / 86400.0);
  EXPECT_EQ(shown_text(html, "run.seconds"), buf);
  std::snprintf(buf, sizeof buf, "%.2f GiB", j["memory"]["per_gpu"]["total"].get<double>() / (1024.0 * 1024 * 1024));
  EXPECT_EQ(shown_text(html, "memory.per_gpu.total"), buf);
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * j["time"]["mfu"].get<double>());
  EXPECT_EQ(shown_text(html, "time.mfu"), buf);
  std::snprintf(buf, sizeof buf, "%.3f s", j["time"]["step_seconds"].get<double>());
  EXPECT_EQ(shown_text(html, "time.step_seconds"), buf);
  std::snprintf(buf, sizeof buf, "%.1f MWh", j["run"]["energy_kwh"].get<double>() / 1000.0);
  EXPECT_EQ(shown_text(html, "run.energy_kwh"), buf);
  std::snprintf(buf, sizeof buf, "%.3f s", j["time"]["compute_by_kind"]["gemm"].get<double>());
  EXPECT_EQ(shown_text(html, "time.compute_by_kind.gemm"), buf);
}

TEST(ReportNumbers, EqualEvaluateJsonForAnInfeasibleLayoutAndShowTheFixes) {
  // Oracle: docs/json-output.md's worked violation (the built-in scenario without recompute, ZeRO and
  // flash attention needs 144.60 GiB of 80 GiB; full recompute is one of the fixes). Stage 0 holds the
  // embedding over Megatron's padded vocabulary, 129,024 rows at tp 8: 768 x 8192 / 8 = 786,432 more
  // parameters per GPU than 128,256 rows, x 16 B of states = 12.6 MB (+0.01 GiB).
  const std::string sets = " --set parallel.recompute=none --set parallel.zero=0 --set training.flash_attention=false";
  expect_page_numbers_equal_json("", sets, "numbers-infeasible");
  const std::string memory = test::section(test::read_text(test::temp_html("numbers-infeasible")), "memory");
  auto has = [&](const std::string& what) { return memory.find(what) != std::string::npos; };
  EXPECT_TRUE(has("Does not fit"));
  EXPECT_TRUE(has("stage 0 needs 144.60 GiB per GPU but 80.00 GiB is usable"));
  EXPECT_TRUE(has("shortfall <strong>64.60 GiB"));
  EXPECT_TRUE(has("parallel.recompute: full (41.31 GiB per GPU)"));
}

// A job whose failures outpace its progress (the built-in 64 H100s with a GPU MTBF of 1 h: a failure every
// 56 s, each losing 11.5 min) fits in memory but never finishes. Before: the page said "Does not fit" and its
// run totals showed 0 h, 0 USD, 0 kWh under JSON paths `evaluate` leaves out for such a job
// (docs/json-output.md). Oracle: the evaluate JSON of the same scenario.
TEST(ReportNumbers, AJobThatCannotFinishShowsOnlyTheTotalsItHas) {
  const std::string sets = " --set costs.failures.gpu_mtbf='1 h'";
  const fs::path out = test::temp_html("no-progress");
  ASSERT_EQ(test::run_trainplan("report" + sets + " -o " + test::quoted(out.string())).exit_code, 0);
  const test::RunResult json = test::run_trainplan("evaluate" + sets + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json j = nlohmann::json::parse(json.output);
  ASSERT_EQ(j["run"]["regime"], "no_progress");
  const std::string html = test::read_text(out);
  for (const auto& [path, value] : test::json_numbers(html)) {
    if (path == "run.spot_cost_usd") continue;  // "no spot price given", a marked 0 on every page
    const nlohmann::json::json_pointer ptr("/" + std::regex_replace(path, std::regex("\\."), "/"));
    ASSERT_TRUE(j.contains(ptr)) << path << " is on the page but not in the JSON";
    EXPECT_DOUBLE_EQ(value, j.at(ptr).get<double>()) << path;
  }
  const std::string memory = test::section(html, "memory");
  EXPECT_THAT(memory, HasSubstr("Cannot finish."));
  EXPECT_THAT(memory, HasSubstr("It fits in memory"));
  EXPECT_THAT(memory, ::testing::Not(HasSubstr("Does not fit")));
  EXPECT_THAT(test::section(html, "totals"), HasSubstr("never finishes"));
}

// docs/report.md: the waterfall's parts add up to the step. Before, the compute lost to the data-parallel
// traffic it hides (time.overlap_contention, 1.064 s of this 23.191 s step) had no bar. Oracle: the step's
// own parts in the evaluate JSON, time.step_seconds = their sum (docs/json-output.md).
TEST(ReportStep, WaterfallBarsAddUpToTheStep) {
  const std::string scenario = test::quoted(test::source_path("scenarios/examples/llama2-7b-4x4090.yaml"));
  const fs::path out = test::temp_html("waterfall");
  ASSERT_EQ(test::run_trainplan("report " + scenario + " -o " + test::quoted(out.string())).exit_code, 0);
  const nlohmann::json j = nlohmann::json::parse(test::run_trainplan("evaluate " + scenario + " --format json").output);
  ASSERT_GT(j["time"]["overlap_contention"].get<double>(), 0.5);  // the case needs a visible contention
  const std::string chart = test::charts(test::section(test::read_text(out), "step")).at(0);
  const std::regex bar("<title>([^<:]+): ([0-9.]+) s</title>");
  double parts = 0, step = 0;
  for (std::sregex_iterator it(chart.begin(), chart.end(), bar), end; it != end; ++it) {
    ((*it)[1] == "step" ? step : parts) += std::stod((*it)[2]);
  }
  EXPECT_NEAR(step, j["time"]["step_seconds"].get<double>(), 5e-4);
  EXPECT_NEAR(parts, step, 4e-3);  // each bar printed to 1 ms
  // A part of no time says so with its unit (it printed a bare "0": a CLI audit, 2026-12-01).
  ASSERT_EQ(j["time"]["bubble"].get<double>(), 0.0);  // one stage: no bubble
  EXPECT_NE(chart.find("class=\"value muted\">0 s<"), std::string::npos);
  EXPECT_EQ(chart.find("class=\"value muted\">0<"), std::string::npos);  // (the axis's 0 has its unit in its title)
}

// Over 16 stages the timeline draws the first 8 and the last 8: with pp 32 (hand count) stages 8 to
// 23 are left out, and "stage 24" is drawn.
TEST(ReportTimeline, SamplesStagesBeyondSixteen) {
  const fs::path out = test::temp_html("pp32");
  const test::RunResult r = test::run_trainplan("report " + test::quoted(test::source_path("scenarios/examples/llama3.1-405b-16k-h100.yaml")) +
                                                " --set parallel.pp=32 -o " + test::quoted(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string timeline = test::charts(test::section(test::read_text(out), "timeline")).at(0);
  EXPECT_NE(timeline.find("stages 8–23 not drawn (16 stages"), std::string::npos);
  EXPECT_NE(timeline.find(">stage 7<"), std::string::npos);
  EXPECT_NE(timeline.find(">stage 24<"), std::string::npos);
  EXPECT_EQ(timeline.find(">stage 8<"), std::string::npos);
  EXPECT_EQ(timeline.find(">stage 23<"), std::string::npos);
}

TEST(ReportErrors, BadScenarioGivesTheLocatedErrorAndWritesNoFile) {
  const fs::path dir = fs::path(::testing::TempDir()) / "trainplan-report-bad";
  fs::create_directories(dir);
  const fs::path bad = dir / "bad.yaml";
  // default.yaml with a misspelt key on its line 18 ("  pp: 4" -> "  ppp: 4").
  std::string text = test::read_text(test::source_path("scenarios/examples/default.yaml"));
  const size_t at = text.find("\n  pp: 4");
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n') + 2, 18);
  text.replace(at, 8, "\n  ppp: 4");
  std::ofstream(bad) << text;
  const fs::path out = dir / "r.html";
  fs::remove(out);
  const test::RunResult r = test::run_trainplan("report " + test::quoted(bad.string()) + " -o " + test::quoted(out.string()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr(bad.string() + ":18:"));  // file:line of the unknown key
  EXPECT_THAT(r.output, HasSubstr("ppp"));
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().extension(), ".yaml") << "left behind: " << e.path();
}

// A sweep with no feasible layout and no SCENARIO has no plan to draw: as `trainplan sweep`, exit 2, and no
// page of the built-in scenario in its place (until 2026-12 the page silently drew Llama 3.1 70B).
TEST(ReportErrors, AnInfeasibleSweepWithoutScenarioWritesNothing) {
  const fs::path out = fs::path(::testing::TempDir()) / "trainplan-report-infeasible.html";
  fs::remove(out);
  const test::RunResult r = test::run_trainplan("report --grid parallel.tp=3,5 -o " + test::quoted(out.string()));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no feasible point"));
  EXPECT_FALSE(fs::exists(out));
}

// A step over the simulator's task limit leaves the timeline out, saying why, and the rest of the page
// stands (the whole report failed, where evaluate had a plan to show).
TEST(ReportErrors, AStepOverTheTaskLimitLeavesTheTimelineOut) {
  const fs::path out = fs::path(::testing::TempDir()) / "trainplan-report-tasks.html";
  fs::remove(out);
  const test::RunResult r = test::run_trainplan("--max-tasks 100 report -o " + test::quoted(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string page = test::read_text(out.string());
  EXPECT_THAT(page, HasSubstr("Not simulated: one step of"));
  EXPECT_THAT(page, HasSubstr("--max-tasks"));
  EXPECT_THAT(page, HasSubstr("id=\"memory\""));
}

TEST(ReportErrors, UnwritableOutputNamesThePath) {
  const test::RunResult r = test::run_trainplan("report -o /nonexistent-dir/r.html");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("/nonexistent-dir/r.html"));
}

}  // namespace
}  // namespace tp
