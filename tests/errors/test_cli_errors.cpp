// The trainplan binary: library errors become exit code 1 with the message on stderr; a valid
// run exits 0; `--format json` prints the public JSON contract (DESIGN.md, "Output", "CLI").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "error_test_support.h"
#include "test_support.h"

namespace tp {
namespace {

using ::testing::HasSubstr;

TEST(CliErrors, MissingScenarioFileExitsOneAndNamesIt) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "trainplan-no-such-dir" / "nonexistent.yaml").string();
  test::RunResult r = test::run_trainplan("evaluate '" + path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: "));
  EXPECT_THAT(r.output, HasSubstr(path));
}

TEST(CliErrors, UnknownSetKeyExitsOneWithHint) {
  test::RunResult r = test::run_trainplan("evaluate --set parallel.tpp=2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--set"));
  EXPECT_THAT(r.output, HasSubstr("parallel.tpp"));
  EXPECT_THAT(r.output, HasSubstr("did you mean 'tp'"));
}

// A CLI audit (2026-12-01): `sweep --grid nonexist.key=1,2` blamed --set; `--set parallel.recompute.every=4`
// over the scalar `recompute: none` became {preset: none, every: 4} and was refused for a key the user never
// wrote. Only the catalog-valued sections (model, cluster, cluster.gpu) keep a scalar as their preset.
TEST(CliErrors, GridAndNestedSetKeysAreTheUsers) {
  const test::RunResult grid = test::run_trainplan("sweep --grid nonexist.key=1,2");
  EXPECT_EQ(grid.exit_code, 1) << grid.output;
  EXPECT_THAT(grid.output, HasSubstr("error: --grid: grid nonexist: unknown key"));
  const test::RunResult nested = test::run_trainplan("evaluate --set parallel.recompute.every=4");
  EXPECT_EQ(nested.exit_code, 0) << nested.output;
  EXPECT_THAT(nested.output, HasSubstr("recompute every 4"));
  const test::RunResult mapping = test::run_trainplan("evaluate --set model.layers.x=4");  // said "got 'a non-scalar'"
  EXPECT_THAT(mapping.output, HasSubstr("model.layers: expected an integer, got a list or mapping"));
  const test::RunResult preset = test::run_trainplan("evaluate --set model.layers=40");
  EXPECT_EQ(preset.exit_code, 0) << preset.output;
  EXPECT_THAT(preset.output, HasSubstr("Llama 3.1 70B"));
  EXPECT_THAT(preset.output, HasSubstr("40 layers"));
}

TEST(CliErrors, MalformedSetExitsOne) {
  test::RunResult r = test::run_trainplan("evaluate --set parallel.tp");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("expected key=value"));
}

TEST(CliErrors, ContradictorySetExitsOneNamingBothFields) {
  test::RunResult r = test::run_trainplan("evaluate --set parallel.tp=3");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("parallel.tp"));
  EXPECT_THAT(r.output, HasSubstr("cluster.nodes"));
}

// training.fp8_recipe without precision fp8: exit 1, the file, line, column and key on stderr.
TEST(CliErrors, Fp8RecipeWithoutFp8ExitsOneNamingFileLineAndKey) {
  const std::string path =
      errtest::write_file("trainplan-cli-fp8-recipe.yaml",
                          "name: t\n"
                          "model: llama3.1-8b\n"
                          "cluster: {preset: dgx-h100, nodes: 1}\n"
                          "training: {sequence_length: 4096, global_batch: 64, precision: bf16, fp8_recipe: current}\n"
                          "parallel: {tp: 2, pp: 2}\n");
  test::RunResult r = test::run_trainplan("evaluate '" + path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // line 4; "training: {sequence_length: 4096, global_batch: 64, precision: bf16, fp8_recipe: " is 81
  // characters, so "current" starts at column 82.
  EXPECT_THAT(r.output, HasSubstr(path + ":4:82: training.fp8_recipe: "));
  EXPECT_THAT(r.output, HasSubstr("precision: fp8"));
}

TEST(CliErrors, ScenarioFileErrorShowsFileLineColumn) {
  const std::string path = errtest::write_file("trainplan-cli-bad.yaml",
                                               "name: t\n"
                                               "model: llama3.1-8b\n"
                                               "cluster: {preset: dgx-h100, nodes: 1}\n"
                                               "training: {sequence_length: 4096, global_batch: 64, micro_batch: 1}\n"
                                               "parallel: {tp: 2, pp: 2, schedule: 1f1c}\n");
  test::RunResult r = test::run_trainplan("evaluate '" + path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(path + ":5:36: parallel.schedule: "));
  EXPECT_THAT(r.output, HasSubstr("did you mean '1f1b'"));
  std::filesystem::remove(path);
}

// The error tests' base scenario (errtest::Yaml: llama3.1-8b on one DGX H100, tp 2, pp 2) from a file.
TEST(CliErrors, ValidScenarioFileExitsZero) {
  const std::string path = errtest::write_file("trainplan-cli-good.yaml", errtest::Yaml{}.str());
  test::RunResult r = test::run_trainplan("evaluate '" + path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("error")));
  std::filesystem::remove(path);
}

TEST(CliErrors, DefaultScenarioExitsZero) {
  test::RunResult r = test::run_trainplan("evaluate");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(r.output.empty());
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("error")));
}

TEST(CliErrors, UnknownFormatIsAUsageError) {
  test::RunResult r = test::run_trainplan("evaluate --format xml");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.exit_code, 70) << r.output;  // not an internal error
}

TEST(CliErrors, JsonOutputParsesAndHasTheContractKeys) {
  test::RunResult r = test::run_trainplan("evaluate --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.output)) << r.output;
  ASSERT_TRUE(j.is_object());
  ASSERT_TRUE(j.contains("feasible"));
  EXPECT_TRUE(j.at("feasible").is_boolean());
  ASSERT_TRUE(j.contains("parameters"));
  ASSERT_TRUE(j.at("parameters").contains("total"));
  EXPECT_TRUE(j.at("parameters").at("total").is_number());
  // The default scenario trains Llama 3.1 70B: 70,553,706,496 parameters (models.yaml, published), and
  // Megatron at tp 8 pads its vocabulary of 128,256 to 129,024 (128 x 8 x 126): 2 x 768 x 8192 more in
  // the untied embedding and output layer.
  EXPECT_EQ(j.at("parameters").at("total").get<double>(), 70553706496.0 + 2.0 * 768 * 8192);
  ASSERT_TRUE(j.contains("memory"));
  ASSERT_TRUE(j.at("memory").contains("per_gpu"));
  ASSERT_TRUE(j.at("memory").at("per_gpu").contains("total"));
  EXPECT_TRUE(j.at("memory").at("per_gpu").at("total").is_number());
  EXPECT_GT(j.at("memory").at("per_gpu").at("total").get<double>(), 0.0);
}

TEST(CliErrors, JsonOutputFollowsSet) {
  test::RunResult r = test::run_trainplan("evaluate --format json --set model=llama3.1-8b --set parallel.tp=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j.at("parameters").at("total").get<double>(), 8030261248.0);  // models.yaml, llama3.1-8b
}

}  // namespace
}  // namespace tp
