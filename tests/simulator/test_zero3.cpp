// ZeRO-3 / FSDP in the step simulator (simulator/zero3_graph.h, docs/model.md §19): the forward and
// backward run layer by layer, each gather unit gathered one unit ahead on the data-parallel
// communicator (one FIFO NCCL stream shared with the reduce-scatters), and the gradients of each unit
// reduce-scattered after its backward. Oracles: step times worked out by hand below from that model,
// event by event; for the sharded validation scenarios, the planner's bounded-overlap model (§15),
// which for one stage and per-layer prefetch describes the same overlap in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "commands.h"
#include "errors.h"
#include "scenario.h"
#include "sim_test_support.h"
#include "sharded_time.h"
#include "step_graph.h"

namespace tp {
namespace {

namespace fs = std::filesystem;

// One stage, one micro-batch per `m`, `layers` layers: forward f and backward b per layer and
// micro-batch, a gather of g and a reduce-scatter of r per layer, optimizer o. No recompute.
sim::StepInputs one_stage(int layers, int m, double f, double b, double g, double r, double o) {
  sim::StepInputs in;
  in.schedule = Schedule::one_f_one_b;
  in.micro_batches = m;
  in.zero = 3;
  in.per_unit = true;
  sim::StageInputs st;
  st.timing = simtest::timing(layers * f, layers * b);
  st.dp_gather = Seconds(layers * g);
  st.dp_reduce = Seconds(layers * r);
  st.optimizer = Seconds(o);
  st.layers = layers;
  in.stage.push_back(st);
  return in;
}

double step(const sim::StepInputs& in) { return sim::simulate(in, SimOptions{}).step_seconds.value; }

int count(const sim::StepGraph& g, sim::TaskKind kind) {
  int n = 0;
  for (const sim::Task& t : g.graph.tasks()) n += t.kind == kind ? 1 : 0;
  return n;
}

TEST(Zero3, GathersShorterThanComputeExposeOnlyTheFirstGatherAndTheLastReduce) {
  // 4 layers, f = 1, b = 2, g = 0.5, r = 0.25, o = 1. By hand (FIFO DP stream):
  //  gather F0 [0, 0.5] and F1 [0.5, 1] start at once (no unit before them); F0 [0.5, 1.5]; F1 [1.5, 2.5];
  //  gather F2 may start when F0 ends (one unit ahead): [1.5, 2]; F2 [2.5, 3.5]; gather F3 [2.5, 3]; F3 [3.5, 4.5];
  //  backward layers 3..0, each gather issued when the unit two places back ends, done before it is needed:
  //  B3 [4.5, 6.5], B2 [6.5, 8.5], B1 [8.5, 10.5], B0 [10.5, 12.5]; the reduce-scatter of layer 0
  //  [12.5, 12.75]; optimizer [12.75, 13.75].
  // step = g_first + 4 f + 4 b + r_last + o = 0.5 + 4 + 8 + 0.25 + 1 = 13.75.
  EXPECT_DOUBLE_EQ(step(one_stage(4, 1, 1, 2, 0.5, 0.25, 1)), 13.75);
}

TEST(Zero3, ShardGradOpGathersInTheForwardOnly) {
  // FSDP's SHARD_GRAD_OP (zero 2): the forward's gathered units are kept for the backward. 4 layers,
  // f = 1, b = 2, g = 0.5, r = 0.25, o = 1, as above: the forward is the same (gather F0 exposed, the
  // others prefetched); the backward gathers nothing, so B3..B0 run back to back [4.5, 12.5] and the
  // reduce-scatters hide behind them but the last [12.5, 12.75]; optimizer [12.75, 13.75]. Same step,
  // half the gathers: 4, not 8.
  sim::StepInputs in = one_stage(4, 1, 1, 2, 0.5, 0.25, 1);
  in.zero = 2;
  in.zero3.gathers_in_backward = false;
  EXPECT_DOUBLE_EQ(step(in), 13.75);
  const sim::StepGraph g = sim::build_step_graph(in);
  EXPECT_EQ(count(g, sim::TaskKind::zero3_gather_forward), 4);
  EXPECT_EQ(count(g, sim::TaskKind::zero3_gather_backward), 0);
  EXPECT_EQ(count(g, sim::TaskKind::dp_gather), 0);  // no gather after the optimizer either
  // Reduce-scatters longer than the backward pieces (r = 3 > b = 2): issued at B3..B0's ends (6.5, 8.5,
  // 10.5, 12.5) they run back to back from 6.5 to 18.5; the optimizer follows: 18.5 + 1 = 19.5
  // (= g + 4 f + b + 4 r + o).
  sim::StepInputs slow = one_stage(4, 1, 1, 2, 0.5, 3, 1);
  slow.zero = 2;
  slow.zero3.gathers_in_backward = false;
  EXPECT_DOUBLE_EQ(step(slow), 19.5);
}

TEST(Zero3, ShardGradOpWithoutTheSyncGathersInTheFirstMicroBatchOnly) {
  // 4 layers, 3 micro-batches, f = 1, b = 2, g = 1.5, r = 0.25, o = 0, the gradients synced on the last
  // micro-batch only. Micro-batch 0: gather F0 [0, 1.5], F0 [1.5, 2.5]; gather F1 [1.5, 3], F1 [3, 4];
  // gather F2 (issued at F0's end, the stream busy to 3) [3, 4.5], F2 [4.5, 5.5]; gather F3 [4.5, 6], F3
  // [6, 7]; B3..B0 [7, 15]. Micro-batches 1 and 2 gather nothing: [15, 27], [27, 39]; the last reduce-
  // scatter [39, 39.25]. The planner: 36 s of compute + 3.25 exposed (tests/unit/test_fsdp_shard_grad_op.cpp).
  sim::StepInputs in = one_stage(4, 3, 1, 2, 1.5, 0.25, 0);
  in.zero = 2;
  in.zero3.gathers_in_backward = false;
  in.zero3.gathers_every_micro_batch = false;
  EXPECT_DOUBLE_EQ(step(in), 39.25);
  EXPECT_EQ(count(sim::build_step_graph(in), sim::TaskKind::zero3_gather_forward), 4);
}

TEST(Zero3, GathersLongerThanComputeDominateTheStep) {
  // 4 layers, f = 1, b = 2, g = 3, r = 0.25, o = 1. The eight gathers run back to back on the DP
  // stream from t = 0; the reduce-scatters of layers 3 and 2 are issued (at B3's end, 17, and B2's, 20)
  // before the gathers of B1 and B0 and run in between: the stream is busy until 8 g + 2 r = 24.5,
  // when B0 can start; then B0 (2), the reduce-scatter of layer 0 (0.25) and the optimizer (1).
  // step = 8 g + 2 r + b + r + o = 24 + 0.5 + 2 + 0.25 + 1 = 27.75.
  EXPECT_DOUBLE_EQ(step(one_stage(4, 1, 1, 2, 3, 0.25, 1)), 27.75);
}

TEST(Zero3, WithoutParamGatherOverlapEveryGatherWaitsForTheUnitBefore) {
  // 2 layers, f = 1, b = 2, g = 0.5, r = 0, o = 0: each gather starts when the previous unit ends,
  // so all four are exposed: step = 4 g + 2 f + 2 b = 2 + 2 + 4 = 8.
  sim::StepInputs in = one_stage(2, 1, 1, 2, 0.5, 0, 0);
  in.overlap_param_gather = false;
  EXPECT_DOUBLE_EQ(step(in), 8.0);
}

TEST(Zero3, AUnitOverTheLiveParameterLimitStopsThePrefetchOfTheNextOne) {
  // One layer of two units, each half of the gather (1 s) and of the compute (forward 1 s, backward
  // 1 s per unit). Prefetching: gathers F u0 [0, 1] and F u1 [1, 2]; F u0 [1, 2], F u1 [2, 3];
  // gather B u1 (after F u0) [2, 3], B u1 [3, 4]; gather B u0 (after F u1) [3, 4], B u0 [4, 5]: 5 s.
  // Unit 0 blocks the prefetch (DeepSpeed's stage3_max_live_parameters): gather F u1 waits for F u0
  // [2, 3], F u1 [3, 4]; gather B u1 [3, 4] (after F u0), B u1 [4, 5]; gather B u0 [4, 5], B u0 [5, 6]: 6 s.
  sim::StepInputs in = one_stage(1, 1, 2, 2, 2, 0, 0);
  in.zero3.units = {sim::GatherUnit{0.5, 0.5, false, false}, sim::GatherUnit{0.5, 0.5, false, false}};
  EXPECT_DOUBLE_EQ(step(in), 5.0);
  in.zero3.units[0].blocks_prefetch = true;
  EXPECT_DOUBLE_EQ(step(in), 6.0);
}

TEST(Zero3, ReduceScatterOncePerStepOrAfterEveryMicroBatch) {
  // 3 layers, 2 units, m = 4: FSDP reduce-scatters each unit once (after the last micro-batch's
  // backward), DeepSpeed after every micro-batch, so its traffic is m times the one-pass reduce.
  sim::StepInputs in = one_stage(3, 4, 1, 2, 0.5, 0.25, 0);
  in.zero3.units = {sim::GatherUnit{0.25, 0.5, false, false}, sim::GatherUnit{0.75, 0.5, false, false}};
  auto reduce_total = [](const sim::StepGraph& g) {
    double sum = 0;
    for (const sim::Task& t : g.graph.tasks()) sum += t.kind == sim::TaskKind::dp_reduce ? t.duration : 0.0;
    return sum;
  };
  const sim::StepGraph once = sim::build_step_graph(in);
  EXPECT_EQ(count(once, sim::TaskKind::dp_reduce), 3 * 2);
  EXPECT_DOUBLE_EQ(reduce_total(once), 3 * 0.25);
  in.zero3.reduce_every_micro_batch = true;
  const sim::StepGraph every = sim::build_step_graph(in);
  EXPECT_EQ(count(every, sim::TaskKind::dp_reduce), 4 * 3 * 2);
  EXPECT_DOUBLE_EQ(reduce_total(every), 4 * 3 * 0.25);
}

TEST(Zero3, RecomputeRegathersOnlyWhereTheFrameworkDoes) {
  // 5 layers, 2 units, one micro-batch with full recompute. Gathers per pass: forward 5·2. FSDP: the
  // recompute runs inside the unit's backward on its gather (5·2 backward gathers in all). DeepSpeed:
  // the recompute forward gathers again (5·2) and the backward gathers the units not kept (unit 0
  // kept by the reuse distance: 5·1 more).
  sim::StepInputs in = one_stage(5, 1, 1, 2, 0.5, 0, 0);
  in.stage[0].timing.recompute = Seconds(5.0);
  in.zero3.units = {sim::GatherUnit{0.5, 0.5, false, false}, sim::GatherUnit{0.5, 0.5, false, false}};
  const sim::StepGraph fsdp = sim::build_step_graph(in);
  EXPECT_EQ(count(fsdp, sim::TaskKind::zero3_gather_forward), 10);
  EXPECT_EQ(count(fsdp, sim::TaskKind::zero3_gather_backward), 10);
  in.zero3.recompute_regathers = true;
  in.zero3.units[0].kept_for_backward = true;
  const sim::StepGraph deepspeed = sim::build_step_graph(in);
  EXPECT_EQ(count(deepspeed, sim::TaskKind::zero3_gather_forward), 10);
  EXPECT_EQ(count(deepspeed, sim::TaskKind::zero3_gather_backward), 10 + 5);
}

TEST(Zero3, ZeroBubbleDefersTheWeightGradientsAndTheirReduceScatters) {
  // zb-h1 on one stage runs F, B (input gradient), W. 2 layers, f = b = w = 1, g = 0.25, r = 0.5:
  //  gathers F0 [0, 0.25], F1 [0.25, 0.5]; F0 [0.25, 1.25], F1 [1.25, 2.25]; gather B1 (after F0)
  //  [1.25, 1.5], gather B0 (after F1) [2.25, 2.5]; B1 [2.25, 3.25], B0 [3.25, 4.25]; W1 [4.25, 5.25]
  //  and its reduce-scatter [5.25, 5.75] behind W0 [5.25, 6.25]; the last reduce-scatter [6.25, 6.75].
  // step = g + 2 f + 2 b + 2 w + r = 6.75.
  sim::StepInputs in = one_stage(2, 1, 1, 1, 0.25, 0.5, 0);
  in.schedule = Schedule::zb_h1;
  in.stage[0].timing.backward_weight = Seconds(2.0);
  EXPECT_DOUBLE_EQ(step(in), 6.75);
  const sim::StepGraph g = sim::build_step_graph(in);
  EXPECT_EQ(count(g, sim::TaskKind::backward_weight), 2);
  EXPECT_EQ(count(g, sim::TaskKind::dp_reduce), 2);
}

TEST(Zero3, TheTaskLimitCountsThePerLayerTasks) {
  // 80 layers, 3 units, m = 8, full recompute with regathers and a reduce after every micro-batch:
  // per (layer, unit, micro-batch) F, R, B, three gathers and a reduce-scatter = 7 tasks, 13,440 in all
  // plus the optimizer, far beyond the 10 per micro-batch of a graph without ZeRO-3.
  sim::StepInputs in = one_stage(80, 8, 1, 2, 0.5, 0.25, 1);
  in.stage[0].timing.recompute = Seconds(80.0);
  in.zero3.units.assign(3, sim::GatherUnit{1.0 / 3, 1.0 / 3, false, false});
  in.zero3.recompute_regathers = true;
  in.zero3.reduce_every_micro_batch = true;
  const sim::StepGraph g = sim::build_step_graph(in);
  EXPECT_EQ(g.graph.size(), 80u * 3 * 8 * 7 + 1);
  EXPECT_GE(sim::task_bound(in), g.graph.size());
  SimOptions o;
  o.max_tasks = g.graph.size() - 1;
  EXPECT_THROW(sim::simulate(in, o), InputError);
  o.max_tasks = sim::task_bound(in);
  EXPECT_NO_THROW(sim::simulate(in, o));
}

TEST(Zero3, PeakInFlightCountsMicroBatchesNotLayers) {
  // 1F1B on one stage holds one micro-batch at a time however many layer tasks it is split into.
  const SimResult r = sim::simulate(one_stage(6, 3, 1, 2, 0.5, 0.25, 0), SimOptions{});
  ASSERT_EQ(r.stages.size(), 1u);
  EXPECT_EQ(r.stages[0].peak_in_flight, 1.0);
}

TEST(Zero3, TheTraceShowsEveryLayersGather) {
  // 3 layers: one forward gather and one backward gather per layer, each named by its layer.
  const fs::path path = fs::path(::testing::TempDir()) / "zero3_trace.json";
  fs::remove(path);
  SimOptions o;
  o.trace = path.string();
  sim::simulate(one_stage(3, 1, 1, 2, 0.5, 0.25, 0), o);
  std::ifstream file(path);
  const nlohmann::json trace = nlohmann::json::parse(file);
  std::set<std::string> gathers;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "dp" && e["name"].get<std::string>().rfind("gather", 0) == 0) {
      gathers.insert(e["name"].get<std::string>());
    }
  }
  EXPECT_EQ(gathers, (std::set<std::string>{"gather-F s0 c0 mb0 l0 u0", "gather-F s0 c0 mb0 l1 u0", "gather-F s0 c0 mb0 l2 u0",
                                            "gather-B s0 c0 mb0 l0 u0", "gather-B s0 c0 mb0 l1 u0", "gather-B s0 c0 mb0 l2 u0"}));
}

