// Fitter of power: idle watts = median of the idle phase; busy_fraction = GEMM-phase watts / TDP; the
// sustained clock from the GEMM phase's rate.
#include <algorithm>
#include <cmath>

#include "fit_internal.h"
#include "gemm_time.h"

namespace tp::fit_detail {

void fit_power(const Measurements& m, const FitOptions& o, FitResult& r) {
  std::vector<double> idle, gemm, memory, gemm_rate;
  int unsampled = 0;
  for (const auto& it : m.items) {
    if (it.op != MeasuredOp::power) continue;
    // A phase NVML gave no sample of records 0 W (cuda_runner.cpp sample_phase): no power to fit from it
    // (a GPU that draws 0 W idle gave a profile of idle: 0 W, busy_fraction 0.01).
    if (it.watts <= 0) {
      ++unsampled;
      continue;
    }
    if (it.phase == "idle") idle.push_back(it.watts);
    if (it.phase == "gemm") gemm.push_back(it.watts);
    if (it.phase == "gemm" && it.rate > 0) gemm_rate.push_back(it.rate);
    if (it.phase == "memory") memory.push_back(it.watts);
  }
  if (unsampled > 0) {
    r.report.notes.push_back("power: " + std::to_string(unsampled) + " phase(s) recorded 0 W (no NVML sample); not fitted from");
  }
  if (idle.empty() && gemm.empty()) return;
  r.report.idle_watts = median_of(idle);
  r.report.gemm_watts = median_of(gemm);
  r.report.memory_watts = median_of(memory);
  if (!idle.empty()) r.profile.idle_power = Watts(r.report.idle_watts);
  const double tdp = o.cluster.gpu.tdp.value;
  if (!gemm.empty() && tdp > 0) {
    double f = r.report.gemm_watts / tdp;
    if (f > 1.5) {
      r.report.notes.push_back("power: GEMM-phase power " + fmt(r.report.gemm_watts) + " W is far above the TDP; clamped");
      f = 1.5;
    }
    r.profile.busy_power_fraction = std::max(0.01, f);
  } else if (!gemm.empty()) {
    r.report.notes.push_back("power: the GPU has no TDP in the catalog; busy_fraction kept");
  }
  // Sustained clock: the phase's bf16 8192^3 GEMMs run back to back for seconds at the power cap; their
  // rate against the same GEMM's burst time (the fitted profile) is the clock they held against the
  // clock of the bursts (docs/model.md §15, "Sustained clock").
  if (gemm_rate.empty()) return;
  if (r.profile.clock_hz <= 0) {
    r.report.notes.push_back("power: the measurements record no SM clock; the sustained clock is not fitted");
    return;
  }
  const GemmDims phase_gemm{8192, 8192, 8192};
  const double burst_seconds = gemm_seconds(r.profile, o.cluster.gpu, Precision::bf16, phase_gemm).value;
  if (burst_seconds <= 0) return;  // no bf16 peak: no burst rate to compare with
  const double burst_rate = phase_gemm.flops() / burst_seconds;
  r.profile.sustained_clock_hz = r.profile.clock_hz * std::min(1.0, median_of(gemm_rate) / burst_rate);
}

}  // namespace tp::fit_detail
