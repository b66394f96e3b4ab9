// The kernel classes (model/kernel_class.h): per class, the model of model/kernel_class_time.h,
//   t = latency + bytes / (eff x HBM bandwidth) x (1 + (row_half / row)^4)^(1/4) + elements x element_time,
// with `bytes` the kernel's minimal traffic. Two constants per class, chosen by what the kernel is
// (docs/calibration.md, "The kernel-class model"): row-wise kernels (norms, cross-entropy) fit
// (eff, row_half), latency 0; elementwise kernels fit (eff, latency), row_half 0; AdamW, whose arithmetic
// per parameter does not shrink with its states' bytes, fits (element_time, latency) with eff 1 (the
// datasheet HBM: docs/calibration.md, "AdamW's two state dtypes"). Levenberg-Marquardt on
// log(predicted / measured time). Classes with fewer than 3 records, or a single size (row length; AdamW:
// parameter count), keep one constant: c = 1/eff of min sum (c x_i / t_i - 1)^2, x_i = bytes_i / HBM, whose
// closed form is c = sum(x_i / t_i) / sum((x_i / t_i)^2); AdamW's element_time alike (below). Held out:
// leave-one-out (each record predicted by the fit of the others), since a class has only a few sizes.
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

// Which two constants a class fits (the header comment).
enum class ClassForm { row_wise, latency, per_element };

ClassForm form_of(KernelClass k) {
  if (kernel_class_counts_elements(k)) return ClassForm::per_element;
  return kernel_class_is_row_wise(k) ? ClassForm::row_wise : ClassForm::latency;
}

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double predict(const ClassFit& f, const Measurement& it, double hbm) {
  return f.shape.latency.value + it.bytes / (f.efficiency * hbm) * kernel_row_factor(f.shape.row_half, static_cast<double>(it.cols)) +
         kernel_elements(it) * f.shape.element_time.value;
}

ClassFit fit_one_constant(const std::vector<const Measurement*>& items, double hbm, ClassForm form) {
  double sum_u = 0, sum_u2 = 0;
  if (form == ClassForm::per_element) {
    // t_i = x_i + e P_i: e = sum(w_i (1 - x_i / t_i)) / sum(w_i^2), w_i = P_i / t_i (min sum (pred_i / t_i - 1)^2).
    for (const Measurement* it : items) {
      const double w = kernel_elements(*it) / it->time.median;
      sum_u += w * (1.0 - it->bytes / hbm / it->time.median);
      sum_u2 += w * w;
    }
    ClassFit f{1.0, {}};
    f.shape.element_time = Seconds(sum_u2 > 0 ? std::max(0.0, sum_u / sum_u2) : 0.0);
    return f;
  }
  for (const Measurement* it : items) {
    const double u = it->bytes / hbm / it->time.median;  // = achieved efficiency of this record
    sum_u += u;
    sum_u2 += u * u;
  }
  return {std::min(1.0, sum_u2 / sum_u), {}};
}

// Does the class's shape term have anything to fit: at least `min_records` records over at least 2 sizes?
// The profile's fit asks for 3 (one record more than constants); a leave-one-out refit makes do with 2.
bool shape_is_fittable(const std::vector<const Measurement*>& items, ClassForm form, size_t min_records) {
  std::set<double> sizes;
  for (const Measurement* it : items) {
    sizes.insert(form == ClassForm::row_wise      ? static_cast<double>(it->cols)
                 : form == ClassForm::per_element ? kernel_elements(*it)
                                                  : it->bytes);
  }
  return items.size() >= min_records && sizes.size() >= 2;
}

// The two constants of `form` from x (both in logs: nothing to clamp): x[0] = logit(eff), or log(element_time
// / 1 ps); x[1] = log(row_half), or log(latency / 1 us).
ClassFit class_fit_of(const std::vector<double>& x, ClassForm form) {
  ClassFit f;
  f.efficiency = form == ClassForm::per_element ? 1.0 : logistic(x[0]);
  if (form == ClassForm::per_element) f.shape.element_time = Seconds(std::exp(x[0]) * 1e-12);
  if (form == ClassForm::row_wise) f.shape.row_half = std::exp(x[1]);
  else f.shape.latency = Seconds(std::exp(x[1]) * 1e-6);
  return f;
}

// x[0]'s start: the one-constant fit's.
double first_constant_start(const std::vector<const Measurement*>& items, double hbm, ClassForm form) {
  const ClassFit one = fit_one_constant(items, hbm, form);
  if (form == ClassForm::per_element) return std::log(std::max(0.01, one.shape.element_time.value * 1e12));
  const double eff0 = std::clamp(one.efficiency, 0.05, 0.95);
  return std::log(eff0 / (1 - eff0));
}

ClassFit fit_class(const std::vector<const Measurement*>& items, double hbm, ClassForm form, size_t min_records = 3) {
  if (!shape_is_fittable(items, form, min_records)) return fit_one_constant(items, hbm, form);
  auto residuals = [&](const std::vector<double>& x) {
    const ClassFit f = class_fit_of(x, form);
    std::vector<double> r;
    for (const Measurement* it : items) r.push_back(std::log(predict(f, *it, hbm) / it->time.median));
    return r;
  };
  const double x0 = first_constant_start(items, hbm, form);
  std::vector<double> best;
  double best_sse = std::numeric_limits<double>::infinity();
  // Latency starts in us; AdamW's host work over 100 tensors is ~0.5-1 ms.
  const std::vector<double> starts = form == ClassForm::row_wise     ? std::vector<double>{256, 2048, 16384}
                                     : form == ClassForm::per_element ? std::vector<double>{10, 100, 1000}
                                                                      : std::vector<double>{1, 10, 100};
  for (double start : starts) {
    const std::vector<double> x = levenberg_marquardt(residuals, {x0, std::log(start)});
    const double sse = sum_of_squares(residuals(x));
    if (best.empty() || sse < best_sse) {  // the first start kept even when no residual is finite
      best_sse = sse;
      best = x;
    }
  }
  // A shape term the data does not ask for (below 1 element / 1 ns) is written as 0.
  ClassFit f = class_fit_of(best, form);
  if (f.shape.row_half < 1) f.shape.row_half = 0;
  if (f.shape.latency.value < 1e-9) f.shape.latency = Seconds(0);
  return f;
}

void add_class_quality(KernelClass k, const std::vector<const Measurement*>& all, const ClassFit& fit, double hbm,
                       ClassForm form, FitResult& r) {
  std::vector<double> rate, rate_pred, t, t_pred, rate_h, rate_hp, t_h, t_hp;
  const bool shaped = fit.shape.any();
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
    const double ph = predict(fit_class(others, hbm, form, shaped ? 2 : all.size()), it, hbm);
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
    const ClassForm form = form_of(k);
    const ClassFit fit = fit_class(all, hbm, form);
    r.profile.kernel_efficiency[static_cast<size_t>(ki)] = fit.efficiency;
    r.profile.kernel_shape[static_cast<size_t>(ki)] = fit.shape;
    add_class_quality(k, all, fit, hbm, form, r);
  }
}

}  // namespace tp::fit_detail
