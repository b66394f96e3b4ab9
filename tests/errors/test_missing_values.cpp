// Loader errors of issue 11 ("Numbers that are not numbers", "Messages"): quantities the time/cost model
// divides by must be known before use, nulls are not defaults, and an empty or comment-only file is
// blamed on the file. Oracles: the position of each culprit in the test's own text (errtest::at) and
// the field names of docs/scenario-reference.md.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "error_test_support.h"

namespace tp {
namespace {

using errtest::at;
using errtest::load_error;
using errtest::temp_path;
using errtest::write_file;
using errtest::Yaml;
using ::testing::HasSubstr;

// Issue case: `cluster: {preset: workstation-4x4090, nodes: 2}` (the preset has no inter-node link)
// gave an infinite step and a simulator that never returned.
TEST(MissingValues, MultiNodePresetWithoutInterNodeLink) {
  Yaml y;
  y.cluster = "{preset: workstation-4x4090, nodes: 2}";
  y.training = "{sequence_length: 4096, global_batch: 8, micro_batch: 1}";
  y.parallel = "{tp: 1, pp: 1}";
  const auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.field, "cluster.inter_node.bandwidth");
  EXPECT_THAT(f.what, HasSubstr("workstation-4x4090"));
  EXPECT_EQ(f.where.str(), at(y.str(), "{preset: workstation"));
}

// Issue case: an inline cluster with nodes > 1 and no inter_node.
TEST(MissingValues, InlineMultiNodeClusterWithoutInterNodeLink) {
  Yaml y;
  y.cluster = "{gpu: h100-sxm, nodes: 2, gpus_per_node: 8, intra_node: {bandwidth: 450 GB/s}}";
  y.parallel = "{tp: 2, pp: 2}";
  const auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.field, "cluster.inter_node.bandwidth");
  EXPECT_THAT(f.what, HasSubstr("inline cluster"));
}

// An inline node of several GPUs with no intra-node link and a GPU without NVLink or PCIe figures:
// zero bandwidth for every tp collective. (With the GPU's NVLink the collectives fall back to it.)
TEST(MissingValues, MultiGpuNodeWithoutIntraNodeLink) {
  Yaml with_nvlink;
  with_nvlink.cluster = "{gpu: h100-sxm, nodes: 1, gpus_per_node: 8}";
  EXPECT_FALSE(load_error(with_nvlink.str()).thrown) << load_error(with_nvlink.str()).what;
  Yaml y;
  y.cluster = "{gpu: {preset: h100-sxm, nvlink: 0 GB/s, pcie: 0 GB/s}, nodes: 1, gpus_per_node: 8}";
  y.parallel = "{tp: 2, pp: 2}";
  const auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.field, "cluster.intra_node.bandwidth");
}

// Zero bandwidths are out of range where they are given (and through --set).
TEST(MissingValues, ZeroBandwidthNamesTheKey) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 2, inter_node: {bandwidth: 0 GB/s}}";
  const auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.field, "cluster.inter_node.bandwidth");
  EXPECT_EQ(f.where.str(), at(y.str(), "0 GB/s"));
  const auto s = load_error(Yaml{}.str(), {"cluster.intra_node.bandwidth=0 GB/s"});
  ASSERT_TRUE(s.thrown);
  EXPECT_EQ(s.field, "cluster.intra_node.bandwidth");
  EXPECT_EQ(s.where.file, "--set");
}

// Issue case: `tp:`, `tp: ~`, `tp: null` silently meant "default".
TEST(MissingValues, NullValuesAreErrorsNotDefaults) {
  for (const std::string value : {"", " ~", " null", " Null"}) {
    Yaml y;
    y.extra = "costs:\n  gpu_hour:" + value + "\n";
    const std::string text = y.str();
    const auto f = load_error(text);
    ASSERT_TRUE(f.thrown) << "value '" << value << "'";
    EXPECT_EQ(f.field, "costs.gpu_hour") << value;
    EXPECT_THAT(f.what, HasSubstr("has no value")) << value;
    EXPECT_EQ(f.where.str(), at(text, "gpu_hour")) << value;
  }
  Yaml inline_null;
  inline_null.parallel = "{tp: , pp: 2}";
  const auto g = load_error(inline_null.str());
  ASSERT_TRUE(g.thrown);
  EXPECT_EQ(g.field, "parallel.tp");
}

// Issue case: `--set parallel.tp=` meant "default".
TEST(MissingValues, EmptySetValueIsAnError) {
  for (const std::string value : {"", "~", "null"}) {
    const auto f = load_error(Yaml{}.str(), {"parallel.tp=" + value});
    ASSERT_TRUE(f.thrown) << value;
    EXPECT_EQ(f.where.file, "--set");
    EXPECT_EQ(f.field, "parallel.tp");
    EXPECT_THAT(f.what, HasSubstr("has no value"));
    // No made-up example value (it suggested model=4 for a model): the key and a placeholder.
    EXPECT_THAT(f.what, HasSubstr("give one (parallel.tp=VALUE)"));
  }
}

// Quantities that multiply into run totals have upper bounds, so no total overflows to inf.
TEST(MissingValues, RunTotalFactorsAreBounded) {
  Yaml tokens;
  tokens.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, tokens: 1e300}";
  const auto t = load_error(tokens.str());
  ASSERT_TRUE(t.thrown);
  EXPECT_EQ(t.field, "training.tokens");
  Yaml price;
  price.extra = "costs: {gpu_hour: 1e300 USD}\n";
  const auto p = load_error(price.str());
  ASSERT_TRUE(p.thrown);
  EXPECT_EQ(p.field, "costs.gpu_hour");
}

