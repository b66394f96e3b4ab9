#include "check.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "fit_internal.h"
#include "gemm_time.h"
#include "kernel_class_time.h"
#include "suite_plan.h"

namespace tp {

namespace {


// Predicted seconds of one measurement, or NaN when the profile does not model it (power, skipped).
double predict_gemm(const HardwareProfile& hw, const GpuSpec& gpu, const Measurement& it) {
  const GemmDims d{static_cast<double>(it.gemm.m), static_cast<double>(it.gemm.n), static_cast<double>(it.gemm.k)};
  return gemm_seconds(hw, gpu, it.dtype, d).value * static_cast<double>(it.gemm.batch);
}

double predict_attention(const HardwareProfile& hw, const GpuSpec& gpu, const Measurement& it) {
  const double peak = attention_peak(gpu, it.dtype).value;
  if (peak <= 0) return fit_detail::kNaN;
  return attention_flops(it) / (peak * profile_attention_efficiency(hw, gpu, it));
}

double predict_collective(const HardwareProfile& hw, const ClusterSpec& cluster, const Measurement& it) {
  GroupShape g;
  g.size = it.ranks;
  g.nodes = std::max(1, it.nodes);
  g.ranks_per_node = std::max(1, it.ranks / g.nodes);
  return fit_detail::planner_time(collective_of(it.op), it.bytes, g, cluster, hw.intra_node.bandwidth_efficiency,
                                  hw.inter_node.bandwidth_efficiency, hw.intra_node.latency.value, hw.inter_node.latency.value);
}

// {family, predicted seconds}; family "" = not checked.
std::pair<std::string, double> predict(const HardwareProfile& hw, const ClusterSpec& cluster, const Measurement& it) {
  const GpuSpec& gpu = cluster.gpu;
  const double hbm = gpu.memory_bandwidth.value;
  switch (it.op) {
    case MeasuredOp::gemm: return {std::string("gemm ") + to_string(it.dtype), predict_gemm(hw, gpu, it)};
    case MeasuredOp::attention_forward:
    case MeasuredOp::attention_backward: {
      std::string f = std::string("attention ") + to_string(it.impl) +
                      (it.op == MeasuredOp::attention_forward ? " forward" : " backward");
      if (it.impl == AttentionImpl::fused && !it.algorithm.empty()) f += " (" + it.algorithm + ")";
      // The scenario's own grids (few sequences x heads per GPU) apart from the wide ones: whether the grid's
      // tail is as modelled shows there (docs/model.md §15, "The attention grid's tail").
      if (it.impl == AttentionImpl::fused && is_scenario_attention_case(it)) f += ", scenario grid";
      return {f, predict_attention(hw, gpu, it)};
    }
    case MeasuredOp::memory_kernel:
      return {std::string("kernel ") + to_string(it.kernel),
              kernel_class_seconds(hw, gpu, it.kernel, it.bytes, static_cast<double>(it.cols), kernel_elements(it)).value};
    case MeasuredOp::kernel_launch: return {"launch", hw.kernel_launch.value};
    case MeasuredOp::power: return {"", fit_detail::kNaN};
    default: break;
  }
  if (is_memory(it.op)) return {"memory", hw.kernel_launch.value + it.bytes / (hw.memory_efficiency * hbm)};
  if (is_collective(it.op)) {
    return {std::string(to_string(it.op)) + (it.nodes > 1 ? " inter_node" : " intra_node"), predict_collective(hw, cluster, it)};
  }
  return {"", fit_detail::kNaN};
}

}  // namespace

std::vector<CheckFamily> check_profile(const HardwareProfile& profile, const ClusterSpec& cluster, const Measurements& m,
                                       const CheckOptions& o) {
  HardwareProfile hw = profile;
  if (!o.exact_shapes) hw.gemm_measured.clear();
  std::vector<CheckFamily> out;
  std::map<std::string, size_t> index;
  std::map<std::string, double> sum_small;
  for (const Measurement& it : m.items) {
    if (!(it.time.median > 0)) continue;
    const auto [family, at_profile_clock] = predict(hw, cluster, it);
    if (family.empty() || !std::isfinite(at_profile_clock)) continue;
    // A GEMM or attention case that ended below the profile's clock is predicted at its own.
    const double pred = at_profile_clock / clock_time_scale(it, hw.clock_hz * 1e-6);
    auto [pos, added] = index.emplace(family, out.size());
    if (added) out.push_back({family, 0, 0, 0, -1, 0});
    CheckFamily& f = out[pos->second];
    const double err = 100.0 * std::fabs(pred - it.time.median) / it.time.median;
    f.count += 1;
    f.mape_percent += err;  // summed here, divided below
    f.max_error_percent = std::max(f.max_error_percent, err);
    if (it.op == MeasuredOp::gemm && it.time.median < 20e-6) {
      f.count_under_20us += 1;
      sum_small[family] += err;
    }
  }
  for (CheckFamily& f : out) {
    f.mape_percent /= f.count;
    if (f.count_under_20us > 0) f.mape_under_20us_percent = sum_small[f.family] / f.count_under_20us;
  }
  return out;
}

std::string check_json(const std::vector<CheckFamily>& families) {
  nlohmann::json list = nlohmann::json::array();
  for (const CheckFamily& f : families) {
    nlohmann::json j = {{"family", f.family}, {"count", f.count}, {"mape_percent", f.mape_percent},
                        {"max_error_percent", f.max_error_percent}};
    if (f.count_under_20us > 0) {
      j["count_under_20us"] = f.count_under_20us;
      j["mape_under_20us_percent"] = f.mape_under_20us_percent;
    }
    list.push_back(j);
  }
  return nlohmann::json{{"families", list}}.dump(2) + "\n";
}

std::string check_table(const std::vector<CheckFamily>& families) {
  std::ostringstream out;
  char line[200];
  std::snprintf(line, sizeof line, "%-40s %6s %9s %9s %16s\n", "family", "count", "MAPE [%]", "max [%]", "MAPE <20us [%]");
  out << line;
  for (const CheckFamily& f : families) {
    std::string small = "-";
    if (f.count_under_20us > 0) {
      char b[48];
      std::snprintf(b, sizeof b, "%.2f (%d)", f.mape_under_20us_percent, f.count_under_20us);
      small = b;
    }
    std::snprintf(line, sizeof line, "%-40s %6d %9.2f %9.2f %16s\n", f.family.c_str(), f.count, f.mape_percent,
                  f.max_error_percent, small.c_str());
    out << line;
  }
  return out.str();
}

}  // namespace tp
