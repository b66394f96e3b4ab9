// The sweep: parallel: auto enumeration, ranking against brute force, Pareto fronts, determinism
// across thread counts and rejection accounting. Oracles: a hand-listed mesh set and brute-force
// evaluation with make_plan written in the test.
#include <sstream>
#include <gtest/gtest.h>

#include <set>
#include <nlohmann/json.hpp>
#include <tuple>

#include "checks.h"
#include "mesh.h"
#include "plan.h"
#include "sweep.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const char* kSmall =
    "model: {layers: 4, hidden: 512, heads: 4, ffn_hidden: 2048, vocab: 1000, activation: gelu}\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 4}\n"
    "training: {sequence_length: 1024, global_batch: 8, micro_batch: 1, tokens: 1 G}\n"
    "parallel: {tp: 1, pp: 1}\n";

TEST(SweepAuto, MeshesOfFourGpusEqualTheHandListedSet) {
  Scenario s = test::scenario(kSmall);
  std::vector<LayoutChoice> all = auto_layouts(s);
  std::set<std::tuple<int, int, int, int, int>> meshes;  // tp, pp, cp, vpp, schedule
  for (const auto& c : all) meshes.insert({c.tp, c.pp, c.cp, c.vpp, static_cast<int>(c.schedule)});
  const int f1b = static_cast<int>(Schedule::one_f_one_b), gp = static_cast<int>(Schedule::gpipe),
            zb = static_cast<int>(Schedule::zb_h1), il = static_cast<int>(Schedule::interleaved);
  // tp x pp x cp dividing 4 GPUs (tp | 4 heads, pp | 4 layers, 1024 % 2cp == 0):
  std::set<std::tuple<int, int, int, int, int>> expected = {
      {1, 1, 1, 1, f1b}, {1, 1, 2, 1, f1b}, {1, 1, 4, 1, f1b}, {2, 1, 1, 1, f1b}, {2, 1, 2, 1, f1b}, {4, 1, 1, 1, f1b},
      // pp 2: 1F1B, GPipe, ZB-H1 and interleaved with v = 2 (4 layers = 2 stages x 2 chunks) and v = 3
      // (4 layers + embedding + output layer = 2 stages x 3 chunks, the Llama 3 split)
      {1, 2, 1, 1, f1b}, {1, 2, 1, 1, gp}, {1, 2, 1, 1, zb}, {1, 2, 1, 2, il}, {1, 2, 1, 3, il},
      {1, 2, 2, 1, f1b}, {1, 2, 2, 1, gp}, {1, 2, 2, 1, zb}, {1, 2, 2, 2, il}, {1, 2, 2, 3, il},
      {2, 2, 1, 1, f1b}, {2, 2, 1, 1, gp}, {2, 2, 1, 1, zb}, {2, 2, 1, 2, il}, {2, 2, 1, 3, il},
      // pp 4: one layer per stage, no interleaving
      {1, 4, 1, 1, f1b}, {1, 4, 1, 1, gp}, {1, 4, 1, 1, zb}};
  EXPECT_EQ(meshes, expected);
}

TEST(SweepAuto, EveryChoiceIsValidAndUnique) {
  Scenario base = test::scenario(kSmall);
  std::vector<LayoutChoice> all = auto_layouts(base);
  std::set<std::tuple<int, int, int, int, int, int, int, int, long long, bool, int>> seen;
  for (const auto& c : all) {
    auto key = std::make_tuple(c.tp, c.pp, c.cp, c.ep, c.vpp, static_cast<int>(c.schedule), c.zero,
                               static_cast<int>(c.recompute), static_cast<long long>(c.micro_batch), c.sequence_parallel,
                               c.dp_shard);
    EXPECT_TRUE(seen.insert(key).second) << "duplicate choice";
    Scenario s = base;
    apply_layout(s, c);
    ASSERT_TRUE(resolve_layout(s).empty());
    EXPECT_TRUE(check_scenario(s, true).empty()) << check_scenario(s, true).front().message;
  }
  // ZeRO-3 only without pipelining; micro-batches divide the per-replica batch.
  for (const auto& c : all) {
    if (c.pp > 1) {
      EXPECT_LT(c.zero, 3);
    }
    EXPECT_EQ((8 / (4 / (c.tp * c.pp * c.cp))) % c.micro_batch, 0);
  }
}