TEST(Zero3, PlannerCountsTheReduceScattersSharingTheBackwardGathersStream) {
  // FSDP, one stage, 10 layers, m = 2: f = 2, b = 3, g = 2.4, r = 1.2 per layer (gathers longer than
  // a layer's forward; with the reduce-scatter, longer than its backward too). By hand, event by event:
  //  mb0 forward: gather F0 [0, 2.4] exposed; each later gather is issued when the layer two back ends
  //   and the stream runs them back to back: F l starts at 2.4 (l + 1), 9 x 0.4 s waited; gather B9
  //   (issued at F8's end) follows gather F9 and ends 0.4 s after F9: 2.4 + 3.6 + 0.4 = 6.4 s;
  //  mb0 backward (no reduce-scatter, FSDP reduces the last micro-batch only): 2.4 < 3, no wait;
  //  mb1: its F0 gather hides behind B0 of mb0; forward 9 x 0.4 + 0.4 as above = 4 s;
  //  mb1 backward: B9 runs, then per layer the stream carries the reduce-scatter of the layer two back
  //   (issued first) and a gather: B8 waits nothing (its window holds no reduce-scatter yet), B7 ... B0
  //   wait 1.2 + 2.4 - 3 = 0.6 s each: 4.8 s; the last reduce-scatter 1.2 s after B0.
  // Simulated: 2 x (20 + 30) + 6.4 + 4 + 4.8 + 1.2 = 116.4 s.
  // The planner (§15), by hand: first gather min(2.4, 2) = 2 beyond the forward excess it counts,
  // forward excess 2 x 10 x 0.4 = 8, reducing backward 10 x (2.4 + 1.2 - 3) = 6, last reduce-scatter
  // 1.2: 100 + 17.2 = 117.2 s; without the reduce-scatters in the backward gathers' windows it was the
  // whole-step bound 2 x 2 x 24 + 12 - 100 = 8: 108 s, 7 % under. What remains (+0.7 %) is at the edges
  // of the passes: the first reducing layer and the gather after the last backward that does not
  // happen (+1.2 s), and the transition gathers that overlap a forward layer, not a backward (-0.4 s).
  EXPECT_NEAR(step(one_stage(10, 2, 2, 3, 2.4, 1.2, 0)), 116.4, 1e-9);
  Zero3Inputs in;
  in.micro_batches = 2;
  in.layers = 10;
  in.gather_pass = 24;
  in.reduce = 12;
  in.forward = 20;
  in.backward = 30;
  in.whole_layers = true;
  in.live_limit = std::numeric_limits<double>::infinity();
  EXPECT_NEAR(2 * (20 + 30) + zero3_exposed(in, {}), 117.2, 1e-9);
}

