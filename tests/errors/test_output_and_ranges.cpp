// What black-box testing of the commands found on 2026-11-30, each held here: output that was lost with exit
// 0, output files that replaced what their path named, values that overflowed after their unit, sweep axes
// that wrapped or repeated points, JSON that was not JSON. Oracles: the promises of README.md ("bad input
// gets a clear error naming the file, line and field, a non-zero exit, nothing half-written, never an inf")
// and the values written in each test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "error_test_support.h"
#include "test_support.h"

namespace tp {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;

std::string example(const std::string& name) { return "'" + test::source_path("scenarios/examples/" + name) + "'"; }

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Before: `sweep ... > /dev/full` exited 0 with nothing written.
TEST(OutputSafety, ALostStandardOutputExitsOne) {
  struct stat st {};
  if (::stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) GTEST_SKIP() << "no /dev/full here";
  for (const std::string args : {"evaluate", "sweep --grid parallel.pp=2,4 --format json", "catalog gpus"}) {
    const test::RunResult r = test::run_trainplan(args + " > /dev/full");
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("cannot write the standard output")) << args;
  }
}

// Before: the CSV was written to PATH.tmp and renamed over PATH, replacing a link (and /dev/full itself).
TEST(OutputSafety, ACsvThroughALinkReplacesTheFileAndKeepsTheLink) {
  const fs::path dir = scratch("trainplan-csv-link");
  std::ofstream(dir / "target.csv") << "old\n";
  fs::create_symlink("target.csv", dir / "link.csv");
  const test::RunResult r = test::run_trainplan("sweep --grid parallel.pp=2,4 --csv '" + (dir / "link.csv").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::is_symlink(dir / "link.csv"));
  std::ifstream in(dir / "target.csv");
  std::string header;
  std::getline(in, header);
  EXPECT_THAT(header, HasSubstr("index,status,tp"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 2) << "a temporary file was left";
  // A device is written in place, as the shell's `>` would.
  const test::RunResult device = test::run_trainplan("sweep --grid parallel.pp=2,4 --csv /dev/null");
  EXPECT_EQ(device.exit_code, 0) << device.output;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  fs::remove_all(dir);
}

// A CLI audit (2026-12-01): a dangling link to a folder that does not exist, and a loop of links, were
// replaced by a regular file with exit 0; each is an error now, and nothing is written.
TEST(OutputSafety, ABrokenOrLoopingLinkIsAnError) {
  const fs::path dir = scratch("trainplan-csv-badlinks");
  fs::create_symlink("/nonexistent-trainplan-folder/x.csv", dir / "dangling.csv");
  fs::create_symlink("loop2", dir / "loop1");
  fs::create_symlink("loop1", dir / "loop2");
  const test::RunResult dangling = test::run_trainplan("sweep --grid parallel.pp=2,4 --csv '" + (dir / "dangling.csv").string() + "'");
  EXPECT_EQ(dangling.exit_code, 1) << dangling.output;
  EXPECT_THAT(dangling.output, HasSubstr("the folder /nonexistent-trainplan-folder does not exist"));
  const test::RunResult loop = test::run_trainplan("sweep --grid parallel.pp=2,4 --csv '" + (dir / "loop1").string() + "'");
  EXPECT_EQ(loop.exit_code, 1) << loop.output;
  EXPECT_THAT(loop.output, HasSubstr("too many levels of links"));
  EXPECT_TRUE(fs::is_symlink(dir / "dangling.csv"));
  EXPECT_TRUE(fs::is_symlink(dir / "loop1"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 3) << "a file was written";
  fs::remove_all(dir);
}

// `report -o -` and `simulate --trace -` wrote a file named "-" (a CLI audit, 2026-12-01): refused.
TEST(OutputSafety, ADashIsNoOutputFile) {
  for (const std::string command : {"report -o -", "simulate --trace -", "sweep --grid parallel.pp=2,4 --csv -"}) {
    const test::RunResult r = test::run_trainplan(command);
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("'-' is not the standard output here; give a file name")) << command;
  }
}

// An output naming the command's own input (directly or through a link) replaced the scenario with HTML or a
// trace, exit 0 (a re-audit, 2026-12-01), and `calibrate import-torch` its PyTorch file with the converted
// measurements (a CLI audit, 2026-12-01): an error, the input kept.
TEST(OutputSafety, AnOutputIsNeverTheInput) {
  const fs::path dir = scratch("trainplan-output-input");
  const fs::path scenario = dir / "me.yaml";
  const fs::path torch = dir / "torch.json";
  fs::copy_file(test::source_path("scenarios/examples/default.yaml"), scenario);
  fs::copy_file(test::source_path("tests/data/h100-sxm/torch-same-shapes.json"), torch);
  fs::create_symlink("me.yaml", dir / "link.yaml");
  const auto text_of = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string before = text_of(scenario), torch_before = text_of(torch);
  for (const std::string& command : {"report '" + scenario.string() + "' -o '" + (dir / "link.yaml").string() + "'",
                                    "simulate '" + scenario.string() + "' --trace '" + scenario.string() + "'",
                                    "calibrate import-torch '" + torch.string() + "' -o '" + torch.string() + "'"}) {
    const test::RunResult r = test::run_trainplan(command);
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("it is one of the command's input files")) << command;
  }
  EXPECT_EQ(text_of(scenario), before);
  EXPECT_EQ(text_of(torch), torch_before);
  fs::remove_all(dir);
}

