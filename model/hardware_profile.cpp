#include "hardware_profile.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>

#include "errors.h"
#include "scenario.h"
#include "yaml_reader.h"

namespace tp {

double GemmCurve::efficiency(double m, double n, double k) const {
  auto f = [this](double d) { return d / (d + half_dim); };
  return max_efficiency * f(m) * f(n) * f(k);
}

HardwareProfile default_profile(const GpuSpec& gpu) {
  HardwareProfile p;
  p.name = "defaults: " + (gpu.generation.empty() ? std::string("generic") : gpu.generation);
  p.gpu = gpu.key;
  // Large-GEMM efficiencies from vendor-published cuBLAS results and MLPerf-class training runs;
  // see docs/model.md, "Default efficiencies".
  GemmCurve dense16{0.80, 64};
  GemmCurve dense8{0.70, 96};
  GemmCurve dense32{0.85, 32};
  if (gpu.generation == "volta") dense16 = {0.75, 64};
  if (gpu.generation == "ampere") dense16 = {0.74, 64};
  if (gpu.generation == "hopper" || gpu.generation == "blackwell") {
    dense16 = {0.78, 96};
    dense8 = {0.48, 128};
  }
  if (gpu.generation == "ada") dense16 = {0.75, 64};
  if (gpu.generation == "cdna3") {
    dense16 = {0.60, 128};
    dense8 = {0.50, 128};
  }
  p.gemm[static_cast<size_t>(Precision::fp32)] = dense32;
  p.gemm[static_cast<size_t>(Precision::tf32)] = dense16;
  p.gemm[static_cast<size_t>(Precision::fp16)] = dense16;
  p.gemm[static_cast<size_t>(Precision::bf16)] = dense16;
  p.gemm[static_cast<size_t>(Precision::fp8)] = dense8;
  if (gpu.generation == "hopper" || gpu.generation == "blackwell") {
    p.attention_forward = 0.50;  // cuDNN / Transformer Engine fused attention, bf16
    p.attention_backward = 0.36;
  } else {
    p.attention_forward = 0.55;  // FlashAttention-2 on A100 (Dao 2023: 50-73% forward)
    p.attention_backward = 0.40;
  }
  p.idle_power = Watts(gpu.tdp.value * 0.12);
  // ---- Hopper kernel-class efficiencies (until a fitted H100 profile is committed) ----
  // Achieved GB/s of PyTorch's kernels on one H100 SXM at the largest measured size
  // (shared/measurements/h100-sxm/torch-attention-and-kernels.json, scripts/fused_ref.py) divided by
  // the 3.35 TB/s datasheet bandwidth. rotary has no measurement: memory_efficiency.
  if (gpu.generation == "hopper") {
    const std::pair<KernelClass, double> measured_gbps[] = {
        {KernelClass::rmsnorm_fwd, 1815}, {KernelClass::rmsnorm_bwd, 1503}, {KernelClass::layernorm_fwd, 1718},
        {KernelClass::layernorm_bwd, 1518}, {KernelClass::gelu_fwd, 2975}, {KernelClass::gelu_bwd, 2816},
        {KernelClass::swiglu_fwd, 1067}, {KernelClass::swiglu_bwd, 899}, {KernelClass::residual_add, 2962},
        {KernelClass::cast_to_fp32, 1921}, {KernelClass::cast_to_16bit, 2915}, {KernelClass::cross_entropy, 709},
        {KernelClass::adamw, 2517}};
    for (const auto& [k, gbps] : measured_gbps) p.kernel_efficiency[static_cast<size_t>(k)] = gbps * 1e9 / 3.35e12;
  }
  // ---- end of Hopper kernel-class block ----
  return p;
}

namespace {

void read_gemm(MapReader& r, HardwareProfile& p) {
  if (!r.has("gemm")) return;
  MapReader g(r.node("gemm"), r.field("gemm"), r.file());
  for (int i = 0; i < kPrecisionCount; ++i) {
    const char* name = to_string(static_cast<Precision>(i));
    if (!g.has(name)) continue;
    MapReader c(g.node(name), g.field(name), g.file());
    GemmCurve& curve = p.gemm[static_cast<size_t>(i)];
    curve.max_efficiency = c.number("max_efficiency", curve.max_efficiency, 0.01, 1.0);
    curve.half_dim = c.number("half_dim", curve.half_dim, 0.0, 1e6);
    c.finish();
  }
  g.finish();
}

void read_tier(MapReader& r, const char* key, CollectiveTierProfile& t) {
  if (!r.has(key)) return;
  MapReader c(r.node(key), r.field(key), r.file());
  t.bandwidth_efficiency = c.number("bandwidth_efficiency", t.bandwidth_efficiency, 0.01, 1.5);
  t.latency = Seconds(c.quantity("latency", Dim::seconds, t.latency.value));
  c.finish();
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

HardwareProfile load_profile(const std::string& path, const GpuSpec& gpu) {
  YAML::Node root = load_yaml_file(path);
  HardwareProfile p = default_profile(gpu);
  p.name = path;
  MapReader r(root, "", path);
  p.gpu = r.string("gpu", p.gpu);
  read_gemm(r, p);
  if (r.has("attention")) {
    MapReader a(r.node("attention"), "attention", path);
    p.attention_forward = a.number("forward", p.attention_forward, 0.01, 1.0);
    p.attention_backward = a.number("backward", p.attention_backward, 0.01, 1.0);
    p.attention_unfused = a.number("unfused", p.attention_unfused, 0.01, 1.0);
    a.finish();
  }
  p.memory_efficiency = r.number("memory_efficiency", p.memory_efficiency, 0.01, 1.0);
  p.kernel_launch = Seconds(r.quantity("kernel_launch", Dim::seconds, p.kernel_launch.value));
  if (r.has("collectives")) {
    MapReader c(r.node("collectives"), "collectives", path);
    read_tier(c, "intra_node", p.intra_node);
    read_tier(c, "inter_node", p.inter_node);
    c.finish();
  }
  p.pcie_efficiency = r.number("pcie_efficiency", p.pcie_efficiency, 0.01, 1.0);
  if (r.has("power")) {
    MapReader w(r.node("power"), "power", path);
    p.idle_power = Watts(w.quantity("idle", Dim::watts, p.idle_power.value));
    p.busy_power_fraction = w.number("busy_fraction", p.busy_power_fraction, 0.01, 1.5);
    w.finish();
  }
  (void)r.node("fit");  // fit-quality report written by `calibrate fit`, informational
  r.finish();
  if (!p.gpu.empty() && !gpu.key.empty() && p.gpu != gpu.key) {
    throw InputError(location_of(root["gpu"], path), "gpu",
                     "the profile describes '" + p.gpu + "' but the scenario's GPU is '" + gpu.key + "'");
  }
  return p;
}

std::string profile_yaml(const HardwareProfile& p) {
  std::ostringstream out;
  out << "# trainplan hardware profile (docs/calibration.md)\n";
  out << "gpu: " << (p.gpu.empty() ? "\"\"" : p.gpu) << "\n";
  out << "gemm:\n";
  for (int i = 0; i < kPrecisionCount; ++i) {
    const GemmCurve& c = p.gemm[static_cast<size_t>(i)];
    out << "  " << to_string(static_cast<Precision>(i)) << ": {max_efficiency: " << fmt(c.max_efficiency)
        << ", half_dim: " << fmt(c.half_dim) << "}\n";
  }
  out << "attention: {forward: " << fmt(p.attention_forward) << ", backward: " << fmt(p.attention_backward)
      << ", unfused: " << fmt(p.attention_unfused) << "}\n";
  out << "memory_efficiency: " << fmt(p.memory_efficiency) << "\n";
  out << "kernel_launch: " << fmt(p.kernel_launch.value * 1e6) << " us\n";
  out << "collectives:\n";
  out << "  intra_node: {bandwidth_efficiency: " << fmt(p.intra_node.bandwidth_efficiency)
      << ", latency: " << fmt(p.intra_node.latency.value * 1e6) << " us}\n";
  out << "  inter_node: {bandwidth_efficiency: " << fmt(p.inter_node.bandwidth_efficiency)
      << ", latency: " << fmt(p.inter_node.latency.value * 1e6) << " us}\n";
  out << "pcie_efficiency: " << fmt(p.pcie_efficiency) << "\n";
  out << "power: {idle: " << fmt(p.idle_power.value) << " W, busy_fraction: " << fmt(p.busy_power_fraction) << "}\n";
  return out.str();
}

void save_profile(const HardwareProfile& p, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw IoError("cannot write " + tmp);
    out << profile_yaml(p);
    if (!out) throw IoError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw IoError("cannot rename " + tmp + " to " + path);
}

}  // namespace tp

namespace tp {
HardwareProfile profile_for(const Scenario& s) {
  if (s.profile.empty()) return default_profile(s.cluster.gpu);
  return load_profile(s.profile, s.cluster.gpu);
}
}  // namespace tp
