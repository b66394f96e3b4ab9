// Property: the planner's step time (docs/model.md §15) and the step simulator's (§19) tell the same story
// on random layouts. The simulator runs each schedule's order, every transfer and bucket as a task on its
// link; the planner replaces them with closed forms. Seeded random layouts: seven catalog models from 5B to
// 175B on A100, H100 and H200 nodes (1 to 64), tp 1–8, pp 1–8, dp the rest, ZeRO 0–3, the four schedules,
// the four frameworks, recompute none / selective / full, a third of them on 25 or 100 Gbit/s links.
// Oracle: the simulator. Bounds: mean |simulated / planned − 1| ≤ 1.2 % and at most 1.5 % of the layouts
// beyond 10 % (measured 2026-11-28 on these 400: 0.75 % and 0.25 %; on 2,727 layouts of the same kind with
// GPipe as the only one-stage schedule, 0.74 % and 0.8 %, and 1.49 % and 3.4 % before the pipeline
// transfers, the one-stage order, the buckets' readiness, GPipe's and ZB-H1's reduce windows and the
// parameter gather's window, and ZeRO-3's layer-by-layer TP collectives). Printed: the distribution and the widest layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "errors.h"
#include "hardware_profile.h"
#include "plan.h"
#include "simulate.h"
#include "test_support.h"

namespace tp {
namespace {

constexpr std::uint64_t kSeed = 20261128;
constexpr int kLayouts = 400;

class RandomLayouts {
 public:
  explicit RandomLayouts(std::uint64_t seed) : rng_(seed) {}

