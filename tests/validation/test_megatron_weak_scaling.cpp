// Held-out check on the three rows of Megatron-Core r0.8's model table that are in no validation set: GPT
// 16B (tp 4), 119B (tp 8, pp 4) and 314B (tp 8, pp 8) on 192 to 3,072 H100. Oracle: the table's printed
// per-GPU TFLOP/s (tests/data/megatron-core-r0.8-weak-scaling.md), turned into a step time with Megatron's
// own FLOP count (tests/megatron_flops.h). Each row is its family's sharded scenario (same software,
// settings and assumptions, scripts/sharded_frameworks.py) with only the printed shape, layout and batch
// changed; nothing in the planner was set from these rows. The bound is the per-run target for
// published sets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "hardware_profile.h"
#include "plan.h"
#include "scenario.h"
#include "tests/megatron_flops.h"
#include "tests/test_support.h"

namespace tp {
namespace {

struct TableRow {
  std::string name, base;  // base: the sharded scenario of the family it is built from
  int heads, hidden, layers, tp, pp, gpus, batch;
  double tflops_per_gpu;
};

constexpr double kSeq = 4096, kVocab = 131072;

Scenario scenario_of(const TableRow& r) {
  const int dp = r.gpus / (r.tp * r.pp);
  std::vector<std::string> sets = {
      "model.name=GPT " + r.name, "model.layers=" + std::to_string(r.layers),
      "model.hidden=" + std::to_string(r.hidden), "model.heads=" + std::to_string(r.heads),
      "model.ffn_hidden=" + std::to_string(4 * r.hidden), "cluster.nodes=" + std::to_string(r.gpus / 8),
      "training.global_batch=" + std::to_string(r.batch), "parallel.tp=" + std::to_string(r.tp),
      "parallel.pp=" + std::to_string(r.pp), "parallel.dp=" + std::to_string(dp)};
  // One layer per virtual stage, as the family's pipelined rows run (megatron_core_interleave).
  if (r.pp > 1) sets.push_back("parallel.vpp=" + std::to_string(r.layers / r.pp));
  return load_scenario_file(test::source_path("scenarios/validation/sharded/" + r.base), sets);
}

TEST(MegatronWeakScaling, HeldOutModelTableRowsWithinThePublishedRunTarget) {
  const std::vector<TableRow> rows = {
      {"16B", "megatron-core-r0.8-gpt32b-384xh100.yaml", 48, 6144, 32, 4, 1, 192, 192, 489.1},
      {"119B", "megatron-core-r0.8-gpt177b-2304xh100.yaml", 80, 10240, 92, 8, 4, 1536, 768, 420.5},
      {"314B", "megatron-core-r0.8-gpt177b-2304xh100.yaml", 128, 16384, 96, 8, 8, 3072, 1536, 474.4},
  };
  double sum = 0;
  for (const TableRow& r : rows) {
    const Scenario s = scenario_of(r);
    ASSERT_EQ(s.parallel.dp * s.parallel.tp * s.parallel.pp, s.gpus()) << r.name;
    const double flops = test::megatron_flops(r.batch, kSeq, r.layers, r.hidden, kVocab);
    const double measured = flops / (r.tflops_per_gpu * 1e12 * r.gpus);
    const double predicted = make_plan(s, profile_for(s)).time.step.value;
    const double error = predicted / measured - 1;
    std::printf("GPT %-5s %5d GPUs  step: measured %.3f s  predicted %.3f s  (%+.1f %%)\n", r.name.c_str(), r.gpus,
                measured, predicted, 100 * error);
    EXPECT_LE(std::fabs(error), 0.12) << r.name;
    sum += std::fabs(error);
  }
  // 2026-11-24: 16B +6.0 %, 119B -11.2 %, 314B -5.1 % (mean 7.4 %).
  std::printf("held-out model-table rows: mean absolute error %.1f %%\n", 100 * sum / rows.size());
}

}  // namespace
}  // namespace tp
