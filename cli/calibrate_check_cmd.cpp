// `trainplan calibrate check` and `trainplan calibrate import-torch` (docs/calibration.md).
#include <algorithm>
#include <iostream>

#include "catalog.h"
#include "check.h"
#include "commands.h"
#include "errors.h"
#include "hardware_profile.h"
#include "measurements.h"
#include "scenario.h"
#include "torch_import.h"
#include "yaml_reader.h"

namespace tp {

int run_calibrate_check(const CalibrateCheckOptions& o) {
  const YAML::Node root = load_yaml_file(o.profile);
  // The two files swapped (measurements first): the profile slot holds a `calibrate run` file.
  if (root.IsMap() && root["device"] && root["clocks"]) {
    throw InputError({o.profile, 0, 0}, "", "is a measurement file: `calibrate check` takes the PROFILE (YAML) first, "
                                            "then the MEASUREMENTS (JSON)");
  }
  const Measurements m = read_measurements(o.input);
  std::string key = o.gpu;
  if (key.empty() && root.IsMap() && root["gpu"] && root["gpu"].IsScalar()) key = root["gpu"].Scalar();
  if (key.empty()) key = m.device.gpu_key;
  if (key.empty()) key = guess_gpu_key(m.device.name, m.device.memory_bytes);
  if (key.empty()) {
    throw InputError({o.profile, 0, 0}, "gpu", "neither the profile nor the measurements name a catalog GPU; give --gpu KEY");
  }
  ClusterSpec cluster;
  cluster.key = "check";
  cluster.gpu = Catalog::builtin().gpu(key, {"--gpu", 0, 0}, "gpu");
  cluster.gpus_per_node = std::max(1, m.settings.gpus_per_node);
  cluster.nodes = std::max(1, m.settings.nodes);
  const HardwareProfile hw = load_profile(o.profile, cluster.gpu);
  if (!m.device.gpu_key.empty() && m.device.gpu_key != cluster.gpu.key) {
    std::cerr << "warning: " << o.input << ": measured on " << m.device.gpu_key << ", checked against the profile of "
              << cluster.gpu.key << "\n";
  }
  CheckOptions co;
  co.exact_shapes = !o.no_exact_shapes;
  const std::vector<CheckFamily> families = check_profile(hw, cluster, m, co);
  if (o.format == "json") {
    std::cout << check_json(families);
  } else {
    // Power records are phases, not kernel times: nothing to predict them against.
    const auto power = std::count_if(m.items.begin(), m.items.end(), [](const Measurement& it) { return it.op == MeasuredOp::power; });
    std::cout << "profile " << o.profile << " against " << o.input << " (" << m.items.size() << " measurements"
              << (power > 0 ? ", " + std::to_string(power) + " of them power phases, not checked" : std::string())
              << (co.exact_shapes ? "" : "; measured GEMM shapes ignored") << ")\n"
              << check_table(families);
  }
  return 0;
}

int run_calibrate_import_torch(const std::string& input, const std::string& output, const std::string& gpu_key) {
  const GpuSpec gpu = Catalog::builtin().gpu(gpu_key, {"--gpu", 0, 0}, "gpu");
  const Measurements m = import_torch_file(input, gpu.key, gpu.name);
  write_measurements(m, output);
  std::cout << "imported " << m.items.size() << " measurements (" << m.skipped.size() << " skipped) from " << input
            << " -> " << output << "\n";
  return 0;
}

}  // namespace tp