// A grid value's quote in the CSV's text cell is doubled (RFC 4180), so a CSV reader reads the value back as
// written (it read x"y as xy").
TEST(OutputSafety, ACsvTextCellDoublesItsQuotes) {
  const fs::path dir = scratch("trainplan-csv-quote");
  const std::string csv = (dir / "q.csv").string();
  const test::RunResult r = test::run_trainplan("sweep --grid 'name=x\"y,z' --grid parallel.tp=8 --csv '" + csv + "' --csv-all");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(csv);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr(",\"name=x\"\"y\"\n"));
  fs::remove_all(dir);
}

// Before: the unit's prefix was applied after the number was checked, so `1e300 EB` became inf (JSON: exit
// 70); a clock written in GHz for MHz gave an MFU of 193 %; a peak of 1e-300 FLOP/s made every time inf.
TEST(OutputSafety, QuantitiesStayInTheirPhysicalRange) {
  struct Case {
    std::string cluster, needle, message;
  };
  const Case cases[] = {
      {"{preset: dgx-h100, gpu: {memory: 1e300 EB}}", "1e300", "cluster.gpu.memory: out of range (at most 1e+21 B)"},
      {"{preset: dgx-h100, gpu: {tdp: 1e308 W}}", "1e308", "cluster.gpu.tdp: out of range (at most 1e+09 W)"},
      {"{preset: dgx-h100, sustained_clock: 1575 GHz}", "1575", "cluster.sustained_clock: out of range (at most 5e+09 Hz)"},
      {"{preset: dgx-h100, gpu: {peak: {bf16: 1e-300 FLOP/s}}}", "1e-300",
       "cluster.gpu.peak.bf16: out of range (0 or at least 1e+06 FLOP/s)"},
  };
  for (const Case& c : cases) {
    errtest::Yaml y;
    y.cluster = c.cluster;
    const errtest::Failure f = errtest::load_error(y.str());
    ASSERT_TRUE(f.thrown) << c.cluster;
    EXPECT_THAT(f.what, HasSubstr(errtest::at(y.str(), c.needle) + ": " + c.message)) << f.what;
  }
}

