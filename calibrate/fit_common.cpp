// Shared pieces of the family fitters: statistics, the planner's attention conventions, a small
// Levenberg-Marquardt solver, and the weighted line fit.
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "fit_internal.h"

namespace tp {

namespace fit_detail {

double median_of(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string fmt(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c == '\n' ? ' ' : c);
  }
  return out + "\"";
}

FamilyFit quality(const std::string& family, const char* r2_of, const std::vector<double>& rate_fit, const std::vector<double>& rate_fit_pred,
                  const std::vector<double>& t_fit, const std::vector<double>& t_fit_pred,
                  const std::vector<double>& rate_held, const std::vector<double>& rate_held_pred,
                  const std::vector<double>& t_held, const std::vector<double>& t_held_pred) {
  FamilyFit f;
  f.family = family;
  f.r2_of = r2_of;
  f.fitted = static_cast<int>(t_fit.size());
  f.held_out = static_cast<int>(t_held.size());
  f.r2 = r_squared(rate_held, rate_held_pred);
  f.mape = mape_percent(t_held, t_held_pred);
  f.r2_fit = r_squared(rate_fit, rate_fit_pred);
  f.mape_fit = mape_percent(t_fit, t_fit_pred);
  return f;
}


double sum_of_squares(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return std::isfinite(s) ? s : std::numeric_limits<double>::infinity();
}

std::vector<double> levenberg_marquardt(const Residuals& residuals, std::vector<double> x, int iterations) {
  const Eigen::Index p = static_cast<Eigen::Index>(x.size());
  std::vector<double> r = residuals(x);
  double cur = sum_of_squares(r);
  double lambda = 1e-3;
  for (int iter = 0; iter < iterations && std::isfinite(cur); ++iter) {
    const Eigen::Index n = static_cast<Eigen::Index>(r.size());
    Eigen::MatrixXd J(n, p);
    for (Eigen::Index j = 0; j < p; ++j) {
      std::vector<double> xj = x;
      const double h = 1e-6 * std::max(1.0, std::fabs(x[static_cast<size_t>(j)]));
      xj[static_cast<size_t>(j)] += h;
      const std::vector<double> rj = residuals(xj);
      for (Eigen::Index i = 0; i < n; ++i) J(i, j) = (rj[static_cast<size_t>(i)] - r[static_cast<size_t>(i)]) / h;
    }
    const Eigen::VectorXd res = Eigen::Map<const Eigen::VectorXd>(r.data(), n);
    const Eigen::MatrixXd JtJ = J.transpose() * J;
    const Eigen::VectorXd g = -(J.transpose() * res);
    bool improved = false;
    for (int tries = 0; tries < 30 && !improved; ++tries) {
      Eigen::MatrixXd A = JtJ;
      for (Eigen::Index j = 0; j < p; ++j) A(j, j) += lambda * std::max(JtJ(j, j), 1e-12);
      const Eigen::VectorXd step = A.ldlt().solve(g);
      std::vector<double> q = x;
      for (Eigen::Index j = 0; j < p; ++j) q[static_cast<size_t>(j)] += step(j);
      std::vector<double> rq = residuals(q);
      const double s = sum_of_squares(rq);
      if (s < cur) {
        const double gain = cur - s;
        x = q;
        r = std::move(rq);
        cur = s;
        lambda = std::max(lambda / 3.0, 1e-12);
        improved = true;
        if (gain < 1e-14 * (1.0 + cur)) return x;
      } else {
        lambda *= 4.0;
      }
    }
    if (!improved) break;
  }
  return x;
}

}  // namespace fit_detail

using fit_detail::kNaN;

std::pair<double, double> fit_line_relative(const std::vector<double>& x, const std::vector<double>& t) {
  const size_t n = std::min(x.size(), t.size());
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd y(n);
  for (size_t i = 0; i < n; ++i) {
    const double w = t[i] != 0 ? 1.0 / std::fabs(t[i]) : 1.0;  // sqrt of the weight 1/t^2
    A(static_cast<Eigen::Index>(i), 0) = w;
    A(static_cast<Eigen::Index>(i), 1) = w * x[i];
    y(static_cast<Eigen::Index>(i)) = w * t[i];
  }
  const Eigen::Vector2d sol = A.colPivHouseholderQr().solve(y);
  return {sol(0), sol(1)};
}

double r_squared(const std::vector<double>& measured, const std::vector<double>& predicted) {
  const size_t n = std::min(measured.size(), predicted.size());
  if (n == 0) return kNaN;
  const double mean = std::accumulate(measured.begin(), measured.begin() + static_cast<std::ptrdiff_t>(n), 0.0) / static_cast<double>(n);
  double ss_res = 0, ss_tot = 0;
  for (size_t i = 0; i < n; ++i) {
    ss_res += (measured[i] - predicted[i]) * (measured[i] - predicted[i]);
    ss_tot += (measured[i] - mean) * (measured[i] - mean);
  }
  if (ss_tot <= 0) return ss_res <= 0 ? 1.0 : kNaN;
  return 1.0 - ss_res / ss_tot;
}

double mape_percent(const std::vector<double>& measured, const std::vector<double>& predicted) {
  const size_t n = std::min(measured.size(), predicted.size());
  if (n == 0) return kNaN;
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += std::fabs(predicted[i] - measured[i]) / std::fabs(measured[i]);
  return 100.0 * s / static_cast<double>(n);
}

}  // namespace tp
