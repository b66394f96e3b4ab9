#include "fitter.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>

#include "collectives.h"
#include "errors.h"

namespace tp {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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

// The 16-bit peak the planner uses for attention (planner/step_time.cpp, attention_peak).
double attention_peak(const GpuSpec& g, Precision p) {
  if (p == Precision::fp32) return g.peak_for(Precision::fp32).value;
  if (p == Precision::tf32) return g.peak_for(Precision::tf32).value;
  const double bf16 = g.peak_for(Precision::bf16).value;
  return bf16 > 0 ? bf16 : g.peak_for(Precision::fp16).value;
}

// FLOPs the planner charges an attention kernel (docs/model.md, "Step time"): the fused kernel skips
// the masked half under causal masking; the unfused path computes the whole score matrix; backward is
// twice the forward.
double attention_flops(const Measurement& m) {
  double f = m.attention.full_forward_flops();
  if (m.impl == AttentionImpl::fused && m.attention.causal) f *= 0.5;
  if (m.op == MeasuredOp::attention_backward) f *= 2.0;
  return f;
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

// ---------------------------------------------------------------------------------------------

void fit_gemm(const Measurements& m, const FitOptions& o, FitResult& r) {
  for (int pi = 0; pi < kPrecisionCount; ++pi) {
    const Precision p = static_cast<Precision>(pi);
    std::vector<const Measurement*> all;
    for (const auto& it : m.items) {
      if (it.op == MeasuredOp::gemm && it.dtype == p) all.push_back(&it);
    }
    if (all.empty()) continue;
    const double peak = o.cluster.gpu.peak_for(p).value;
    if (peak <= 0) {
      r.report.notes.push_back(std::string("gemm ") + to_string(p) + ": the GPU '" + o.cluster.gpu.key +
                               "' has no datasheet peak for this dtype; " + std::to_string(all.size()) +
                               " measurements ignored");
      continue;
    }
    std::vector<GemmShape> fit_shapes;
    std::vector<double> fit_eff;
    std::vector<const Measurement*> fit_items, held_items;
    for (size_t i = 0; i < all.size(); ++i) {
      if (held_out(static_cast<int>(i), o.holdout_every) && all.size() >= 6) {
        held_items.push_back(all[i]);
      } else {
        fit_items.push_back(all[i]);
        fit_shapes.push_back(all[i]->gemm);
        fit_eff.push_back(all[i]->gemm.flops() / (all[i]->time.median * peak));
      }
    }
    if (fit_items.size() < 3) {
      r.report.notes.push_back(std::string("gemm ") + to_string(p) + ": " + std::to_string(fit_items.size()) +
                               " measurements are too few for the curve (need 3); default kept");
      continue;
    }
    GemmCurve c = fit_gemm_curve(fit_shapes, fit_eff);
    if (c.max_efficiency > 1.0) {
      r.report.notes.push_back(std::string("gemm ") + to_string(p) + ": fitted max_efficiency " + fmt(c.max_efficiency) +
                               " exceeds the datasheet peak; clamped to 1 (check the GPU's peak in the catalog)");
      c.max_efficiency = 1.0;
    }
    c.max_efficiency = std::max(0.01, c.max_efficiency);
    r.profile.gemm[static_cast<size_t>(pi)] = c;
    r.report.gemm.push_back({p, c, static_cast<int>(fit_items.size())});

    auto eval = [&](const std::vector<const Measurement*>& items, std::vector<double>& rate, std::vector<double>& rate_pred,
                    std::vector<double>& t, std::vector<double>& t_pred) {
      for (const Measurement* it : items) {
        const double e = c.efficiency(static_cast<double>(it->gemm.m), static_cast<double>(it->gemm.n),
                                      static_cast<double>(it->gemm.k));
        rate.push_back(it->gemm.flops() / (it->time.median * peak));
        rate_pred.push_back(e);
        t.push_back(it->time.median);
        t_pred.push_back(it->gemm.flops() / (peak * e));
      }
    };
    std::vector<double> a, b, c1, d, e, f, g, h;
    eval(fit_items, a, b, c1, d);
    eval(held_items, e, f, g, h);
    r.report.families.push_back(quality(std::string("gemm ") + to_string(p), "efficiency", a, b, c1, d, e, f, g, h));
  }
}

void fit_attention(const Measurements& m, const FitOptions& o, FitResult& r) {
  struct Kind {
    const char* family;
    double* target;
    bool fused;
    bool forward_only;
    bool backward_only;
  };
  const Kind kinds[] = {
      {"attention forward", &r.profile.attention_forward, true, true, false},
      {"attention backward", &r.profile.attention_backward, true, false, true},
      {"attention unfused", &r.profile.attention_unfused, false, false, false},
  };
  for (const Kind& k : kinds) {
    std::vector<const Measurement*> all;
    for (const auto& it : m.items) {
      if (!is_attention(it.op)) continue;
      if ((it.impl == AttentionImpl::fused) != k.fused) continue;
      if (k.forward_only && it.op != MeasuredOp::attention_forward) continue;
      if (k.backward_only && it.op != MeasuredOp::attention_backward) continue;
      all.push_back(&it);
    }
    if (all.empty()) continue;
    std::vector<const Measurement*> fit_items, held_items;
    for (size_t i = 0; i < all.size(); ++i) {
      (held_out(static_cast<int>(i), o.holdout_every) && all.size() >= 4 ? held_items : fit_items).push_back(all[i]);
    }
    auto eff_of = [&](const Measurement* it) {
      const double peak = attention_peak(o.cluster.gpu, it->dtype);
      return peak > 0 ? attention_flops(*it) / (it->time.median * peak) : kNaN;
    };
    double log_sum = 0;
    int n = 0;
    for (const Measurement* it : fit_items) {
      const double e = eff_of(it);
      if (std::isfinite(e) && e > 0) {
        log_sum += std::log(e);
        ++n;
      }
    }
    if (n == 0) {
      r.report.notes.push_back(std::string(k.family) + ": no usable measurement (no 16-bit peak for the GPU); default kept");
      continue;
    }
    double eff = std::exp(log_sum / n);
    if (eff > 1.0) {
      r.report.notes.push_back(std::string(k.family) + ": efficiency " + fmt(eff) + " above the peak; clamped to 1");
      eff = 1.0;
    }
    *k.target = std::max(0.01, eff);
    auto eval = [&](const std::vector<const Measurement*>& items, std::vector<double>& rate, std::vector<double>& rate_pred,
                    std::vector<double>& t, std::vector<double>& t_pred) {
      for (const Measurement* it : items) {
        const double e = eff_of(it);
        if (!std::isfinite(e)) continue;
        rate.push_back(e);
        rate_pred.push_back(*k.target);
        t.push_back(it->time.median);
        t_pred.push_back(it->time.median * e / *k.target);
      }
    };
    std::vector<double> a, b, c, d, e, f, g, h;
    eval(fit_items, a, b, c, d);
    eval(held_items, e, f, g, h);
    r.report.families.push_back(quality(k.family, "time", c, d, c, d, g, h, g, h));
  }
}

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

// The planner's time for one collective on group g with the tiers' efficiencies and latencies.
double planner_time(Collective c, double bytes, const GroupShape& g, const ClusterSpec& cluster, double intra_eff,
                    double inter_eff, double intra_lat, double inter_lat) {
  Topology topo = make_topology(cluster, intra_eff, inter_eff);
  topo.intra.latency = Seconds(intra_lat);
  topo.inter.latency = Seconds(inter_lat);
  return collective_time(c, Bytes(bytes), g, topo).time.value;
}

// Solves f(x) = target for increasing (sign = +1) or decreasing (sign = -1) f on [lo, hi] by
// bisection in log space. Returns the clamped end when the target lies outside.
template <class F>
double solve_monotone(F f, double target, double lo, double hi, int sign) {
  double a = lo, b = hi;
  for (int i = 0; i < 200; ++i) {
    const double mid = std::sqrt(a * b);
    const double v = f(mid);
    const bool too_big = sign > 0 ? v > target : v < target;
    if (too_big) b = mid;
    else a = mid;
    if (b / a < 1 + 1e-12) break;
  }
  return std::sqrt(a * b);
}

void fit_collectives(const Measurements& m, const FitOptions& o, FitResult& r) {
  using Key = std::tuple<int, int, int>;  // op, ranks, nodes
  std::map<Key, std::vector<const Measurement*>> groups;
  int single_rank = 0;
  for (const auto& it : m.items) {
    if (is_collective(it.op) && it.ranks <= 1) ++single_rank;
    if (is_collective(it.op) && it.ranks > 1 && it.time.median > 0) {
      groups[{static_cast<int>(it.op), it.ranks, it.nodes}].push_back(&it);
    }
  }
  if (single_rank > 0) {
    r.report.notes.push_back("collectives: " + std::to_string(single_rank) +
                             " measurement(s) with ranks: 1 dropped (one rank moves no data over a link; "
                             "measure with 2 or more GPUs)");
  }
  if (groups.empty()) return;
  const ClusterSpec& cl = o.cluster;
  std::vector<double> intra_eff, intra_lat, inter_eff, inter_lat;
  const HardwareProfile defaults = r.profile;
  // Intra-node groups first: the inter-node solve uses the intra tier's fitted values.
  for (int pass = 0; pass < 2; ++pass) {
    double fixed_intra_eff = intra_eff.empty() ? defaults.intra_node.bandwidth_efficiency : median_of(intra_eff);
    double fixed_intra_lat = intra_lat.empty() ? (defaults.intra_node.latency.value > 0 ? defaults.intra_node.latency.value
                                                                                          : cl.intra_node.latency.value)
                                               : median_of(intra_lat);
    for (const auto& [key, items] : groups) {
      const int op_i = std::get<0>(key);
      const int ranks = std::get<1>(key);
      const int nodes = std::get<2>(key);
      const bool inter = nodes > 1;
      if (inter != (pass == 1)) continue;
      const MeasuredOp op = static_cast<MeasuredOp>(op_i);
      const Collective c = collective_of(op);
      const double bf = bus_factor(c, ranks);
      std::vector<const Measurement*> fit_items, held_items;
      for (size_t i = 0; i < items.size(); ++i) {
        (held_out(static_cast<int>(i), o.holdout_every) && items.size() >= 6 ? held_items : fit_items).push_back(items[i]);
      }
      const std::string family = std::string(to_string(op)) + (inter ? " inter_node " : " intra_node ") +
                                 std::to_string(ranks) + " ranks" + (inter ? " on " + std::to_string(nodes) + " nodes" : "");
      if (fit_items.size() < 2 || bf <= 0) {
        r.report.notes.push_back(family + ": too few sizes to fit alpha and beta");
        continue;
      }
      std::vector<double> x, t;
      for (const Measurement* it : fit_items) {
        x.push_back(it->bytes * bf);
        t.push_back(it->time.median);
      }
      const auto line = fit_line_relative(x, t);
      double alpha = line.first;
      const double slope = line.second;
      if (!(slope > 0)) {
        r.report.notes.push_back(family + ": time does not grow with size; not fitted");
        continue;
      }
      alpha = std::max(0.0, alpha);
      CollectiveFit cf;
      cf.collective = c;
      cf.scope = inter ? "inter_node" : "intra_node";
      cf.ranks = ranks;
      cf.nodes = nodes;
      cf.alpha = alpha;
      cf.bus_bandwidth = 1.0 / slope;
      cf.points = static_cast<int>(fit_items.size());

      // Tier values that make the planner reproduce the fitted line.
      GroupShape g;
      g.size = ranks;
      g.nodes = nodes;
      g.ranks_per_node = std::max(1, ranks / nodes);
      const double big = 1024.0 * 1024.0 * 1024.0;
      const double target_bw_time = big * bf * slope;
      Topology probe = make_topology(cl, 1.0, 1.0);
      const bool link_known = inter ? inter_bandwidth(probe).value > 0 : intra_bandwidth(probe).value > 0;
      if (!link_known) {
        r.report.notes.push_back(family + ": the cluster has no " + (inter ? "inter-node" : "intra-node") +
                                 " link bandwidth; give --scenario with the cluster to fit its efficiency");
      } else {
        auto time_at_eff = [&](double e) {
          return inter ? planner_time(c, big, g, cl, fixed_intra_eff, e, 0, 0) : planner_time(c, big, g, cl, e, 1.0, 0, 0);
        };
        double e = solve_monotone(time_at_eff, target_bw_time, 1e-4, 100.0, -1);
        cf.efficiency = e;
        auto time_at_lat = [&](double l) {
          return inter ? planner_time(c, 1.0, g, cl, fixed_intra_eff, e, fixed_intra_lat, l)
                       : planner_time(c, 1.0, g, cl, e, 1.0, l, 0);
        };
        // The bandwidth term of a 1-byte message, to be left out of the latency target.
        const double floor_time = inter ? planner_time(c, 1.0, g, cl, fixed_intra_eff, e, 0, 0)
                                        : planner_time(c, 1.0, g, cl, e, 1.0, 0, 0);
        const double target_lat = alpha + floor_time;
        cf.latency = alpha > 0 ? solve_monotone(time_at_lat, target_lat, 1e-12, 1.0, +1) : 0.0;
        (inter ? inter_eff : intra_eff).push_back(cf.efficiency);
        (inter ? inter_lat : intra_lat).push_back(cf.latency);
      }
      r.report.collectives.push_back(cf);

      auto eval = [&](const std::vector<const Measurement*>& its, std::vector<double>& rate, std::vector<double>& rate_pred,
                      std::vector<double>& tt, std::vector<double>& t_pred) {
        for (const Measurement* it : its) {
          const double tp = alpha + it->bytes * bf * slope;
          rate.push_back(it->bytes * bf / it->time.median);
          rate_pred.push_back(it->bytes * bf / tp);
          tt.push_back(it->time.median);
          t_pred.push_back(tp);
        }
      };
      std::vector<double> a, b, cc, d, e1, f, gg, h;
      eval(fit_items, a, b, cc, d);
      eval(held_items, e1, f, gg, h);
      r.report.families.push_back(quality(family, "busbw", a, b, cc, d, e1, f, gg, h));
    }
  }
  auto set_tier = [&](CollectiveTierProfile& tier, const std::vector<double>& eff, const std::vector<double>& lat,
                      const char* name) {
    if (eff.empty()) return;
    double e = median_of(eff);
    if (e > 1.5 || e < 0.01) {
      r.report.notes.push_back(std::string("collectives.") + name + ": bandwidth_efficiency " + fmt(e) +
                               " outside [0.01, 1.5]; clamped (check the cluster's link bandwidth)");
      e = std::clamp(e, 0.01, 1.5);
    }
    tier.bandwidth_efficiency = e;
    // 0 would mean "use the cluster's latency"; a measured 0 is kept as 1 ns.
    tier.latency = Seconds(std::max(1e-9, median_of(lat)));
  };
  set_tier(r.profile.intra_node, intra_eff, intra_lat, "intra_node");
  set_tier(r.profile.inter_node, inter_eff, inter_lat, "inter_node");
}

void fit_power(const Measurements& m, const FitOptions& o, FitResult& r) {
  std::vector<double> idle, gemm, memory;
  for (const auto& it : m.items) {
    if (it.op != MeasuredOp::power) continue;
    if (it.phase == "idle") idle.push_back(it.watts);
    if (it.phase == "gemm") gemm.push_back(it.watts);
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
}

}  // namespace

// ---------------------------------------------------------------------------------------------

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

GemmCurve fit_gemm_curve(const std::vector<GemmShape>& shapes, const std::vector<double>& efficiency) {
  std::vector<std::array<double, 3>> dims;
  std::vector<double> y;
  for (size_t i = 0; i < shapes.size() && i < efficiency.size(); ++i) {
    if (!(efficiency[i] > 0) || !std::isfinite(efficiency[i])) continue;
    dims.push_back({static_cast<double>(shapes[i].m), static_cast<double>(shapes[i].n), static_cast<double>(shapes[i].k)});
    y.push_back(std::log(efficiency[i]));
  }
  GemmCurve out;
  if (y.empty()) return out;
  const size_t n = y.size();
  // For a given h the best log(max) is the mean residual: closed form.
  auto shape_term = [&](size_t i, double h) {
    double s = 0;
    for (double d : dims[i]) s += std::log(d / (d + h));
    return s;
  };
  auto best_a = [&](double h) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += y[i] - shape_term(i, h);
    return s / static_cast<double>(n);
  };
  auto sse = [&](double a, double h) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
      const double r = y[i] - a - shape_term(i, h);
      s += r * r;
    }
    return s;
  };
  // Coarse grid over half_dim, then Levenberg-Marquardt in (log max, log half_dim).
  double best_u = std::log(64.0), best = std::numeric_limits<double>::infinity();
  for (double u = std::log(0.5); u <= std::log(1e5); u += 0.05) {
    const double h = std::exp(u);
    const double s = sse(best_a(h), h);
    if (s < best) {
      best = s;
      best_u = u;
    }
  }
  Eigen::Vector2d p(best_a(std::exp(best_u)), best_u);
  double lambda = 1e-3;
  double cur = sse(p(0), std::exp(p(1)));
  for (int iter = 0; iter < 200; ++iter) {
    const double h = std::exp(p(1));
    Eigen::MatrixXd J(n, 2);
    Eigen::VectorXd res(n);
    for (size_t i = 0; i < n; ++i) {
      double du = 0;
      for (double d : dims[i]) du += -h / (d + h);
      J(static_cast<Eigen::Index>(i), 0) = 1.0;
      J(static_cast<Eigen::Index>(i), 1) = du;
      res(static_cast<Eigen::Index>(i)) = y[i] - p(0) - shape_term(i, h);
    }
    const Eigen::Matrix2d JtJ = J.transpose() * J;
    const Eigen::Vector2d g = J.transpose() * res;
    bool improved = false;
    for (int tries = 0; tries < 20 && !improved; ++tries) {
      Eigen::Matrix2d A = JtJ;
      A(0, 0) += lambda * std::max(JtJ(0, 0), 1e-12);
      A(1, 1) += lambda * std::max(JtJ(1, 1), 1e-12);
      const Eigen::Vector2d step = A.ldlt().solve(g);
      Eigen::Vector2d q = p + step;
      q(1) = std::clamp(q(1), std::log(1e-3), std::log(1e7));
      const double s = sse(q(0), std::exp(q(1)));
      if (s < cur) {
        const double gain = cur - s;
        p = q;
        cur = s;
        lambda = std::max(lambda / 3.0, 1e-12);
        improved = true;
        if (gain < 1e-15 * (1.0 + cur) || step.norm() < 1e-12) iter = 1000;
      } else {
        lambda *= 4.0;
      }
    }
    if (!improved) break;
  }
  out.max_efficiency = std::exp(p(0));
  out.half_dim = std::exp(p(1));
  return out;
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

