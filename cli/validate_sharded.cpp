// `trainplan validate`, third set: published sharded-data-parallel and Megatron-Core runs
// (scenarios/validation/sharded/index.yaml, written by scripts/sharded_scenarios.py from
// published-sharded-runs.yaml): step time against the step each run's published metric implies, per run,
// per failure class, per GPU and for the whole set.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "error_summary.h"

namespace tp {
int run_validate_sharded(const std::string& dir) {
  const std::string set_dir = dir + "/sharded";
  if (!std::filesystem::exists(set_dir + "/index.yaml")) return 0;
  const std::vector<ValidationRow> rows = validation_rows(set_dir);
  std::printf("\nPublished sharded and Megatron-Core runs (%s/index.yaml)\n", set_dir.c_str());
  std::printf("%-52s %-22s %12s %12s %8s %7s\n", "run", "class", "meas. [s]", "pred. [s]", "error", "MFU");
  ErrorSummary all;
  GroupedErrors by_class, by_gpu;
  for (const auto& r : rows) {
    const double err = r.predicted_step / r.measured_step - 1.0;
    all.add(err);
    by_class[r.failure_class].add(err);
    by_gpu[r.gpu].add(err);
    std::printf("%-52s %-22s %12.3f %12.3f %7.1f%% %6.1f%%\n", r.name.c_str(), r.failure_class.c_str(), r.measured_step,
                r.predicted_step, 100 * err, 100 * r.mfu);
  }
  print_groups("class", by_class);
  print_groups("gpu", by_gpu);
  all.print("step time");
  return 0;
}

}  // namespace tp