// DeepSpeed's pipeline engine runs 1F1B below ZeRO-2 (model/checks.cpp): its auto layouts with pp > 1 keep
// to that, and still offer pipelines.
TEST(SweepAuto, DeepSpeedPipelinesAre1F1BBelowZero2) {
  Scenario s = test::scenario(kSmall, {"training.framework=deepspeed"});
  int pipelined = 0;
  for (const auto& c : auto_layouts(s)) {
    if (c.pp == 1) continue;
    ++pipelined;
    EXPECT_EQ(c.schedule, Schedule::one_f_one_b);
    EXPECT_LE(c.zero, 1);
  }
  EXPECT_GT(pipelined, 0);
}

std::vector<FastAxis> axes_of(const std::vector<std::pair<std::string, std::string>>& kv) {
  std::vector<FastAxis> out;
  for (const auto& [k, v] : kv) {
    Axis a;
    a.key = k;
    a.values = expand_values(v, {"test", 0, 0}, k);
    out.push_back(make_fast_axis(a));
  }
  return out;
}

// The base of UnsaidZeroAndSequenceParallelAreEachPointsDefaults with tp and pp given, as `evaluate` reads it.
std::string base_yaml_with(int tp, int pp) {
  return "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 2}\n"
         "training: {framework: fsdp, sequence_length: 4096, global_batch: 64, micro_batch: 1}\n"
         "parallel: {tp: " + std::to_string(tp) + ", pp: " + std::to_string(pp) + ", recompute: full}\n";
}

SweepResult run(const Scenario& s, const std::vector<FastAxis>& axes, bool auto_layout, int threads,
                Constraints c = {}, bool keep_all = false, Objective o = Objective::time) {
  SweepOptions opt;
  opt.threads = threads;
  opt.keep_all = keep_all;
  return run_sweep({SweepBase{"", s, profile_for(s)}}, axes, auto_layout, o, c, 5, opt);
}

const char* kMedium =
    "model: llama3.1-8b\n"
    "cluster: {preset: dgx-h100, nodes: 2}\n"
    "training: {sequence_length: 8192, global_batch: 64, micro_batch: 1, tokens: 100 G}\n"
    "parallel: {tp: 1, pp: 1}\n";

TEST(SweepEngine, BestEqualsBruteForce) {
  Scenario base = test::scenario(kMedium);
  auto axes = axes_of({{"parallel.tp", "1,2,4,8"}, {"parallel.pp", "1,2,4"}, {"parallel.zero", "0..2"},
                       {"training.micro_batch", "1,2"}, {"parallel.recompute", "none,full"}});
  SweepResult r = run(base, axes, false, 2);
  // Brute force: every combination through make_plan, minimum run time among feasible points.
  double best = 1e300;
  std::uint64_t feasible = 0;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {1, 2, 4}) {
      for (int zero : {0, 1, 2}) {
        for (int mb : {1, 2}) {
          for (RecomputeMode rc : {RecomputeMode::none, RecomputeMode::full}) {
            Scenario s = base;
            s.parallel.tp = tp;
            s.parallel.pp = pp;
            s.parallel.zero = zero;
            s.parallel.zero_given = true;
            s.training.micro_batch = mb;
            s.parallel.recompute = {rc, 0};
            s.parallel.dp_auto = true;
            s.parallel.layers_auto = true;
            if (!resolve_layout(s).empty() || !check_scenario(s, true).empty()) continue;
            Plan p = make_plan(s, profile_for(s));
            if (!p.estimate.feasible) continue;
            ++feasible;
            best = std::min(best, p.run.seconds_with_failures.value);
          }
        }
      }
    }
  }
  ASSERT_GT(feasible, 0u);
  EXPECT_EQ(r.feasible, feasible);
  ASSERT_FALSE(r.top.empty());
  EXPECT_DOUBLE_EQ(r.top.front().run_seconds, best);
  for (size_t i = 1; i < r.top.size(); ++i) EXPECT_LE(r.top[i - 1].objective, r.top[i].objective);
}