// The sharded validation runs under ZeRO-3 (scenarios/validation/sharded/index.yaml): the simulated
// step is at least the lower bound and within 0.01 % of the planner's: for one stage §15's bounded
// overlap, per layer and per module, with the ends of the step and the recompute's waits behind the
// previous layer's reduce-scatter, describes the same overlap (largest difference 0.004 %, the
// DeepSpeed 530B runs). Before the per-layer split the simulator gathered a whole stage before its
// first forward: +27 % on fmsfsdp-llama2-7b-96xh100; before the planner counted the ends of the step,
// +1.6 % there (FSDP: the first unit's gather and the last unit's reduce-scatter, 2 x 5.3 ms against
// one gradient bucket's 0.3 ms) and +1.4 % on deepspeed-azure-1t (the recompute's qkv gather behind the
// previous layer's qkv reduce-scatter, 128 x 36 ms).
TEST(Zero3, ShardedValidationRunsAgreeWithThePlanner) {
  const std::string dir = test::source_path("scenarios/validation/sharded");
  int runs = 0;
  for (const ValidationRow& row : validation_rows(dir)) {
    const Scenario s = load_scenario_file(dir + "/" + row.scenario);
    if (s.parallel.zero < 3) continue;
    const Plan p = make_plan(s, profile_for(s));
    const SimResult r = simulate_step(s, p, SimOptions{});
    const double diff = r.step_seconds / r.analytic_step_seconds - 1.0;
    std::printf("%-52s analytic %9.3f s simulated %9.3f s %+8.4f%%\n", row.scenario.c_str(), r.analytic_step_seconds.value,
                r.step_seconds.value, 100 * diff);
    EXPECT_GE(r.step_seconds.value, r.lower_bound.value * (1 - 1e-12)) << row.scenario;
    // FSDP reduce-scatters after every micro-batch's backward and waits for them at its end
    // (FrameworkRules::waits_for_reduce_after_backward): each pass's last reduce-scatter is exposed, in both.
    // Before the wait the simulator let it run into micro-batch k + 1's first gathers and the planner did
    // not (AutoModel 70B, 4 micro-batches: +0.13 %; llm-foundry MPT-3B, 8 micro-batches: +0.14 %).
    EXPECT_LE(std::fabs(diff), 1e-4) << row.scenario;
    for (const SimStage& st : r.stages) EXPECT_EQ(st.peak_in_flight, st.planner_in_flight) << row.scenario;
    ++runs;
  }
  EXPECT_GE(runs, 30);
}

}  // namespace
}  // namespace tp