// Issue case: on a 2-node workstation preset `simulate` never returned (the event engine ran at
// now = inf), nor did `evaluate --simulate` and `sweep --simulate-top`. Now each stops at the loader
// (a sweep rejects every point with the field as the reason: no feasible point, exit 2).
TEST(MissingValues, SimulatorsNeverSeeAMissingLink) {
  const std::string path = write_file("trainplan-two-workstations.yaml",
                                      "model: llama3.1-8b\ncluster: {preset: workstation-4x4090, nodes: 2}\n"
                                      "training: {global_batch: 8}\nparallel: {tp: 1, pp: 1}\n");
  for (const std::string& args : {"simulate '" + path + "'", "evaluate --simulate '" + path + "'"}) {
    const auto r = test::run_trainplan(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(path + ":2:10: cluster.inter_node.bandwidth: required")) << args;
  }
  const auto sweep = test::run_trainplan("sweep '" + path + "' --grid parallel.zero=1,2 --simulate-top 1");
  EXPECT_EQ(sweep.exit_code, 2) << sweep.output;
  EXPECT_THAT(sweep.output, HasSubstr("2  cluster.inter_node.bandwidth vs cluster.nodes"));
  std::filesystem::remove(path);
}

// Issue case: in a sweep, points without an inter-node link counted as feasible and ranked under
// "Best layouts" with step inf; the CSV held inf. Now they are rejected with the field as the reason.
TEST(MissingValues, SweepRejectsPointsWithoutALink) {
  const std::string path = write_file("trainplan-workstation.yaml",
                                      "model: gpt2-124m\ncluster: {preset: workstation-4x4090}\n"
                                      "training: {global_batch: 64}\nparallel: {tp: 1, pp: 1}\n");
  const std::string csv = temp_path("trainplan-link.csv");
  const auto r = test::run_trainplan("sweep '" + path + "' --grid cluster.nodes=1,2 --format json --csv '" + csv +
                                     "' --csv-all");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("points").at("feasible").get<int>(), 1);
  EXPECT_EQ(j.at("rejections").at("cluster.inter_node.bandwidth vs cluster.nodes").get<int>(), 1);
  for (const auto& p : j.at("top")) EXPECT_EQ(p.at("nodes").get<int>(), 1);
  std::ifstream in(csv);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("inf"), std::string::npos) << text;
  std::filesystem::remove(path);
  std::filesystem::remove(csv);
}

// An out-of-memory point whose job also cannot finish (a CLI audit, 2026-12-01) showed 0 s, 0 USD and 0 kWh in the
// CSV and the JSON's nearest misses: empty cells and nulls now, as for a point that fits and cannot finish.
// Hand computation: 64 GPUs at a GPU MTBF of 1 h fail every 56 s, under the 600 s restart.
TEST(MissingValues, AJobThatCannotFinishHasNoRunTimeWhateverItsStatus) {
  const std::string csv = temp_path("trainplan-no-finish.csv");
  const auto r = test::run_trainplan("sweep --grid parallel.tp=4,8 --grid 'costs.failures.gpu_mtbf=1 h,50000 h' "
                                     "--format json --csv '" + csv + "' --csv-all");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  int unfinished_misses = 0;
  for (const auto& p : j.at("nearest_misses")) {
    if (p.at("other").get<std::string>() != "costs.failures.gpu_mtbf=1 h") continue;
    ++unfinished_misses;
    EXPECT_TRUE(p.at("run_seconds").is_null()) << p;
    EXPECT_TRUE(p.at("cost_usd").is_null()) << p;
    EXPECT_TRUE(p.at("energy_kwh").is_null()) << p;
  }
  EXPECT_EQ(unfinished_misses, 1);
  std::ifstream in(csv);
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.find("out_of_memory") == std::string::npos || line.find("gpu_mtbf=1 h") == std::string::npos) continue;
    ++rows;
    EXPECT_NE(line.find(",,,\"costs.failures.gpu_mtbf=1 h\""), std::string::npos) << line;  // run, cost, energy empty
  }
  EXPECT_EQ(rows, 1);
  std::filesystem::remove(csv);
}

// Issue case: an empty file, a comment-only file or a directory said "error: --set: model: required".
TEST(MissingValues, EmptyCommentOnlyAndDirectoryNameTheFile) {
  const std::string empty = write_file("trainplan-empty.yaml", "");
  const std::string comments = write_file("trainplan-comments.yaml", "# nothing here\n\n# still nothing\n");
  const std::string dir = temp_path("trainplan-a-dir.yaml");
  std::filesystem::create_directories(dir);
  for (const std::string& path : {empty, comments, dir}) {
    for (const std::string& args : {"evaluate '" + path + "'", "simulate '" + path + "'",
                                   "sweep '" + path + "' --grid parallel.tp=1,2"}) {
      const auto r = test::run_trainplan(args);
      EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
      EXPECT_THAT(r.output, HasSubstr("error: " + path + ": ")) << args;
      EXPECT_THAT(r.output, ::testing::Not(HasSubstr("--set"))) << args;
    }
  }
  std::filesystem::remove(empty);
  std::filesystem::remove(comments);
  std::filesystem::remove(dir);
}

}  // namespace
}  // namespace tp