TEST(SweepEngine, SameResultsWithOneAndTwoThreads) {
  Scenario base = test::scenario(kMedium);
  auto axes = axes_of({{"training.global_batch", "64,128"}});
  SweepResult one = run(base, axes, true, 1);
  SweepResult two = run(base, axes, true, 2);
  ASSERT_EQ(one.total, two.total);
  EXPECT_EQ(one.feasible, two.feasible);
  EXPECT_EQ(one.out_of_memory, two.out_of_memory);
  EXPECT_EQ(one.indivisible, two.indivisible);
  ASSERT_EQ(one.top.size(), two.top.size());
  for (size_t i = 0; i < one.top.size(); ++i) EXPECT_EQ(one.top[i].index, two.top[i].index);
  ASSERT_EQ(one.pareto_cost.size(), two.pareto_cost.size());
  for (size_t i = 0; i < one.pareto_cost.size(); ++i) EXPECT_EQ(one.pareto_cost[i].index, two.pareto_cost[i].index);
  EXPECT_EQ(one.reasons, two.reasons);
}

TEST(SweepEngine, ParetoFrontsAreExactlyTheNonDominatedPoints) {
  Scenario base = test::scenario(kMedium);
  auto axes = axes_of({{"cluster.nodes", "1,2,4"}, {"parallel.tp", "1,2,4,8"}, {"parallel.zero", "0..2"}});
  SweepResult r = run(base, axes, false, 2, {}, true);
  std::vector<SweepPoint> feasible;
  for (const auto& p : r.all) {
    if (p.status == PointStatus::feasible) feasible.push_back(p);
  }
  ASSERT_GT(feasible.size(), 3u);
  auto dominated = [&](const SweepPoint& p, auto y) {
    for (const auto& q : feasible) {
      if (q.index == p.index) continue;
      if (q.run_seconds <= p.run_seconds && y(q) <= y(p) && (q.run_seconds < p.run_seconds || y(q) < y(p))) return true;
    }
    return false;
  };
  auto cost = [](const SweepPoint& p) { return p.cost; };
  auto gpus = [](const SweepPoint& p) { return static_cast<double>(p.gpus); };
  std::set<std::uint64_t> front_cost, front_gpus;
  for (const auto& p : r.pareto_cost) front_cost.insert(p.index);
  for (const auto& p : r.pareto_gpus) front_gpus.insert(p.index);
  for (const auto& p : feasible) {
    const bool tie_on_front = std::any_of(r.pareto_cost.begin(), r.pareto_cost.end(), [&](const SweepPoint& q) {
      return q.run_seconds == p.run_seconds && q.cost == p.cost;
    });
    if (front_cost.count(p.index)) {
      EXPECT_FALSE(dominated(p, cost));
    } else {
      EXPECT_TRUE(dominated(p, cost) || tie_on_front);
    }
    if (front_gpus.count(p.index)) {
      EXPECT_FALSE(dominated(p, gpus));
    }
  }
  // More GPUs buy time: the time-vs-GPUs front has more than one point here.
  EXPECT_GT(r.pareto_gpus.size(), 1u);
}

TEST(SweepEngine, RejectionAccountingAddsUp) {
  Scenario base = test::scenario(kMedium);
  auto axes = axes_of({{"parallel.tp", "1,2,3,4,8"}, {"parallel.pp", "1,2"}, {"cluster.nodes", "1,2,4"}});
  Constraints c;
  c.max_gpus = 16;
  SweepResult r = run(base, axes, false, 2, c);
  EXPECT_EQ(r.total, 5u * 2 * 3);
  EXPECT_EQ(r.feasible + r.out_of_memory + r.indivisible + r.constrained + r.no_progress, r.total);
  // tp = 3 divides neither the 32 heads nor the GPUs: 2 pp x 3 node counts.
  EXPECT_GE(r.indivisible, 6u);
  // 4 nodes = 32 GPUs exceed max_gpus 16 for every valid layout (tp 1,2,4,8 x pp 1,2).
  EXPECT_EQ(r.constrained, 8u);
  std::uint64_t reasons = 0;
  for (const auto& [k, v] : r.reasons) reasons += v;
  EXPECT_EQ(reasons, r.indivisible + r.constrained);
}

