// Measurements -> HardwareProfile (pure CPU; Eigen least squares and Levenberg-Marquardt). Each family
// of measurements is fitted on its own (calibrate/fit_<family>.cpp), on all but every k-th measurement;
// the held-out ones give the fit quality (R^2 of the achieved rate, MAPE of the time).
// docs/calibration.md, "The fit".
//
//   gemm (per dtype)   GemmModel (model/hardware_profile.h): latency + smooth roofline of a compute
//                      term with a K pipeline fill and a memory term; LM on log(t_pred / t). Every
//                      measured shape also goes into the profile's exact-shape table.
//   attention fused    forward and backward: eff(s, d) = max x s/(s + s_half) x d/(d + d_half) [x s/(s +
//                      s_causal) when causal; fitted when both kinds are measured], LM on
//                      log time, from the fused records (cuDNN ones when present, else all fused);
//                      planner FLOP conventions (causal counts half, backward = 2 x forward).
//   attention unfused  the geometric mean of the measured efficiency.
//   memory             t = t0 + bytes / BW over copy, scale, triad and reduce (weighted least squares,
//                      weights 1/t^2); memory_efficiency = BW / datasheet bandwidth.
//   kernel classes     per class of memory_kernel records: t = bytes / (eff x HBM bandwidth), eff by
//                      least squares in relative error (closed form, fit_kernels.cpp).
//   kernel_launch      median of the empty-kernel runs (else the memory intercept t0).
//   collectives        per collective and group: t(S) = alpha + S * bus_factor(c, n) / B (nccl-tests
//                      sizes and bus factors), weighted least squares in (alpha, 1/B). The tier's
//                      bandwidth_efficiency and per-step latency are then solved so that the planner's
//                      own collective_time() reproduces B and alpha; the profile takes the median over
//                      the collectives of each scope (intra_node: one node; inter_node: several).
//   power              idle watts = median of the idle phase; busy_fraction = GEMM-phase watts / TDP.
#pragma once

#include <string>
#include <vector>

#include "gemm_time.h"
#include "hardware_profile.h"
#include "measurements.h"
#include "specs.h"

namespace tp {

struct FitOptions {
  ClusterSpec cluster;    // cluster.gpu gives the peaks, HBM bandwidth and TDP; the links give the tiers
  int holdout_every = 5;  // every k-th measurement of a family (in file order) is held out; 0 = none
  std::vector<std::string> sources;  // measurement files, recorded in the profile's provenance
};

// Fit quality of one family ("gemm bf16", "attention forward", "memory", "all_reduce intra_node 8", ...).
struct FamilyFit {
  std::string family;
  int fitted = 0;    // measurements the fit used
  int held_out = 0;  // measurements kept for the quality numbers
  std::string r2_of;  // what R^2 compares: "efficiency" (GEMM), "time" (attention: a constant efficiency has
                      // no rate R^2), "bandwidth" (memory), "busbw" (collectives)
  double r2 = 0;     // R^2 of r2_of on the held-out measurements (NaN when none)
  double mape = 0;   // mean absolute percentage error of the time on the held-out ones, in % (NaN when none)
  double r2_fit = 0;    // the same on the fitted measurements
  double mape_fit = 0;
};

// alpha-beta of one collective on one group.
struct CollectiveFit {
  Collective collective = Collective::all_reduce;
  std::string scope;  // intra_node | inter_node
  int ranks = 0;
  int nodes = 1;
  double alpha = 0;          // s
  double bus_bandwidth = 0;  // B/s, asymptotic busbw
  double efficiency = 0;     // tier bandwidth_efficiency that makes the planner reproduce bus_bandwidth
  double latency = 0;        // tier per-step latency that makes the planner reproduce alpha (s)
  int points = 0;
};

struct GemmFit {
  Precision dtype = Precision::bf16;
  GemmModel model;
  int points = 0;
};

struct FitReport {
  std::vector<FamilyFit> families;
  std::vector<GemmFit> gemm;
  std::vector<CollectiveFit> collectives;
  double memory_bandwidth = 0;        // B/s, joint fit
  double memory_intercept = 0;        // s
  std::vector<std::pair<std::string, double>> memory_bandwidth_per_op;  // B/s per kind (copy, scale, ...)
  double idle_watts = 0;
  double gemm_watts = 0;
  double memory_watts = 0;
  std::string attention_algorithm;  // the fused records fitted ("cudnn", "flash", "" = all fused, mixed)
  std::vector<std::string> notes;  // what could not be fitted and kept its default, clamped values ...
};

// Where a fitted profile came from: written as the profile's `provenance:` section.
struct Provenance {
  std::string device, driver, cuda, cublas, cudnn, measured, fitted;
  std::vector<std::string> sources;
};

struct FitResult {
  HardwareProfile profile;
  FitReport report;
  Provenance provenance;
};

// Fits the profile. Families without (enough) measurements keep the defaults of the GPU's generation
// and get a note. Throws InputError when the measurements cannot be used at all (no GPU peaks).
FitResult fit_profile(const Measurements& m, const FitOptions& options);

// The profile YAML (profile_yaml) followed by a `fit:` section with the report; load_profile reads it.
std::string fitted_profile_yaml(const FitResult& r);
void save_fitted_profile(const FitResult& r, const std::string& path);  // atomic

// The profile's efficiency for one measured attention case, as the planner reads it: the fused curve at
// the case's sequence, head dim and mask times the balance of its grid on the GPU's SMs
// (model/attention_grid.h), or the unfused constant. The fit, its checks and the calibration view all
// compare measurements against this.
double profile_attention_efficiency(const HardwareProfile& hw, const GpuSpec& gpu, const Measurement& it);

// --- building blocks (exposed for the tests) ---

// Weighted least squares of t = a + b x with weights 1/t^2 (relative errors). Returns {a, b}.
std::pair<double, double> fit_line_relative(const std::vector<double>& x, const std::vector<double>& t);

// One measured GEMM: dims and seconds per GEMM (a batched measurement divided by its batch).
struct GemmSample {
  GemmDims dims;
  double seconds = 0;
};
// Levenberg-Marquardt fit of GemmModel to measured times of one dtype, in log time (relative errors).
GemmModel fit_gemm_model(const GpuSpec& gpu, Precision p, const std::vector<GemmSample>& samples);

// R^2 and MAPE (%) of predictions against measurements; NaN for empty input.
double r_squared(const std::vector<double>& measured, const std::vector<double>& predicted);
double mape_percent(const std::vector<double>& measured, const std::vector<double>& predicted);

// Whether the i-th measurement of a family is held out.
inline bool held_out(int index_in_family, int every) { return every > 1 && index_in_family % every == every - 1; }

}  // namespace tp
