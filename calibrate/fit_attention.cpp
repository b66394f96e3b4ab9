// The attention family. Fused (forward, backward): eff(s, d) = max x s/(s + s_half) x d/(d + d_half)
// (model/hardware_profile.h, AttentionCurve) by Levenberg-Marquardt on log time; the records of one
// algorithm (cuDNN when present: the kernel Transformer Engine runs on Hopper) so that two libraries are
// not averaged. Unfused: the geometric mean of the measured efficiency. docs/calibration.md.
#include <array>
#include <cmath>

#include "attention_grid.h"
#include "fit_internal.h"

namespace tp::fit_detail {

namespace {

double efficiency_of(const Measurement& it, const GpuSpec& gpu) {
  const double peak = attention_peak(gpu, it.dtype).value;
  return peak > 0 && it.time.median > 0 ? attention_flops(it) / (it.time.median * peak) : kNaN;
}

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

AttentionCurve curve_of(const std::vector<double>& x) {
  return {logistic(x[0]), std::exp(x[1]), std::exp(x[2]), x.size() > 3 ? std::exp(x[3]) : 0.0};
}

// The balance of a fused case's grid: the curves describe the kernel on a full GPU, each case ran on its
// own grid (model/attention_grid.h).
double grid_balance(const Measurement& it, const GpuSpec& gpu) {
  const AttentionShape& a = it.attention;
  const AttentionPass pass = it.op == MeasuredOp::attention_forward ? AttentionPass::forward : AttentionPass::backward;
  return attention_grid_balance(static_cast<double>(a.batch * a.heads), static_cast<double>(a.seq_q),
                                static_cast<double>(gpu.sms), a.causal, pass);
}

double curve_at(const AttentionCurve& c, const Measurement& it, const GpuSpec& gpu) {
  return c.efficiency(static_cast<double>(it.attention.seq_q), static_cast<double>(it.attention.head_dim), it.attention.causal) *
         grid_balance(it, gpu);
}

void fit_fused(const std::vector<const Measurement*>& all, const char* family, AttentionCurve& target,
               const FitOptions& o, FitResult& r) {
  std::vector<const Measurement*> fit_items, held_items;
  for (size_t i = 0; i < all.size(); ++i) {
    (held_out(static_cast<int>(i), o.holdout_every) && all.size() >= 8 ? held_items : fit_items).push_back(all[i]);
  }
  auto residuals = [&](const std::vector<double>& x) {
    const AttentionCurve c = curve_of(x);
    std::vector<double> res;
    for (const Measurement* it : fit_items) {
      const double e = efficiency_of(*it, o.cluster.gpu);
      res.push_back(std::log(e / curve_at(c, *it, o.cluster.gpu)));  // = log(t_pred / t)
    }
    return res;
  };
  const size_t shapes = distinct_shapes(fit_items, [](const Measurement* it) {
    const AttentionShape& a = it->attention;
    return std::array<std::int64_t, 7>{a.batch, a.heads, a.kv_heads, a.seq_q, a.seq_kv, a.head_dim, a.causal ? 1 : 0};
  });
  if (shapes < 4) {
    r.report.notes.push_back(std::string(family) + ": " + std::to_string(fit_items.size()) + " measurements of " +
                             std::to_string(shapes) + " shapes are too few for the curve (need 4 shapes); default kept");
    return;
  }
  bool causal = false, full = false;
  for (const Measurement* it : fit_items) (it->attention.causal ? causal : full) = true;
  std::vector<double> x0 = {0.0, std::log(512.0), std::log(16.0)};
  if (causal && full) x0.push_back(std::log(256.0));  // both kinds measured: fit the causal term too
  target = curve_of(levenberg_marquardt(residuals, x0));
  auto eval = [&](const std::vector<const Measurement*>& items, std::vector<double>& t, std::vector<double>& t_pred) {
    for (const Measurement* it : items) {
      const double e = efficiency_of(*it, o.cluster.gpu);
      t.push_back(it->time.median);
      t_pred.push_back(it->time.median * e / curve_at(target, *it, o.cluster.gpu));
    }
  };
  std::vector<double> a, b, c, d;
  eval(fit_items, a, b);
  eval(held_items, c, d);
  r.report.families.push_back(quality(family, "time", a, b, a, b, c, d, c, d));
}

void fit_unfused(const std::vector<const Measurement*>& all, FitResult& r, const FitOptions& o) {
  double log_sum = 0;
  int n = 0;
  std::vector<const Measurement*> fit_items, held_items;
  for (size_t i = 0; i < all.size(); ++i) {
    (held_out(static_cast<int>(i), o.holdout_every) && all.size() >= 4 ? held_items : fit_items).push_back(all[i]);
  }
  for (const Measurement* it : fit_items) {
    const double e = efficiency_of(*it, o.cluster.gpu);
    if (std::isfinite(e) && e > 0) {
      log_sum += std::log(e);
      ++n;
    }
  }
  if (n == 0) {
    r.report.notes.push_back("attention unfused: no usable measurement (no 16-bit peak for the GPU); default kept");
    return;
  }
  const double eff = std::min(1.0, std::exp(log_sum / n));
  r.profile.attention_unfused = std::max(0.01, eff);
  r.profile.attention_unfused_measured = true;
  auto eval = [&](const std::vector<const Measurement*>& items, std::vector<double>& t, std::vector<double>& t_pred) {
    for (const Measurement* it : items) {
      const double e = efficiency_of(*it, o.cluster.gpu);
      if (!std::isfinite(e)) continue;
      t.push_back(it->time.median);
      t_pred.push_back(it->time.median * e / r.profile.attention_unfused);
    }
  };
  std::vector<double> a, b, c, d;
  eval(fit_items, a, b);
  eval(held_items, c, d);
  r.report.families.push_back(quality("attention unfused", "time", a, b, a, b, c, d, c, d));
}

}  // namespace

// A fused record's kernel: its algorithm's first word. The project's runner names the cuDNN engine it
// picked ("cudnn engine 2", calibrate/cudnn_graph.cpp); PyTorch's files name the backend ("cudnn", "flash").
static std::string attention_kernel_of(const std::string& algorithm) { return algorithm.substr(0, algorithm.find(' ')); }

// The fused records the profile describes: cuDNN's when the file has them, else every fused record
// ("flash" when they all are FlashAttention-2's, as PyTorch SDPA's rows are, "triton" when they all are
// the Triton FlashAttention's; "" when mixed or unnamed).
std::string fused_attention_algorithm(const Measurements& m) {
  std::string common;
  bool mixed = false;
  for (const auto& it : m.items) {
    if (!is_attention(it.op) || it.impl != AttentionImpl::fused) continue;
    const std::string kernel = attention_kernel_of(it.algorithm);
    if (kernel == "cudnn") return "cudnn";
    if (common.empty()) common = kernel;
    mixed = mixed || kernel != common;
  }
  return !mixed && attention_kernel_named(common) ? common : "";
}

void fit_attention(const Measurements& m, const FitOptions& o, FitResult& r) {
  const std::string algorithm = fused_attention_algorithm(m);
  r.report.attention_algorithm = algorithm;
  // What the fitted curves describe; unnamed records keep the generation's default kernel.
  if (const auto kernel = attention_kernel_named(algorithm)) r.profile.attention_kernel = *kernel;
  std::vector<const Measurement*> fwd, bwd, unfused;
  for (const auto& it : m.items) {
    if (!is_attention(it.op) || !std::isfinite(efficiency_of(it, o.cluster.gpu))) continue;
    if (it.impl == AttentionImpl::unfused) {
      unfused.push_back(&it);
    } else if (algorithm.empty() || attention_kernel_of(it.algorithm) == algorithm) {
      (it.op == MeasuredOp::attention_forward ? fwd : bwd).push_back(&it);
    }
  }
  if (!fwd.empty()) fit_fused(fwd, "attention fused forward", r.profile.attention_forward, o, r);
  if (!bwd.empty()) fit_fused(bwd, "attention fused backward", r.profile.attention_backward, o, r);
  if (!unfused.empty()) fit_unfused(unfused, r, o);
}

}  // namespace tp::fit_detail

namespace tp {

double profile_attention_efficiency(const HardwareProfile& hw, const GpuSpec& gpu, const Measurement& it) {
  if (it.impl == AttentionImpl::unfused) return hw.attention_unfused;
  return fit_detail::curve_at(it.op == MeasuredOp::attention_forward ? hw.attention_forward : hw.attention_backward, it, gpu);
}

}  // namespace tp
