// Held-out check of `training.framework: fsdp` on torchtitan's published H100 benchmark of 2024-12: Llama 3.1
// 8B, 70B and 405B from FSDP alone on 8 and 128 GPUs to FSDP + TP + PP + CP on 512, eager and compiled,
// bf16 and float8, with and without async TP, 1F1B and interleaved. Oracle: the published throughput
// (tests/data/torchtitan-h100-benchmark.md: source, how the step is derived, the settings read from the
// code of the same commit); no constant of the planner was set from these rows.
// The GPUs ran at a 500 W power limit, which the planner does not model (no source gives their clock), so the
// ratios between rows that differ in one technique, free of the clock, are held tightly: 128 against 8 GPUs
// and interleaved against 1F1B within 3 %, async TP within 5 % (3.1 %), compile and float8 within 6 % (3.3–5.1 %:
// at the printed 2.4 TB/s the memory-bound kernels weigh more, so compile gains more and float8 less than
// measured; at the SXM part's 3.35 TB/s both come within 1 %, docs/model.md §22 item 16). The whole steps are held at today's level as a
// regression guard (docs/model.md §22 item 16): the 8B rows without context parallelism within 6 %, the
// 70B TP rows within 5 %; all rows mean 10.1 %, worst 31.2 % (the context-parallel rows, −20 … −31 % at
// cp ≥ 2 with PP or cp ≥ 4; 11.1 % / 32.9 % before torchtitan's repeat_kv widened K and V, 11.6 % / 34.2 %
// before PyTorch's ring attention merged its blocks in fp32, docs/model.md §15 and §20). Before eager TP's sequence-dimension copies (docs/model.md §15) the 70B rows
// were −7.4 / −11.1 % and the set 13.9 %.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "hardware_profile.h"
#include "plan.h"
#include "scenario.h"
#include "tests/test_support.h"