  // A layout of 8-GPU nodes, or "" when tp · pp does not divide the GPUs.
  std::string next() {
    static const char* const models[] = {"gpt3-5b", "llama2-7b", "llama3.1-8b", "llama2-13b", "llama3.1-70b",
                                         "mixtral-8x7b", "gpt3-175b"};
    static const char* const clusters[] = {"dgx-a100", "dgx-h100", "hgx-h200"};
    static const char* const schedules[] = {"1f1b", "gpipe", "zb-h1", "interleaved"};
    static const char* const recompute[] = {"none", "selective", "full"};
    static const char* const frameworks[] = {"megatron", "deepspeed", "fsdp", "pytorch"};
    const int tp = 1 << pick(4), pp = 1 << pick(4), nodes = 1 << pick(7);
    if ((nodes * 8) % (tp * pp) != 0) return "";
    const int dp = nodes * 8 / (tp * pp), mb = 1 << pick(2), m = pp * (1 << pick(4));
    const int schedule = pp > 1 ? pick(4) : pick(3);
    const int vpp = schedule == 3 ? 2 << pick(2) : 1;
    std::ostringstream y;
    y << "model: " << models[pick(7)] << "\ncluster: {preset: " << clusters[pick(3)] << ", nodes: " << nodes;
    if (pick(3) == 0) y << ", inter_node: {bandwidth: " << (pick(2) ? 25 : 100) << " Gbit/s, nics_per_node: " << (1 << pick(3)) << "}";
    y << "}\ntraining: {framework: " << frameworks[pick(4)] << ", sequence_length: " << (2048 << pick(3))
      << ", micro_batch: " << mb << ", global_batch: " << mb * dp * m << "}\n"
      << "parallel: {tp: " << tp << ", pp: " << pp << ", dp: " << dp << ", zero: " << pick(pp > 1 ? 2 : 4)
      << ", schedule: " << schedules[schedule] << ", vpp: " << vpp << ", recompute: " << recompute[pick(3)]
      << (tp > 1 && pick(2) ? ", sequence_parallel: true" : "") << "}\n";
    return y.str();
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::mt19937_64 rng_;
};

struct Gap {
  double difference;  // simulated / planned − 1
  std::string layout;
};

TEST(PlannerAndSimulator, AgreeOnRandomLayouts) {
  RandomLayouts random(kSeed);
  std::vector<Gap> gaps;
  int rejected = 0;
  while (static_cast<int>(gaps.size()) < kLayouts) {
    const std::string yaml = random.next();
    if (yaml.empty()) continue;
    try {
      const Scenario s = test::scenario(yaml);
      const Plan p = make_plan(s, profile_for(s));
      const SimResult r = simulate_step(s, p, SimOptions{});
      gaps.push_back({r.step_seconds.value / r.analytic_step_seconds.value - 1.0, yaml});
    } catch (const InputError&) {
      ++rejected;  // an invalid layout (e.g. interleaved with m not a multiple of p); an internal error fails
    }
  }
  std::sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) { return std::fabs(a.difference) > std::fabs(b.difference); });
  double sum = 0;
  int beyond = 0;
  for (const Gap& g : gaps) {
    sum += std::fabs(g.difference);
    beyond += std::fabs(g.difference) > 0.10;
  }
  const double mean = sum / static_cast<double>(gaps.size());
  const double share = static_cast<double>(beyond) / static_cast<double>(gaps.size());
  std::printf("planner vs simulator on %zu random layouts (%d rejected): mean |difference| %.2f %%, %d beyond 10 %%\n",
              gaps.size(), rejected, 100 * mean, beyond);
  for (std::size_t i = 0; i < 3 && i < gaps.size(); ++i) {
    std::printf("  %+.1f %%:\n%s", 100 * gaps[i].difference, gaps[i].layout.c_str());
  }
  EXPECT_LE(mean, 0.012);
  EXPECT_LE(share, 0.015);
}

// Property: every layout the planner accepts, the simulator simulates (no internal error, nothing below its
// lower bound), with the overlap switches, the gradient sync, ZeRO-3's sharding group and FSDP1's backward
// prefetch drawn as well. A
// random sweep of this kind found 37 of 1,700 ending in a task-graph cycle (2026-12-01: ZeRO-3 with the reduce
// not overlapped and two micro-batches or more); the test above swallowed such errors as rejected layouts.
TEST(PlannerAndSimulator, SimulateEveryLayoutThePlannerAccepts) {
  std::mt19937_64 rng(kSeed + 1);
  const auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  RandomLayouts random(kSeed + 2);
  int simulated = 0, rejected = 0;
  while (simulated < 300) {
    std::string yaml = random.next();
    if (yaml.empty()) continue;
    static const char* const flags[] = {"true", "false"};
    static const char* const syncs[] = {"every_micro_batch", "last_micro_batch"};
    std::vector<std::string> sets{std::string("parallel.overlap={grad_reduce: ") + flags[pick(2)] +
                                  ", param_gather: " + flags[pick(2)] + "}"};
    if (pick(2) == 0) sets.push_back(std::string("training.gradient_sync=") + syncs[pick(2)]);
    if (pick(3) == 0) sets.push_back("parallel.dp_shard=1");
    static const char* const prefetch[] = {"pre", "post", "none"};  // FSDP1's backward_prefetch (fsdp only)
    if (pick(3) == 0) sets.push_back(std::string("memory={fsdp_version: 1, fsdp_backward_prefetch: ") + prefetch[pick(3)] + "}");
    try {
      const Scenario s = test::scenario(yaml, sets);
      const Plan p = make_plan(s, profile_for(s));
      const SimResult r = simulate_step(s, p, SimOptions{});
      EXPECT_GE(r.step_seconds.value, r.lower_bound.value * (1 - 1e-9)) << yaml;
      ++simulated;
    } catch (const InputError&) {
      ++rejected;  // a setting the layout's framework or stage refuses
    }
  }
  std::printf("simulated %d random layouts with overlap, sync and sharding drawn (%d refused as input errors)\n",
              simulated, rejected);
}

// The context-parallel exchanges (parallel.cp_comm) reach the simulator as each stage's exposed layer
// communication: with the rings hidden behind the attention and the all-gather and all-to-all exposed, the
// simulated step stays within 1 % of the planned one (Llama 3.1 8B, tp 2 · cp 4 · pp 2 on two nodes).
TEST(PlannerAndSimulator, AgreeOnEachContextParallelExchange) {
  const char* yaml =
      "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 2}\n"
      "training: {sequence_length: 32768, global_batch: 8, micro_batch: 1}\n"
      "parallel: {tp: 2, pp: 2, cp: 4, recompute: selective}\n";
  double planned[5] = {}, exposed_cp[5] = {};
  int i = 0;
  for (const char* exchange : {"p2p", "all_gather", "a2a", "ring_all_gather", "a2a+p2p"}) {
    std::vector<std::string> sets{std::string("parallel.cp_comm=") + exchange};
    if (i == 4) sets.push_back("parallel.cp_a2a=2");  // a2a+p2p: all-to-all in pairs, a ring of two pairs
    const Scenario s = test::scenario(yaml, sets);
    const Plan p = make_plan(s, profile_for(s));
    const SimResult r = simulate_step(s, p, SimOptions{});
    EXPECT_NEAR(r.step_seconds.value / r.analytic_step_seconds.value, 1.0, 0.01) << exchange;
    exposed_cp[i] = p.time.exposed.cp.value;
    planned[i++] = r.analytic_step_seconds.value;
  }
  EXPECT_LT(planned[0], planned[1]);  // the ring hides; the all-gather does not
  // Nor do Ulysses' all-to-alls (its whole-sequence kernels may still make its step the shorter one).
  EXPECT_LT(exposed_cp[0], exposed_cp[2]);
  // PyTorch's gather hides behind the local block at least (its step also carries the ring's fp32 merges).
  EXPECT_LE(exposed_cp[3], exposed_cp[1]);
}

}  // namespace
}  // namespace tp