namespace tp {
namespace {

// Variations of five sharded runs where gathers and reduce-scatters outlast compute windows (smaller
// micro-batches, slower inter-node links, the other framework's rules): the planner's closed form
// (§15) against the simulator as the check. Before the backward gathers' windows held the
// reduce-scatter issued just before them, deepspeed-azure-175b at micro-batch 2 was 14.3 % under the
// simulated step and fmsfsdp-llama2-7b-96xh100 at micro-batch 1 5.6 %; the remaining edges of the
// passes (docs/model.md §19) kept every variation within 3 % (largest 2.4 %, DeepSpeed 175B at
// micro-batch 2 over 25 Gbit/s links, the planner above the simulation). Since DeepSpeed's blocking
// gradient copy holds the backward on each reduce-scatter (planner/framework_rules.h,
// host_gradient_copy_holds_backward), DeepSpeed 175B at micro-batch 1 (32 micro-batches, 240 s of its
// 363 s step exposed data-parallel traffic) simulates 3.2 % under the planner: the simulator's gathers
// queued ahead of each reduce-scatter hide a little more than the closed form's per-piece windows. Bound 3.5 %.
TEST(Zero3, CommunicationHeavyVariationsAgreeWithThePlanner) {
  const std::string dir = test::source_path("scenarios/validation/sharded/");
  int runs = 0;
  double worst = 0;
  for (const char* run : {"fmsfsdp-llama2-7b-96xh100", "llmfoundry-h100-mpt7b-s2048-g8", "fmsfsdp-llama2-70b-128xa100",
                          "deepspeed-azure-175b-256xa100-mbs32-s512", "deepspeed-azure-530b-512xa100-mbs8-s1024"}) {
    for (const char* framework : {"fsdp", "deepspeed"}) {
      for (const char* micro_batch : {"1", "2"}) {
        for (const char* link : {"", "25 Gbit/s"}) {
          std::vector<std::string> sets = {std::string("training.framework=") + framework,
                                           std::string("training.micro_batch=") + micro_batch};
          if (*link != '\0') sets.push_back(std::string("cluster.inter_node.bandwidth=") + link);
          Scenario s;
          try {
            s = load_scenario_file(dir + run + ".yaml", sets);
          } catch (const InputError&) {
            continue;  // a layout the framework's rules reject (e.g. no FSDP offload of the optimizer)
          }
          const Plan p = make_plan(s, profile_for(s));
          const SimResult r = simulate_step(s, p, SimOptions{});
          const double diff = r.step_seconds / r.analytic_step_seconds - 1.0;
          worst = std::max(worst, std::fabs(diff));
          EXPECT_LE(std::fabs(diff), 0.035) << run << " " << framework << " micro-batch " << micro_batch << " " << link;
          ++runs;
        }
      }
    }
  }
  std::printf("%d variations, largest difference %.2f%%\n", runs, 100 * worst);
  EXPECT_GE(runs, 20);
}

}  // namespace
}  // namespace tp

