// Hardware profile YAML: strict reading (unknown keys are errors with file:line:column) and writing.
// The format is documented in docs/calibration.md, "The profile file".
#include <cstdio>
#include <fstream>
#include <sstream>

#include "catalog.h"
#include "errors.h"
#include "hardware_profile.h"
#include "kernel_class_time.h"
#include "output_file.h"
#include "scenario.h"
#include "spec_reader.h"
#include "sustained_clock.h"
#include "yaml_reader.h"

namespace tp {

namespace {

// A kernel's fixed time (a latency, a launch: microseconds) or its time per element (AdamW: picoseconds),
// bounded far above any GPU's: a second of latency or a microsecond per element is a unit slip, which would
// make every step years long.
constexpr double kMostKernelLatency = 1.0;       // s
constexpr double kMostElementTime = 1e-6;        // s per element

Seconds kernel_time(MapReader& c, const char* key, Seconds def, double most) {
  const double t = c.quantity(key, Dim::seconds, def.value);
  if (t > most) c.fail(key, shown(t) + " s is longer than any GPU takes (at most " + shown(most) + " s): a unit slip?");
  return Seconds(t);
}

void read_gemm(MapReader& r, HardwareProfile& p) {
  if (!r.has("gemm")) return;
  MapReader g(r.node("gemm"), r.field("gemm"), r.file());
  for (int i = 0; i < kPrecisionCount; ++i) {
    const char* name = to_string(static_cast<Precision>(i));
    if (!g.has(name)) continue;
    MapReader c(g.node(name), g.field(name), g.file());
    GemmModel& m = p.gemm[static_cast<size_t>(i)];
    m.efficiency = c.number("efficiency", m.efficiency, 0.01, 1.0);
    m.k_half = c.number("k_half", m.k_half, 0.0, 1e6);
    m.latency = kernel_time(c, "latency", m.latency, kMostKernelLatency);
    m.bandwidth_efficiency = c.number("bandwidth_efficiency", m.bandwidth_efficiency, 0.01, 1.0);
    c.finish();
  }
  g.finish();
}

Precision precision_named(MapReader& r, const std::string& key) {
  return r.choice(key, Precision::bf16,
                  {{"fp32", Precision::fp32}, {"tf32", Precision::tf32}, {"fp16", Precision::fp16},
                   {"bf16", Precision::bf16}, {"fp8", Precision::fp8}});
}

// The measured GEMM shapes, each no faster than the GPU's peak allows (a 1 ns time gave an MFU of 146 %).
void read_gemm_measured(MapReader& r, HardwareProfile& p, const GpuSpec& gpu) {
  if (!r.has("gemm_measured")) return;
  const YAML::Node list = r.node("gemm_measured");
  if (!list.IsSequence()) r.fail("gemm_measured", "expected a list of {dtype, m, n, k, time}");
  for (size_t i = 0; i < list.size(); ++i) {
    MapReader e(list[i], r.field("gemm_measured") + "[" + std::to_string(i) + "]", r.file());
    MeasuredGemm g;
    g.dtype = precision_named(e, "dtype");
    g.m = e.integer("m", 0, 1, kMaxGemmDimension);
    g.n = e.integer("n", 0, 1, kMaxGemmDimension);
    g.k = e.integer("k", 0, 1, kMaxGemmDimension);
    if (!e.has("time")) e.fail("time", "missing");
    g.time = Seconds(e.quantity("time", Dim::seconds, 0.0, 1e-9));
    const double peak = gpu.peak_for(g.dtype).value;
    const double fastest = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) / (1.05 * peak);
    if (peak > 0 && g.time.value < fastest) {
      // A peak set below the catalog's (cluster.gpu.peak) is the likelier culprit than the measurement.
      const auto known = Catalog::builtin().gpus().find(gpu.key);
      const bool lowered = known != Catalog::builtin().gpus().end() && known->second.peak_for(g.dtype).value > peak;
      e.fail("time", shown(g.time.value) + " s is faster than the GPU's " + to_string(g.dtype) + " peak allows for this shape (" +
                         shown(fastest) + " s at " + shown(peak / 1e12) + " TFLOP/s)" +
                         (lowered ? "; the scenario's cluster.gpu.peak." + std::string(to_string(g.dtype)) +
                                        " is below the catalog's " + shown(known->second.peak_for(g.dtype).value / 1e12) +
                                        " TFLOP/s this profile was measured against: give a profile measured on this GPU "
                                        "(profile:), or the catalog's peak"
                                  : ""));
    }
    e.finish();
    p.gemm_measured.push_back(g);
  }
  p.normalize_measured_gemms();
}

void read_attention_curve(MapReader& a, const char* key, AttentionCurve& c) {
  if (!a.has(key)) return;
  const YAML::Node n = a.node(key);
  if (n.IsScalar()) {  // a constant efficiency
    c = {a.number(key, c.max_efficiency, 0.01, 1.0), 0, 0, 0};
    return;
  }
  MapReader m(n, a.field(key), a.file());
  c.max_efficiency = m.number("max_efficiency", c.max_efficiency, 0.01, 1.0);
  c.seq_half = m.number("seq_half", c.seq_half, 0.0, 1e7);
  c.head_dim_half = m.number("head_dim_half", c.head_dim_half, 0.0, 1e5);
  c.causal_seq_half = m.number("causal_seq_half", c.causal_seq_half, 0.0, 1e7);
  m.finish();
}

void read_attention(MapReader& r, HardwareProfile& p) {
  if (!r.has("attention")) return;
  MapReader a(r.node("attention"), "attention", r.file());
  p.attention_kernel = read_attention_kernel(a, "kernel", p.attention_kernel);
  read_attention_curve(a, "forward", p.attention_forward);
  read_attention_curve(a, "backward", p.attention_backward);
  p.attention_unfused_measured = a.has("unfused");
  p.attention_unfused = a.number("unfused", p.attention_unfused, 0.01, 1.0);
  a.finish();
}

// kernel_efficiency: {class: fraction}. A file that gives it replaces the defaults' kernel model whole: a class
// it leaves out runs at memory_efficiency, and only its own kernel_shape applies (a profile fitted with one
// efficiency for AdamW must not gain the defaults' element term).
void read_kernels(MapReader& r, HardwareProfile& p) {
  if (!r.has("kernel_efficiency")) return;
  p.kernel_shape = {};
  MapReader k(r.node("kernel_efficiency"), "kernel_efficiency", r.file());
  for (int i = 0; i < kKernelClassCount; ++i) {
    const char* name = to_string(static_cast<KernelClass>(i));
    p.kernel_efficiency[static_cast<size_t>(i)] = k.number(name, 0.0, 0.0, 1.0);
  }
  k.finish();
}

// kernel_shape: {class: {latency: T, row_half: N, element_time: T}}: the shape terms of model/kernel_class_time.h.
// element_time is read for the classes whose time counts elements (AdamW) only; elsewhere it is an error, not
// a term that would be ignored.
void read_kernel_shapes(MapReader& r, HardwareProfile& p) {
  if (!r.has("kernel_shape")) return;
  MapReader k(r.node("kernel_shape"), "kernel_shape", r.file());
  for (int i = 0; i < kKernelClassCount; ++i) {
    const char* name = to_string(static_cast<KernelClass>(i));
    if (!k.has(name)) continue;
    MapReader c(k.node(name), k.field(name), k.file());
    KernelClassShape& s = p.kernel_shape[static_cast<size_t>(i)];
    s.latency = kernel_time(c, "latency", s.latency, kMostKernelLatency);
    s.row_half = c.number("row_half", s.row_half, 0.0, 1e9);
    if (c.has("element_time") && !kernel_class_counts_elements(static_cast<KernelClass>(i))) {
      c.fail("element_time", "is a term of adamw only (SM time per parameter); no other kernel class counts elements");
    }
    s.element_time = kernel_time(c, "element_time", s.element_time, kMostElementTime);
    c.finish();
  }
  k.finish();
}

void read_tier(MapReader& r, const char* key, CollectiveTierProfile& t) {
  if (!r.has(key)) return;
  MapReader c(r.node(key), r.field(key), r.file());
  t.bandwidth_efficiency = c.number("bandwidth_efficiency", t.bandwidth_efficiency, 0.01, 1.5);
  t.latency = kernel_time(c, "latency", t.latency, kMostKernelLatency);
  c.finish();
}

void read_rest(MapReader& r, HardwareProfile& p) {
  p.memory_efficiency = r.number("memory_efficiency", p.memory_efficiency, 0.01, 1.0);
  p.kernel_launch = kernel_time(r, "kernel_launch", p.kernel_launch, kMostKernelLatency);
  if (r.has("collectives")) {
    MapReader c(r.node("collectives"), "collectives", r.file());
    read_tier(c, "intra_node", p.intra_node);
    read_tier(c, "inter_node", p.inter_node);
    c.finish();
  }
  p.pcie_efficiency = r.number("pcie_efficiency", p.pcie_efficiency, 0.01, 1.0);
  if (r.has("power")) {
    MapReader w(r.node("power"), "power", r.file());
    p.idle_power = Watts(w.quantity("idle", Dim::watts, p.idle_power.value));
    p.busy_power_fraction = w.number("busy_fraction", p.busy_power_fraction, 0.01, 1.5);
    p.sustained_clock_hz = w.quantity("sustained_clock", Dim::frequency, p.sustained_clock_hz, kAnyPositive);
    w.finish();
  }
}

namespace {
// The profile's clocks against the GPU's maximum boost: rates timed at a clock far below it, or a sustained
// clock above it, would scale every kernel past the GPU's peak (an MFU of 310 % from `clock: 1 MHz`).
void require_clocks_of_the_gpu(const YAML::Node& root, const std::string& name, const HardwareProfile& p,
                               const GpuSpec& gpu) {
  const double boost = gpu.boost_clock_hz;
  if (boost <= 0) return;
  if (p.clock_hz > 0 && (p.clock_hz < 0.3 * boost || p.clock_hz > 1.05 * boost)) {
    throw InputError(location_of(root["clock"], name), "clock",
                     "the SM clock the rates were timed at, " + shown(p.clock_hz / 1e6) +
                         " MHz, is not one the GPU runs at: its maximum boost clock is " + shown(boost / 1e6) + " MHz");
  }
  const std::string clock_problem = sustained_clock_problem(p.sustained_clock_hz, gpu);
  if (!clock_problem.empty()) {
    const YAML::Node power = root["power"];
    throw InputError(location_of(power.IsMap() ? power["sustained_clock"] : power, name), "power.sustained_clock",
                     clock_problem);
  }
}
}  // namespace

HardwareProfile profile_from_node(const YAML::Node& root, const std::string& name, const GpuSpec& gpu) {
  // An empty file (a truncated copy, a wrong path's placeholder) is no profile: it would plan with the
  // generation's defaults under the file's name.
  if (!root.IsDefined() || root.IsNull() || (root.IsMap() && root.size() == 0)) {
    throw InputError({name, 0, 0}, "",
                     "holds no hardware profile (the file is empty, only comments or {}); `trainplan calibrate fit` "
                     "writes one (docs/calibration.md)");
  }
  // A measurement file of `calibrate run` (its device and clocks) given where a profile goes.
  if (root.IsMap() && root["device"] && root["clocks"]) {
    throw InputError(location_of(root, name), "",
                     "is a measurement file of `trainplan calibrate run`, not a hardware profile: `trainplan calibrate "
                     "fit " + name + " -o profile.yaml` fits one from it (docs/calibration.md)");
  }
  HardwareProfile p = default_profile(gpu);
  p.name = name;
  MapReader r(root, "", name);
  p.gpu = Catalog::builtin().gpu_key_of(r.string("gpu", p.gpu));  // an alias (h200) read as its key
  // Before the measured shapes, which are checked against this GPU's peaks: the mismatch is the error.
  if (!p.gpu.empty() && !gpu.key.empty() && p.gpu != gpu.key) {
    throw InputError(location_of(root["gpu"], name), "gpu",
                     "the profile describes '" + p.gpu + "' but the scenario's GPU is '" + gpu.key + "'");
  }
  p.clock_hz = r.quantity("clock", Dim::frequency, p.clock_hz, kAnyPositive);
  read_gemm(r, p);
  read_gemm_measured(r, p, gpu);
  read_attention(r, p);
  read_kernels(r, p);
  read_kernel_shapes(r, p);
  read_rest(r, p);
  (void)r.node("provenance");  // where the profile came from, informational
  (void)r.node("fit");         // fit-quality report written by `calibrate fit`, informational
  r.finish();
  require_clocks_of_the_gpu(root, name, p, gpu);
  return p;
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string curve_yaml(const AttentionCurve& c) {
  return "{max_efficiency: " + fmt(c.max_efficiency) + ", seq_half: " + fmt(c.seq_half) +
         ", head_dim_half: " + fmt(c.head_dim_half) + ", causal_seq_half: " + fmt(c.causal_seq_half) + "}";
}

void write_gemm(std::ostream& out, const HardwareProfile& p) {
  out << "gemm:  # t = latency + smooth_max(2MNK / (peak eff K/(K+k_half)), bytes / (bw_eff HBM))\n";
  for (int i = 0; i < kPrecisionCount; ++i) {
    const GemmModel& m = p.gemm[static_cast<size_t>(i)];
    out << "  " << to_string(static_cast<Precision>(i)) << ": {efficiency: " << fmt(m.efficiency)
        << ", k_half: " << fmt(m.k_half) << ", latency: " << fmt(m.latency.value * 1e6)
        << " us, bandwidth_efficiency: " << fmt(m.bandwidth_efficiency) << "}\n";
  }
  if (p.gemm_measured.empty()) return;
  out << "gemm_measured:  # exact shapes: gemm_seconds returns these times\n";
  for (const MeasuredGemm& g : p.gemm_measured) {
    out << "  - {dtype: " << to_string(g.dtype) << ", m: " << g.m << ", n: " << g.n << ", k: " << g.k
        << ", time: " << fmt(g.time.value * 1e6) << " us}\n";
  }
}

void write_kernels(std::ostream& out, const HardwareProfile& p) {
  bool any = false;
  for (double e : p.kernel_efficiency) any = any || e > 0;
  if (!any) return;
  out << "kernel_efficiency:  # achieved / datasheet HBM bandwidth per kernel class\n";
  for (int i = 0; i < kKernelClassCount; ++i) {
    const double e = p.kernel_efficiency[static_cast<size_t>(i)];
    if (e > 0) out << "  " << to_string(static_cast<KernelClass>(i)) << ": " << fmt(e) << "\n";
  }
  bool shaped = false;
  for (const KernelClassShape& s : p.kernel_shape) shaped = shaped || s.any();
  if (!shaped) return;
  out << "kernel_shape:  # t = latency + bytes / (eff HBM) (1 + (row_half / row)^4)^(1/4) + elements element_time\n";
  for (int i = 0; i < kKernelClassCount; ++i) {
    const KernelClassShape& s = p.kernel_shape[static_cast<size_t>(i)];
    if (!s.any()) continue;
    out << "  " << to_string(static_cast<KernelClass>(i)) << ": {latency: " << fmt(s.latency.value * 1e6)
        << " us, row_half: " << fmt(s.row_half);
    if (s.element_time.value > 0) out << ", element_time: " << fmt(s.element_time.value * 1e12) << " ps";
    out << "}\n";
  }
}

}  // namespace

HardwareProfile load_profile(const std::string& path, const GpuSpec& gpu) {
  return profile_from_node(load_yaml_file(path), path, gpu);
}

HardwareProfile load_profile_text(const std::string& text, const std::string& name, const GpuSpec& gpu,
                                  std::uint64_t max_nodes) {
  return profile_from_node(parse_yaml_text(text, name, max_nodes), name, gpu);
}

std::string profile_yaml(const HardwareProfile& p) {
  std::ostringstream out;
  out << "# trainplan hardware profile (docs/calibration.md)\n";
  out << "gpu: " << (p.gpu.empty() ? "\"\"" : p.gpu) << "\n";
  if (p.clock_hz > 0) out << "clock: " << fmt(p.clock_hz * 1e-6) << " MHz  # SM clock of the measured GEMM and attention rates\n";
  write_gemm(out, p);
  out << "attention:\n  kernel: " << to_string(p.attention_kernel) << "  # the fused kernel the curves describe\n"
      << "  forward: " << curve_yaml(p.attention_forward) << "\n  backward: " << curve_yaml(p.attention_backward)
      << "\n  unfused: " << fmt(p.attention_unfused) << "\n";
  out << "memory_efficiency: " << fmt(p.memory_efficiency) << "\n";
  write_kernels(out, p);
  out << "kernel_launch: " << fmt(p.kernel_launch.value * 1e6) << " us\n";
  out << "collectives:\n";
  out << "  intra_node: {bandwidth_efficiency: " << fmt(p.intra_node.bandwidth_efficiency)
      << ", latency: " << fmt(p.intra_node.latency.value * 1e6) << " us}\n";
  out << "  inter_node: {bandwidth_efficiency: " << fmt(p.inter_node.bandwidth_efficiency)
      << ", latency: " << fmt(p.inter_node.latency.value * 1e6) << " us}\n";
  out << "pcie_efficiency: " << fmt(p.pcie_efficiency) << "\n";
  out << "power: {idle: " << fmt(p.idle_power.value) << " W, busy_fraction: " << fmt(p.busy_power_fraction);
  if (p.sustained_clock_hz > 0) out << ", sustained_clock: " << fmt(p.sustained_clock_hz * 1e-6) << " MHz";
  out << "}\n";
  return out.str();
}

void save_profile(const HardwareProfile& p, const std::string& path) {
  write_output_file(path, [&](std::ostream& out) { out << profile_yaml(p); }, "the profile");
}

}  // namespace tp