namespace tp {
namespace {

struct Row {
  std::string table, model, recompute, compile, precision, async_tp, schedule;
  int nodes = 0, fsdp = 0, tp = 0, pp = 0, cp = 0, sequence = 0, local_batch = 0, micro_batch = 0, vpp = 0;
  double tps = 0;
  double measured() const {
    return static_cast<double>(local_batch) * fsdp * sequence / (8.0 * nodes * tps);
  }
};

// The table rows of the data file (the column order of its header).
std::vector<Row> read_rows() {
  std::vector<Row> rows;
  const auto is_run = [](const std::string& line) {
    return line.rfind("| ", 0) == 0 && line.find("llama") != std::string::npos;
  };
  for (const std::vector<std::string>& c : test::markdown_rows("tests/data/torchtitan-h100-benchmark.md", is_run, 18)) {
    Row r{c[0], c[1], c[10], c[11], c[12], c[13], c[14]};
    r.nodes = std::stoi(c[2]), r.fsdp = std::stoi(c[3]), r.tp = std::stoi(c[4]), r.pp = std::stoi(c[5]);
    r.cp = std::stoi(c[6]), r.sequence = std::stoi(c[7]), r.local_batch = std::stoi(c[8]);
    r.micro_batch = std::stoi(c[9]), r.vpp = std::stoi(c[15]), r.tps = std::stod(c[16]);
    rows.push_back(r);
  }
  return rows;
}

// The row as a scenario: FSDP2 over the data-parallel ranks; with PP, torchtitan's layout (zero 2, one
// reduce-scatter after the last backward).
Plan plan_of(const Row& r) {
  const bool pipelined = r.pp > 1;
  const std::string n = std::to_string(r.nodes);
  const std::string yaml =
      "name: torchtitan h100\nmodel: " + r.model + "\ncluster: {preset: dgx-h100, nodes: " + n +
      ", gpu: {memory: 96 GiB, memory_bandwidth: 2.4 TB/s}}\n"
      "training: {framework: fsdp, precision: " + r.precision + (r.precision == "fp8" ? ", fp8_recipe: current" : "") +
      ", grad_precision: fp32, sequence_length: " + std::to_string(r.sequence) + ", micro_batch: " +
      std::to_string(r.micro_batch) + ", global_batch: " + std::to_string(r.local_batch * r.fsdp) +
      ", optimizer: adamw, optimizer_kernel: foreach, flash_attention: true, compile: " + r.compile +
      (pipelined ? ", gradient_sync: last_micro_batch" : "") + "}\n"
      "parallel: {tp: " + std::to_string(r.tp) + ", pp: " + std::to_string(r.pp) + ", dp: " + std::to_string(r.fsdp) +
      ", cp: " + std::to_string(r.cp) + ", zero: " + (pipelined ? "2" : "3") + ", recompute: " + r.recompute +
      ", sequence_parallel: " + (r.tp > 1 ? "true" : "false") + ", schedule: " + r.schedule +
      ", vpp: " + std::to_string(r.vpp) + ", overlap: {tp_comm: " + r.async_tp +
      (pipelined ? ", grad_reduce: false" : "") + "}}\n";
  return test::plan(yaml);
}

struct Timed {
  Row row;
  double measured = 0, predicted = 0;
};

std::vector<Timed> timed_rows() {
  std::vector<Timed> t;
  for (const Row& r : read_rows()) {
    const Plan p = plan_of(r);
    EXPECT_TRUE(p.estimate.feasible) << "table " << r.table << " " << r.model << " ran";
    t.push_back({r, r.measured(), p.time.step.value});
  }
  return t;
}

TEST(TorchtitanH100, StepTimesStayWithinTodaysAccuracy) {
  const std::vector<Timed> rows = timed_rows();
  ASSERT_EQ(rows.size(), 18u);
  double sum = 0, worst = 0;
  for (const Timed& t : rows) {
    const Row& r = t.row;
    const double error = t.predicted / t.measured - 1;
    std::printf("table %s %-13s %3d GPUs fsdp %3d tp %d pp %d cp %d s %6d %-12s compile %-5s %-4s async %-5s %-11s "
                "measured %8.3f s  predicted %8.3f s  %+6.1f %%\n",
                r.table.c_str(), r.model.c_str(), 8 * r.nodes, r.fsdp, r.tp, r.pp, r.cp, r.sequence,
                r.recompute.c_str(), r.compile.c_str(), r.precision.c_str(), r.async_tp.c_str(), r.schedule.c_str(),
                t.measured, t.predicted, 100 * error);
    if (r.model == "llama3.1-8b" && r.cp == 1 && r.recompute == "selective_op") {
      EXPECT_LE(std::fabs(error), 0.06) << "table " << r.table << " compile " << r.compile << " " << r.precision;
    }
    if (r.model == "llama3.1-70b") {
      EXPECT_LE(std::fabs(error), 0.05) << "70B, async TP " << r.async_tp;
    }
    sum += std::fabs(error);
    worst = std::max(worst, std::fabs(error));
  }
  std::printf("torchtitan H100, %zu rows: mean |error| %.1f %%, worst %.1f %%\n", rows.size(), 100 * sum / rows.size(),
              100 * worst);
  EXPECT_LE(sum / rows.size(), 0.105);
  EXPECT_LE(worst, 0.325);
}

// Rows that differ in one technique: the measured and predicted ratio of their steps, free of the clock.
TEST(TorchtitanH100, WhatEachTechniqueGivesMatchesTheTable) {
  const std::vector<Timed> rows = timed_rows();
  ASSERT_EQ(rows.size(), 18u);
  struct Pair {
    const char* what;
    std::size_t base, with;
    double tolerance;
  };
  const Pair pairs[] = {
      {"compile, 8 GPUs", 0, 1, 0.06},           {"float8, 8 GPUs", 1, 2, 0.06},
      {"compile, 128 GPUs", 7, 8, 0.06},         {"float8, 128 GPUs", 8, 9, 0.06},
      {"8 -> 128 GPUs, eager", 7, 0, 0.03},      {"8 -> 128 GPUs, compiled", 8, 1, 0.03},
      {"8 -> 128 GPUs, float8", 9, 2, 0.03},     {"interleaved over 1F1B, 405B", 12, 13, 0.03},
      {"async TP, 70B on 256 GPUs", 10, 11, 0.05},
  };
  for (const Pair& p : pairs) {
    const double measured = rows[p.base].measured / rows[p.with].measured;
    const double predicted = rows[p.base].predicted / rows[p.with].predicted;
    std::printf("%-30s speed-up measured %.3f, predicted %.3f\n", p.what, measured, predicted);
    EXPECT_NEAR(predicted, measured, p.tolerance * measured) << p.what;
  }
}

}  // namespace
}  // namespace tp