// Hand computation: 16 GPUs with a GPU MTBF of 1 h fail every 3600 / 16 = 225 s, less than the 600 s
// restart alone: no layout can make progress, whatever its memory. Such points are their own count,
// never feasible, never ranked, and never "nearest misses" of memory.
TEST(SweepEngine, PointsThatCannotMakeProgressAreCountedApart) {
  Scenario base = test::scenario(std::string(kMedium) + "costs: {failures: {gpu_mtbf: 1 h, restart: 10 min}}\n");
  auto axes = axes_of({{"parallel.tp", "1,2,4,8"}});
  SweepResult r = run(base, axes, false, 2, {}, true);
  EXPECT_EQ(r.total, 4u);
  EXPECT_EQ(r.feasible, 0u);
  EXPECT_EQ(r.no_progress + r.out_of_memory, r.total);
  EXPECT_GE(r.no_progress, 1u);
  EXPECT_TRUE(r.top.empty());
  for (const auto& p : r.nearest_misses) EXPECT_GT(p.memory, p.capacity);
  for (const auto& p : r.all) {
    if (p.memory <= p.capacity) {
      EXPECT_EQ(p.status, PointStatus::no_progress);
    }
  }
}

TEST(SweepEngine, PointScenarioReproducesThePoint) {
  Scenario base = test::scenario(kMedium);
  auto axes = axes_of({{"training.global_batch", "64,128"}, {"parallel.zero", "1,2"}});
  SweepBase b{"", base, profile_for(base)};
  SweepOptions opt;
  SweepResult r = run_sweep({b}, axes, true, Objective::time, {}, 5, opt);
  ASSERT_FALSE(r.top.empty());
  for (const auto& p : r.top) {
    Scenario s = point_scenario(b, axes, p);
    EXPECT_TRUE(check_scenario(s, true).empty());
    Plan plan = make_plan(s, b.profile);
    EXPECT_DOUBLE_EQ(plan.time.step.value, p.step);
    EXPECT_DOUBLE_EQ(plan.estimate.memory.total.value, p.memory);
  }
}

// zero and sequence_parallel left unsaid are the defaults of each point's own layout (resolve_layout), as
// `evaluate --set` gives them: under FSDP ZeRO-3 at pp 1 and ZeRO-2 at pp 2 (torchtitan), sequence
// parallelism on once tp > 1. Until 2026-12 every point kept the base's: the pp 2 points were rejected as
// ZeRO-3 pipelines, and tp 2 ran without sequence parallelism.
TEST(SweepEngine, UnsaidZeroAndSequenceParallelAreEachPointsDefaults) {
  const Scenario base = test::scenario(base_yaml_with(1, 1));
  ASSERT_EQ(base.parallel.zero, 3);
  const SweepResult r = run(base, axes_of({{"parallel.pp", "1,2"}, {"parallel.tp", "1,2"}}), false, 1, {}, true);
  ASSERT_EQ(r.all.size(), 4u);
  for (const SweepPoint& p : r.all) {
    EXPECT_EQ(p.status, PointStatus::feasible) << p.tp << " " << p.pp;
    EXPECT_EQ(p.zero, p.pp == 1 ? 3 : 2) << p.pp;
    EXPECT_EQ(p.sequence_parallel, p.tp > 1) << p.tp;
    const Scenario alone = test::scenario(base_yaml_with(p.tp, p.pp));
    EXPECT_DOUBLE_EQ(make_plan(alone, profile_for(alone)).time.step.value, p.step) << p.tp << " " << p.pp;
  }
}