// Before: a name that is not UTF-8 (a Latin-1 file) ended `--format json` with an internal error (exit 70).
TEST(OutputSafety, ANameThatIsNotUtf8IsWrittenAsValidJson) {
  const fs::path dir = scratch("trainplan-latin1");
  std::string text = errtest::Yaml{}.str();
  text.replace(text.find("name: t"), 7, "name: caf\xe9");
  std::ofstream(dir / "s.yaml") << text;
  const test::RunResult r = test::run_trainplan("evaluate '" + (dir / "s.yaml").string() + "' --format json 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["scenario"]["name"], "caf\xEF\xBF\xBD");  // U+FFFD in place of the bad byte
  fs::remove_all(dir);
}

// Before: grid integers wrapped modulo 2^32 (tp 4294967300 ran as a feasible tp 4); "4,04" ran twice; an axis the
// automatic layouts also set repeated every layout once per value; a --grid axis the sweep file has was added
// beside it (432 points, all tp 8); --set of a swept key was silently ignored, with a sweep file or without.
TEST(OutputSafety, SweepAxesAreCheckedAndNeverRepeatPoints) {
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"sweep --grid parallel.tp=4294967300", "parallel.tp: '4294967300' is not an integer in [1, 1048576]"},
      {"sweep --grid parallel.tp=99999999999999999999", "is not an integer in [1, 1048576]"},
      {"sweep --grid cluster.nodes=4294967304", "cluster.nodes: '4294967304' is not an integer in [1, 2000000]"},
      {"sweep --grid parallel.tp=4,04", "value '04' is given twice (as 4)"},
      // 41 powers of two: the key's own range judges them (it said "more than 100,000 values"; 2026-12-01).
      {"sweep --grid parallel.tp=1..1099511627776:pow2", "parallel.tp: '2097152' is not an integer in [1, 1048576]"},
      {"sweep --grid parallel=auto --grid parallel.tp=2", "parallel: auto chooses this key in every layout it tries"},
      {"sweep " + example("sweep-llama3.1-70b.yaml") + " --set parallel.tp=8",
       "--set: parallel.tp: the sweep's grid varies this key"},
      // Without a sweep file the --grid values replaced the --set value silently (tp 1 and 4 swept, tp 2 never).
      {"sweep --set parallel.tp=2 --grid parallel.tp=1,4", "the sweep's grid varies this key (--grid): give the key"},
      // Overlapping keys (a re-audit, 2026-12-01): the layer counts were replaced by each model's own, the
      // `every` by none / full, and the points kept the labels of values never applied.
      {"sweep --grid model.layers=16,32 --grid model=llama3.1-8b,llama3.1-70b",
       "grid.model: overlaps the grid's axis model.layers (--grid): one would replace what the other sets"},
      {"sweep --grid parallel.recompute.every=2,4 --grid parallel.recompute=none,full",
       "grid.parallel.recompute: overlaps the grid's axis parallel.recompute.every"},
      {"sweep --set parallel.recompute.every=2 --grid parallel.recompute=none,full",
       "--set: parallel.recompute.every: the sweep's grid varies this key"},
  };
  for (const Case& c : cases) {
    const test::RunResult r = test::run_trainplan(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.message)) << c.args;
  }
  // The file sweeps tp over 3 values (432 points); --grid parallel.tp=8 replaces that axis: 432 / 3 points.
  const test::RunResult replaced =
      test::run_trainplan("sweep " + example("sweep-llama3.1-70b.yaml") + " --grid parallel.tp=8 --format json");
  ASSERT_EQ(replaced.exit_code, 0) << replaced.output;
  EXPECT_EQ(nlohmann::json::parse(replaced.output)["points"]["total"], 144);
}

