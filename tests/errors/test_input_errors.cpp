// Strict loading (DESIGN.md, "Conventions", "Strict input"): unknown keys, wrong types, ranges,
// choices, units, catalog names and YAML syntax are InputErrors whose text names file:line:column,
// the dotted field and a hint. Each test breaks one thing of a valid base scenario.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "error_test_support.h"
#include "hardware_profile.h"
#include "scenario.h"

namespace tp {
namespace {

using errtest::at;
using errtest::fails_at;
using errtest::fails_with;
using errtest::load_error;
using errtest::raised;
using errtest::write_file;
using errtest::Yaml;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Positive control: the base scenario of every test loads, so each failure below comes from the
// one field the test breaks.
TEST(InputErrors, BaseScenarioLoads) {
  const std::string yaml = Yaml{}.str();
  EXPECT_FALSE(load_error(yaml).thrown) << load_error(yaml).what;
  Scenario s = test::scenario(yaml);
  EXPECT_EQ(s.parallel.tp, 2);
  EXPECT_EQ(s.parallel.pp, 2);
  EXPECT_EQ(s.parallel.dp, 2);
  EXPECT_EQ(s.model.key, "llama3.1-8b");
}

TEST(InputErrors, UnknownTopLevelKeySuggestsTheClosest) {
  const std::string yaml =
      "name: t\n"
      "model: llama3.1-8b\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 4096, global_batch: 64, micro_batch: 1}\n"
      "paralel: {tp: 2, pp: 2}\n";
  auto f = load_error(yaml);
  EXPECT_TRUE(raised(f, "test.yaml:5:1: ", {"paralel", "unknown key", "did you mean 'parallel'"}));
  EXPECT_EQ(f.field, "paralel");
  EXPECT_EQ(f.where.line, 5);
  EXPECT_EQ(f.where.column, 1);
}

TEST(InputErrors, UnknownTopLevelKeyInBlockStyleHasItsOwnLine) {
  const std::string yaml =
      "name: t\n"
      "model: llama3.1-8b\n"
      "cluster:\n"
      "  preset: dgx-h100\n"
      "  nodes: 1\n"
      "training:\n"
      "  global_batch: 64\n"
      "parallel:\n"
      "  tp: 2\n"
      "  pp: 2\n"
      "\n"
      "cots:\n"
      "  pue: 1.3\n";
  EXPECT_TRUE(raised(load_error(yaml), "test.yaml:12:1: cots: ", {"did you mean 'costs'"}));
}

TEST(InputErrors, UnknownKeyWithoutCloseMatchListsTheValidKeys) {
  Yaml y;
  y.extra = "zzzzzzzzzz: 1\n";
  EXPECT_TRUE(raised(load_error(y.str()), "test.yaml:6:1: zzzzzzzzzz: unknown key", {"valid keys here:", "parallel"}));
}

TEST(InputErrors, UnknownNestedKey) {
  Yaml y;
  y.parallel = "\n  tp: 2\n  tpp: 2\n";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  EXPECT_TRUE(raised(f, at(yaml, "tpp") + ": parallel.tpp: ", {"did you mean 'tp'"}));
  EXPECT_EQ(f.where.line, 7);
  EXPECT_EQ(f.where.column, 3);
  EXPECT_EQ(f.field, "parallel.tpp");
}

TEST(InputErrors, UnknownKeyDeepInside) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, offload: {optimiser: cpu}}";
  EXPECT_TRUE(fails_at(y.str(), "optimiser", 0, "parallel.offload.optimiser", {"did you mean 'optimizer'"}));
}

TEST(InputErrors, WrongTypeExpectedInteger) {
  Yaml y;
  y.parallel = "{tp: eight, pp: 2}";
  EXPECT_TRUE(fails_at(y.str(), "eight", 0, "parallel.tp", {"expected an integer", "'eight'"}));
  // An underscore groups digits (1_024) between two of them only: "8_", "_8" and "_" were read as 8, 8 and 0.
  for (const char* bad : {"8_", "_8", "_", "8__1"}) {
    y.parallel = std::string("{tp: ") + bad + ", pp: 2}";
    EXPECT_TRUE(fails_at(y.str(), std::string("tp: ") + bad, 4, "parallel.tp", {"expected an integer"})) << bad;
  }
  y.parallel = "{tp: 2, pp: 2}";
  y.training = "{sequence_length: 4_096, global_batch: 64, micro_batch: 1}";
  EXPECT_EQ(test::scenario(y.str()).training.sequence_length, 4096);
}