// Megatron pads Llama 3's vocabulary of 128,256 by tp (128,256 at tp 1 and 2, 128,512 at 4, 129,024 at
// 8: docs/model.md §3), so the sweep's per-thread graphs differ by tp; every evaluated point must equal
// make_plan of its own scenario, whichever graph the thread built first.
TEST(SweepEngine, EveryPointUsesTheGraphOfItsTp) {
  Scenario base = test::scenario(kMedium);
  auto axes = axes_of({{"training.micro_batch", "1,2"}, {"parallel.tp", "8,1,4,2"}});
  SweepBase b{"", base, profile_for(base)};
  SweepOptions opt;
  opt.threads = 1;
  opt.keep_all = true;
  SweepResult r = run_sweep({b}, axes, false, Objective::time, {}, 5, opt);
  int checked = 0;
  for (const auto& p : r.all) {
    if (p.status != PointStatus::feasible && p.status != PointStatus::out_of_memory) continue;
    Scenario s = point_scenario(b, axes, p);
    Plan plan = make_plan(s, b.profile);
    EXPECT_DOUBLE_EQ(plan.time.step.value, p.step) << "tp " << s.parallel.tp;
    EXPECT_DOUBLE_EQ(plan.estimate.memory.total.value, p.memory) << "tp " << s.parallel.tp;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST(SweepCli, SimulateTopRescoresTheBestLayouts) {
  test::RunResult r = test::run_trainplan("sweep --grid parallel.pp=1,2,4 --top 3 --simulate-top 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t at = r.output.find("Re-scored with the step simulator (best 2)");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_NE(r.output.find("simulated [s]", at), std::string::npos);
}

// The table's last column ("other") is empty for a plain grid: no row may end in spaces.
TEST(SweepCli, TableRowsHaveNoTrailingSpaces) {
  test::RunResult r = test::run_trainplan("sweep --grid parallel.pp=1,2,4 --top 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  int rows = 0;
  for (std::string line; std::getline(lines, line); ++rows) {
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "row ends in a space: '" << line << "'";
  }
  EXPECT_GT(rows, 3);
}

TEST(SweepCli, NoFeasiblePointExitsNonZeroAndSaysWhy) {
  test::RunResult r = test::run_trainplan("sweep --grid parallel.tp=3,5 --grid parallel.pp=1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no feasible point"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("indivisible"), std::string::npos) << r.output;
}

TEST(SweepCli, MalformedGridIsAnInputError) {
  test::RunResult r = test::run_trainplan("sweep --grid parallel.tp=1..x");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("bad range"), std::string::npos) << r.output;
  r = test::run_trainplan("sweep --grid parallel.zero=5");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("ZeRO stage"), std::string::npos) << r.output;
  r = test::run_trainplan("sweep --grid model=llama9");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--grid: grid model: unknown model 'llama9'"), std::string::npos) << r.output;
}

// Before: every nearest miss said "feasible" in the JSON (its status was set after the copy), and the layout's
// recompute read "sel", which `--set parallel.recompute=sel` refuses. Oracle: the table's own heading (the
// misses are out of memory, memory above the usable) and the scenario reader, which takes the JSON's value back.
TEST(SweepCli, JsonPointsSayWhatTheyAreAndFeedBackIntoEvaluate) {
  const test::RunResult r = test::run_trainplan("sweep " + test::source_path("scenarios/examples/sweep-llama3.1-70b.yaml") +
                                                " --grid parallel.recompute=selective,full --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  ASSERT_FALSE(j["nearest_misses"].empty());
  for (const auto& p : j["nearest_misses"]) EXPECT_EQ(p["status"], "out_of_memory") << p.dump();
  std::set<std::string> recomputes;
  for (const auto& p : j["top"]) recomputes.insert(p["layout"]["recompute"].get<std::string>());
  for (const std::string& rc : recomputes) {
    EXPECT_TRUE(rc == "selective" || rc == "full") << rc;
    EXPECT_EQ(test::run_trainplan("evaluate --set parallel.recompute=" + rc).exit_code, 0) << rc;
  }
}

// Sequence parallelism is a layout choice the sweep varies: the table marks tp without it ("tp8-nosp") and the
// JSON says it, so two rows differing only there are told apart (they printed the same layout).
TEST(SweepCli, SequenceParallelismIsShown) {
  const test::RunResult table = test::run_trainplan("sweep --grid parallel.sequence_parallel=true,false");
  EXPECT_NE(table.output.find("tp8-nosp pp4"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("tp8 pp4"), std::string::npos) << table.output;
  const test::RunResult json = test::run_trainplan("sweep --grid parallel.sequence_parallel=true,false --format json");
  const nlohmann::json j = nlohmann::json::parse(json.output);
  ASSERT_FALSE(j["top"].empty());
  EXPECT_EQ(j["top"][0]["layout"]["sequence_parallel"], true);  // without it the default scenario does not fit
  EXPECT_EQ(j["nearest_misses"][0]["layout"]["sequence_parallel"], false);
}

TEST(SweepCli, SweepFileWorks) {
  test::RunResult r = test::run_trainplan("sweep " + test::source_path("scenarios/examples/sweep-llama3.1-70b.yaml") + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"pareto_time_cost\""), std::string::npos);
  EXPECT_NE(r.output.find("\"feasible\""), std::string::npos);
  // The table's title names the sweep file given (it named only its base scenario; a re-audit, 2026-12-01).
  const test::RunResult table = test::run_trainplan("sweep " + test::source_path("scenarios/examples/sweep-llama3.1-70b.yaml"));
  EXPECT_NE(table.output.find("Sweep of " + test::source_path("scenarios/examples/sweep-llama3.1-70b.yaml") + " (base "),
            std::string::npos) << table.output;
}

}  // namespace
}  // namespace tp