// Before: the re-scored table was printed after the JSON object, so stdout was no JSON.
TEST(OutputSafety, SimulateTopKeepsTheSweepJsonValid) {
  const test::RunResult r = test::run_trainplan("sweep --grid parallel.pp=2,4,8 --simulate-top 2 --format json 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["simulated_top"].size(), 2u);
  for (const auto& p : j["simulated_top"]) {
    EXPECT_GT(p["step_seconds"].get<double>(), 0);
    EXPECT_GT(p["analytic_step_seconds"].get<double>(), 0);
  }
  // --simulate-top N beyond --top re-scores N all the same (it was capped at --top; a re-audit, 2026-12-01).
  const test::RunResult wide = test::run_trainplan("sweep --grid parallel.pp=2,4,8 --top 1 --simulate-top 3 --format json 2>/dev/null");
  ASSERT_EQ(wide.exit_code, 0) << wide.output;
  const nlohmann::json w = nlohmann::json::parse(wide.output);
  EXPECT_EQ(w["top"].size(), 1u);
  EXPECT_EQ(w["simulated_top"].size(), 3u);
}

// Before: catalog --format json held a GPU's name and memory only (the table shows bandwidth, peaks, TDP).
// Oracle: the H100 SXM datasheet values the catalog holds (80 GiB, 3.35 TB/s, 989.4 TFLOP/s bf16 dense, 700 W)
// and the Llama 3.1 8B configuration (32 layers, hidden 4096, 8 KV heads).
TEST(OutputSafety, TheCatalogJsonHoldsWhatItsTablesShow) {
  const test::RunResult r = test::run_trainplan("catalog --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  const nlohmann::json& h100 = j["gpus"]["h100-sxm-80gb"];
  EXPECT_EQ(h100["memory_bytes"].get<double>(), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(h100["memory_bandwidth_bytes_per_second"].get<double>(), 3.35e12);
  EXPECT_DOUBLE_EQ(h100["peak_flops_per_second"]["bf16"].get<double>(), 989.4e12);
  EXPECT_DOUBLE_EQ(h100["tdp_watts"].get<double>(), 700);
  const nlohmann::json& llama = j["models"]["llama3.1-8b"];
  EXPECT_EQ(llama["layers"], 32);
  EXPECT_EQ(llama["hidden"], 4096);
  EXPECT_EQ(llama["kv_heads"], 8);
  EXPECT_TRUE(llama["parameters"].is_number_integer());
  EXPECT_EQ(j["clusters"]["dgx-h100"]["gpus_per_node"], 8);
}

// Before: a CSV row of a layout that was not evaluated (indivisible) held zeros, which sort first by cost.
TEST(OutputSafety, ACsvLeavesWhatWasNotEvaluatedEmpty) {
  const fs::path dir = scratch("trainplan-csv-cells");
  const std::string csv = (dir / "all.csv").string();
  const test::RunResult r = test::run_trainplan("sweep --grid parallel.tp=3,8 --csv '" + csv + "' --csv-all");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // the header
  int indivisible = 0;
  while (std::getline(in, line)) {
    if (line.find(",indivisible,") == std::string::npos) continue;
    ++indivisible;
    EXPECT_THAT(line, HasSubstr(",,,,,,,\"")) << line;  // memory ... energy: seven empty cells
  }
  EXPECT_EQ(indivisible, 1);  // tp 3 divides no head count of the default model
  // A layout over a node limit is rejected before it is evaluated: empty cells too (they held zeros).
  const std::string limited = (dir / "limited.csv").string();
  const std::string sweep = (dir / "sweep.yaml").string();
  std::ofstream(sweep) << "base: " << test::source_path("scenarios/examples/default.yaml")
                       << "\ngrid: {cluster.nodes: [4, 8]}\nconstraints: {max_nodes: 4}\n";
  const test::RunResult c = test::run_trainplan("sweep '" + sweep + "' --csv '" + limited + "' --csv-all");
  std::ifstream rows(limited);
  std::getline(rows, line);
  int constrained = 0;
  while (std::getline(rows, line)) {
    if (line.find(",constraint,") == std::string::npos) continue;
    ++constrained;
    EXPECT_THAT(line, HasSubstr(",,,,,,,\"")) << line;
  }
  EXPECT_GT(constrained, 0) << c.output;
  fs::remove_all(dir);
}

// An interrupted write (Ctrl-C or SIGTERM while a large trace is written) left its temporary file beside the
// target, 94 MB of it (a CLI audit, 2026-12-01): the signal's handler removes it, and the process still ends
// by the signal. The shell waits for the temporary file to appear, then terminates it (SIGTERM: a background
// job of a script ignores SIGINT, and keeps ignoring it).
TEST(OutputSafety, AnInterruptedWriteLeavesNothing) {
  const fs::path dir = scratch("trainplan-interrupted");
  for (const char* sig : {"TERM"}) {
    const std::string script =
        std::string(TRAINPLAN_BINARY) + " simulate --set training.global_batch=96000 --trace '" + (dir / "big.json").string() +
        "' >/dev/null 2>&1 & pid=$!; i=0; while [ $i -lt 600 ] && ! ls '" + dir.string() +
        "'/big.json.* >/dev/null 2>&1; do sleep 0.05; i=$((i+1)); done; ls '" + dir.string() + "' | sed 's/^/seen: /'; kill -" +
        sig + " $pid; wait $pid; echo \"status $?\"; ls '" + dir.string() + "' | sed 's/^/left: /'";
    const test::RunResult r = test::run_shell(script);
    EXPECT_THAT(r.output, HasSubstr("seen: big.json.")) << sig << ": the write never started\n" << r.output;
    EXPECT_THAT(r.output, ::testing::Not(HasSubstr("left: "))) << sig << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("status 143")) << r.output;  // 128 + SIGTERM: ended by the signal
  }
  fs::remove_all(dir);
}

// A budget or deadline of 0 meant no limit, silently (a CLI audit, 2026-12-01), where max_gpus: 0 is an error:
// an error naming the file, line and key.
TEST(OutputSafety, AZeroBudgetOrDeadlineIsAnError) {
  const fs::path dir = scratch("trainplan-zero-constraint");
  for (const std::string constraint : {"budget: 0 USD", "deadline: 0 s"}) {
    const std::string sweep = (dir / "sweep.yaml").string();
    std::ofstream(sweep) << "base: " << test::source_path("scenarios/examples/default.yaml")
                         << "\ngrid: {parallel.tp: [8]}\nconstraints: {" << constraint << "}\n";
    const test::RunResult r = test::run_trainplan("sweep '" + sweep + "'");
    EXPECT_EQ(r.exit_code, 1) << constraint << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr(sweep + ":3:")) << r.output;
    EXPECT_THAT(r.output, HasSubstr("must be positive")) << r.output;
  }
  fs::remove_all(dir);
}

// A name with an escape sequence or a NUL was written to the terminal as it is (a CLI audit, 2026-12-01): text
// values refuse control characters, naming the key.
TEST(OutputSafety, ATextValueRefusesControlCharacters) {
  for (const std::string set : {"evaluate --set \"name=$(printf 'a\\033[31mRED')\"", "evaluate --set \"name=$(printf 'a\\tb')\"",
                                 "evaluate --set \"cluster.gpu.name=$(printf 'x\\007')\"",
                                 // A grid's values label the points: a newline broke the table's rows (a re-audit).
                                 "sweep --grid \"name=$(printf 'a\\nb'),c\""}) {
    const test::RunResult r = test::run_trainplan(set);
    EXPECT_EQ(r.exit_code, 1) << set << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("control characters")) << set;
    EXPECT_THAT(r.output, ::testing::Not(HasSubstr("\x1b"))) << set;
  }
}

