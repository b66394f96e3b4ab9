// Time of one estimate() call (parameters, FLOPs, per-stage memory, verdict).
// Run: build/bench/bench_estimate
#include <benchmark/benchmark.h>

#include "estimate.h"
#include "scenario.h"

namespace {

void BM_EstimateDefault(benchmark::State& state) {
  const tp::Scenario s = tp::default_scenario();
  for (auto _ : state) benchmark::DoNotOptimize(tp::estimate(s));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateDefault);

// The same with a prebuilt op graph, as a sweep over layouts uses it.
void BM_EstimateSharedGraph(benchmark::State& state) {
  const tp::Scenario s = tp::default_scenario();
  const tp::OpGraph g = tp::build_op_graph(s.model, s.training, s.parallel.tp);
  for (auto _ : state) benchmark::DoNotOptimize(tp::estimate(s, g));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateSharedGraph);

// Llama 3.1 405B on 16,384 GPUs: 16 pipeline stages to account.
void BM_Estimate405B(benchmark::State& state) {
  const tp::Scenario s = tp::default_scenario({"model=llama3.1-405b", "cluster.nodes=2048", "parallel.pp=16",
                                               "training.global_batch=2048"});
  for (auto _ : state) benchmark::DoNotOptimize(tp::estimate(s));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Estimate405B);

}  // namespace

BENCHMARK_MAIN();
