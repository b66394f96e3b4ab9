// The validation scenarios (scenarios/validation/index.yaml): the simulated step is at least the
// analytic lower bound, within the stated tolerance of the analytic step-time model, and the
// simulated peak in-flight micro-batches per stage equal the planner's memory model.
// Tolerance: 5% (the analytic model approximates the interleaved fill/drain, pipeline transfers
// and DP overlap with closed forms; the simulator runs them). The table printed here is the one in
// docs/model.md, "Simulator".
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "commands.h"
#include "scenario.h"
#include "sim_test_support.h"

namespace tp {
namespace {

constexpr double kTolerance = 0.05;

TEST(SimValidation, WithinToleranceOfTheAnalyticModelAndAboveTheLowerBound) {
  const std::string dir = test::source_path("scenarios/validation");
  const std::vector<ValidationRow> rows = validation_rows(dir);
  ASSERT_GE(rows.size(), 18u);
  double sum = 0, worst = 0;
  std::printf("%-48s %-11s %11s %11s %8s %11s\n", "scenario", "schedule", "analytic s", "simulated s", "diff", "bound s");
  for (const ValidationRow& row : rows) {
    const Scenario s = load_scenario_file(dir + "/" + row.scenario);
    const Plan p = make_plan(s, profile_for(s));
    const SimResult r = simulate_step(s, p, SimOptions{});
    const double diff = r.step_seconds / r.analytic_step_seconds - 1.0;
    std::printf("%-48s %-11s %11.3f %11.3f %+7.2f%% %11.3f\n", row.scenario.c_str(), to_string(s.parallel.schedule),
                r.analytic_step_seconds.value, r.step_seconds.value, 100 * diff, r.lower_bound.value);
    EXPECT_GE(r.step_seconds.value, r.lower_bound.value * (1 - 1e-12)) << row.scenario;
    EXPECT_LE(std::fabs(diff), kTolerance) << row.scenario;
    for (const SimStage& st : r.stages) {
      EXPECT_EQ(st.peak_in_flight, st.planner_in_flight) << row.scenario << " stage " << st.stage;
      EXPECT_NEAR(st.activations.value, st.planner_activations.value, 1e-9 * st.planner_activations.value);
      EXPECT_NEAR((st.busy + st.exposed_comm + st.bubble).value, r.step_seconds.value, 1e-9 * r.step_seconds.value);
    }
    sum += std::fabs(diff);
    worst = std::max(worst, std::fabs(diff));
  }
  std::printf("simulated vs analytic: mean absolute difference %.2f%%, max %.2f%%\n", 100 * sum / rows.size(), 100 * worst);
}

}  // namespace
}  // namespace tp