// One note per family with no usable measurement: its profile values are the generation's defaults.
void note_unmeasured_families(const Measurements& m, FitResult& r) {
  bool attention = false, memory = false, collectives = false, power = false;
  for (const auto& it : m.items) {
    attention = attention || is_attention(it.op);
    memory = memory || is_memory(it.op);
    collectives = collectives || (is_collective(it.op) && it.ranks > 1);
    power = power || it.op == MeasuredOp::power;
  }
  const char* kept = ": not measured; the generation's defaults kept";
  if (!attention) r.report.notes.push_back(std::string("attention") + kept);
  if (!memory) r.report.notes.push_back(std::string("memory") + kept);
  if (!collectives) r.report.notes.push_back(std::string("collectives (multi-rank)") + kept);
  if (!power) r.report.notes.push_back(std::string("power") + kept);
}

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
  fit_gemm(m, options, r);
  fit_attention(m, options, r);
  fit_memory(m, options, r);
  fit_launch(m, r);
  fit_collectives(m, options, r);
  fit_power(m, options, r);
  bool any = false;
  for (const auto& it : m.items) any = any || it.op != MeasuredOp::power;
  if (!any) r.report.notes.push_back("no kernel measurements: the profile is the generation's defaults");
  note_unmeasured_families(m, r);
  for (int i = 0; i < kPrecisionCount; ++i) {
    const Precision p = static_cast<Precision>(i);
    bool fitted = false;
    for (const auto& g : r.report.gemm) fitted = fitted || g.dtype == p;
    if (!fitted && gpu.peak_for(p).value > 0) {
      r.report.notes.push_back(std::string("gemm ") + to_string(p) + ": not measured; default curve kept");
    }
  }
  return r;
}

std::string fitted_profile_yaml(const FitResult& r) {
  std::ostringstream out;
  out << "# " << r.profile.name << "\n";
  out << profile_yaml(r.profile);
  const FitReport& f = r.report;
  out << "fit:  # written by `trainplan calibrate fit`; informational (R^2 of the rate, MAPE % of the time)\n";
  out << "  families:\n";
  for (const auto& fam : f.families) {
    out << "    - {family: " << quoted(fam.family) << ", r2_of: " << fam.r2_of << ", fitted: " << fam.fitted << ", held_out: " << fam.held_out
        << ", r2: " << fmt(fam.r2) << ", mape_percent: " << fmt(fam.mape) << ", r2_fit: " << fmt(fam.r2_fit)
        << ", mape_fit_percent: " << fmt(fam.mape_fit) << "}\n";
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
  write_file_atomically(path, fitted_profile_yaml(r));
}

}  // namespace tp
