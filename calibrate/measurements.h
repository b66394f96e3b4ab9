// The measurements file of `trainplan calibrate run`: what ran on which device with which software,
// and every timed case (op, shape, dtype, time statistics, achieved rate). Versioned JSON, schema
// "trainplan-measurements/1" (docs/calibration.md, "The measurements file"). Reading is strict:
// a missing or mistyped field, an unknown key or an unknown op is an InputError naming the file and
// the field (JSON path). Writing is atomic (temporary file, then rename).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention_flops.h"
#include "collectives.h"
#include "kernel_class.h"
#include "output_file.h"
#include "specs.h"
#include "timing_stats.h"

namespace tp {

inline constexpr const char* kMeasurementsSchema = "trainplan-measurements/1";

enum class MeasuredOp {
  gemm,
  attention_forward,
  attention_backward,
  memory_copy,    // b[i] = a[i]            : 2 S bytes moved for arrays of S bytes
  memory_scale,   // b[i] = k a[i]          : 2 S
  memory_triad,   // c[i] = a[i] + k b[i]   : 3 S
  memory_reduce,  // row sums of squares (norm-like): S read, rows x 4 B written
  memory_kernel,  // a training step's memory-bound kernel of class `kernel` (model/kernel_class.h)
  kernel_launch,  // an empty kernel: time per launch, back to back on one stream
  all_reduce,
  all_gather,
  reduce_scatter,
  all_to_all,
  send_recv,
  broadcast,
  power,  // NVML power during a phase (idle, gemm, memory)
};
inline constexpr int kMeasuredOpCount = 16;

const char* to_string(MeasuredOp op);
std::optional<MeasuredOp> measured_op_from_string(const std::string& s);
std::vector<std::string> measured_op_names();
bool is_collective(MeasuredOp op);
bool is_memory(MeasuredOp op);
bool is_attention(MeasuredOp op);
Collective collective_of(MeasuredOp op);  // requires is_collective(op)
MeasuredOp measured_op_of(Collective c);

std::optional<Precision> precision_from_string(const std::string& s);

enum class AttentionImpl { fused, unfused };
const char* to_string(AttentionImpl a);

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;  // C[m x n] = A[m x k] B[k x n]
  std::int64_t batch = 1;            // batched GEMMs of the same shape
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch); }
};

struct AttentionShape {
  std::int64_t batch = 1;
  std::int64_t heads = 1;     // query heads
  std::int64_t kv_heads = 1;  // key/value heads (GQA: heads / kv_heads queries share one)
  std::int64_t seq_q = 0;
  std::int64_t seq_kv = 0;
  std::int64_t head_dim = 0;
  bool causal = false;
  // Matmul FLOPs of the forward pass, QK^T and PV over the full (non-causal) score matrix.
  double full_forward_flops() const {
    return attention_forward_flops(static_cast<double>(batch), static_cast<double>(heads), static_cast<double>(seq_q),
                                   static_cast<double>(seq_kv), static_cast<double>(head_dim));
  }
};

// One measured case. Which fields apply depends on `op`:
//   gemm: dtype, gemm                    attention_*: dtype, attention, impl
//   memory_*: dtype, bytes (moved)       kernel_launch: nothing else
//   memory_kernel: kernel, dtype, rows x cols (the kernel's main tensor), bytes (minimal traffic moved)
//   collectives: dtype, bytes (nccl-tests size), ranks, nodes, algbw, busbw
//   power: phase, watts (median over the phase), time = the samples' span; the gemm phase also its
//          rate: FLOP/s of the back-to-back GEMMs over the phase (sustained, under the power cap)
struct Measurement {
  MeasuredOp op = MeasuredOp::gemm;
  std::string label;  // where the case comes from: "grid", "qkv fwd tp=8", ...
  Precision dtype = Precision::bf16;
  GemmShape gemm;
  AttentionShape attention;
  AttentionImpl impl = AttentionImpl::fused;
  double bytes = 0;
  KernelClass kernel = KernelClass::residual_add;  // memory_kernel
  std::int64_t rows = 0, cols = 0;                 // memory_kernel: its main tensor (tokens x hidden, ...)
  int ranks = 1;
  int nodes = 1;
  TimeStats time;
  double rate = 0;   // achieved: FLOP/s (gemm, attention), B/s (memory), bus bandwidth B/s (collectives)
  double algbw = 0;  // collectives: bytes / time (nccl-tests algbw), B/s
  double busbw = 0;  // collectives: algbw x bus_factor (nccl-tests busbw), B/s
  std::string phase;  // power: idle | gemm | memory
  double watts = 0;   // power: median sample
  int samples = 0;    // power: NVML samples taken
  std::string algorithm;  // cuBLASLt algorithm, cuDNN engine, NCCL ...
  std::string note;
  // The SM clock NVML reported as the case's timed calls ended, MHz (0: not sampled, or a file from before
  // 2026-11-30). The fit scales GEMM and attention times to the profile's clock by it.
  double sm_mhz = 0;
};

