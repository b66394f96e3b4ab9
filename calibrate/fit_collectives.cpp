// Fitter of the collectives: alpha-beta per collective and group, solved into the tiers.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "collectives.h"
#include "errors.h"
#include "fit_internal.h"

namespace tp::fit_detail {

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

// Tier values that make the planner reproduce the fitted line: the bandwidth efficiency at 1 GiB and
// the per-step latency at 1 byte. False when the cluster has no bandwidth for the tier (noted).
bool solve_tier(CollectiveFit& cf, Collective c, bool inter, double bf, double slope, const ClusterSpec& cl,
                double fixed_intra_eff, double fixed_intra_lat, const std::string& family, FitResult& r) {
  GroupShape g;
  g.size = cf.ranks;
  g.nodes = cf.nodes;
  g.ranks_per_node = std::max(1, cf.ranks / cf.nodes);
  const double big = 1024.0 * 1024.0 * 1024.0;
  const double target_bw_time = big * bf * slope;
  Topology probe = make_topology(cl, 1.0, 1.0);
  const bool link_known = inter ? inter_bandwidth(probe).value > 0 : intra_bandwidth(probe).value > 0;
  if (!link_known) {
    r.report.notes.push_back(family + ": the cluster has no " + (inter ? "inter-node" : "intra-node") +
                             " link bandwidth; give --scenario with the cluster to fit its efficiency");
    return false;
  }
  auto time_at_eff = [&](double e) {
    return inter ? planner_time(c, big, g, cl, fixed_intra_eff, e, 0, 0) : planner_time(c, big, g, cl, e, 1.0, 0, 0);
  };
  const double e = solve_monotone(time_at_eff, target_bw_time, 1e-4, 100.0, -1);
  cf.efficiency = e;
  auto time_at_lat = [&](double l) {
    return inter ? planner_time(c, 1.0, g, cl, fixed_intra_eff, e, fixed_intra_lat, l) : planner_time(c, 1.0, g, cl, e, 1.0, l, 0);
  };
  // The bandwidth term of a 1-byte message, to be left out of the latency target.
  const double floor_time = inter ? planner_time(c, 1.0, g, cl, fixed_intra_eff, e, 0, 0) : planner_time(c, 1.0, g, cl, e, 1.0, 0, 0);
  const double target_lat = cf.alpha + floor_time;
  cf.latency = cf.alpha > 0 ? solve_monotone(time_at_lat, target_lat, 1e-12, 1.0, +1) : 0.0;
  return true;
}

void add_collective_quality(const std::string& family, const std::vector<const Measurement*>& fit_items,
                            const std::vector<const Measurement*>& held_items, double alpha, double bf, double slope,
                            FitResult& r) {
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

namespace {

using CollectiveKey = std::tuple<int, int, int>;  // op, ranks, nodes
using CollectiveGroups = std::map<CollectiveKey, std::vector<const Measurement*>>;

// The timed multi-rank collectives, grouped by (op, ranks, nodes); notes how many single-rank ones were dropped.
CollectiveGroups group_collectives(const Measurements& m, FitResult& r) {
  CollectiveGroups groups;
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
  return groups;
}

// The fitted tier values of one scope (intra_node or inter_node), one entry per solved group.
struct TierFits {
  std::vector<double> eff, lat;
};

// The intra-node tier the inter-node solve holds fixed: the fitted medians, else the profile's or cluster's values.
struct FixedIntraTier {
  double eff = 0, lat = 0;
};
FixedIntraTier fixed_intra_tier(const TierFits& intra, const HardwareProfile& defaults, const ClusterSpec& cl) {
  double fixed_intra_eff = intra.eff.empty() ? defaults.intra_node.bandwidth_efficiency : median_of(intra.eff);
  double fixed_intra_lat = intra.lat.empty() ? (defaults.intra_node.latency.value > 0 ? defaults.intra_node.latency.value
                                                                                      : cl.intra_node.latency.value)
                                             : median_of(intra.lat);
  return {fixed_intra_eff, fixed_intra_lat};
}

// Alpha-beta fit of one group (time = alpha + bytes x bus factor x slope), solved into its tier's values
// (added to `fits`); the fit and its quality go to the report, a group that cannot be fitted to the notes.
void fit_collective_group(const CollectiveKey& key, const std::vector<const Measurement*>& items, const FitOptions& o,
                          const FixedIntraTier& fixed, TierFits& fits, FitResult& r) {
  const int op_i = std::get<0>(key);
  const int ranks = std::get<1>(key);
  const int nodes = std::get<2>(key);
  const bool inter = nodes > 1;
  const MeasuredOp op = static_cast<MeasuredOp>(op_i);
  const Collective c = collective_of(op);
  const double bf = bus_factor(c, ranks);
  std::vector<const Measurement*> fit_items, held_items;
  for (size_t i = 0; i < items.size(); ++i) {
    (held_out(static_cast<int>(i), o.holdout_every) && items.size() >= 6 ? held_items : fit_items).push_back(items[i]);
  }
  const std::string family = std::string(to_string(op)) + (inter ? " inter_node " : " intra_node ") +
                             std::to_string(ranks) + " ranks" + (inter ? " on " + std::to_string(nodes) + " nodes" : "");
  if (distinct_shapes(fit_items, [](const Measurement* it) { return it->bytes; }) < 2 || bf <= 0) {
    r.report.notes.push_back(family + ": too few sizes to fit alpha and beta");
    return;
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
    return;
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

  if (solve_tier(cf, c, inter, bf, slope, o.cluster, fixed.eff, fixed.lat, family, r)) {
    fits.eff.push_back(cf.efficiency);
    fits.lat.push_back(cf.latency);
  }
  r.report.collectives.push_back(cf);

  add_collective_quality(family, fit_items, held_items, alpha, bf, slope, r);
}

// A profile tier from its groups' fits: the median efficiency (clamped to [0.01, 1.5], noted) and latency.
void set_tier(CollectiveTierProfile& tier, const TierFits& fits, const char* name, FitResult& r) {
  if (fits.eff.empty()) return;
  double e = median_of(fits.eff);
  if (e > 1.5 || e < 0.01) {
    r.report.notes.push_back(std::string("collectives.") + name + ": bandwidth_efficiency " + fmt(e) +
                             " outside [0.01, 1.5]; clamped (check the cluster's link bandwidth)");
    e = std::clamp(e, 0.01, 1.5);
  }
  tier.bandwidth_efficiency = e;
  // 0 would mean "use the cluster's latency"; a measured 0 is kept as 1 ns.
  tier.latency = Seconds(std::max(1e-9, median_of(fits.lat)));
}

}  // namespace

void fit_collectives(const Measurements& m, const FitOptions& o, FitResult& r) {
  const CollectiveGroups groups = group_collectives(m, r);
  if (groups.empty()) return;
  TierFits intra, inter;
  const HardwareProfile defaults = r.profile;
  // Intra-node groups first: the inter-node solve uses the intra tier's fitted values.
  for (int pass = 0; pass < 2; ++pass) {
    const FixedIntraTier fixed = fixed_intra_tier(intra, defaults, o.cluster);
    for (const auto& [key, items] : groups) {
      const bool is_inter = std::get<2>(key) > 1;
      if (is_inter != (pass == 1)) continue;
      fit_collective_group(key, items, o, fixed, is_inter ? inter : intra, r);
    }
  }
  set_tier(r.profile.intra_node, intra, "intra_node", r);
  set_tier(r.profile.inter_node, inter, "inter_node", r);
}

}  // namespace tp::fit_detail
