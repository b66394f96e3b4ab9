// The kernel classes (model/kernel_class.h): per class, the model of model/kernel_class_time.h,
//   t = latency + bytes / (eff x HBM bandwidth) x (1 + (row_half / row)^4)^(1/4),
// with `bytes` the kernel's minimal traffic. Two constants per class, chosen by what the kernel is
// (docs/calibration.md, "The kernel-class model"): row-wise kernels (norms, cross-entropy) fit
// (eff, row_half), latency 0; elementwise kernels and AdamW fit (eff, latency), row_half 0. Levenberg-
// Marquardt on log(predicted / measured time). Classes with fewer than 3 records, or a single size
// (row length), keep one constant: c = 1/eff of min sum (c x_i / t_i - 1)^2, x_i = bytes_i / HBM, whose
// closed form is c = sum(x_i / t_i) / sum((x_i / t_i)^2). Held out: leave-one-out (each record predicted
// by the fit of the others), since a class has only a few sizes.
#include <algorithm>
#include <cmath>
#include <set>

#include "fit_internal.h"
#include "kernel_class_time.h"

namespace tp::fit_detail {

namespace {

struct ClassFit {
  double efficiency = 0;
  KernelClassShape shape;
};

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double predict(const ClassFit& f, const Measurement& it, double hbm) {
  return f.shape.latency.value + it.bytes / (f.efficiency * hbm) * kernel_row_factor(f.shape.row_half, static_cast<double>(it.cols));
}

ClassFit fit_one_constant(const std::vector<const Measurement*>& items, double hbm) {
  double sum_u = 0, sum_u2 = 0;
  for (const Measurement* it : items) {
    const double u = it->bytes / hbm / it->time.median;  // = achieved efficiency of this record
    sum_u += u;
    sum_u2 += u * u;
  }
  return {std::min(1.0, sum_u2 / sum_u), {}};
}

// Does the class's shape term have anything to fit: at least `min_records` records over at least 2 sizes?
// The profile's fit asks for 3 (one record more than constants); a leave-one-out refit makes do with 2.
bool shape_is_fittable(const std::vector<const Measurement*>& items, bool row_wise, size_t min_records) {
  std::set<double> sizes;
  for (const Measurement* it : items) sizes.insert(row_wise ? static_cast<double>(it->cols) : it->bytes);
  return items.size() >= min_records && sizes.size() >= 2;
}

ClassFit fit_class(const std::vector<const Measurement*>& items, double hbm, bool row_wise, size_t min_records = 3) {
  if (!shape_is_fittable(items, row_wise, min_records)) return fit_one_constant(items, hbm);
  // x[0] = logit(eff) (eff stays in (0, 1): nothing to clamp), x[1] = log(row_half) or log(latency / 1 us).
  auto model_of = [&](const std::vector<double>& x) {
    ClassFit f;
    f.efficiency = logistic(x[0]);
    if (row_wise) f.shape.row_half = std::exp(x[1]);
    else f.shape.latency = Seconds(std::exp(x[1]) * 1e-6);
    return f;
  };
  auto residuals = [&](const std::vector<double>& x) {
    const ClassFit f = model_of(x);
    std::vector<double> r;
    for (const Measurement* it : items) r.push_back(std::log(predict(f, *it, hbm) / it->time.median));
    return r;
  };
  const double eff0 = std::clamp(fit_one_constant(items, hbm).efficiency, 0.05, 0.95);
  std::vector<double> best;
  double best_sse = std::numeric_limits<double>::infinity();
  for (double start : row_wise ? std::vector<double>{256, 2048, 16384} : std::vector<double>{1, 10, 100}) {
    const std::vector<double> x = levenberg_marquardt(residuals, {std::log(eff0 / (1 - eff0)), std::log(start)});
    const double sse = sum_of_squares(residuals(x));
    if (sse < best_sse) {
      best_sse = sse;
      best = x;
    }
  }
  // A shape term the data does not ask for (below 1 element / 1 ns) is written as 0.
  ClassFit f = model_of(best);
  if (f.shape.row_half < 1) f.shape.row_half = 0;
  if (f.shape.latency.value < 1e-9) f.shape.latency = Seconds(0);
  return f;
}

void add_class_quality(KernelClass k, const std::vector<const Measurement*>& all, const ClassFit& fit, double hbm,
                       bool row_wise, FitResult& r) {
  std::vector<double> rate, rate_pred, t, t_pred, rate_h, rate_hp, t_h, t_hp;
  const bool shaped = fit.shape.latency.value > 0 || fit.shape.row_half > 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const Measurement& it = *all[i];
    const double p = predict(fit, it, hbm);
    rate.push_back(it.bytes / it.time.median);
    rate_pred.push_back(it.bytes / p);
    t.push_back(it.time.median);
    t_pred.push_back(p);
    if (all.size() < 3) continue;
    std::vector<const Measurement*> others = all;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    const double ph = predict(fit_class(others, hbm, row_wise, shaped ? 2 : all.size()), it, hbm);
    rate_h.push_back(it.bytes / it.time.median);
    rate_hp.push_back(it.bytes / ph);
    t_h.push_back(it.time.median);
    t_hp.push_back(ph);
  }
  r.report.families.push_back(quality(std::string("kernel ") + to_string(k), "bandwidth", rate, rate_pred, t, t_pred,
                                      rate_h, rate_hp, t_h, t_hp));
}

}  // namespace

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
    const bool row_wise = kernel_class_is_row_wise(k);
    const ClassFit fit = fit_class(all, hbm, row_wise);
    r.profile.kernel_efficiency[static_cast<size_t>(ki)] = fit.efficiency;
    r.profile.kernel_shape[static_cast<size_t>(ki)] = fit.shape;
    add_class_quality(k, all, fit, hbm, row_wise, r);
  }
}

}  // namespace tp::fit_detail
