// `trainplan validate`: the validation sets of a folder (cli/validate_sets.h), each run predicted from its
// scenario with the profile it names (or the generation's defaults), printed as tables or as JSON.
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "errors.h"
#include "plan.h"
#include "report.h"
#include "scenario.h"
#include "validate_sets.h"
#include "yaml_reader.h"

namespace tp {
namespace {

// The runs of an index file, or an InputError naming the file (an empty file has no position: the file alone).
YAML::Node index_runs(const std::string& index_path) {
  YAML::Node index = load_yaml_file(index_path);
  if (!index.IsMap()) {
    const SourceLocation at = index.Mark().line >= 0 ? location_of(index, index_path) : SourceLocation{index_path, 0, 0};
    throw InputError(at, "(document)", "expected a mapping with runs:");
  }
  MapReader top(index, "", index_path);
  const YAML::Node runs = top.node("runs");
  top.finish();  // runs: is the only key
  if (!runs || !runs.IsSequence()) {
    // At the value when there is one, else at the document.
    throw InputError(location_of(runs ? runs : index, index_path), "runs", "expected a list of runs");
  }
  return runs;
}

// The ranges a measured value may take: far beyond any real step or GPU, and bounded away from 0 and the
// largest doubles, so that an error (predicted / measured - 1) is always a finite percentage.
constexpr double kLeastStep = 1e-6, kMostStep = 1e7;                     // seconds
constexpr double kLeastTokenRate = 1e-3, kMostTokenRate = 1e9;           // tokens per second per GPU
constexpr double kLeastPeakBytes = 1, kMostPeakBytes = 1e15;             // bytes allocated

// A published run's measured step: `measured: {step_seconds: S}`, or the step its per-GPU throughput
// implies (`tokens_per_second_per_gpu: R`: the GPU's tokens per step / R); one of the two.
double measured_step(MapReader& run, double tokens_per_gpu_step) {
  const YAML::Node measured = run.node("measured");
  if (!measured || !measured.IsMap()) run.fail("measured", "needs step_seconds or tokens_per_second_per_gpu");
  MapReader r(measured, run.field("measured"), run.file());
  const bool by_step = r.has("step_seconds");
  const bool by_rate = r.has("tokens_per_second_per_gpu");
  if (by_step && by_rate) r.fail("step_seconds", "give step_seconds or tokens_per_second_per_gpu, not both");
  if (!by_step && !by_rate) run.fail("measured", "needs step_seconds or tokens_per_second_per_gpu");
  const double step = by_step ? r.number("step_seconds", 0, kLeastStep, kMostStep)
                              : tokens_per_gpu_step / r.number("tokens_per_second_per_gpu", 0, kLeastTokenRate, kMostTokenRate);
  r.finish();
  return step;
}

// A run's text field that must be there: at the field when it is not a text, at the run when it is missing.
std::string required_text(MapReader& run, const std::string& key) {
  if (!run.has(key)) run.fail(key, "required: a text");
  return run.string(key, "");
}

// The scenario a run names, relative to the index's folder; a file that is missing is named with the index
// line that names it.
Scenario run_scenario(MapReader& run, const std::string& dir) {
  const std::string named = required_text(run, "scenario");
  if (named.empty()) run.fail("scenario", "empty: name the scenario file");
  const std::string path = named.front() == '/' ? named : dir + "/" + named;  // an absolute path as it is
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) run.fail("scenario", path + ": is a folder; name the scenario file");
  if (!std::filesystem::is_regular_file(path, ec)) run.fail("scenario", path + ": no such file");
  return load_scenario_file(path);
}

// The real single-GPU steps of dir/index.yaml: step time, and total - overhead against the peak the
// framework allocated (JSON contract: memory.per_gpu.overhead is the CUDA context and allocator slack).
std::vector<ValidationRow> step_rows(const std::string& dir, const std::string& gpu) {
  const std::string index_path = dir + "/index.yaml";
  std::vector<ValidationRow> rows;
  for (const auto& run : index_runs(index_path)) {
    MapReader r(run, "runs[" + std::to_string(rows.size()) + "]", index_path);  // a mapping, or an InputError
    ValidationRow row;
    row.scenario = row.name = required_text(r, "scenario");
    const Scenario s = run_scenario(r, dir);
    // The folder holds one GPU's steps (h100-pytorch: H100 SXM): another GPU's would be summed into its set.
    if (s.cluster.gpu.key.rfind(gpu + "-", 0) != 0) {
      r.fail("scenario", "runs on " + s.cluster.gpu.key + ", but this folder holds " + gpu + " steps");
    }
    const Plan p = make_plan(s, profile_for(s));
    row.gpu = s.cluster.gpu.key;
    row.predicted_step = p.time.step.value;
    row.mfu = p.time.mfu;
    row.has_memory = true;
    row.predicted_memory = (p.estimate.memory.total - p.estimate.memory.overhead).value;
    row.predicted_to_fit = p.estimate.feasible;
    (void)r.integer("parameters", 0, 1, std::int64_t(1) << 52);  // informational: the model's parameter count
    row.oom = r.boolean("oom", false);
    // A run that ran out of memory has no step to compare; one that ran has both.
    row.measured_step = row.oom ? 0 : r.number("step_seconds", -1, kLeastStep, kMostStep);
    row.measured_memory = row.oom ? 0 : r.number("peak_allocated_bytes", -1, kLeastPeakBytes, kMostPeakBytes);
    if (row.measured_step < 0 || row.measured_memory < 0) {
      r.fail(row.measured_step < 0 ? "step_seconds" : "peak_allocated_bytes", "required where the run did not run out of memory");
    }
    r.finish();
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

std::vector<ValidationRow> validation_rows(const std::string& dir) {
  const std::string index_path = dir + "/index.yaml";
  std::vector<ValidationRow> rows;
  for (const auto& run : index_runs(index_path)) {
    MapReader r(run, "runs[" + std::to_string(rows.size()) + "]", index_path);  // a mapping, or an InputError
    ValidationRow row;
    row.scenario = required_text(r, "scenario");
    row.source = required_text(r, "source");
    row.failure_class = r.string("class", "");
    r.node("conversion");  // informational: how the run's reported figure becomes a step time
    (void)r.node("measured");  // read by measured_step below, after the run's other keys are checked
    r.finish();
    const Scenario s = run_scenario(r, dir);
    const Plan p = make_plan(s, profile_for(s));
    row.name = s.name;
    row.gpu = s.cluster.gpu.key;
    row.predicted_step = p.time.step.value;
    row.measured_step = measured_step(r, p.estimate.tokens_per_step / s.gpus());
    row.mfu = p.time.mfu;
    rows.push_back(row);
  }
  return rows;
}

std::vector<ValidationSet> validation_sets(const std::string& dir) {
  std::vector<ValidationSet> sets;
  sets.push_back({ValidationKind::published, "published", dir + "/index.yaml", validation_rows(dir)});
  const std::string sharded = dir + "/sharded";
  if (std::filesystem::exists(sharded + "/index.yaml")) {
    sets.push_back({ValidationKind::sharded, "sharded", sharded + "/index.yaml", validation_rows(sharded)});
  }
  // Real single-GPU steps, one folder per GPU they were measured on.
  for (const char* gpu : {"h100", "h200"}) {
    const std::string steps = dir + "/" + gpu + "-pytorch";
    if (std::filesystem::exists(steps + "/index.yaml")) {
      sets.push_back({ValidationKind::steps, std::string(gpu) + "_pytorch", steps + "/index.yaml", step_rows(steps, gpu)});
    }
  }
  return sets;
}

int run_validate(const std::string& dir, const std::string& format) {
  const std::vector<ValidationSet> sets = validation_sets(dir);  // all predicted before anything prints
  if (format == "json") {
    const nlohmann::json j = validation_json(sets);
    print_json(std::cout, j);
  } else {
    print_validation_tables(sets);
  }
  return 0;
}

}  // namespace tp
