#include "measurements.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "errors.h"
#include "yaml_reader.h"

namespace tp {

namespace {

struct OpName {
  MeasuredOp op;
  const char* name;
};
constexpr OpName kOpNames[kMeasuredOpCount] = {
    {MeasuredOp::gemm, "gemm"},
    {MeasuredOp::attention_forward, "attention_forward"},
    {MeasuredOp::attention_backward, "attention_backward"},
    {MeasuredOp::memory_copy, "memory_copy"},
    {MeasuredOp::memory_scale, "memory_scale"},
    {MeasuredOp::memory_triad, "memory_triad"},
    {MeasuredOp::memory_reduce, "memory_reduce"},
    {MeasuredOp::memory_kernel, "memory_kernel"},
    {MeasuredOp::kernel_launch, "kernel_launch"},
    {MeasuredOp::all_reduce, "all_reduce"},
    {MeasuredOp::all_gather, "all_gather"},
    {MeasuredOp::reduce_scatter, "reduce_scatter"},
    {MeasuredOp::all_to_all, "all_to_all"},
    {MeasuredOp::send_recv, "send_recv"},
    {MeasuredOp::broadcast, "broadcast"},
    {MeasuredOp::power, "power"},
};

}  // namespace

const char* to_string(MeasuredOp op) {
  for (const auto& o : kOpNames) {
    if (o.op == op) return o.name;
  }
  return "?";
}

std::optional<MeasuredOp> measured_op_from_string(const std::string& s) {
  for (const auto& o : kOpNames) {
    if (s == o.name) return o.op;
  }
  return std::nullopt;
}

std::vector<std::string> measured_op_names() {
  std::vector<std::string> names;
  for (const auto& o : kOpNames) names.emplace_back(o.name);
  return names;
}

bool is_collective(MeasuredOp op) {
  switch (op) {
    case MeasuredOp::all_reduce:
    case MeasuredOp::all_gather:
    case MeasuredOp::reduce_scatter:
    case MeasuredOp::all_to_all:
    case MeasuredOp::send_recv:
    case MeasuredOp::broadcast: return true;
    default: return false;
  }
}

bool is_memory(MeasuredOp op) {
  return op == MeasuredOp::memory_copy || op == MeasuredOp::memory_scale || op == MeasuredOp::memory_triad ||
         op == MeasuredOp::memory_reduce || op == MeasuredOp::memory_kernel;
}

double attention_flops(const Measurement& m) {
  double f = m.attention.full_forward_flops();
  f *= attention_executed_share(m.impl == AttentionImpl::fused, m.attention.causal);
  if (m.op == MeasuredOp::attention_backward) f *= kAttentionBackwardFactor;
  return f;
}

bool is_attention(MeasuredOp op) { return op == MeasuredOp::attention_forward || op == MeasuredOp::attention_backward; }

bool follows_sm_clock(const Measurement& x) { return x.op == MeasuredOp::gemm || is_attention(x.op); }

double clock_time_scale(const Measurement& x, double clock_mhz) {
  if (!follows_sm_clock(x) || x.sm_mhz <= 0 || clock_mhz <= 0 || x.sm_mhz >= clock_mhz) return 1.0;
  return x.sm_mhz / clock_mhz;
}

Collective collective_of(MeasuredOp op) {
  switch (op) {
    case MeasuredOp::all_gather: return Collective::all_gather;
    case MeasuredOp::reduce_scatter: return Collective::reduce_scatter;
    case MeasuredOp::all_to_all: return Collective::all_to_all;
    case MeasuredOp::send_recv: return Collective::send_recv;
    case MeasuredOp::broadcast: return Collective::broadcast;
    default: return Collective::all_reduce;
  }
}

MeasuredOp measured_op_of(Collective c) {
  switch (c) {
    case Collective::all_reduce: return MeasuredOp::all_reduce;
    case Collective::all_gather: return MeasuredOp::all_gather;
    case Collective::reduce_scatter: return MeasuredOp::reduce_scatter;
    case Collective::all_to_all: return MeasuredOp::all_to_all;
    case Collective::send_recv: return MeasuredOp::send_recv;
    case Collective::broadcast: return MeasuredOp::broadcast;
  }
  return MeasuredOp::all_reduce;
}

std::optional<Precision> precision_from_string(const std::string& s) {
  for (int i = 0; i < kPrecisionCount; ++i) {
    if (s == to_string(static_cast<Precision>(i))) return static_cast<Precision>(i);
  }
  return std::nullopt;
}

const char* to_string(AttentionImpl a) { return a == AttentionImpl::fused ? "fused" : "unfused"; }


BusRates nccl_test_rates(Collective c, double bytes, int ranks, double seconds) {
  BusRates r;
  if (seconds <= 0) return r;
  r.algbw = bytes / seconds;
  r.busbw = r.algbw * bus_factor(c, ranks);
  return r;
}

double nccl_test_bytes(Collective c, double requested_bytes, int ranks, double element_bytes) {
  const double count = std::floor(requested_bytes / element_bytes);
  const double n = std::max(1, ranks);
  switch (c) {
    case Collective::all_gather:
    case Collective::reduce_scatter: return std::floor(count / (4.0 * n)) * 4.0 * n * element_bytes;
    case Collective::all_to_all: return std::floor(count / n) * n * element_bytes;
    default: return count * element_bytes;
  }
}

std::string shape_text(const Measurement& m) {
  char buf[256];
  if (m.op == MeasuredOp::gemm) {
    std::snprintf(buf, sizeof buf, "m=%lld n=%lld k=%lld%s", static_cast<long long>(m.gemm.m),
                  static_cast<long long>(m.gemm.n), static_cast<long long>(m.gemm.k),
                  m.gemm.batch > 1 ? (" batch=" + std::to_string(m.gemm.batch)).c_str() : "");
  } else if (is_attention(m.op)) {
    const AttentionShape& a = m.attention;
    std::snprintf(buf, sizeof buf, "b=%lld h=%lld/%lld s=%lld d=%lld%s", static_cast<long long>(a.batch),
                  static_cast<long long>(a.heads), static_cast<long long>(a.kv_heads), static_cast<long long>(a.seq_q),
                  static_cast<long long>(a.head_dim), a.causal ? " causal" : "");
  } else if (m.op == MeasuredOp::memory_kernel) {
    std::snprintf(buf, sizeof buf, "%s %lldx%lld, %.0f B", to_string(m.kernel), static_cast<long long>(m.rows),
                  static_cast<long long>(m.cols), m.bytes);
  } else if (is_memory(m.op)) {
    std::snprintf(buf, sizeof buf, "%.0f B", m.bytes);
  } else if (is_collective(m.op)) {
    std::snprintf(buf, sizeof buf, "%.0f B on %d ranks, %d node%s", m.bytes, m.ranks, m.nodes, m.nodes == 1 ? "" : "s");
  } else if (m.op == MeasuredOp::power) {
    std::snprintf(buf, sizeof buf, "%s", m.phase.c_str());
  } else {
    buf[0] = '\0';
  }
  return buf;
}

std::string guess_gpu_key(const std::string& device_name, double memory_bytes) {
  std::string n;
  for (char c : device_name) n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  auto has = [&n](const char* s) { return n.find(s) != std::string::npos; };
  const double gib = memory_bytes / (1024.0 * 1024.0 * 1024.0);
  if (has("h100")) return has("pcie") ? "h100-pcie-80gb" : "h100-sxm-80gb";  // "H100 80GB HBM3" is the SXM part
  if (has("h200")) return "h200-sxm-141gb";
  if (has("b200")) return "b200-sxm-180gb";
  if (has("a100")) {
    if (has("40gb") || (gib > 0 && gib < 60)) return "a100-sxm4-40gb";
    return "a100-sxm4-80gb";
  }
  if (has("v100")) return "v100-sxm2-32gb";
  if (has("l40s")) return "l40s-48gb";
  if (has("4090")) return "rtx4090-24gb";
  if (has("3090")) return "rtx3090-24gb";
  if (has("mi300")) return "mi300x-192gb";
  return "";
}

std::string utc_now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace tp