// A case that did not run (out of memory, unsupported dtype or shape, no NCCL ...): never a crash.
struct SkippedCase {
  MeasuredOp op = MeasuredOp::gemm;
  std::string label;
  std::string shape;  // human-readable shape
  std::string reason;
};

struct DeviceInfo {
  std::string name;     // "NVIDIA H100 80GB HBM3"
  std::string gpu_key;  // catalog key ("h100-sxm-80gb"), "" when unknown
  std::string compute_capability;  // "9.0"
  int count = 0;        // devices used by this process
  int sm_count = 0;
  double memory_bytes = 0;
  double l2_bytes = 0;
  double sm_clock_max_mhz = 0;
  double memory_clock_max_mhz = 0;
  std::string hostname;
};

struct SoftwareInfo {
  std::string trainplan;
  std::string driver;        // NVIDIA driver ("570.86.15")
  std::string cuda_driver;   // CUDA version the driver supports ("13.0")
  std::string cuda_runtime;  // runtime linked ("13.0")
  std::string cublas;
  std::string cudnn;
  std::string nccl;
};

// Clock behaviour seen during the run (NVML).
struct ClockReport {
  double sm_mhz_min = 0;  // lowest SM clock sampled while busy
  double sm_mhz_max = 0;
  double memory_mhz = 0;
  double temperature_c_max = 0;
  std::vector<std::string> throttle_reasons;  // seen at any sample ("sw_power_cap", "hw_slowdown", ...)
};

struct RunSettings {
  std::vector<std::string> suites;
  std::string scenario;  // file the layer shapes came from, "" = none
  RepetitionPolicy policy;
  bool l2_flush = true;
  int ranks = 1;  // processes x devices taking part in the collectives
  int nodes = 1;
  int gpus_per_node = 1;
};

struct Measurements {
  std::string schema = kMeasurementsSchema;
  std::string created;  // ISO 8601 UTC
  DeviceInfo device;
  SoftwareInfo software;
  RunSettings settings;
  ClockReport clocks;
  std::vector<Measurement> items;
  std::vector<SkippedCase> skipped;
};

nlohmann::json to_json(const Measurements& m);
// Strict: `file` is used in messages ("file: measurements[3].shape.m: expected a number").
Measurements measurements_from_json(const nlohmann::json& j, const std::string& file);
Measurements measurements_from_text(const std::string& text, const std::string& file);
Measurements read_measurements(const std::string& path);
// Never half-written: a temporary file renamed over `path` (model/output_file.h).
void write_measurements(const Measurements& m, const std::string& path);

// nccl-tests conventions (doc/PERFORMANCE.md): algbw = S / t and busbw = algbw x bus_factor(c, n), with
// S the per-rank buffer (all_reduce, broadcast), the whole gathered array (all_gather, reduce_scatter),
// the per-rank send buffer (all_to_all) or the message (send_recv).
struct BusRates {
  double algbw = 0;  // B/s
  double busbw = 0;  // B/s
};
BusRates nccl_test_rates(Collective c, double bytes, int ranks, double seconds);
// The size nccl-tests actually moves for a requested size: all_gather and reduce_scatter give each rank
// floor(count / (4 n)) x 4 elements (ALIGN 4), all_to_all floor(count / n) elements per peer, the others
// floor(count) elements; returned in bytes (0 when the request is too small for n ranks).
double nccl_test_bytes(Collective c, double requested_bytes, int ranks, double element_bytes);

// FLOPs credited to an attention measurement, with the planner's conventions (docs/calibration.md, "The
// fit"): 4·b·h·s_q·s_kv·d forward, halved for a fused causal kernel (it skips the masked blocks; the
// unfused path computes the whole score matrix), twice that for backward.
double attention_flops(const Measurement& m);
// GEMM and attention cases: tensor-core kernels whose time follows the SM clock.
bool follows_sm_clock(const Measurement& x);
// A GEMM or attention case's time at its own clock over its time at `clock_mhz`: its `sm_mhz` / `clock_mhz`
// when it ended below that clock (a tensor-core kernel's time follows the SM clock), else 1 (not sampled,
// and the families bound by bandwidth or latency). The fit and `calibrate check` state cases at one clock by it.
double clock_time_scale(const Measurement& x, double clock_mhz);

// Elements a memory-kernel measurement runs over: rows x cols of its main tensor (AdamW: its parameters).
inline double kernel_elements(const Measurement& m) { return static_cast<double>(m.rows) * static_cast<double>(m.cols); }

// A readable one-line shape of a measurement ("m=4096 n=4096 k=4096", "b=1 h=8/1 s=8192 d=128 causal").
std::string shape_text(const Measurement& m);

// The catalog GPU a CUDA device name most likely is ("NVIDIA H100 80GB HBM3" -> "h100-sxm-80gb"), from
// the name and the memory size; "" when none fits.
std::string guess_gpu_key(const std::string& device_name, double memory_bytes);

// UTC time now, ISO 8601.
std::string utc_now_iso8601();

}  // namespace tp
