// Fitter of power: idle watts = median of the idle phase; busy_fraction = GEMM-phase watts / TDP.
#include <algorithm>
#include <cmath>

#include "fit_internal.h"

namespace tp::fit_detail {

void fit_power(const Measurements& m, const FitOptions& o, FitResult& r) {
  std::vector<double> idle, gemm, memory, gemm_rate;
  for (const auto& it : m.items) {
    if (it.op != MeasuredOp::power) continue;
    if (it.phase == "idle") idle.push_back(it.watts);
    if (it.phase == "gemm") gemm.push_back(it.watts);
    if (it.phase == "gemm" && it.rate > 0) gemm_rate.push_back(it.rate);
    if (it.phase == "memory") memory.push_back(it.watts);
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
  // Sustained GEMM rate: the phase's bf16 GEMMs run for seconds at the power cap (docs/calibration.md,
  // "Power"); its FLOP/s over the bf16 peak bounds the GEMMs of fused training steps (docs/model.md §15).
  const double peak = o.cluster.gpu.peak_for(Precision::bf16).value;
  if (!gemm_rate.empty() && peak > 0) {
    r.profile.sustained_gemm_bf16 = std::clamp(median_of(gemm_rate) / peak, 0.01, 1.0);
  }
}

}  // namespace tp::fit_detail
