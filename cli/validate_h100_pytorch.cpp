// `trainplan validate`, second set: real single-H100 steps in PyTorch + Hugging Face
// (scenarios/validation/h100-pytorch/index.yaml): step time against the median step and memory
// (total - overhead) against torch.cuda.max_memory_allocated, and the out-of-memory verdict.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "error_summary.h"
#include "errors.h"
#include "plan.h"
#include "scenario.h"

namespace tp {
int run_validate_h100_pytorch(const std::string& dir) {
  const std::string set_dir = dir + "/h100-pytorch";
  const std::string index_path = set_dir + "/index.yaml";
  if (!std::filesystem::exists(index_path)) return 0;
  YAML::Node index = load_yaml_file(index_path);
  if (!index["runs"] || !index["runs"].IsSequence()) throw InputError({index_path, 0, 0}, "runs", "expected a list of runs");
  std::printf("\nReal H100 steps, PyTorch + Hugging Face (%s)\n", index_path.c_str());
  std::printf("%-34s %10s %10s %8s %11s %11s %8s\n", "run", "meas. [s]", "pred. [s]", "error", "meas. [GB]", "pred. [GB]",
              "error");
  ErrorSummary step, memory;
  for (const auto& run : index["runs"]) {
    const std::string file = run["scenario"].as<std::string>();
    const Scenario s = load_scenario_file(set_dir + "/" + file);
    const Plan p = make_plan(s, profile_for(s));
    const double allocated = (p.estimate.memory.total - p.estimate.memory.overhead).value;
    if (run["oom"]) {
      std::printf("%-34s %10s %10.3f %8s %11s %11.2f   out of memory; predicted %s\n", file.c_str(), "-",
                  p.time.step.value, "", "OOM", allocated / 1e9, p.estimate.feasible ? "to fit" : "not to fit");
      continue;
    }
    const double ms = run["step_seconds"].as<double>(), mm = run["peak_allocated_bytes"].as<double>();
    const double es = p.time.step.value / ms - 1.0, em = allocated / mm - 1.0;
    step.add(es);
    memory.add(em);
    std::printf("%-34s %10.3f %10.3f %7.1f%% %11.2f %11.2f %7.1f%%\n", file.c_str(), ms, p.time.step.value, 100 * es,
                mm / 1e9, allocated / 1e9, 100 * em);
  }
  step.print("step time");
  memory.print("memory (total - overhead vs peak allocated)");
  return 0;
}

}  // namespace tp
