// Jitter: per-task durations drawn with a seed over many steps; the statistics are ordered, the
// draw is reproducible, zero jitter gives identical steps, and stragglers never speed a pipeline
// up on average by more than noise (E[max] ≥ max E for the synchronising stages).
#include <gtest/gtest.h>

#include "sim_test_support.h"

namespace tp {
namespace {

SimResult jittered(double jitter, std::uint64_t seed, int steps) {
  const Scenario s = simtest::pipeline(4, 8, "1f1b");
  const Plan p = simtest::plan_with(s, simtest::uniform(4, simtest::timing(1, 2)));
  SimOptions o;
  o.steps = steps;
  o.jitter = jitter;
  o.seed = seed;
  return simulate_step(s, p, o);
}

TEST(Jitter, ZeroJitterGivesIdenticalSteps) {
  const SimResult r = jittered(0.0, 7, 20);
  EXPECT_EQ(r.stats.steps, 20);
  EXPECT_EQ(r.stats.min.value, 33.0);
  EXPECT_EQ(r.stats.max.value, 33.0);
  EXPECT_EQ(r.stats.p99.value, 33.0);
  EXPECT_EQ(r.step_seconds.value, 33.0);
}

TEST(Jitter, StatisticsAreOrderedAndReproducible) {
  const SimResult a = jittered(0.1, 3, 200);
  const SimResult b = jittered(0.1, 3, 200);
  const SimResult c = jittered(0.1, 4, 200);
  EXPECT_EQ(a.stats.mean.value, b.stats.mean.value);
  EXPECT_EQ(a.stats.p99.value, b.stats.p99.value);
  EXPECT_NE(a.stats.mean.value, c.stats.mean.value);
  EXPECT_LE(a.stats.min, a.stats.p50);
  EXPECT_LE(a.stats.p50, a.stats.p99);
  EXPECT_LE(a.stats.p99, a.stats.max);
  EXPECT_LT(a.stats.min.value, a.stats.max.value);
  // Mean-preserving task noise, but the pipeline waits for the slowest: the mean step grows.
  EXPECT_GT(a.stats.mean.value, 33.0);
  EXPECT_LT(a.stats.mean.value, 33.0 * 1.2);
}

TEST(Jitter, MoreJitterWidensTheTail) {
  const SimResult small = jittered(0.02, 5, 300);
  const SimResult large = jittered(0.2, 5, 300);
  EXPECT_GT(large.stats.p99 - large.stats.p50, small.stats.p99 - small.stats.p50);
  EXPECT_GT(large.stats.mean, small.stats.mean);
}

}  // namespace
}  // namespace tp
