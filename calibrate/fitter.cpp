#include "fitter.h"

#include <array>
#include <cmath>
#include <sstream>

#include "errors.h"
#include "fit_internal.h"

namespace tp {

using namespace fit_detail;

namespace {

// One note per family with no measurement: its profile values are the generation's defaults. (A family
// measured but not fitted says why in its own note.)
void note_unmeasured_families(const Measurements& m, const GpuSpec& gpu, FitResult& r) {
  bool fused = false, unfused = false, memory = false, kernels = false, collectives = false, power = false;
  std::array<bool, kPrecisionCount> gemm{};
  for (const auto& it : m.items) {
    fused = fused || (is_attention(it.op) && it.impl == AttentionImpl::fused);
    unfused = unfused || (is_attention(it.op) && it.impl == AttentionImpl::unfused);
    memory = memory || (is_memory(it.op) && it.op != MeasuredOp::memory_kernel);
    kernels = kernels || it.op == MeasuredOp::memory_kernel;
    collectives = collectives || (is_collective(it.op) && it.ranks > 1);
    power = power || it.op == MeasuredOp::power;
    if (it.op == MeasuredOp::gemm) gemm[static_cast<size_t>(it.dtype)] = true;
  }
  const char* kept = ": not measured; the generation's defaults kept";
  if (!fused) r.report.notes.push_back(std::string("attention fused") + kept);
  if (!unfused) r.report.notes.push_back(std::string("attention unfused") + kept);
  if (!memory) r.report.notes.push_back(std::string("memory") + kept);
  if (!kernels) r.report.notes.push_back(std::string("kernel classes (memory_kernel)") + kept);
  if (!collectives) r.report.notes.push_back(std::string("collectives (multi-rank)") + kept);
  if (!power) r.report.notes.push_back(std::string("power") + kept);
  for (int i = 0; i < kPrecisionCount; ++i) {
    const Precision p = static_cast<Precision>(i);
    if (!gemm[static_cast<size_t>(i)] && gpu.peak_for(p).value > 0) {
      r.report.notes.push_back(std::string("gemm ") + to_string(p) + ": not measured; default model kept");
    }
  }
}

}  // namespace

namespace {
// A fit is written only if the planner can load it: measurements far outside what a GPU does (a time in the
// wrong unit) can fit values past the profile's ranges, which would fail later, in `evaluate`.
void require_loadable(const FitResult& r, const GpuSpec& gpu) {
  try {
    (void)load_profile_text(fitted_profile_yaml(r), "the fitted profile", gpu);
  } catch (const InputError& e) {
    throw InputError({r.provenance.sources.empty() ? std::string("calibrate fit") : r.provenance.sources.front(), 0, 0},
                     e.field(),
                     e.message() + ": the measurements fit a profile outside the planner's ranges; check their times "
                                   "(in seconds), that they are of one GPU, and that it is the " + gpu.key +
                                   " they are fitted for (device.gpu_key, --gpu or --scenario)");
  }
}
}  // namespace

FitResult fit_profile(const Measurements& m, const FitOptions& options) {
  const GpuSpec& gpu = options.cluster.gpu;
  bool any_peak = gpu.memory_bandwidth.value > 0;
  for (int i = 0; i < kPrecisionCount; ++i) any_peak = any_peak || gpu.peak[static_cast<size_t>(i)].value > 0;
  if (!any_peak) {
    throw InputError({}, "gpu", "the fit needs the GPU's datasheet peaks; name a catalog GPU (--gpu) or a scenario (--scenario)");
  }
  FitResult r;
  r.profile = default_profile(gpu);
  r.profile.name = "calibrated: " + (m.device.name.empty() ? gpu.key : m.device.name);
  r.profile.gpu = gpu.key;
  r.provenance = {m.device.name, m.software.driver, m.software.cuda_runtime, m.software.cublas, m.software.cudnn,
                  m.created, utc_now_iso8601(), options.sources};
  // The clock the bursts ran at; the GEMM and attention cases that ended below it are fitted as at it.
  const double clock_mhz = busy_clock_mhz(m);
  if (clock_mhz > 0) r.profile.clock_hz = clock_mhz * 1e6;
  const Measurements at_clock = at_profile_clock(m, clock_mhz, r.report.notes);
  fit_gemm(at_clock, options, r);
  fit_attention(at_clock, options, r);
  fit_memory(m, options, r);
  fit_launch(m, r);
  fit_kernel_classes(m, options, r);
  fit_collectives(m, options, r);
  fit_power(m, options, r);
  bool any = false;
  for (const auto& it : m.items) any = any || it.op != MeasuredOp::power;
  if (!any) r.report.notes.push_back("no kernel measurements: the profile is the generation's defaults");
  note_unmeasured_families(m, gpu, r);
  require_loadable(r, gpu);
  return r;
}

namespace {
// ", key: value", or nothing where the measure is undefined (an R^2 of one record, a MAPE of no held-out
// record): the profile holds no NaN, and `calibrate show` prints an absent one as "-".
std::string defined(const char* key, double value) {
  return std::isfinite(value) ? std::string(key) + ": " + fmt(value) : std::string();
}
}  // namespace

std::string fitted_profile_yaml(const FitResult& r) {
  std::ostringstream out;
  out << "# " << r.profile.name << "\n";
  const Provenance& pv = r.provenance;
  out << "provenance:\n  device: " << quoted(pv.device) << "\n  driver: " << quoted(pv.driver) << "\n  cuda: " << quoted(pv.cuda)
      << "\n  cublas: " << quoted(pv.cublas) << "\n  cudnn: " << quoted(pv.cudnn) << "\n  measured: " << quoted(pv.measured)
      << "\n  fitted: " << quoted(pv.fitted) << "\n  sources:\n";
  for (const auto& s : pv.sources) out << "    - " << quoted(s) << "\n";
  out << profile_yaml(r.profile);
  const FitReport& f = r.report;
  out << "fit:  # written by `trainplan calibrate fit`; informational (R^2 of the rate, MAPE % of the time)\n";
  out << "  families:\n";
  for (const auto& fam : f.families) {
    out << "    - {family: " << quoted(fam.family) << ", r2_of: " << fam.r2_of << ", fitted: " << fam.fitted << ", held_out: " << fam.held_out
        << defined(", r2", fam.r2) << defined(", mape_percent", fam.mape) << defined(", r2_fit", fam.r2_fit)
        << defined(", mape_fit_percent", fam.mape_fit) << "}\n";
  }
  if (!f.collectives.empty()) {
    out << "  collectives:\n";
    for (const auto& c : f.collectives) {
      out << "    - {collective: " << to_string(c.collective) << ", scope: " << c.scope << ", ranks: " << c.ranks
          << ", nodes: " << c.nodes << ", alpha_us: " << fmt(c.alpha * 1e6) << ", busbw_GBps: " << fmt(c.bus_bandwidth / 1e9)
          << ", efficiency: " << fmt(c.efficiency) << ", step_latency_us: " << fmt(c.latency * 1e6)
          << ", points: " << c.points << "}\n";
    }
  }
  if (f.memory_bandwidth > 0) {
    out << "  memory: {bandwidth_GBps: " << fmt(f.memory_bandwidth / 1e9) << ", intercept_us: " << fmt(f.memory_intercept * 1e6);
    for (const auto& [op, bw] : f.memory_bandwidth_per_op) out << ", " << op << "_GBps: " << fmt(bw / 1e9);
    out << "}\n";
  }
  if (f.idle_watts > 0 || f.gemm_watts > 0) {
    out << "  power: {idle_W: " << fmt(f.idle_watts) << ", gemm_W: " << fmt(f.gemm_watts) << ", memory_W: " << fmt(f.memory_watts)
        << "}\n";
  }
  if (!f.notes.empty()) {
    out << "  notes:\n";
    for (const auto& n : f.notes) out << "    - " << quoted(n) << "\n";
  }
  return out.str();
}

void save_fitted_profile(const FitResult& r, const std::string& path) {
  write_output_file(path, [&](std::ostream& out) { out << fitted_profile_yaml(r); }, "the profile");
}

}  // namespace tp