namespace tp {
namespace {

// memory.fsdp_backward_prefetch (docs/model.md §15): the simulator issues each backward gather as the
// mode says (pre: prefetched; post: when the backward piece before it ends, ahead of that piece's
// reduce-scatter on the same communicator; none: behind that reduce-scatter) and the planner's closed
// form must describe the same step. Whole-layer units (fms-fsdp, llm-foundry) and submodule units under
// full recompute (the PyTorch FSDP blog's 175B). Largest difference today 0.5 %: the first backward
// gather of each micro-batch follows a forward piece, which the planner's whole-layer rule does not
// single out.
TEST(Zero3, FsdpBackwardPrefetchModesAgreeWithThePlanner) {
  const std::string dir = test::source_path("scenarios/validation/sharded/");
  double worst = 0;
  for (const char* run : {"fmsfsdp-llama2-7b-96xh100", "llmfoundry-h100-mpt7b-s2048-g8",
                          "pytorch-fsdp-blog-gpt175b-128xa100-40gb"}) {
    for (const char* mode : {"pre", "post", "none"}) {
      for (const char* recompute : {"none", "full"}) {
        const Scenario s = load_scenario_file(dir + run + ".yaml", {std::string("memory.fsdp_backward_prefetch=") + mode,
                                                                    std::string("parallel.recompute=") + recompute});
        const Plan p = make_plan(s, profile_for(s));
        const SimResult r = simulate_step(s, p, SimOptions{});
        const double diff = r.step_seconds / r.analytic_step_seconds - 1.0;
        worst = std::max(worst, std::fabs(diff));
        EXPECT_GE(r.step_seconds.value, r.lower_bound.value * (1 - 1e-12)) << run << " " << mode;
        EXPECT_LE(std::fabs(diff), 0.01) << run << " " << mode << " recompute " << recompute;
      }
    }
  }
  std::printf("largest difference %.2f%%\n", 100 * worst);
}

// With tensor parallelism each layer's exposed TP collectives run after the layer's pieces, so the next
// layer's gather (on the data-parallel link) runs beside them, as the planner's window counts the forward
// and backward with their exposed collectives (§15). Lumped at the end of each pass, as before
// 2026-11-28, the gathers had only the compute pieces to hide behind: Llama 3.1 8B, tp 8 × dp 32, ZeRO-3,
// 2 micro-batches, was 10.9 % over the planner (now within 1 %). Oracle: the planner; and by count, one
// collective task per layer, pass and micro-batch.
TEST(Zero3, TensorParallelCollectivesRunLayerByLayerBesideTheGathers) {
  const Scenario s = test::scenario(
      "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 32}\n"
      "training: {framework: fsdp, sequence_length: 4096, micro_batch: 1, global_batch: 64}\n"
      "parallel: {tp: 8, pp: 1, dp: 32, zero: 3, recompute: selective, sequence_parallel: true}\n");
  const Plan p = make_plan(s, profile_for(s));
  const sim::StepInputs in = sim::step_inputs(s, p);
  const sim::StepGraph g = sim::build_step_graph(in);
  const int per_pass = in.stage[0].layers * in.micro_batches;
  EXPECT_EQ(count(g, sim::TaskKind::collective_forward), per_pass);
  EXPECT_EQ(count(g, sim::TaskKind::collective_backward), per_pass);
  const SimResult r = simulate_step(s, p, SimOptions{});
  EXPECT_NEAR(r.step_seconds.value, r.analytic_step_seconds.value, 0.02 * r.analytic_step_seconds.value);
}

}  // namespace
}  // namespace tp
