#include "calibration_view.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "catalog.h"
#include "fitter.h"
#include "gemm_time.h"
#include "kernel_class_time.h"

namespace tp {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

ClusterSpec fit_cluster(const Measurements& m, const ClusterSpec& scenario_cluster, const std::string& path) {
  std::string key = m.device.gpu_key;
  if (key.empty()) key = guess_gpu_key(m.device.name, m.device.memory_bytes);
  if (key.empty()) return scenario_cluster;
  ClusterSpec c = scenario_cluster;
  c.gpu = Catalog::builtin().gpu(key, {path, 0, 0}, "device.gpu_key");
  c.gpus_per_node = std::max(1, m.settings.gpus_per_node);
  c.nodes = std::max(1, m.settings.nodes);
  return c;
}

void gemm_points(const Measurements& m, const HardwareProfile& hw, const GpuSpec& gpu, int holdout,
                 CalibrationView& v) {
  // Which points the fit held out: every k-th of a dtype in file order, when the dtype has at least 6
  // (calibrate/fitter.cpp, fit_gemm).
  std::map<Precision, int> index, family_size;
  for (const Measurement& it : m.items) family_size[it.dtype] += it.op == MeasuredOp::gemm ? 1 : 0;
  for (const Measurement& it : m.items) {
    if (it.op != MeasuredOp::gemm) continue;
    const int in_family = index[it.dtype]++;  // file order within the dtype, as the fitter counts
    if (it.time.median <= 0) continue;
    const double peak = gpu.peak_for(it.dtype).value;
    if (peak <= 0) continue;
    const GemmDims d{static_cast<double>(it.gemm.m), static_cast<double>(it.gemm.n), static_cast<double>(it.gemm.k)};
    const double predicted = gemm_seconds(hw, gpu, it.dtype, d).value * static_cast<double>(it.gemm.batch);
    GemmPointView p;
    p.dtype = to_string(it.dtype);
    p.shape = shape_text(it);
    p.flops = it.gemm.flops();
    // Stated at the profile's clock, as the fit states it (a case that ended below it ran that much slower).
    p.measured = p.flops / (it.time.median * clock_time_scale(it, hw.clock_hz * 1e-6)) / peak;
    p.fitted = predicted > 0 ? p.flops / predicted / peak : 0;
    p.held_out = family_size[it.dtype] >= 6 && held_out(in_family, holdout);
    v.gemm.push_back(p);
  }
}

void attention_views(const Measurements& m, const HardwareProfile& hw, const GpuSpec& gpu, CalibrationView& v) {
  std::map<std::string, std::vector<double>> eff, predicted;
  for (const Measurement& it : m.items) {
    if (!is_attention(it.op) || it.time.median <= 0) continue;
    const double peak = attention_peak(gpu, it.dtype).value;
    if (peak <= 0) continue;
    const std::string what = it.impl == AttentionImpl::unfused ? "unfused"
                             : it.op == MeasuredOp::attention_forward ? "fused forward" : "fused backward";
    eff[what].push_back(attention_flops(it) / (it.time.median * clock_time_scale(it, hw.clock_hz * 1e-6) * peak));
    predicted[what].push_back(profile_attention_efficiency(hw, gpu, it));
  }
  for (const char* what : {"fused forward", "fused backward", "unfused"}) {
    const auto it = eff.find(what);
    if (it == eff.end()) continue;
    AttentionView a;
    a.what = what;
    a.points = static_cast<int>(it->second.size());
    a.measured_median = median(it->second);
    a.measured_min = *std::min_element(it->second.begin(), it->second.end());
    a.measured_max = *std::max_element(it->second.begin(), it->second.end());
    a.profile = median(predicted[what]);  // the profile's efficiency over the same cases
    v.attention.push_back(a);
  }
}

// What the profile predicts for one measured memory-bound call, B/s: the kernel-class model at the call's
// row length (latency included, as the measured rate includes it), or the plain memory model.
double predicted_bandwidth(const HardwareProfile& hw, const GpuSpec& gpu, const Measurement& it) {
  const double hbm = gpu.memory_bandwidth.value;
  if (it.op == MeasuredOp::memory_kernel) {
    const double row = static_cast<double>(it.cols);
    if (!(it.bytes > 0)) return kernel_class_bandwidth(hw, gpu, it.kernel, row);
    const double t = kernel_class_seconds(hw, gpu, it.kernel, it.bytes, row, kernel_elements(it)).value;
    return t > 0 ? it.bytes / t : 0;
  }
  const double t = hw.kernel_launch.value + it.bytes / (hw.memory_efficiency * hbm);
  return it.bytes > 0 && t > 0 ? it.bytes / t : hw.memory_efficiency * hbm;
}

}  // namespace

std::vector<BandwidthView> bandwidth_views(const Measurements& m, const HardwareProfile& hw, const GpuSpec& gpu) {
  std::map<std::string, std::vector<BandwidthPointView>> cases;
  std::vector<std::string> order;
  for (const Measurement& it : m.items) {
    if (!is_memory(it.op) || it.rate <= 0) continue;
    const std::string kernel = it.op == MeasuredOp::memory_kernel ? to_string(it.kernel) : to_string(it.op);
    if (!cases.count(kernel)) order.push_back(kernel);
    const double row = it.op == MeasuredOp::memory_kernel ? static_cast<double>(it.cols) : 0;
    cases[kernel].push_back({row, it.bytes, it.rate, predicted_bandwidth(hw, gpu, it)});
  }
  std::vector<BandwidthView> out;
  for (const std::string& k : order) {
    std::vector<double> measured, predicted;
    for (const auto& c : cases[k]) measured.push_back(c.measured), predicted.push_back(c.profile);
    BandwidthView b;
    b.kernel = k;
    b.points = static_cast<int>(measured.size());
    b.measured_median = median(measured);
    b.measured_min = *std::min_element(measured.begin(), measured.end());
    b.measured_max = *std::max_element(measured.begin(), measured.end());
    b.profile = median(predicted);
    b.cases = cases[k];
    out.push_back(b);
  }
  return out;
}


CalibrationView calibration_view(const std::string& path, const ClusterSpec& cluster) {
  const Measurements m = read_measurements(path);
  FitOptions options;
  options.cluster = fit_cluster(m, cluster, path);
  const FitResult fit = fit_profile(m, options);
  CalibrationView v;
  v.file = path;
  v.device = m.device.name;
  v.gpu_key = options.cluster.gpu.key;
  v.hbm_datasheet = options.cluster.gpu.memory_bandwidth.value;
  gemm_points(m, fit.profile, options.cluster.gpu, options.holdout_every, v);
  attention_views(m, fit.profile, options.cluster.gpu, v);
  v.bandwidth = bandwidth_views(m, fit.profile, options.cluster.gpu);
  for (const FamilyFit& f : fit.report.families) v.quality.push_back({f.family, f.fitted, f.held_out, f.r2, f.mape});
  v.notes = fit.report.notes;
  return v;
}

}  // namespace tp
