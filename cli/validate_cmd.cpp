#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "error_summary.h"
#include "errors.h"
#include "plan.h"
#include "scenario.h"
#include "yaml_reader.h"

namespace tp {

std::vector<ValidationRow> validation_rows(const std::string& dir) {
  const std::string index_path = dir + "/index.yaml";
  YAML::Node index = load_yaml_file(index_path);
  if (!index["runs"] || !index["runs"].IsSequence()) {
    throw InputError({index_path, 0, 0}, "runs", "expected a list of runs");
  }
  std::vector<ValidationRow> rows;
  for (const auto& run : index["runs"]) {
    ValidationRow row;
    row.scenario = run["scenario"].as<std::string>();
    row.source = run["source"].as<std::string>();
    if (run["class"]) row.failure_class = run["class"].as<std::string>();
    Scenario s = load_scenario_file(dir + "/" + row.scenario);
    Plan p = make_plan(s, profile_for(s));
    row.name = s.name;
    row.gpu = s.cluster.gpu.key;
    row.predicted_step = p.time.step.value;
    const YAML::Node measured = run["measured"];
    if (measured["step_seconds"]) {
      row.measured_step = measured["step_seconds"].as<double>();
    } else if (measured["tokens_per_second_per_gpu"]) {
      // Step time implied by the published per-GPU throughput.
      row.measured_step = p.estimate.tokens_per_step / (measured["tokens_per_second_per_gpu"].as<double>() * s.gpus());
    } else {
      throw InputError(location_of(measured, index_path), "measured", "needs step_seconds or tokens_per_second_per_gpu");
    }
    row.mfu = p.time.mfu;
    rows.push_back(row);
  }
  return rows;
}

int run_validate(const std::string& dir) {
  std::vector<ValidationRow> rows = validation_rows(dir);
  std::printf("%-52s %14s %14s %9s %7s\n", "run", "measured [s]", "predicted [s]", "error", "MFU");
  ErrorSummary all;
  GroupedErrors by_gpu;
  for (const auto& r : rows) {
    const double err = r.predicted_step / r.measured_step - 1.0;
    all.add(err);
    by_gpu[r.gpu].add(err);
    std::printf("%-52s %14.3f %14.3f %8.1f%% %6.1f%%\n", r.name.c_str(), r.measured_step, r.predicted_step, 100 * err,
                100 * r.mfu);
  }
  print_groups("gpu", by_gpu);
  all.print("step time");
  run_validate_sharded(dir);
  return run_validate_h100_pytorch(dir);
}

}  // namespace tp
