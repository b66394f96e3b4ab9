// Shared pieces of the per-family fitters (calibrate/fit_*.cpp); not part of the public interface.
#pragma once

#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "collectives.h"
#include "fitter.h"

namespace tp::fit_detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double median_of(std::vector<double> v);

// How many different shapes `items` hold, as `shape_of` names them: one shape timed many times pins no more
// of a curve than it timed once, so a fit counts shapes, not records.
template <class Item, class ShapeOf>
size_t distinct_shapes(const std::vector<Item>& items, ShapeOf shape_of) {
  std::set<decltype(shape_of(items.front()))> shapes;
  for (const Item& it : items) shapes.insert(shape_of(it));
  return shapes.size();
}
std::string fmt(double v);  // %.6g; .nan / .inf as YAML writes them
std::string quoted(const std::string& s);


FamilyFit quality(const std::string& family, const char* r2_of, const std::vector<double>& rate_fit,
                  const std::vector<double>& rate_fit_pred, const std::vector<double>& t_fit,
                  const std::vector<double>& t_fit_pred, const std::vector<double>& rate_held,
                  const std::vector<double>& rate_held_pred, const std::vector<double>& t_held,
                  const std::vector<double>& t_held_pred);

// Levenberg-Marquardt (Nocedal & Wright 2006, sec. 10.3) on residuals r(x) in R^n with a forward-
// difference Jacobian; returns the x with the smallest sum of squares found from `x0`.
using Residuals = std::function<std::vector<double>(const std::vector<double>&)>;
std::vector<double> levenberg_marquardt(const Residuals& r, std::vector<double> x0, int iterations = 200);
double sum_of_squares(const std::vector<double>& r);

// The planner's time for one collective on group g with the tiers' efficiencies and latencies (s).
double planner_time(Collective c, double bytes, const GroupShape& g, const ClusterSpec& cluster, double intra_eff,
                    double inter_eff, double intra_lat, double inter_lat);
// The fused records the profile describes: "cudnn" when the file has cuDNN ones, else "" (all fused).
std::string fused_attention_algorithm(const Measurements& m);

// The profile's clock (fit_clock.cpp): the highest SM clock sampled while busy, over the run and at the end of
// each GEMM and attention case, else the device's maximum (MHz).
double busy_clock_mhz(const Measurements& m);
// `m` with the GEMM and attention cases timed below `clock_mhz` scaled to it (times x clock_time_scale,
// rates / it), and a note when any was.
Measurements at_profile_clock(const Measurements& m, double clock_mhz, std::vector<std::string>& notes);

// The family fitters, each in its own file.
void fit_gemm(const Measurements& m, const FitOptions& o, FitResult& r);           // fit_gemm.cpp
void fit_attention(const Measurements& m, const FitOptions& o, FitResult& r);      // fit_attention.cpp
void fit_memory(const Measurements& m, const FitOptions& o, FitResult& r);         // fit_memory.cpp
void fit_launch(const Measurements& m, FitResult& r);                              // fit_memory.cpp
void fit_kernel_classes(const Measurements& m, const FitOptions& o, FitResult& r); // fit_kernels.cpp
void fit_collectives(const Measurements& m, const FitOptions& o, FitResult& r);    // fit_collectives.cpp
void fit_power(const Measurements& m, const FitOptions& o, FitResult& r);          // fit_power.cpp

}  // namespace tp::fit_detail
