// Fitters of the memory family (copy/scale/triad/reduce: t = t0 + bytes / BW) and of the kernel launch.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "collectives.h"
#include "errors.h"
#include "fit_internal.h"

namespace tp::fit_detail {

void fit_memory(const Measurements& m, const FitOptions& o, FitResult& r) {
  std::vector<const Measurement*> all;
  for (const auto& it : m.items) {
    if (is_memory(it.op) && it.op != MeasuredOp::memory_kernel) all.push_back(&it);
  }
  if (all.empty()) return;
  std::vector<const Measurement*> fit_items, held_items;
  for (size_t i = 0; i < all.size(); ++i) {
    (held_out(static_cast<int>(i), o.holdout_every) && all.size() >= 6 ? held_items : fit_items).push_back(all[i]);
  }
  std::vector<double> x, t;
  for (const Measurement* it : fit_items) {
    x.push_back(it->bytes);
    t.push_back(it->time.median);
  }
  if (fit_items.size() < 2) {
    r.report.notes.push_back("memory: fewer than 2 measurements; default kept");
    return;
  }
  const auto mem_line = fit_line_relative(x, t);
  double t0 = mem_line.first;
  const double slope = mem_line.second;
  if (!(slope > 0)) {
    r.report.notes.push_back("memory: time does not grow with bytes moved; default kept");
    return;
  }
  t0 = std::max(0.0, t0);
  const double bw = 1.0 / slope;
  r.report.memory_bandwidth = bw;
  r.report.memory_intercept = t0;
  const double datasheet = o.cluster.gpu.memory_bandwidth.value;
  if (datasheet > 0) {
    double eff = bw / datasheet;
    if (eff > 1.0) {
      r.report.notes.push_back("memory: achieved bandwidth " + fmt(bw / 1e9) + " GB/s is above the datasheet " +
                               fmt(datasheet / 1e9) + " GB/s; memory_efficiency clamped to 1");
      eff = 1.0;
    }
    r.profile.memory_efficiency = std::max(0.01, eff);
  } else {
    r.report.notes.push_back("memory: the GPU has no datasheet bandwidth; memory_efficiency kept");
  }
  for (MeasuredOp op : {MeasuredOp::memory_copy, MeasuredOp::memory_scale, MeasuredOp::memory_triad, MeasuredOp::memory_reduce}) {
    std::vector<double> xo, to;
    for (const Measurement* it : all) {
      if (it->op == op) {
        xo.push_back(it->bytes);
        to.push_back(it->time.median);
      }
    }
    if (xo.size() < 2) continue;
    const auto line = fit_line_relative(xo, to);
    if (line.second > 0) r.report.memory_bandwidth_per_op.emplace_back(to_string(op), 1.0 / line.second);
  }
  auto eval = [&](const std::vector<const Measurement*>& items, std::vector<double>& rate, std::vector<double>& rate_pred,
                  std::vector<double>& tt, std::vector<double>& t_pred) {
    for (const Measurement* it : items) {
      const double tp = t0 + it->bytes * slope;
      rate.push_back(it->bytes / it->time.median);
      rate_pred.push_back(it->bytes / tp);
      tt.push_back(it->time.median);
      t_pred.push_back(tp);
    }
  };
  std::vector<double> a, b, c, d, e, f, g, h;
  eval(fit_items, a, b, c, d);
  eval(held_items, e, f, g, h);
  r.report.families.push_back(quality("memory", "bandwidth", a, b, c, d, e, f, g, h));
}

void fit_launch(const Measurements& m, FitResult& r) {
  std::vector<double> t;
  for (const auto& it : m.items) {
    if (it.op == MeasuredOp::kernel_launch) t.push_back(it.time.median);
  }
  if (!t.empty()) {
    const double med = median_of(t);
    r.profile.kernel_launch = Seconds(med);
    std::vector<double> pred(t.size(), med);
    FamilyFit f;
    f.family = "kernel_launch";
    f.r2_of = "time";
    f.fitted = static_cast<int>(t.size());
    f.r2 = f.r2_fit = kNaN;
    f.mape = kNaN;
    f.mape_fit = mape_percent(t, pred);
    r.report.families.push_back(f);
  } else if (r.report.memory_intercept > 0) {
    r.profile.kernel_launch = Seconds(r.report.memory_intercept);
    r.report.notes.push_back("kernel_launch: no empty-kernel runs; taken from the memory fit's intercept");
  }
}

}  // namespace tp::fit_detail