TEST(InputErrors, WrongTypeMappingExpected) {
  Yaml y;
  y.parallel = "4";
  EXPECT_TRUE(fails_with(y.str(), {"test.yaml:5:11", "parallel: expected a mapping"}));
}

TEST(InputErrors, WrongTypeBoolean) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, sequence_parallel: maybe}";
  EXPECT_TRUE(fails_at(y.str(), "maybe", 0, "parallel.sequence_parallel", {"expected true or false"}));
}

TEST(InputErrors, QkNormMustBeABoolean) {
  Yaml y;
  y.model = "{layers: 2, hidden: 256, heads: 4, ffn_hidden: 512, vocab: 1000, qk_norm: maybe}";
  EXPECT_TRUE(fails_at(y.str(), "maybe", 0, "model.qk_norm", {"expected true or false"}));
}

// Without head_dim the heads must divide hidden (docs/scenario-reference.md `head_dim`); until 2026-12 the
// head width was rounded down silently (1,000 / 3 -> 333).
TEST(InputErrors, HeadsMustDivideHiddenUnlessHeadDimIsGiven) {
  Yaml y;
  y.parallel = "{tp: 1, pp: 2}";
  y.model = "{layers: 2, hidden: 1000, heads: 3, ffn_hidden: 4000, vocab: 1000}";
  EXPECT_TRUE(fails_at(y.str(), "heads: 3", 7, "model.heads", {"must divide hidden (1000)", "head_dim"}));
  y.model = "{layers: 2, hidden: 1000, heads: 3, head_dim: 320, ffn_hidden: 4000, vocab: 1000}";
  EXPECT_FALSE(errtest::load_error(y.str()).thrown) << errtest::load_error(y.str()).what;
}

TEST(InputErrors, OutOfRange) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, zero: 4}";
  EXPECT_TRUE(fails_at(y.str(), "zero: 4", 6, "parallel.zero", {"out of range", "[0, 3]"}));
}

TEST(InputErrors, ZeroParallelDegreeIsOutOfRange) {
  Yaml y;
  y.parallel = "{tp: 0, pp: 2}";
  EXPECT_TRUE(fails_with(y.str(), {"parallel.tp: ", "out of range"}));
}

TEST(InputErrors, BadChoiceListsTheChoicesAndTheClosest) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, schedule: 1f1c}";
  EXPECT_TRUE(
      fails_at(y.str(), "1f1c", 0, "parallel.schedule", {"gpipe | 1f1b | interleaved | zb-h1", "did you mean '1f1b'"}));
}

TEST(InputErrors, BadPrecisionChoice) {
  Yaml y;
  y.training = "{global_batch: 64, precision: bf61}";
  EXPECT_TRUE(fails_with(y.str(), {"training.precision: ", "fp32 | tf32 | fp16 | bf16 | fp8", "did you mean 'bf16'"}));
}

TEST(InputErrors, MissingUnit) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: {preset: h100-sxm-80gb, memory: 80}}";
  EXPECT_TRUE(fails_at(y.str(), "memory: 80", 8, "cluster.gpu.memory",
                       {"missing unit", "80 GiB"}));  // 80 GiB: the example of the expected form
}

TEST(InputErrors, WrongUnitDimension) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: {preset: h100-sxm-80gb, memory: 3.35 TB/s}}";
  EXPECT_TRUE(fails_at(y.str(), "3.35 TB/s", 0, "cluster.gpu.memory", {"is a bandwidth", "data size"}));
}

// A quantity below its minimum says the minimum in the base unit it is read in (model/quantity.h).
TEST(InputErrors, BelowTheMinimumNamesItWithItsUnit) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: {preset: h100-sxm-80gb, tdp: 0.5 W}}";
  EXPECT_TRUE(fails_at(y.str(), "0.5 W", 0, "cluster.gpu.tdp", {"value '0.5 W' must be at least 1 W"}));
  // A link: 0 B/s and 1 B/s name the same bound (0 said "at least 1 B/s", 1 B/s "at least 1000 B/s").
  y.cluster = "{preset: dgx-h100, nodes: 1, intra_node: {bandwidth: 0 B/s}}";
  EXPECT_TRUE(fails_at(y.str(), "0 B/s", 0, "cluster.intra_node.bandwidth", {"at least 1000 B/s"}));
  y.cluster = "{preset: dgx-h100, nodes: 1, intra_node: {bandwidth: 1 B/s}}";
  EXPECT_TRUE(fails_at(y.str(), "1 B/s", 0, "cluster.intra_node.bandwidth", {"at least 1000 B/s"}));
}

