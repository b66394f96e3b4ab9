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

// The runs of an index file, or an InputError naming the file.
YAML::Node index_runs(const std::string& index_path) {
  YAML::Node index = load_yaml_file(index_path);
  if (!index["runs"] || !index["runs"].IsSequence()) {
    throw InputError({index_path, 0, 0}, "runs", "expected a list of runs");
  }
  return index["runs"];
}

// A measured quantity of a run: a finite number > 0 (an error is divided by it), else an InputError at
// its place in the index.
double measured_value(const YAML::Node& parent, const std::string& key, const std::string& index_path) {
  const YAML::Node n = parent[key];
  double v = 0;
  if (!n || !YAML::convert<double>::decode(n, v) || !std::isfinite(v) || v <= 0) {
    throw InputError(n ? location_of(n, index_path) : location_of(parent, index_path), key,
                     "needs a measured value, a finite number > 0");
  }
  return v;
}

std::string text_of(const YAML::Node& run, const std::string& key, const std::string& index_path) {
  const YAML::Node n = run[key];
  if (!n || !n.IsScalar()) throw InputError(location_of(run, index_path), key, "required: a text");
  return n.as<std::string>();
}

// The real single-GPU steps of dir/index.yaml: step time, and total - overhead against the peak the
// framework allocated (JSON contract: memory.per_gpu.overhead is the CUDA context and allocator slack).
std::vector<ValidationRow> step_rows(const std::string& dir) {
  const std::string index_path = dir + "/index.yaml";
  std::vector<ValidationRow> rows;
  for (const auto& run : index_runs(index_path)) {
    ValidationRow row;
    row.scenario = row.name = text_of(run, "scenario", index_path);
    const Scenario s = load_scenario_file(dir + "/" + row.scenario);
    const Plan p = make_plan(s, profile_for(s));
    row.gpu = s.cluster.gpu.key;
    row.predicted_step = p.time.step.value;
    row.mfu = p.time.mfu;
    row.has_memory = true;
    row.predicted_memory = (p.estimate.memory.total - p.estimate.memory.overhead).value;
    row.predicted_to_fit = p.estimate.feasible;
    row.oom = run["oom"] && run["oom"].as<bool>(false);
    if (!row.oom) {
      row.measured_step = measured_value(run, "step_seconds", index_path);
      row.measured_memory = measured_value(run, "peak_allocated_bytes", index_path);
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

std::vector<ValidationRow> validation_rows(const std::string& dir) {
  const std::string index_path = dir + "/index.yaml";
  std::vector<ValidationRow> rows;
  for (const auto& run : index_runs(index_path)) {
    ValidationRow row;
    row.scenario = text_of(run, "scenario", index_path);
    row.source = text_of(run, "source", index_path);
    if (run["class"]) row.failure_class = run["class"].as<std::string>();
    const Scenario s = load_scenario_file(dir + "/" + row.scenario);
    const Plan p = make_plan(s, profile_for(s));
    row.name = s.name;
    row.gpu = s.cluster.gpu.key;
    row.predicted_step = p.time.step.value;
    const YAML::Node measured = run["measured"];
    if (measured && measured["step_seconds"]) {
      row.measured_step = measured_value(measured, "step_seconds", index_path);
    } else if (measured && measured["tokens_per_second_per_gpu"]) {
      // Step time implied by the published per-GPU throughput.
      row.measured_step =
          p.estimate.tokens_per_step / (measured_value(measured, "tokens_per_second_per_gpu", index_path) * s.gpus());
    } else {
      throw InputError(location_of(measured ? measured : run, index_path), "measured",
                       "needs step_seconds or tokens_per_second_per_gpu");
    }
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
      sets.push_back({ValidationKind::steps, std::string(gpu) + "_pytorch", steps + "/index.yaml", step_rows(steps)});
    }
  }
  return sets;
}

int run_validate(const std::string& dir, const std::string& format) {
  const std::vector<ValidationSet> sets = validation_sets(dir);  // all predicted before anything prints
  if (format == "json") {
    const nlohmann::json j = validation_json(sets);
    require_finite_json(j);
    std::cout << j.dump(2) << "\n";
  } else {
    print_validation_tables(sets);
  }
  return 0;
}

}  // namespace tp
