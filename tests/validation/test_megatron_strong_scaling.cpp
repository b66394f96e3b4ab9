// Held-out check of the pipeline schedule and data-parallel exposure on Megatron-Core r0.8's strong-scaling
// figure: GPT 177B, tp 8, pp 6, a fixed batch of 1,152 sequences, from 96 to 4,608 H100 (data-parallel size 2
// to 96). Oracle: the figure's eight points, read from the published image (tests/data/megatron-core-r0.8-
// strong-scaling.md, how they were read and checked is in the file). Only the 2,304-GPU point is also in the
// sharded set (its model-table row); the other seven are nowhere else and nothing in the planner was set from
// them. The test compares the shape: per-GPU throughput relative to 96 GPUs, where the FLOP convention
// cancels. The sharded scenarios run these rows interleaved with one layer per virtual stage
// (scripts/sharded_frameworks.py, megatron_core_interleave); the test also checks that claim against the
// non-interleaved schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hardware_profile.h"
#include "plan.h"
#include "scenario.h"
#include "tests/test_support.h"

namespace tp {
namespace {

struct ScalingPoint {
  int gpus = 0, dp = 0;
  double tflops_per_gpu = 0;
};

// The table rows of the data file: | GPUs | dp | aggregate PFLOP/s | per-GPU TFLOP/s |.
std::vector<ScalingPoint> read_points() {
  std::ifstream in(test::source_path("tests/data/megatron-core-r0.8-strong-scaling.md"));
  std::vector<ScalingPoint> points;
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 3 || line[0] != '|' || !std::isdigit(static_cast<unsigned char>(line[2]))) continue;
    std::stringstream ss(line.substr(1));
    ScalingPoint p;
    char bar = 0;
    double aggregate = 0;
    ss >> p.gpus >> bar >> p.dp >> bar >> aggregate >> bar >> p.tflops_per_gpu;
    points.push_back(p);
  }
  return points;
}

// Per-GPU throughput of the fixed batch, 1 / (GPUs x step), under the given schedule.
double per_gpu_rate(const ScalingPoint& p, const std::string& schedule, int vpp) {
  const Scenario s = load_scenario_file(
      test::source_path("scenarios/validation/sharded/megatron-core-r0.8-gpt177b-2304xh100.yaml"),
      {"cluster.nodes=" + std::to_string(p.gpus / 8), "parallel.dp=" + std::to_string(p.dp),
       "parallel.schedule=" + schedule, "parallel.vpp=" + std::to_string(vpp)});
  const double step = make_plan(s, profile_for(s)).time.step.value;
  EXPECT_TRUE(std::isfinite(step) && step > 0) << p.gpus;
  return 1.0 / (p.gpus * step);
}

// Largest |predicted / measured - 1| of the throughput relative to the first point; prints the rows.
double worst_shape_error(const std::vector<ScalingPoint>& points, const std::string& schedule, int vpp) {
  const double base = per_gpu_rate(points.front(), schedule, vpp);
  double worst = 0;
  for (const ScalingPoint& p : points) {
    const double predicted = per_gpu_rate(p, schedule, vpp) / base;
    const double measured = p.tflops_per_gpu / points.front().tflops_per_gpu;
    std::printf("%-11s vpp %2d  %4d GPUs (dp %2d)  relative per-GPU throughput: measured %.3f  predicted %.3f  (%+.1f %%)\n",
                schedule.c_str(), vpp, p.gpus, p.dp, measured, predicted, 100 * (predicted / measured - 1));
    worst = std::max(worst, std::fabs(predicted / measured - 1));
  }
  return worst;
}

TEST(MegatronStrongScaling, InterleavedScheduleFollowsThePublishedFallOfThroughput) {
  const std::vector<ScalingPoint> points = read_points();
  ASSERT_EQ(points.size(), 8u);
  ASSERT_EQ(points.front().gpus, 96);
  // One layer per virtual stage: 96 layers on 6 stages, 16 virtual stages (the sharded scenario's setting).
  const double interleaved = worst_shape_error(points, "interleaved", 16);
  const double plain = worst_shape_error(points, "1f1b", 1);
  std::printf("worst shape error: interleaved %.1f %%, 1f1b %.1f %%\n", 100 * interleaved, 100 * plain);
  // The figure falls 10 % from 96 to 4,608 GPUs; the pipeline bubble of 24 down to 12 micro-batches per
  // replica without interleaving would make it fall 36 % (2026-11-24: worst 1.9 % against 28.2 %).
  EXPECT_LE(interleaved, 0.03);
  EXPECT_GT(plain, 2 * interleaved);
}

}  // namespace
}  // namespace tp
