// Held-out check of the MoE step on NVIDIA's Megatron Bridge performance summary: Qwen3 30B-A3B on 16 H100
// (tests/data/megatron-bridge-moe.md: source, rows taken and left out, the settings the tables leave unsaid).
// Oracle: the published tokens/s per GPU; no constant of the planner was set from these rows. The project's
// only measured MoE training steps.
// Identical layouts differ by up to 1.77x between releases, so each layout is judged against its fastest
// release. Bounds: today's level, as a regression guard (each row printed): within 30 % of the fastest release,
// with the dispatcher each release ran. Today: EP 8 over one node -24.8 %, EP 16 over two nodes -22.0 %: the
// planner's MoE layer is a quarter short of these steps (docs/model.md §22 item 18). The EP 16 rows with
// Megatron-Core's plain all-to-all instead are +29.2 % (printed, and shown slower than the DeepEP dispatch),
// and were +87 % before the all-to-all across nodes was split by tier (2026-11-29, docs/model.md §14).
// The 25.11 row (micro-batch 2) is printed but not bounded: the planner puts it 9 GiB over the GPU's 80 GiB,
// where it ran (docs/model.md §22 item 18).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

struct Row {
  std::string release;
  int gpus = 0, gbs = 0, mbs = 0, sequence = 0, tp = 0, pp = 0, vp = 0, ep = 0;
  std::string dispatcher;
  double tokens_per_gpu = 0;
  double measured() const { return static_cast<double>(gbs) * sequence / (gpus * tokens_per_gpu); }
  std::string layout() const {
    return "mbs " + std::to_string(mbs) + " pp " + std::to_string(pp) + " vp " + std::to_string(vp) + " ep " +
           std::to_string(ep);
  }
};

std::vector<Row> read_rows() {
  std::vector<Row> rows;
  // Data rows start with the release year.
  for (const std::vector<std::string>& c :
       test::markdown_rows("tests/data/megatron-bridge-moe.md", test::starts_with("| 2"), 11)) {
    Row r;
    r.release = c[0];
    r.gpus = std::stoi(c[1]), r.gbs = std::stoi(c[2]), r.mbs = std::stoi(c[3]), r.sequence = std::stoi(c[4]);
    r.tp = std::stoi(c[5]), r.pp = std::stoi(c[6]), r.vp = std::stoi(c[7]), r.ep = std::stoi(c[8]);
    r.dispatcher = c[9];
    r.tokens_per_gpu = std::stod(c[10]);
    rows.push_back(r);
  }
  return rows;
}

Plan plan_of(const Row& r, const std::string& dispatcher) {
  const int dp = r.gpus / (r.tp * r.pp);
  const std::string yaml =
      "name: megatron bridge moe\nmodel: qwen3-30b-a3b\ncluster: {preset: dgx-h100, nodes: " +
      std::to_string(r.gpus / 8) + "}\n"
      "training: {framework: megatron, precision: fp8, fp8_recipe: current, grad_precision: bf16, "
      "sequence_length: " + std::to_string(r.sequence) + ", global_batch: " + std::to_string(r.gbs) +
      ", micro_batch: " + std::to_string(r.mbs) + ", optimizer: adamw, flash_attention: true, fused_loss: true, "
      "moe_dispatcher: " + dispatcher + "}\n"
      "parallel: {tp: " + std::to_string(r.tp) + ", pp: " + std::to_string(r.pp) + ", dp: " + std::to_string(dp) +
      ", ep: " + std::to_string(r.ep) + ", zero: 1, recompute: none, schedule: " +
      (r.vp > 1 ? "interleaved" : "1f1b") + ", vpp: " + std::to_string(r.vp) +
      ", sequence_parallel: false, overlap: {grad_reduce: true, param_gather: true}}\n";
  return test::plan(yaml);
}

TEST(MegatronBridgeMoe, Qwen3StepsStayWithinTodaysAccuracyOfTheFastestRelease) {
  const std::vector<Row> rows = read_rows();
  ASSERT_EQ(rows.size(), 6u);
  std::map<std::string, double> fastest;  // layout -> shortest measured step
  for (const Row& r : rows) {
    auto [it, fresh] = fastest.emplace(r.layout(), r.measured());
    if (!fresh) it->second = std::min(it->second, r.measured());
  }
  for (const Row& r : rows) {
    const Plan p = plan_of(r, r.dispatcher);
    const double predicted = p.time.step.value, measured = r.measured();
    const double error = predicted / fastest.at(r.layout()) - 1.0;
    std::printf("%-8s qwen3-30b-a3b 16 H100 %-22s %-10s measured %7.3f s (fastest %7.3f s)  predicted %7.3f s  %+6.1f %%%s\n",
                r.release.c_str(), r.layout().c_str(), r.dispatcher.c_str(), measured, fastest.at(r.layout()), predicted,
                100.0 * error, p.estimate.feasible ? "" : "  predicted not to fit; it ran");
    ASSERT_TRUE(std::isfinite(predicted) && predicted > 0.0) << r.release;
    if (r.mbs == 2) continue;  // the 25.11 row: the memory miss above, printed only
    EXPECT_TRUE(p.estimate.feasible) << r.release << " " << r.layout();
    EXPECT_LT(std::fabs(error), 0.30) << r.release << " " << r.layout();
    if (r.ep > 8 && r.dispatcher == "deepep") {
      // Across nodes the deduplicated dispatch sends about a quarter of the all-to-all's bytes through the NICs.
      const double plain = plan_of(r, "all_to_all").time.step.value;
      std::printf("         the same with the all-to-all dispatcher: %7.3f s  %+6.1f %%\n", plain,
                  100.0 * (plain / fastest.at(r.layout()) - 1.0));
      EXPECT_GT(plain, 1.3 * predicted) << r.release;
    }
  }
}

}  // namespace
}  // namespace tp
