// Sweep throughput: configuration evaluations per second (make_plan: memory + step time + run
// totals) and whole sweeps. Run: build/bench/bench_sweep
#include <benchmark/benchmark.h>

#include "mesh.h"
#include "plan.h"
#include "scenario.h"
#include "sweep.h"

namespace {

// One evaluation of the Llama 3.1 70B default scenario with a shared op graph, as the sweep does.
void BM_PlanLlama70B(benchmark::State& state) {
  const tp::Scenario s = tp::default_scenario();
  const tp::HardwareProfile hw = tp::profile_for(s);
  const tp::OpGraph g = tp::build_op_graph(s.model, s.training, s.parallel.tp);
  for (auto _ : state) benchmark::DoNotOptimize(tp::make_plan(s, g, hw));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PlanLlama70B);

tp::SweepResult sweep(const tp::Scenario& s, bool auto_layout, const std::vector<tp::FastAxis>& axes, int threads) {
  tp::SweepBase base{"", s, tp::profile_for(s)};
  tp::SweepOptions o;
  o.threads = threads;
  return tp::run_sweep({base}, axes, auto_layout, tp::Objective::time, {}, 10, o);
}

std::vector<tp::FastAxis> grid(const std::vector<std::pair<std::string, std::string>>& kv) {
  std::vector<tp::FastAxis> axes;
  for (const auto& [k, v] : kv) {
    tp::Axis a;
    a.key = k;
    a.values = tp::expand_values(v, {"bench", 0, 0}, k);
    axes.push_back(tp::make_fast_axis(a));
  }
  return axes;
}

// Llama 3.1 70B on 64..1024 H100s: an explicit grid, all threads (points/s = items/s).
void BM_SweepLlama70B(benchmark::State& state) {
  const tp::Scenario s = tp::default_scenario();
  auto axes = grid({{"parallel.tp", "1,2,4,8"}, {"parallel.pp", "1..16"}, {"training.micro_batch", "1,2,4"},
                    {"parallel.zero", "0..3"}, {"parallel.recompute", "none,selective,full"},
                    {"cluster.nodes", "8,16,32,64,128"}});
  std::uint64_t points = 0;
  for (auto _ : state) points += sweep(s, false, axes, static_cast<int>(state.range(0))).total;
  state.SetItemsProcessed(static_cast<int64_t>(points));
}
BENCHMARK(BM_SweepLlama70B)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same model on a grid where every point is a valid layout, so every point is a full
// make_plan evaluation (memory, step time, run totals): the evaluation rate.
void BM_SweepLlama70BAllValid(benchmark::State& state) {
  const tp::Scenario s = tp::default_scenario();
  auto axes = grid({{"parallel.tp", "1,2,4,8"}, {"parallel.pp", "2,4,8"}, {"parallel.zero", "0..2"},
                    {"parallel.recompute", "none,selective,full"}, {"cluster.nodes", "8,16,32"},
                    {"training.global_batch", "512,1024,2048,4096"}, {"training.micro_batch", "1,2"},
                    {"parallel.sequence_parallel", "true,false"}});
  std::uint64_t points = 0, evaluated = 0;
  for (auto _ : state) {
    tp::SweepResult r = sweep(s, false, axes, static_cast<int>(state.range(0)));
    points += r.total;
    evaluated += r.feasible + r.out_of_memory + r.constrained;
  }
  state.counters["evaluated_share"] = static_cast<double>(evaluated) / static_cast<double>(points);
  state.SetItemsProcessed(static_cast<int64_t>(evaluated));
}
BENCHMARK(BM_SweepLlama70BAllValid)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Llama 3.1 405B on 16,384 H100s: parallel: auto x global batch (>= 100,000 points), ranking and fronts.
void BM_Sweep405BAuto(benchmark::State& state) {
  const tp::Scenario s = tp::load_scenario_file(std::string(TRAINPLAN_SOURCE_DIR) + "/scenarios/examples/llama3.1-405b-16k-h100.yaml");
  auto axes = grid({{"training.global_batch", "512,1024,2048,4096,8192"}});
  std::uint64_t points = 0;
  for (auto _ : state) points = sweep(s, true, axes, 0).total;
  state.counters["points"] = static_cast<double>(points);
  state.SetItemsProcessed(static_cast<int64_t>(points) * state.iterations());
}
BENCHMARK(BM_Sweep405BAuto)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
