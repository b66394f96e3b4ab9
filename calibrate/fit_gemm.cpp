// The GEMM family: per dtype, the four parameters of GemmModel (model/hardware_profile.h) by
// Levenberg-Marquardt on log(predicted / measured time), i.e. relative errors; plus the table of the
// measured shapes that gemm_seconds looks up exactly. docs/calibration.md, "The GEMM model".
#include <array>
#include <cmath>

#include "fit_internal.h"
#include "gemm_time.h"

namespace tp {

namespace {

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double logit(double p) { return std::log(p / (1.0 - p)); }

// Unconstrained parameters -> model: efficiency and bandwidth_efficiency stay in (0, 1) by construction
// (a fit can never exceed the datasheet peak, so there is nothing to clamp), k_half and latency > 0.
GemmModel model_of(const std::vector<double>& x) {
  return {logistic(x[0]), std::exp(x[1]), Seconds(std::exp(x[2]) * 1e-6), logistic(x[3])};
}

}  // namespace

GemmModel fit_gemm_model(const GpuSpec& gpu, Precision p, const std::vector<GemmSample>& samples) {
  auto residuals = [&](const std::vector<double>& x) {
    const GemmModel m = model_of(x);
    std::vector<double> r;
    r.reserve(samples.size());
    for (const GemmSample& s : samples) r.push_back(std::log(gemm_model_seconds(m, gpu, p, s.dims).value / s.seconds));
    return r;
  };
  std::vector<double> best;
  double best_sse = std::numeric_limits<double>::infinity();
  // A few starts over the two shape parameters; the fit is smooth but not convex.
  for (double k_half : {16.0, 64.0, 256.0}) {
    for (double latency_us : {2.0, 6.0}) {
      const std::vector<double> x = fit_detail::levenberg_marquardt(
          residuals, {logit(0.75), std::log(k_half), std::log(latency_us), logit(0.7)});
      const double sse = fit_detail::sum_of_squares(residuals(x));
      if (best.empty() || sse < best_sse) {  // the first start kept even when no residual is finite
        best_sse = sse;
        best = x;
      }
    }
  }
  return model_of(best);
}

namespace fit_detail {

namespace {

void add_gemm_quality(const std::vector<const Measurement*>& fit_items, const std::vector<const Measurement*>& held_items,
                      const GemmModel& model, const GpuSpec& gpu, Precision p, FitResult& r) {
  const double peak = gpu.peak_for(p).value;
  auto eval = [&](const std::vector<const Measurement*>& items, std::vector<double>& rate, std::vector<double>& rate_pred,
                  std::vector<double>& t, std::vector<double>& t_pred) {
    for (const Measurement* it : items) {
      const GemmDims d{static_cast<double>(it->gemm.m), static_cast<double>(it->gemm.n), static_cast<double>(it->gemm.k)};
      const double pred = gemm_model_seconds(model, gpu, p, d).value * static_cast<double>(it->gemm.batch);
      rate.push_back(it->gemm.flops() / (it->time.median * peak));
      rate_pred.push_back(it->gemm.flops() / (pred * peak));
      t.push_back(it->time.median);
      t_pred.push_back(pred);
    }
  };
  std::vector<double> a, b, c, d, e, f, g, h;
  eval(fit_items, a, b, c, d);
  eval(held_items, e, f, g, h);
  r.report.families.push_back(quality(std::string("gemm ") + to_string(p), "efficiency", a, b, c, d, e, f, g, h));
}

}  // namespace

void fit_gemm(const Measurements& m, const FitOptions& o, FitResult& r) {
  for (int pi = 0; pi < kPrecisionCount; ++pi) {
    const Precision p = static_cast<Precision>(pi);
    std::vector<const Measurement*> all;
    for (const auto& it : m.items) {
      if (it.op == MeasuredOp::gemm && it.dtype == p && it.time.median > 0) all.push_back(&it);
    }
    if (all.empty()) continue;
    // The measured shapes the planner looks up exactly: the fitted ones only, so that a held-out shape is
    // predicted by the model, as the hold-out's error says it is (a CLI audit, 2026-12-01: the profile held
    // every shape, and report --measurements showed a held-out shape's "fitted" time equal to its measured).
    const auto keep_measured = [&](const std::vector<const Measurement*>& items) {
      for (const Measurement* it : items) {
        if (it->gemm.batch == 1) r.profile.gemm_measured.push_back({p, it->gemm.m, it->gemm.n, it->gemm.k, Seconds(it->time.median)});
      }
    };
    if (o.cluster.gpu.peak_for(p).value <= 0) {
      keep_measured(all);
      r.report.notes.push_back(std::string("gemm ") + to_string(p) + ": the GPU '" + o.cluster.gpu.key +
                               "' has no datasheet peak for this dtype; " + std::to_string(all.size()) +
                               " measurements ignored");
      continue;
    }
    std::vector<const Measurement*> fit_items, held_items;
    std::vector<GemmSample> samples;
    for (size_t i = 0; i < all.size(); ++i) {
      if (held_out(static_cast<int>(i), o.holdout_every) && all.size() >= 8) {
        held_items.push_back(all[i]);
        continue;
      }
      fit_items.push_back(all[i]);
      const GemmShape& s = all[i]->gemm;
      samples.push_back({{static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k)},
                         all[i]->time.median / static_cast<double>(s.batch)});
    }
    keep_measured(fit_items);
    const size_t shapes = distinct_shapes(fit_items, [](const Measurement* it) {
      return std::array<std::int64_t, 3>{it->gemm.m, it->gemm.n, it->gemm.k};
    });
    if (shapes < 5) {
      r.report.notes.push_back(std::string("gemm ") + to_string(p) + ": " + std::to_string(samples.size()) +
                               " measurements of " + std::to_string(shapes) +
                               " shapes are too few for the 4-parameter model (need 5 shapes); default kept");
      continue;
    }
    const GemmModel model = fit_gemm_model(o.cluster.gpu, p, samples);
    r.profile.gemm[static_cast<size_t>(pi)] = model;
    r.report.gemm.push_back({p, model, static_cast<int>(samples.size())});
    add_gemm_quality(fit_items, held_items, model, o.cluster.gpu, p, r);
  }
  r.profile.normalize_measured_gemms();
}

}  // namespace fit_detail

}  // namespace tp
