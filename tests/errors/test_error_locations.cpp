// Errors that named the wrong place, found by black-box testing on 2026-11-30: a sweep's base scenario was
// copied as a YAML node, which loses every position, so its errors (and --set's) were blamed on line 1,
// column 1 of the file; a missing file named by `base:`, `profile:` or a validation run's `scenario:` was
// reported without the line that names it; `grid: {}` was blamed on the command line. Oracles: the
// positions of the culprits in the files each test writes (errtest::at).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "error_test_support.h"
#include "test_support.h"

namespace tp {
namespace {

using ::testing::HasSubstr;

// Writes `text` as NAME in a fresh folder; returns its path.
std::string written(const std::string& folder, const std::string& name, const std::string& text) {
  std::filesystem::create_directories(errtest::temp_path(folder));
  return errtest::write_file(folder + "/" + name, text);
}

// "PATH:LINE:COL" of `needle` in `text` written at `path` (errtest::at labels it test.yaml).
std::string at(const std::string& path, const std::string& text, const std::string& needle) {
  return path + errtest::at(text, needle).substr(std::string("test.yaml").size());
}

TEST(ErrorLocations, ASweepsInlineBaseKeepsItsPositions) {
  const std::string text = "grid: {parallel.tp: [1, 2]}\nbase:\n  model: llama3.1-8b\n  cluster: dgx-h100\n"
                           "  parallel: {tp: 1, tpp: 2}\n";
  const std::string path = written("loc-inline", "sweep.yaml", text);
  const test::RunResult r = test::run_trainplan("sweep '" + path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(at(path, text, "tpp") + ": parallel.tpp: unknown key"));
}

TEST(ErrorLocations, ASweepsSetIsBlamedOnSet) {
  const test::RunResult r = test::run_trainplan("sweep --set parallel.tpp=3 --grid parallel.tp=1,2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: --set: parallel.tpp: unknown key"));
}

// A name whose closing quote is missing swallowed the rest of the file, and the error said "model: required"
// (a CLI audit, 2026-12-01): it names the key whose text holds it.
TEST(ErrorLocations, AQuoteLeftOpenIsNamed) {
  const std::string scenario = "name: \"Llama on 8 H100\nmodel: llama3.1-8b\ncluster: dgx-h100\n";
  const std::string path = written("loc-quote", "scenario.yaml", scenario);
  const test::RunResult r = test::run_trainplan("evaluate '" + path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("model: required; it is inside the text of name (line 1): a quote left open?")) << r.output;
}

TEST(ErrorLocations, AMissingReferencedFileIsNamedWhereItIsReferenced) {
  const std::string sweep = "grid: {parallel.tp: [1, 2]}\nbase: nothere.yaml\n";
  const std::string sweep_path = written("loc-refs", "sweep.yaml", sweep);
  test::RunResult r = test::run_trainplan("sweep '" + sweep_path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(at(sweep_path, sweep, "nothere") + ": base: "));
  EXPECT_THAT(r.output, HasSubstr("nothere.yaml: cannot open the file"));

  const std::string scenario = "model: llama3.1-8b\ncluster: dgx-h100\nprofile: missing-profile.yaml\n";
  const std::string scenario_path = written("loc-refs", "scenario.yaml", scenario);
  r = test::run_trainplan("evaluate '" + scenario_path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(at(scenario_path, scenario, "missing-profile") + ": profile: "));
  // A profile that is a folder or a device was named without the scenario's line ("error: .: is a directory";
  // a CLI audit, 2026-12-01).
  for (const std::string profile : {"/tmp", "/dev/zero"}) {
    const std::string text = "model: llama3.1-8b\ncluster: dgx-h100\nprofile: " + profile + "\n";
    const std::string path = written("loc-refs", "scenario-dir.yaml", text);
    r = test::run_trainplan("evaluate '" + path + "'");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr(at(path, text, profile) + ": profile: " + profile + ": not a file")) << r.output;
  }

  const std::string index = "runs:\n- scenario: nothere.yaml\n  source: mine\n  measured: {step_seconds: 1}\n";
  const std::string index_path = written("loc-refs", "index.yaml", index);
  r = test::run_trainplan("validate --dir '" + std::filesystem::path(index_path).parent_path().string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(at(index_path, index, "nothere") + ": runs[0].scenario: "));
}

TEST(ErrorLocations, AnEmptyGridIsTheSweepFilesError) {
  const std::string text = "base: {model: llama3.1-8b, cluster: dgx-h100}\ngrid: {}\n";
  const std::string path = written("loc-grid", "sweep.yaml", text);
  const test::RunResult r = test::run_trainplan("sweep '" + path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(at(path, text, "{}") + ": grid: nothing to sweep"));
}

// A profile naming its GPU by an alias (h200) was refused: "describes 'h200' but the scenario's GPU is
// 'h200-sxm-141gb'".
TEST(ErrorLocations, AProfileMayNameItsGpuByAnAlias) {
  (void)written("loc-alias", "profile.yaml", "gpu: h200\n");
  const std::string path =
      written("loc-alias", "scenario.yaml", "model: llama3.1-8b\ncluster: {preset: dgx-h100, gpu: h200}\nprofile: profile.yaml\n");
  const test::RunResult r = test::run_trainplan("evaluate '" + path + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("profile.yaml, slowest stage"));
}

// A second YAML document was silently ignored: the plan was of the first.
TEST(ErrorLocations, ASecondYamlDocumentIsAnError) {
  const std::string text = "model: llama3.1-8b\ncluster: dgx-h100\n---\nmodel: llama3.1-70b\n";
  const std::string path = written("loc-docs", "two.yaml", text);
  const test::RunResult r = test::run_trainplan("evaluate '" + path + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(at(path, text, "model: llama3.1-70b") + ": a second YAML document"));
}

}  // namespace
}  // namespace tp
