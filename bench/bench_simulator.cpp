// The step simulator's speed: one simulated step of Llama 3.1 405B on 16,384 H100 (TP 8, PP 16,
// DP 128; scenarios/examples/llama3.1-405b-16k-h100.yaml) under 1F1B, ZB-H1 and interleaved 1F1B,
// from the Plan to the SimResult (graph, validation, execution, analysis); and the core's rate in
// events per second (engine runs on a prebuilt graph, and the bare event queue).
// Interleaving the 126 layers on 16 stages needs every stage divisible by vpp: vpp 2 with
// layers_per_stage [6, 8 x 14, 8] (first stage lighter: it holds the embedding).
// Run: build/bench/bench_simulator
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine.h"
#include "event_queue.h"
#include "scenario.h"
#include "simulate.h"
#include "step_graph.h"

namespace {

const std::string k405B = std::string(TRAINPLAN_SOURCE_DIR) + "/scenarios/examples/llama3.1-405b-16k-h100.yaml";
const std::string kInterleaved = "parallel.layers_per_stage=[6,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8]";

struct Case {
  tp::Scenario s;
  tp::Plan p;
};

Case case_405b(std::vector<std::string> sets, std::int64_t global_batch) {
  sets.push_back("training.global_batch=" + std::to_string(global_batch));  // m = global_batch / 128
  Case c{tp::load_scenario_file(k405B, sets), {}};
  c.p = tp::make_plan(c.s, tp::profile_for(c.s));
  return c;
}

void simulate_case(benchmark::State& state, const Case& c) {
  std::uint64_t events = 0;
  for (auto _ : state) {
    const tp::SimResult r = tp::simulate_step(c.s, c.p, tp::SimOptions{});
    events += r.events;
    benchmark::DoNotOptimize(r.step_seconds);
  }
  state.counters["micro_batches"] = static_cast<double>(c.p.estimate.micro_batches);
  state.counters["events_per_second"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

void BM_Simulate405B_1F1B(benchmark::State& state) {
  simulate_case(state, case_405b({}, state.range(0)));
}
BENCHMARK(BM_Simulate405B_1F1B)->Arg(2048)->Arg(8192)->Unit(benchmark::kMillisecond);

// The same step with its Chrome trace written (streamed event by event since 2026-12-01; built as one JSON
// tree before, 16 s and 4.1 GB for 1.28 M tasks through the CLI).
void BM_Simulate405B_1F1BWithTrace(benchmark::State& state) {
  const Case c = case_405b({}, state.range(0));
  tp::SimOptions o;
  o.trace = (std::filesystem::temp_directory_path() / "trainplan-bench-trace.json").string();
  for (auto _ : state) benchmark::DoNotOptimize(tp::simulate_step(c.s, c.p, o).step_seconds);
}
BENCHMARK(BM_Simulate405B_1F1BWithTrace)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_Simulate405B_ZbH1(benchmark::State& state) {
  simulate_case(state, case_405b({"parallel.schedule=zb-h1"}, state.range(0)));
}
BENCHMARK(BM_Simulate405B_ZbH1)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_Simulate405B_Interleaved(benchmark::State& state) {
  simulate_case(state, case_405b({"parallel.schedule=interleaved", "parallel.vpp=2", kInterleaved}, state.range(0)));
}
BENCHMARK(BM_Simulate405B_Interleaved)->Arg(2048)->Arg(8192)->Unit(benchmark::kMillisecond);

// The core: the engine alone on a prebuilt graph (interleaved 405B), events per second.
void BM_EngineRun405B_Interleaved(benchmark::State& state) {
  const Case c = case_405b({"parallel.schedule=interleaved", "parallel.vpp=2", kInterleaved}, state.range(0));
  const tp::sim::StepGraph g = tp::sim::build_step_graph(tp::sim::step_inputs(c.s, c.p));
  const tp::sim::CompiledGraph cg = tp::sim::compile(g.graph, tp::sim::LinkSharing::fair);
  tp::sim::Engine engine(cg);
  std::uint64_t events = 0;
  for (auto _ : state) {
    const tp::sim::Execution& x = engine.run(cg.duration);
    events += x.events;
    benchmark::DoNotOptimize(x.makespan);
  }
  state.counters["tasks"] = static_cast<double>(cg.tasks);
  state.counters["events_per_second"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineRun405B_Interleaved)->Arg(2048)->Arg(131072)->Unit(benchmark::kMillisecond);

// The bare event queue in the "hold" model: n pending events; each step pops the earliest and
// pushes one a pseudo-random time later.
void BM_EventQueueHold(benchmark::State& state) {
  tp::sim::EventQueue<std::uint64_t> q;
  std::uint64_t x = 12345;
  auto next = [&x] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(x >> 11) * 0x1.0p-53;
  };
  for (std::int64_t i = 0; i < state.range(0); ++i) q.push(next(), static_cast<std::uint64_t>(i));
  for (auto _ : state) {
    const auto e = q.pop();
    q.push(e.time + next(), e.payload);
  }
  state.counters["events_per_second"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventQueueHold)->Arg(64)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
