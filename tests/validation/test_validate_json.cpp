// `trainplan validate --format json` (docs/json-output.md): every set with its runs and summaries.
// Oracles: each run's step_error recomputed from its own predicted and measured seconds; each summary
// re-aggregated in the test from the runs (mean |e|, signed mean, max |e|, count); the table output of
// the same command printing the same means; the set sizes and the out-of-memory case of the data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.h"

namespace tp {
namespace {

using nlohmann::json;

// mean |e|, signed mean and max |e| of the runs that have a measured step (all of them when key is empty,
// else those whose `key` equals `value`), compared with `summary`.
void expect_summary(const json& runs, const json& summary, const std::string& key = "", const std::string& value = "") {
  double sum = 0, signed_sum = 0, worst = 0;
  int n = 0;
  for (const json& r : runs) {
    if (!r.contains("step_error") || (!key.empty() && r.at(key) != value)) continue;
    const double e = r.at("step_error").get<double>();
    sum += std::fabs(e);
    signed_sum += e;
    worst = std::max(worst, std::fabs(e));
    ++n;
  }
  ASSERT_GT(n, 0);
  EXPECT_EQ(summary.at("runs").get<int>(), n) << key << " " << value;
  EXPECT_NEAR(summary.at("mean_absolute_error").get<double>(), sum / n, 1e-12);
  EXPECT_NEAR(summary.at("signed_mean_error").get<double>(), signed_sum / n, 1e-12);
  EXPECT_NEAR(summary.at("max_absolute_error").get<double>(), worst, 1e-12);
}

TEST(ValidateJson, SummariesAreTheRunsReaggregated) {
  const test::RunResult r = test::run_trainplan("validate --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(r.output);
  EXPECT_EQ(j.at("units").at("time"), "seconds");
  const json& sets = j.at("sets");
  EXPECT_EQ(sets.at("published").at("runs").size(), 18u);  // published-runs.yaml
  EXPECT_EQ(sets.at("sharded").at("runs").size(), 45u);    // published-sharded-runs.yaml
  // h100-pytorch-steps.json (one out of memory) and h100-framework-steps.json's 8 plain-loop cases
  EXPECT_EQ(sets.at("h100_pytorch").at("runs").size(), 16u);
  // h200-pytorch-steps.json (all 7 ran) and h200-framework-steps.json's 8 plain-loop cases
  EXPECT_EQ(sets.at("h200_pytorch").at("runs").size(), 15u);
  for (const auto& [name, set] : sets.items()) {
    for (const json& run : set.at("runs")) {
      if (!run.contains("measured_step_seconds")) continue;
      EXPECT_NEAR(run.at("step_error").get<double>(),
                  run.at("predicted_step_seconds").get<double>() / run.at("measured_step_seconds").get<double>() - 1.0,
                  1e-12)
          << name << " " << run.at("run");
    }
    expect_summary(set.at("runs"), set.at("step_time"));
    for (const auto& [gpu, summary] : set.at("by_gpu").items()) expect_summary(set.at("runs"), summary, "gpu", gpu);
  }
  for (const auto& [cls, summary] : sets.at("sharded").at("by_class").items()) {
    expect_summary(sets.at("sharded").at("runs"), summary, "class", cls);
  }
  // The real-step set: the out-of-memory run has no measured step and is predicted not to fit.
  int oom = 0;
  for (const json& run : sets.at("h100_pytorch").at("runs")) {
    if (!run.at("out_of_memory").get<bool>()) continue;
    ++oom;
    EXPECT_FALSE(run.contains("measured_step_seconds"));
    EXPECT_FALSE(run.at("predicted_to_fit").get<bool>());
  }
  EXPECT_EQ(oom, 1);
  EXPECT_EQ(sets.at("h100_pytorch").at("memory").at("runs").get<int>(), 15);
  EXPECT_EQ(sets.at("h200_pytorch").at("memory").at("runs").get<int>(), 15);
  // The table names each real-step set's GPU.
  // The table prints the same whole-set means, to 0.1 %.
  const test::RunResult table = test::run_trainplan("validate");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("Real H200 steps, PyTorch"), std::string::npos);
  char line[96];
  std::snprintf(line, sizeof line, "step time: mean absolute error %.1f%%",
                100 * sets.at("sharded").at("step_time").at("mean_absolute_error").get<double>());
  EXPECT_NE(table.output.find(line), std::string::npos) << line;
}

}  // namespace
}  // namespace tp
