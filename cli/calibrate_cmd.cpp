// `trainplan calibrate run | fit | show` (docs/calibration.md).
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <vector>

#include "catalog.h"
#include "commands.h"
#include "errors.h"
#include "fitter.h"
#include "format_units.h"
#include "gemm_time.h"
#include "hardware_profile.h"
#include "kernel_class_time.h"
#include "measurements.h"
#include "scenario.h"
#include "suite_plan.h"
#include "yaml_reader.h"


namespace tp {

namespace {

std::string trim_label(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

// trainplan-calibrate-run, next to this executable (/proc/self/exe).
std::filesystem::path calibration_runner_path() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = ec ? std::filesystem::current_path() : self.parent_path();
  return dir / "trainplan-calibrate-run";
}

// Whether two files' devices can be one GPU: the same catalog key where both name one, the same memory (within
// 5 %) where both measured it, else the same name (torch imports name the catalog GPU, `calibrate run` the
// driver's name: "NVIDIA H100 SXM5 80GB" and "NVIDIA H100 80GB HBM3" are one GPU).
bool same_gpu(const DeviceInfo& a, const DeviceInfo& b) {
  const bool both_keyed = !a.gpu_key.empty() && !b.gpu_key.empty();
  if (both_keyed && a.gpu_key != b.gpu_key) return false;
  if (a.memory_bytes > 0 && b.memory_bytes > 0) return std::fabs(a.memory_bytes / b.memory_bytes - 1) <= 0.05;
  return both_keyed || a.name.empty() || b.name.empty() || a.name == b.name;
}

// The cluster the fit compares against: the scenario's, else the catalog GPU (named, recorded in the
// file, or guessed from the device name) with its NVLink as the intra-node tier.
ClusterSpec fit_cluster(const CalibrateFitOptions& o, const Measurements& m) {
  if (!o.scenario.empty()) {
    // The scenario's GPU against the file's record of its device (H200 timings fitted as an RTX 3090 gave
    // degenerate curves, exit 0, no word; a CLI audit, 2026-12-01): done as asked, said, as with --gpu.
    const ClusterSpec c = load_scenario_file(o.scenario).cluster;
    const double memory = m.device.memory_bytes;
    const bool memory_differs = memory > 0 && c.gpu.memory.value > 0 && std::fabs(memory / c.gpu.memory.value - 1) > 0.15;
    const bool key_differs = !m.device.gpu_key.empty() && !c.gpu.key.empty() && m.device.gpu_key != c.gpu.key;
    if (key_differs || memory_differs) {
      std::fprintf(stderr, "warning: %s: the file's device is '%s' (%s, %.0f GB); fitted as %s's GPU %s (%.0f GB) as asked\n",
                   o.input.c_str(), m.device.name.c_str(), m.device.gpu_key.empty() ? "no catalog key" : m.device.gpu_key.c_str(),
                   memory / 1e9, o.scenario.c_str(), c.gpu.key.empty() ? c.gpu.name.c_str() : c.gpu.key.c_str(),
                   c.gpu.memory.value / 1e9);
    }
    return c;
  }
  std::string key = o.gpu;
  if (key.empty()) key = m.device.gpu_key;
  if (key.empty()) key = guess_gpu_key(m.device.name, m.device.memory_bytes);
  if (key.empty()) {
    throw InputError({o.input, 0, 0}, "device.name",
                     "cannot tell which catalog GPU '" + m.device.name + "' is; give --gpu KEY or --scenario FILE");
  }
  // Blame the source of the key: --gpu, the file's device.gpu_key, or the guess from device.name.
  const bool from_flag = !o.gpu.empty();
  const bool from_file = !from_flag && !m.device.gpu_key.empty();
  const SourceLocation where = from_flag ? SourceLocation{"--gpu", 0, 0} : SourceLocation{o.input, 0, 0};
  const std::string field = from_flag ? "--gpu" : from_file ? "device.gpu_key" : "device.name";
  ClusterSpec c;
  c.gpu = Catalog::builtin().gpu(key, where, field);
  // A device whose memory is not the catalog GPU's (an H200's 141 GB recorded as an H100) is fitted against
  // the wrong peaks: said, since only the user knows which is right.
  const double memory = m.device.memory_bytes;
  const bool memory_differs = memory > 0 && std::fabs(memory / c.gpu.memory.value - 1) > 0.15;
  if (!from_flag && memory_differs) {
    std::fprintf(stderr, "warning: %s: the device '%s' has %.0f GB of memory, the catalog's %s %.0f GB: give --gpu KEY if "
                         "it is another GPU\n", o.input.c_str(), m.device.name.c_str(), memory / 1e9, c.gpu.key.c_str(),
                 c.gpu.memory.value / 1e9);
  }
  // --gpu against the file's own record of its device (an H100 file fitted as an H200): done as asked, said.
  const bool key_differs = !m.device.gpu_key.empty() && m.device.gpu_key != c.gpu.key;
  if (from_flag && (key_differs || memory_differs)) {
    std::fprintf(stderr, "warning: %s: the file's device is '%s' (%s, %.0f GB); fitted as --gpu %s (%.0f GB) as asked\n",
                 o.input.c_str(), m.device.name.c_str(), m.device.gpu_key.empty() ? "no catalog key" : m.device.gpu_key.c_str(),
                 memory / 1e9, c.gpu.key.c_str(), c.gpu.memory.value / 1e9);
  }
  c.key = "calibration";
  c.gpus_per_node = std::max(1, m.settings.gpus_per_node);
  c.nodes = std::max(1, m.settings.nodes);
  return c;
}

std::string pct(double v) {
  if (std::isnan(v)) return "    -";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%5.2f", v);
  return buf;
}

// Per kernel class, the terms of t = latency + bytes / (eff HBM) (1 + (row_half / row)^4)^(1/4) + elements
// element_time (model/kernel_class_time.h): only the classes the profile fitted; "-" for a term it does not have.
void print_kernel_classes(const HardwareProfile& p) {
  bool header = false;
  for (int i = 0; i < kKernelClassCount; ++i) {
    const KernelClass k = static_cast<KernelClass>(i);
    const double e = p.kernel_efficiency[static_cast<size_t>(i)];
    const KernelClassShape& shape = p.kernel_shape_of(k);
    if (!(e > 0) && !shape.any()) continue;
    if (!header) {
      std::printf("  kernel classes: t = latency + bytes / (eff HBM) (1 + (row_half / row)^4)^(1/4) + elements element_time\n");
      std::printf("    %-14s %8s %22s %14s %18s\n", "class", "eff", "row_half [elements]", "latency [us]", "element_time [ps]");
      header = true;
    }
    char row_half[32] = "-", latency[32] = "-", element[32] = "-";
    if (shape.row_half > 0) std::snprintf(row_half, sizeof row_half, "%.0f", shape.row_half);
    if (shape.latency.value > 0) std::snprintf(latency, sizeof latency, "%.2f", shape.latency.value * 1e6);
    if (shape.element_time.value > 0 && kernel_class_counts_elements(k)) {
      std::snprintf(element, sizeof element, "%.3f", shape.element_time.value * 1e12);
    }
    std::printf("    %-14s %8.3f %22s %14s %18s\n", to_string(k), p.efficiency_of(k), row_half, latency, element);
  }
}

}  // namespace

int run_calibrate_run(const CalibrateRunOptions& o) {
  // Validate the inputs first, so that their errors come before any device question.
  (void)parse_suites(o.suites);
  if (!o.scenario.empty()) (void)load_scenario_file(o.scenario);
  if (o.output.empty()) throw InputError({"command line", 0, 0}, "-o", "an output file is required");
  check_output_target(o.output, "the measurements file");
  if (!o.gpu.empty()) (void)Catalog::builtin().gpu(o.gpu, {"--gpu", 0, 0}, "--gpu");
  // The kernels live in a separate executable beside this one, so that trainplan itself loads no CUDA
  // library (docs/calibration.md, "The runner"); exec keeps the process, its environment and MPI ranks.
  const std::filesystem::path runner = calibration_runner_path();
  std::vector<std::string> args{runner.string(), "--suite", o.suites, "-o", o.output};
  if (!o.scenario.empty()) args.insert(args.end(), {"--scenario", o.scenario});
  if (!o.gpu.empty()) args.insert(args.end(), {"--gpu", o.gpu});
  if (o.max_bytes > 0) args.insert(args.end(), {"--max-bytes", std::to_string(o.max_bytes)});
  if (o.quick) args.emplace_back("--quick");
  if (o.no_flush) args.emplace_back("--no-flush");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (access(runner.c_str(), X_OK) == 0) {
    std::cout.flush();
    execv(runner.c_str(), argv.data());
    std::cerr << "error: cannot start " << runner.string() << ": " << std::strerror(errno) << "\n";
    return 3;
  }
  std::cerr << "error: this build has no CUDA support: `calibrate run` needs " << runner.string()
            << ", built with the CUDA toolkit (nvcc, cuBLASLt; see docs/calibration.md). `calibrate fit` and "
               "`calibrate show` work in any build.\n";
  return 3;
}

int run_calibrate_fit(const CalibrateFitOptions& o) {
  if (!o.output.empty()) check_output_target(o.output, "the profile");
  Measurements m = read_measurements(o.input);
  FitOptions fo;
  fo.sources.push_back(o.input);
  for (const std::string& more : o.more_inputs) {
    const Measurements extra = read_measurements(more);
    if (!same_gpu(extra.device, m.device)) {
      throw InputError({more, 0, 0}, "device.name",
                       "measured on '" + extra.device.name + "', " + o.input + " on '" + m.device.name +
                           "': a profile describes one GPU; fit each GPU's measurements apart");
    }
    m.items.insert(m.items.end(), extra.items.begin(), extra.items.end());
    fo.sources.push_back(more);
  }
  // Nothing measured is nothing to fit: a profile of the defaults under a fitted name would pass for a
  // calibration (a CLI audit, 2026-12-01).
  if (m.items.empty()) {
    throw InputError({o.input, 0, 0}, "measurements",
                     "no measurements to fit" + std::string(o.more_inputs.empty() ? "" : " in any of the files") +
                         "; the generation's defaults need no profile (leave `profile` out)");
  }
  fo.cluster = fit_cluster(o, m);
  fo.holdout_every = o.holdout_every;
  const FitResult r = fit_profile(m, fo);
  if (o.output.empty()) {
    std::cout << fitted_profile_yaml(r);
    return 0;
  }
  save_fitted_profile(r, o.output);
  std::cout << "fitted " << m.items.size() << " measurements of " << m.device.name << " (" << fo.cluster.gpu.key << ") -> "
            << o.output << "\n";
  std::printf("  %-44s %6s %8s %9s %9s\n", "family", "fitted", "held-out", "R2", "MAPE [%]");
  for (const auto& f : r.report.families) {
    std::printf("  %-44s %6d %8d %9s %9s\n", trim_label(f.family, 44).c_str(), f.fitted, f.held_out, pct(f.r2).c_str(),
                pct(f.mape).c_str());
  }
  for (const auto& n : r.report.notes) std::cout << "  note: " << n << "\n";
  return 0;
}

int run_calibrate_show(const std::string& path, const std::string& gpu_key) {
  YAML::Node root = load_yaml_file(path);
  std::string key = gpu_key;
  const bool from_file = key.empty() && root.IsMap() && root["gpu"] && root["gpu"].IsScalar();
  if (from_file) key = root["gpu"].Scalar();
  GpuSpec gpu;
  // An unknown key is blamed where it was written: the profile's gpu:, or --gpu.
  if (!key.empty()) gpu = Catalog::builtin().gpu(key, from_file ? location_of(root["gpu"], path) : SourceLocation{"--gpu", 0, 0}, "gpu");
  const HardwareProfile p = load_profile(path, gpu);
  std::printf("hardware profile %s (gpu: %s)\n", path.c_str(), p.gpu.empty() ? "any" : p.gpu.c_str());
  std::printf("  GEMM time = latency + smooth_max(2MNK / (peak eff K/(K+k_half)), bytes / (bw_eff HBM))\n");
  std::printf("  %-6s %8s %8s %12s %8s %12s %12s %14s\n", "dtype", "eff", "k_half", "latency", "bw_eff", "t 1024^3", "t 8192^3",
              "TFLOP/s 8192^3");
  for (int i = 0; i < kPrecisionCount; ++i) {
    const Precision pr = static_cast<Precision>(i);
    const GemmModel& c = p.gemm_for(pr);
    // Times need the GPU's peak: without one (a profile naming no GPU, an unsupported precision) they are "-".
    const bool timed = gpu.peak_for(pr).value > 0;
    const double t1 = gemm_model_seconds(c, gpu, pr, {1024, 1024, 1024}).value;
    const double t8 = gemm_model_seconds(c, gpu, pr, {8192, 8192, 8192}).value;
    const auto us = [&](double t) { return timed ? format_fixed(t * 1e6, 2) + " us" : std::string("-"); };
    std::printf("  %-6s %8.3f %8.1f %9.2f us %8.3f %12s %12s %14s\n", to_string(pr), c.efficiency, c.k_half,
                c.latency.value * 1e6, c.bandwidth_efficiency, us(t1).c_str(), us(t8).c_str(),
                timed ? std::to_string(static_cast<int>(std::lround(2.0 * 8192 * 8192 * 8192 / t8 / 1e12))).c_str() : "-");
  }
  std::printf("  measured GEMM shapes (looked up exactly): %zu\n", p.gemm_measured.size());
  for (const auto& [name, c] : {std::pair<const char*, const AttentionCurve&>{"forward", p.attention_forward}, {"backward", p.attention_backward}}) {
    std::printf("  fused attention %-8s %.3f x s/(s+%.0f) x d/(d+%.1f), causal x s/(s+%.0f); s 4096 d 128 causal: %.3f\n", name,
                c.max_efficiency, c.seq_half, c.head_dim_half, c.causal_seq_half, c.efficiency(4096, 128, true));
  }
  std::printf("  fused attention kernel %s (what the two curves describe)\n", to_string(p.attention_kernel));
  std::printf("  unfused attention  %.3f (of the 16-bit peak)\n", p.attention_unfused);
  print_kernel_classes(p);
  std::printf("  memory efficiency  %.3f", p.memory_efficiency);
  if (gpu.memory_bandwidth.value > 0) std::printf(" (%.0f GB/s of %.0f GB/s)", p.memory_efficiency * gpu.memory_bandwidth.value / 1e9, gpu.memory_bandwidth.value / 1e9);
  std::printf("\n  kernel launch      %.2f us\n", p.kernel_launch.value * 1e6);
  std::printf("  intra-node         bandwidth efficiency %.3f, latency %.2f us%s\n", p.intra_node.bandwidth_efficiency,
              p.intra_node.latency.value * 1e6, p.intra_node.latency.value > 0 ? "" : " (the cluster's)");
  std::printf("  inter-node         bandwidth efficiency %.3f, latency %.2f us%s\n", p.inter_node.bandwidth_efficiency,
              p.inter_node.latency.value * 1e6, p.inter_node.latency.value > 0 ? "" : " (the cluster's)");
  std::printf("  PCIe efficiency    %.3f\n", p.pcie_efficiency);
  std::printf("  power              idle %.0f W, busy %.3f x TDP\n", p.idle_power.value, p.busy_power_fraction);
  if (p.clock_hz > 0) std::printf("  clock              %.0f MHz (the SM clock the GEMM and attention rates stand for)\n", p.clock_hz / 1e6);
  if (p.sustained_clock_hz > 0) std::printf("  sustained clock    %.0f MHz (back-to-back GEMMs at the power cap)\n", p.sustained_clock_hz / 1e6);
  const YAML::Node fit = root["fit"];
  if (fit && fit["families"] && fit["families"].IsSequence()) {
    std::printf("  fit quality (held-out measurements):\n");
    std::printf("    %-44s %6s %8s %9s %9s\n", "family", "fitted", "held-out", "R2", "MAPE [%]");
    for (const auto& f : fit["families"]) {
      auto num = [&](const char* k) {
        try {
          return f[k] ? f[k].as<double>() : std::nan("");
        } catch (const YAML::Exception&) {
          return std::nan("");
        }
      };
      std::printf("    %-44s %6.0f %8.0f %9s %9s\n", trim_label(f["family"] ? f["family"].as<std::string>() : "?", 44).c_str(),
                  num("fitted"), num("held_out"), pct(num("r2")).c_str(), pct(num("mape_percent")).c_str());
    }
  }
  if (fit && fit["notes"] && fit["notes"].IsSequence()) {
    for (const auto& n : fit["notes"]) std::printf("  note: %s\n", n.as<std::string>().c_str());
  }
  return 0;
}

}  // namespace tp