// A GPU's SM count (model/attention_grid.h) is a whole number of at least 1.
TEST(InputErrors, GpuSmsIsAPositiveInteger) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: {preset: h100-sxm-80gb, sms: 13.5}}";
  EXPECT_TRUE(fails_at(y.str(), "13.5", 0, "cluster.gpu.sms", {"expected an integer", "'13.5'"}));
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: {preset: h100-sxm-80gb, sms: 0}}";
  EXPECT_TRUE(fails_at(y.str(), "0}", 0, "cluster.gpu.sms", {"out of range", "[1, 100000]"}));
}

TEST(InputErrors, UnknownUnitInCosts) {
  Yaml y;
  y.extra = "costs: {gpu_hour: 2.5 EUR/h}\n";
  EXPECT_TRUE(fails_at(y.str(), "2.5 EUR/h", 0, "costs.gpu_hour", {"unknown unit"}));
}

TEST(InputErrors, UnknownCatalogModelSuggestsTheClosest) {
  Yaml y;
  y.model = "llama3.1-8bb";
  EXPECT_TRUE(raised(load_error(y.str()), "test.yaml:2:8: model: ",
                     {"unknown model 'llama3.1-8bb'", "did you mean 'llama3.1-8b'"}));
}

TEST(InputErrors, UnknownCatalogGpuAndClusterSuggestTheClosest) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: h100-sxm-80g}";
  EXPECT_TRUE(fails_at(y.str(), "h100-sxm-80g}", 0, "cluster.gpu", {"did you mean 'h100-sxm-80gb'"}));

  y.cluster = "{preset: dgx-h10, nodes: 1}";
  EXPECT_TRUE(fails_at(y.str(), "dgx-h10", 0, "cluster", {"did you mean 'dgx-h100'"}));
}

// cluster.host_cpu (docs/scenario-reference.md): intel, amd or other; anything else names the choices.
TEST(InputErrors, HostCpuNamesTheChoices) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 2, host_cpu: amdd}";
  EXPECT_TRUE(fails_at(y.str(), "amdd}", 0, "cluster.host_cpu", {"did you mean 'amd'"}));
  y.cluster = "{preset: dgx-h100, nodes: 2, host_cpu: 7742}";
  EXPECT_TRUE(fails_at(y.str(), "7742}", 0, "cluster.host_cpu", {"intel"}));
  for (const char* cpu : {"intel", "amd", "other"}) {
    y.cluster = std::string("{preset: dgx-a100, nodes: 2, host_cpu: ") + cpu + "}";
    const auto ok = load_error(y.str());
    EXPECT_FALSE(ok.thrown) << cpu << ": " << ok.what;
  }
}

TEST(InputErrors, InlineModelMissingRequiredField) {
  Yaml y;
  y.model = "{layers: 4, hidden: 1024, heads: 16, vocab: 32000}";  // no ffn_hidden
  EXPECT_TRUE(raised(load_error(y.str()), "test.yaml:2:8: model.ffn_hidden: ",
                     {"required", "preset:"}));  // preset: the alternative, start from a catalog model
}

TEST(InputErrors, InlineGpuMissingRequiredField) {
  Yaml y;
  y.cluster = "{nodes: 1, gpus_per_node: 8, gpu: {memory: 80 GiB, memory_bandwidth: 3.35 TB/s, tdp: 700 W}}";
  EXPECT_TRUE(fails_with(y.str(), {"cluster.gpu.peak: ", "required"}));
}

TEST(InputErrors, MissingModel) {
  EXPECT_TRUE(fails_with("name: t\ncluster: {preset: dgx-h100, nodes: 1}\n", {"model: required"}));
}

TEST(InputErrors, GlobalBatchGivenTwice) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, global_batch_tokens: 256 Ki}";
  EXPECT_TRUE(fails_with(y.str(), {"training.global_batch_tokens: ", "not both"}));
}

TEST(InputErrors, GlobalBatchTokensNotWholeSequences) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch_tokens: 1000}";
  EXPECT_TRUE(fails_with(y.str(), {"training.global_batch_tokens: ", "whole number of sequences"}));
}

