// The Chrome trace: valid JSON, one complete event per task, tracks per stage and link named by
// metadata, tasks named by kind, stage, chunk and micro-batch, and spans that reproduce the step.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "sim_test_support.h"

namespace tp {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);  // throws on invalid JSON
}

struct Traced {
  SimResult result;
  nlohmann::json trace;
};

Traced traced(const Scenario& s, const Plan& p, const std::string& file) {
  const fs::path path = fs::path(::testing::TempDir()) / file;
  fs::remove(path);
  SimOptions o;
  o.trace = path.string();
  Traced t{simulate_step(s, p, o), {}};
  EXPECT_EQ(t.result.trace_path, path.string());
  t.trace = read_json(path);
  return t;
}

TEST(Trace, OneEventPerTaskAndSpansReproduceTheStep) {
  // A realistic scenario: TP collectives, p2p, DP buckets, recompute, interleaving.
  const Scenario s = test::scenario(
      "model: llama3-70b\ncluster: {preset: dgx-h100, nodes: 8}\n"
      "training: {sequence_length: 4096, global_batch: 64, micro_batch: 1}\n"
      "parallel: {tp: 8, pp: 4, schedule: interleaved, vpp: 2, zero: 1, sequence_parallel: true, recompute: selective}\n");
  const Plan p = make_plan(s, profile_for(s));
  const Traced t = traced(s, p, "trainplan-sim-trace.json");
  const auto& events = t.trace.at("traceEvents");
  std::size_t complete = 0;
  double first = 1e300, last = 0;
  std::set<std::string> names;
  std::map<int, std::string> tracks;
  const std::regex name_re(R"(^(F|B|W|R|comm-F|comm-B|send-F|send-B|reduce|gather|gather-F|gather-B|sp-grad-sync|grad-sync|overlap-slowdown|optimizer) s\d+( c\d+)?( mb\d+)?( b\d+)?$)");
  for (const auto& e : events) {
    if (e.at("ph") == "M") {
      if (e.at("name") == "thread_name") tracks[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
      continue;
    }
    ASSERT_EQ(e.at("ph"), "X");
    ++complete;
    const std::string name = e.at("name").get<std::string>();
    EXPECT_TRUE(std::regex_match(name, name_re)) << name;
    EXPECT_TRUE(names.insert(name).second) << "duplicate task name " << name;
    const double ts = e.at("ts").get<double>(), dur = e.at("dur").get<double>();
    EXPECT_GE(dur, 0.0);
    first = std::min(first, ts);
    last = std::max(last, ts + dur);
    EXPECT_TRUE(tracks.count(e.at("tid").get<int>())) << "event on an unnamed track: " << name;
  }
  EXPECT_EQ(complete, t.result.tasks);
  EXPECT_EQ(first, 0.0);
  EXPECT_NEAR((last - first) * 1e-6, t.result.step_seconds.value, 1e-9 * t.result.step_seconds.value);
  // Tasks named by kind, stage, chunk and micro-batch; one track per stage and link.
  EXPECT_TRUE(names.count("F s3 c1 mb15"));
  EXPECT_TRUE(names.count("B s0 c0 mb0"));
  EXPECT_TRUE(names.count("send-F s3 c0 mb0"));  // last stage, chunk 0 -> stage 0, chunk 1
  EXPECT_TRUE(names.count("reduce s0 c0 b0"));
  std::set<std::string> track_names;
  for (const auto& [tid, n] : tracks) track_names.insert(n);
  for (int st = 0; st < 4; ++st) {
    EXPECT_TRUE(track_names.count("stage " + std::to_string(st) + " compute"));
    EXPECT_TRUE(track_names.count("stage " + std::to_string(st) + " TP/CP/EP collectives"));
    EXPECT_TRUE(track_names.count("stage " + std::to_string(st) + " link: pipeline p2p"));
    EXPECT_TRUE(track_names.count("stage " + std::to_string(st) + " link: data-parallel"));
  }
}

TEST(Trace, ComputeTrackOfAStageNeverOverlaps) {
  const Scenario s = simtest::pipeline(4, 8, "zb-h1");
  const Traced t = traced(s, simtest::plan_with(s, simtest::uniform(4, simtest::timing(1, 2, 1))), "trainplan-sim-zb.json");
  std::map<int, std::vector<std::pair<double, double>>> spans;
  for (const auto& e : t.trace.at("traceEvents")) {
    if (e.at("ph") == "X") spans[e.at("tid").get<int>()].emplace_back(e.at("ts").get<double>(), e.at("ts").get<double>() + e.at("dur").get<double>());
  }
  EXPECT_EQ(spans.size(), 4u);  // compute only: no communication in this plan
  for (auto& [tid, v] : spans) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i - 1].second, v[i].first + 1e-9) << "track " << tid;
  }
}

TEST(Trace, UnwritablePathThrowsNamingItAndLeavesNothing) {
  const fs::path dir = fs::path(::testing::TempDir()) / "trainplan-sim-no-such-dir";
  fs::remove_all(dir);
  const Scenario s = simtest::pipeline(2, 4, "1f1b");
  const Plan p = simtest::plan_with(s, simtest::uniform(2, simtest::timing(1, 2)));
  SimOptions o;
  o.trace = (dir / "trace.json").string();
  try {
    simulate_step(s, p, o);
    FAIL() << "no error for " << o.trace;
  } catch (const IoError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(o.trace));
  }
  EXPECT_FALSE(fs::exists(dir));
  // A directory where the file should go: the temporary file is removed again.
  const fs::path parent = fs::path(::testing::TempDir()) / "trainplan-sim-parent";
  fs::remove_all(parent);
  fs::create_directories(parent / "taken.json");
  o.trace = (parent / "taken.json").string();
  EXPECT_THROW(simulate_step(s, p, o), IoError);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(parent)) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "taken.json");
  }
  EXPECT_EQ(entries, 1u);
  fs::remove_all(parent);
}

}  // namespace
}  // namespace tp
