// The kernel classes (model/kernel_class.h): per class, the achieved fraction of the datasheet HBM
// bandwidth, eff, of t = bytes / (eff x HBM bandwidth) with `bytes` the kernel's minimal traffic. The
// least-squares fit in relative error, min over c = 1/eff of sum (c x_i / t_i - 1)^2 with
// x_i = bytes_i / HBM bandwidth, has the closed form c = sum(x_i / t_i) / sum((x_i / t_i)^2).
#include <cmath>

#include "fit_internal.h"

namespace tp::fit_detail {

void fit_kernel_classes(const Measurements& m, const FitOptions& o, FitResult& r) {
  const double hbm = o.cluster.gpu.memory_bandwidth.value;
  if (hbm <= 0) return;
  for (int ki = 0; ki < kKernelClassCount; ++ki) {
    const KernelClass k = static_cast<KernelClass>(ki);
    std::vector<const Measurement*> all;
    for (const auto& it : m.items) {
      if (it.op == MeasuredOp::memory_kernel && it.kernel == k && it.bytes > 0 && it.time.median > 0) all.push_back(&it);
    }
    if (all.empty()) continue;
    double sum_u = 0, sum_u2 = 0;
    for (const Measurement* it : all) {
      const double u = it->bytes / hbm / it->time.median;  // = achieved efficiency of this record
      sum_u += u;
      sum_u2 += u * u;
    }
    const double eff = std::min(1.0, sum_u2 / sum_u);  // 1 / c
    r.profile.kernel_efficiency[static_cast<size_t>(ki)] = eff;
    // Every record is used for the single constant; the quality numbers are those of the fit itself.
    std::vector<double> rate, rate_pred, t, t_pred;
    for (const Measurement* it : all) {
      rate.push_back(it->bytes / it->time.median);
      rate_pred.push_back(eff * hbm);
      t.push_back(it->time.median);
      t_pred.push_back(it->bytes / (eff * hbm));
    }
    r.report.families.push_back(quality(std::string("kernel ") + to_string(k), "bandwidth", rate, rate_pred, t, t_pred,
                                        rate, rate_pred, t, t_pred));
  }
}

}  // namespace tp::fit_detail