TEST(InputErrors, YamlSyntaxErrorHasLineAndColumn) {
  const std::string yaml =
      "name: t\n"
      "model: llama3.1-8b\n"
      "parallel: {tp: 2, pp: 2\n";  // unclosed flow mapping
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, ::testing::ContainsRegex("^test\\.yaml:[0-9]+:[0-9]+: "));
  EXPECT_THAT(f.what, HasSubstr("YAML syntax error"));
  EXPECT_GE(f.where.line, 3);
  EXPECT_GE(f.where.column, 1);
}

TEST(InputErrors, YamlSyntaxErrorBadIndentation) {
  const std::string yaml =
      "name: t\n"
      "model: llama3.1-8b\n"
      "parallel:\n"
      "  tp: 2\n"
      " pp: 2\n";
  auto f = load_error(yaml);
  EXPECT_TRUE(raised(f, "", {"YAML syntax error"}));
  EXPECT_EQ(f.where.file, "test.yaml");
  EXPECT_GE(f.where.line, 4);
}

TEST(InputErrors, SetWithoutEqualsSign) {
  auto f = load_error(Yaml{}.str(), {"parallel.tp"});
  EXPECT_TRUE(raised(f, "--set: ", {"parallel.tp", "expected key=value"}));
  EXPECT_EQ(f.where.file, "--set");
}

TEST(InputErrors, SetUnknownKeyReportsSetAsTheLocation) {
  auto f = load_error(Yaml{}.str(), {"parallel.tpp=2"});
  EXPECT_TRUE(raised(f, "--set: parallel.tpp: ", {"did you mean 'tp'"}));
  EXPECT_EQ(f.where.file, "--set");
  EXPECT_EQ(f.where.line, 0);
}

TEST(InputErrors, SetWrongTypeReportsSet) {
  EXPECT_TRUE(raised(load_error(Yaml{}.str(), {"parallel.tp=eight"}), "--set: parallel.tp: ", {"expected an integer"}));
}

TEST(InputErrors, SetOverridesTheFile) {
  // Positive control of --set: the override wins and a catalog name becomes a preset.
  Scenario s = test::scenario(Yaml{}.str(), {"parallel.tp=4", "parallel.pp=1", "model.layers=16"});
  EXPECT_EQ(s.parallel.tp, 4);
  EXPECT_EQ(s.parallel.dp, 2);
  EXPECT_EQ(s.model.layers, 16);
  EXPECT_EQ(s.model.hidden, 4096);  // the rest of llama3.1-8b is kept
}

TEST(InputErrors, MissingFileNamesThePath) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "trainplan-no-such-dir" / "missing-scenario.yaml").string();
  try {
    (void)load_scenario_file(path);
    FAIL() << "expected an error for a missing file";
  } catch (const std::runtime_error& e) {  // InputError or IoError: both are "bad input" to main()
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr("cannot open"));
  }
}

TEST(InputErrors, FileErrorsNameTheFile) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, tpp: 2}";
  const std::string path = write_file("trainplan-bad-key.yaml", y.str());
  try {
    (void)load_scenario_file(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), StartsWith(path + ":5:"));
    EXPECT_THAT(e.what(), HasSubstr("parallel.tpp"));
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'tp'"));
  }
  std::filesystem::remove(path);
}

TEST(InputErrors, FileSyntaxErrorNamesTheFileAndPosition) {
  const std::string path = write_file("trainplan-bad-syntax.yaml", "name: t\nmodel: [llama3.1-8b\n");
  try {
    (void)load_scenario_file(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), StartsWith(path + ":"));
    EXPECT_THAT(e.what(), HasSubstr("YAML syntax error"));
    EXPECT_GT(e.where().line, 0);
  }
  std::filesystem::remove(path);
}

// A profile given as text reports a syntax error as a profile file does (model/scenario.h parse_yaml_text):
// the label, line and column, and "YAML syntax error".
TEST(InputErrors, ProfileTextSyntaxErrorNamesTheLabelAndPosition) {
  const GpuSpec& gpu = Catalog::builtin().gpu("h100-sxm-80gb", {}, "gpu");
  try {
    (void)load_profile_text("gpu: h100-sxm-80gb\ngemm: {bf16: {efficiency: 0.7}\n", "p.yaml", gpu);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), StartsWith("p.yaml:"));
    EXPECT_THAT(e.what(), HasSubstr("YAML syntax error"));
    EXPECT_GE(e.where().line, 2);
  }
}

}  // namespace
}  // namespace tp