// A list of bases said "(document): expected a mapping" (a CLI audit, 2026-12-01): the key and what it takes.
TEST(OutputSafety, AListOfBasesIsNamedAtItsKey) {
  const fs::path dir = scratch("trainplan-base-list");
  const std::string sweep = (dir / "sweep.yaml").string();
  std::ofstream(sweep) << "base: [a.yaml, b.yaml]\ngrid: {parallel.tp: [8]}\n";
  const test::RunResult r = test::run_trainplan("sweep '" + sweep + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(sweep + ":1:7: base: expected one scenario file or an inline scenario"));
  fs::remove_all(dir);
}

// An inline model without a name gave the title " on 8 NVIDIA H100 ..." (a leading space).
TEST(OutputSafety, AnUnnamedInlineModelIsNamedInTheTitle) {
  errtest::Yaml y;
  y.model = "{layers: 2, hidden: 256, heads: 4, ffn_hidden: 1024, vocab: 1000}";
  const Scenario s = test::scenario(y.str());
  EXPECT_EQ(s.model.name, "Custom model");
  // An inline GPU without a name gave "Custom model on 1 " and "1 x  (1 B)" (a CLI audit, 2026-12-01); a
  // throughput below one token a second printed as 0 tokens/s.
  y.cluster = "{nodes: 1, gpus_per_node: 1, gpu: {memory: 80 GiB, memory_bandwidth: 1 kB/s, peak: {bf16: 1 MFLOP/s}, tdp: 1 W}}";
  y.parallel = "{tp: 1, pp: 1}";
  const Scenario custom = test::scenario(y.str());
  EXPECT_EQ(custom.cluster.gpu.name, "custom GPU");
  const test::RunResult r = test::run_trainplan("evaluate '" + errtest::write_file("custom-gpu.yaml", y.str()) + "'");
  EXPECT_THAT(r.output, HasSubstr("1 x custom GPU (80.00 GiB)"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("Throughput  0\\.[0-9]+ tokens/s \\(0\\.[0-9]+ tokens/s per GPU\\)"));
}

// A 100 kB model name was echoed whole in the error.
TEST(OutputSafety, ALongValueIsClippedInItsError) {
  errtest::Yaml y;
  y.model = std::string(100000, 'x');
  const errtest::Failure f = errtest::load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, HasSubstr("unknown model '" + std::string(60, 'x') + "... (100000 characters)'"));
  EXPECT_LT(f.what.size(), 300u);
  // Apostrophes are no quotes: a message with two possessives more than 100 characters apart stays whole.
  const std::string message = "the GPU's peak " + std::string(120, 'y') + " the planner's ranges";
  EXPECT_EQ(InputError({}, "", message).what(), message);
}

}  // namespace
}  // namespace tp
