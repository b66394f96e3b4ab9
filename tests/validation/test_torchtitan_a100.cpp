// Held-out check of `training.framework: fsdp` (FSDP2) on torchtitan's published A100 table: Llama 2 13B and
// 70B, Llama 3 8B and 70B on 64 A100 80 GB, no, full, selective-layer and selective-op activation
// checkpointing, and the two configurations the table lists as out of memory. Oracle: the published throughput
// (tests/data/torchtitan-a100-performance.md: source, how the step is derived, and the settings read from the
// code of the same commit); no constant of the planner was set from these rows. Bounds: 12 % per run (the
// issue's per-run target for published sets; the worst row, Llama 3 8B selective layer, is -8.5 % since the
// A100 defaults took FlashAttention-2's benchmark curve and the measured kernel-class fractions, docs/model.md
// §13, 2026-11-29; -10.5 % before, -12.5 % before FSDP2's copies around its collectives, §15 "FSDP's copies"),
// 6 % mean (4.3 %; 4.5 % before the kernel classes' HBM plus SM time, docs/model.md §13; 7.1 % before 2026-11-29), the verdict (the runs that ran fit, the OOM ones do not), and the
// cost of checkpointing itself: each Llama 2 13B checkpointed row over the row without, within 2 % of measured.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "hardware_profile.h"
#include "plan.h"
#include "scenario.h"
#include "tests/test_support.h"

namespace tp {
namespace {

struct Row {
  std::string model, recompute, fused_norm, wps;
  int batch = 0, sequence = 0;
};

// The table rows of the data file: | model | local batch | sequence | AC | recompute | fused norm | WPS | MFU |.
std::vector<Row> read_rows() {
  std::vector<Row> rows;
  for (const std::vector<std::string>& cells :
       test::markdown_rows("tests/data/torchtitan-a100-performance.md", test::starts_with("| llama"), 8)) {
    rows.push_back({cells[0], cells[4], cells[5], cells[6], std::stoi(cells[1]), std::stoi(cells[2])});
  }
  return rows;
}

Plan plan_of(const Row& r) {
  const std::string yaml =
      "name: torchtitan " + r.model + "\nmodel: " + r.model + "\ncluster: {preset: dgx-a100, nodes: 8}\n"
      "training: {framework: fsdp, precision: bf16, grad_precision: fp32, sequence_length: " +
      std::to_string(r.sequence) + ", micro_batch: " + std::to_string(r.batch) + ", global_batch: " +
      std::to_string(64 * r.batch) + ", optimizer: adamw, optimizer_kernel: foreach, flash_attention: true, fused_norm: " +
      r.fused_norm + "}\nparallel: {tp: 1, pp: 1, dp: 64, zero: 3, recompute: " + r.recompute + "}\n";
  return test::plan(yaml);
}

TEST(TorchtitanA100, StepTimesAndVerdictsOfTheModelledRows) {
  const std::vector<Row> rows = read_rows();
  ASSERT_EQ(rows.size(), 10u);
  int timed = 0, out_of_memory = 0;
  double sum = 0;
  for (const Row& r : rows) {
    const Plan p = plan_of(r);
    if (r.wps == "OOM") {
      ++out_of_memory;
      EXPECT_FALSE(p.estimate.feasible) << r.model << " " << r.recompute << " ran out of memory";
      std::printf("%-12s b %d  %-12s  out of memory; predicted not to fit: %s\n", r.model.c_str(), r.batch,
                  r.recompute.c_str(), p.estimate.feasible ? "no" : "yes");
      continue;
    }
    const double measured = r.batch * r.sequence / std::stod(r.wps);
    const double predicted = p.time.step.value;
    const double error = predicted / measured - 1;
    std::printf("%-12s b %d  %-12s  measured %7.3f s  predicted %7.3f s  %+6.1f %%  fits: %s\n", r.model.c_str(),
                r.batch, r.recompute.c_str(), measured, predicted, 100 * error, p.estimate.feasible ? "yes" : "no");
    EXPECT_TRUE(p.estimate.feasible) << r.model << " " << r.recompute << " ran";
    EXPECT_LE(std::fabs(error), 0.12) << r.model << " " << r.recompute;
    sum += std::fabs(error);
    ++timed;
  }
  ASSERT_EQ(timed, 8);
  ASSERT_EQ(out_of_memory, 2);
  std::printf("step time: mean absolute error %.1f %% over %d runs\n", 100 * sum / timed, timed);
  EXPECT_LE(sum / timed, 0.06);
}

// The step of each checkpointed Llama 2 13B row (local batch 2) over the row without checkpointing: what
// checkpointing costs, free of whatever the rows share (the cluster, the A100's default profile).
TEST(TorchtitanA100, CheckpointingCostOverTheRowWithout) {
  std::map<std::string, std::pair<double, double>> step;  // recompute -> (measured, predicted)
  for (const Row& r : read_rows()) {
    if (r.model != "llama2-13b") continue;
    step[r.recompute] = {r.batch * r.sequence / std::stod(r.wps), plan_of(r).time.step.value};
  }
  ASSERT_EQ(step.size(), 3u);
  const auto& none = step.at("none");
  for (const char* mode : {"{one_in: 2}", "selective_op"}) {
    const double measured = step.at(mode).first / none.first, predicted = step.at(mode).second / none.second;
    std::printf("llama2-13b %-12s over none: measured %.3f, predicted %.3f\n", mode, measured, predicted);
    EXPECT_NEAR(predicted, measured, 0.02 * measured) << mode;
  }
}

}  // namespace
}  // namespace tp
