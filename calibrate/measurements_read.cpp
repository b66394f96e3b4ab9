// Strict reading of the measurements file: every error names the file and the JSON path.
#include "measurements.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "errors.h"
#include "json_positions.h"
#include "hardware_profile.h"
#include "input_file.h"
#include "json_object_reader.h"
#include "yaml_reader.h"

namespace tp {

namespace {
using nlohmann::json;
constexpr double kLeastKernelSeconds = 1e-9;
constexpr double kMostKernelSeconds = 3600;
constexpr double kMostKernelBytes = 1e15;  // a petabyte: no kernel or collective moves more (an H100 moves ~3e12 B/s)
}  // namespace

// ---------------------------------------------------------------------------------------------
// Strict reading

namespace {

TimeStats read_stats(JsonObjectReader& parent, const std::string& key, bool required) {
  TimeStats t;
  if (!parent.has(key)) {
    if (required) parent.fail(key, "missing (required)");
    return t;
  }
  JsonObjectReader r(parent.get(key, true), parent.field(key), parent.file());
  t.median = r.number("median", 0, true, 0.0);
  t.mean = r.number("mean", t.median, false, 0.0);
  t.min = r.number("min", t.median, false, 0.0);
  t.max = r.number("max", t.median, false, 0.0);
  t.p10 = r.number("p10", t.min, false, 0.0);
  t.p90 = r.number("p90", t.max, false, 0.0);
  t.stddev = r.number("stddev", 0, false, 0.0);
  t.reps = static_cast<int>(r.integer("reps", 1, false, 0));
  t.stable = r.boolean("stable", true);
  r.finish();
  return t;
}

Precision read_dtype(JsonObjectReader& r) {
  const std::string s = r.string("dtype", "", true);
  auto p = precision_from_string(s);
  if (!p) {
    std::vector<std::string> names;
    for (int i = 0; i < kPrecisionCount; ++i) names.emplace_back(to_string(static_cast<Precision>(i)));
    const std::string hint = closest_key(s, names);
    r.fail("dtype", "unknown dtype '" + s + "' (fp32, tf32, fp16, bf16 or fp8)" +
                        (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
  }
  return *p;
}

MeasuredOp read_op(JsonObjectReader& r) {
  const std::string op = r.string("op", "", true);
  auto parsed = measured_op_from_string(op);
  if (!parsed) {
    const std::string hint = closest_key(op, measured_op_names());
    r.fail("op", "unknown op '" + op + "'" + (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
  }
  return *parsed;
}

// GEMM: dtype and shape {m, n, k, batch}.
void read_gemm_fields(JsonObjectReader& r, Measurement& m) {
  m.dtype = read_dtype(r);
  JsonObjectReader s(r.get("shape", true), r.field("shape"), r.file());
  m.gemm.m = s.integer("m", 0, true, 1, kMaxGemmDimension);
  m.gemm.n = s.integer("n", 0, true, 1, kMaxGemmDimension);
  m.gemm.k = s.integer("k", 0, true, 1, kMaxGemmDimension);
  m.gemm.batch = s.integer("batch", 1, false, 1);
  s.finish();
}

// Attention forward/backward: dtype, impl (fused or unfused) and shape; kv_heads must divide heads.
void read_attention_fields(JsonObjectReader& r, Measurement& m) {
  m.dtype = read_dtype(r);
  const std::string impl = r.string("impl", "", true);
  if (impl != "fused" && impl != "unfused") r.fail("impl", "expected 'fused' or 'unfused', got '" + impl + "'");
  m.impl = impl == "fused" ? AttentionImpl::fused : AttentionImpl::unfused;
  JsonObjectReader s(r.get("shape", true), r.field("shape"), r.file());
  AttentionShape& a = m.attention;
  a.batch = s.integer("batch", 1, false, 1);
  a.heads = s.integer("heads", 0, true, 1);
  a.kv_heads = s.integer("kv_heads", a.heads, false, 1);
  a.seq_q = s.integer("seq_q", 0, true, 1);
  a.seq_kv = s.integer("seq_kv", a.seq_q, false, 1);
  a.head_dim = s.integer("head_dim", 0, true, 1);
  a.causal = s.boolean("causal", false, true);
  s.finish();
  if (a.heads % a.kv_heads != 0) {
    throw InputError({r.file(), 0, 0}, r.field("shape.kv_heads"), "must divide heads (" + std::to_string(a.heads) + ")");
  }
}

// A memory-bound kernel class: kernel, dtype and shape {rows, cols, bytes}.
void read_memory_kernel_fields(JsonObjectReader& r, Measurement& m) {
  const std::string kernel = r.string("kernel", "", true);
  const auto k = kernel_class_from_string(kernel);
  if (!k) r.fail("kernel", "unknown kernel class '" + kernel + "'; expected one of " + kernel_class_names());
  m.kernel = *k;
  m.dtype = read_dtype(r);
  JsonObjectReader s(r.get("shape", true), r.field("shape"), r.file());
  m.rows = s.integer("rows", 0, true, 1);
  m.cols = s.integer("cols", 1, false, 1);
  m.bytes = s.number("bytes", 0, true, 1.0, kMostKernelBytes);
  s.finish();
}

// The STREAM-style memory ops: dtype and shape {bytes}.
void read_memory_fields(JsonObjectReader& r, Measurement& m) {
  m.dtype = read_dtype(r);
  JsonObjectReader s(r.get("shape", true), r.field("shape"), r.file());
  m.bytes = s.number("bytes", 0, true, 1.0, kMostKernelBytes);
  s.finish();
}

// A collective: dtype, shape {bytes, ranks, nodes <= ranks} and the nccl-tests bandwidths.
void read_collective_fields(JsonObjectReader& r, Measurement& m) {
  m.dtype = read_dtype(r);
  JsonObjectReader s(r.get("shape", true), r.field("shape"), r.file());
  m.bytes = s.number("bytes", 0, true, 0.0, kMostKernelBytes);
  m.ranks = static_cast<int>(s.integer("ranks", 0, true, 1));
  m.nodes = static_cast<int>(s.integer("nodes", 1, false, 1));
  s.finish();
  if (m.nodes > m.ranks) {
    throw InputError({r.file(), 0, 0}, r.field("shape.nodes"),
                     "more nodes (" + std::to_string(m.nodes) + ") than ranks (" + std::to_string(m.ranks) + ")");
  }
  m.algbw = r.number("algbw", 0, false, 0.0);
  m.busbw = r.number("busbw", 0, false, 0.0);
}

// A power sample: phase (idle, gemm or memory), watts, samples and the gemm phase's rate.
void read_power_fields(JsonObjectReader& r, Measurement& m) {
  m.phase = r.string("phase", "", true);
  if (m.phase != "idle" && m.phase != "gemm" && m.phase != "memory") {
    r.fail("phase", "expected idle, gemm or memory, got '" + m.phase + "'");
  }
  // At most 10 kW: no accelerator draws more (the largest boards' limits are ~1.2 kW); 1e9 W was fitted into an
  // energy of 7.7e10 kWh (a CLI audit, 2026-12-01).
  m.watts = r.number("watts", 0, true, 0.0, 1e4);
  m.samples = static_cast<int>(r.integer("samples", 0, false, 0));
  m.rate = r.number("rate", 0, false, 0.0);  // gemm phase: sustained FLOP/s (absent in older files)
}

Measurement read_measurement(const json& j, const std::string& path, const std::string& file) {
  JsonObjectReader r(j, path, file);
  Measurement m;
  m.op = read_op(r);
  m.label = r.string("label", "");
  if (m.op == MeasuredOp::gemm) read_gemm_fields(r, m);
  else if (is_attention(m.op)) read_attention_fields(r, m);
  else if (m.op == MeasuredOp::memory_kernel) read_memory_kernel_fields(r, m);
  else if (is_memory(m.op)) read_memory_fields(r, m);
  else if (is_collective(m.op)) read_collective_fields(r, m);
  else if (m.op == MeasuredOp::power) read_power_fields(r, m);
  m.time = read_stats(r, "time", m.op != MeasuredOp::power);
  // A kernel's time between a nanosecond (the profile's own least time, model/profile_yaml.cpp) and an hour:
  // a time outside it is a unit slip or a broken timer, and would give the fit an infinite or denormal ratio.
  if (m.op != MeasuredOp::power && !(m.time.median >= kLeastKernelSeconds && m.time.median <= kMostKernelSeconds)) {
    throw InputError({file, 0, 0}, r.field("time.median"),
                     "a kernel time of " + shown(m.time.median) + " s is outside [1 ns, 1 h]: times are in seconds");
  }
  if (m.op != MeasuredOp::power && m.op != MeasuredOp::kernel_launch) m.rate = r.number("rate", 0, false, 0.0);
  m.algorithm = r.string("algorithm", "");
  m.note = r.string("note", "");
  m.sm_mhz = r.number("sm_mhz", 0, false, 0.0);  // absent before 2026-11-30
  r.finish();
  return m;
}

// "schema" must be present and name this trainplan's measurements version.
std::string read_schema(JsonObjectReader& r, const json& j) {
  if (!j.contains("schema")) {
    // PyTorch's reference timings (measurements/scripts: fused_ref.py, kernel_ref.py) are imported first.
    const bool torch = j.contains("rows") || j.contains("attention") || j.contains("kernels");
    r.fail("schema", std::string("missing: not a trainplan measurements file (expected \"schema\": \"") +
                         kMeasurementsSchema + "\")" +
                         (torch ? "; PyTorch reference timings: `trainplan calibrate import-torch FILE -o OUT.json` first" : ""));
  }
  std::string schema = r.string("schema", "", true);
  if (schema != kMeasurementsSchema) {
    if (schema.rfind("trainplan-measurements/", 0) == 0) {
      r.fail("schema", "unsupported version '" + schema + "'; this trainplan reads " + kMeasurementsSchema);
    }
    r.fail("schema", "'" + schema + "' is not a trainplan measurements file (expected " + kMeasurementsSchema + ")");
  }
  return schema;
}

void read_device(JsonObjectReader& r, DeviceInfo& v) {
  JsonObjectReader d(r.get("device", true), "device", r.file());
  v.name = d.string("name", "", true);
  v.gpu_key = d.string("gpu_key", "");
  v.compute_capability = d.string("compute_capability", "");
  v.count = static_cast<int>(d.integer("count", 1));
  v.sm_count = static_cast<int>(d.integer("sm_count", 0));
  v.memory_bytes = d.number("memory_bytes", 0, false, 0.0);
  v.l2_bytes = d.number("l2_bytes", 0, false, 0.0);
  v.sm_clock_max_mhz = d.number("sm_clock_max_mhz", 0, false, 0.0);
  v.memory_clock_max_mhz = d.number("memory_clock_max_mhz", 0, false, 0.0);
  v.hostname = d.string("hostname", "");
  d.finish();
}

void read_software(JsonObjectReader& r, SoftwareInfo& v) {
  if (!r.has("software")) return;
  JsonObjectReader s(r.get("software", true), "software", r.file());
  v.trainplan = s.string("trainplan", "");
  v.driver = s.string("driver", "");
  v.cuda_driver = s.string("cuda_driver", "");
  v.cuda_runtime = s.string("cuda_runtime", "");
  v.cublas = s.string("cublas", "");
  v.cudnn = s.string("cudnn", "");
  v.nccl = s.string("nccl", "");
  s.finish();
}

void read_settings(JsonObjectReader& r, RunSettings& v) {
  if (!r.has("settings")) return;
  JsonObjectReader s(r.get("settings", true), "settings", r.file());
  v.suites = s.strings("suites");
  v.scenario = s.string("scenario", "");
  v.policy.warmup = static_cast<int>(s.integer("warmup", v.policy.warmup));
  v.policy.min_reps = static_cast<int>(s.integer("min_reps", v.policy.min_reps));
  v.policy.max_reps = static_cast<int>(s.integer("max_reps", v.policy.max_reps));
  v.policy.target_spread = s.number("target_spread", v.policy.target_spread, false, 0.0);
  v.policy.max_seconds = s.number("max_seconds", v.policy.max_seconds, false, 0.0);
  v.l2_flush = s.boolean("l2_flush", true);
  v.ranks = static_cast<int>(s.integer("ranks", 1, false, 1));
  v.nodes = static_cast<int>(s.integer("nodes", 1, false, 1));
  v.gpus_per_node = static_cast<int>(s.integer("gpus_per_node", 1, false, 1));
  s.finish();
}

void read_clocks(JsonObjectReader& r, ClockReport& v) {
  if (!r.has("clocks")) return;
  JsonObjectReader c(r.get("clocks", true), "clocks", r.file());
  v.sm_mhz_min = c.number("sm_mhz_min", 0, false, 0.0);
  v.sm_mhz_max = c.number("sm_mhz_max", 0, false, 0.0);
  v.memory_mhz = c.number("memory_mhz", 0, false, 0.0);
  v.temperature_c_max = c.number("temperature_c_max", 0);
  v.throttle_reasons = c.strings("throttle_reasons");
  c.finish();
}

// The cases the runner skipped (op, label, shape, reason).
void read_skipped(JsonObjectReader& r, std::vector<SkippedCase>& out) {
  if (!r.has("skipped")) return;
  const json& sk = r.get("skipped", true);
  if (!sk.is_array()) r.fail("skipped", std::string("expected an array, got ") + json_type_name(sk));
  for (size_t i = 0; i < sk.size(); ++i) {
    JsonObjectReader s(sk[i], "skipped[" + std::to_string(i) + "]", r.file());
    SkippedCase c;
    const std::string op = s.string("op", "", true);
    auto parsed = measured_op_from_string(op);
    if (!parsed) s.fail("op", "unknown op '" + op + "'");
    c.op = *parsed;
    c.label = s.string("label", "");
    c.shape = s.string("shape", "");
    c.reason = s.string("reason", "", true);
    s.finish();
    out.push_back(c);
  }
}

}  // namespace

Measurements measurements_from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) {
    throw InputError({file, 0, 0}, "", std::string("expected a JSON object at the top, got ") + json_type_name(j));
  }
  JsonObjectReader r(j, "", file);
  Measurements m;
  m.schema = read_schema(r, j);
  m.created = r.string("created", "");
  read_device(r, m.device);
  read_software(r, m.software);
  read_settings(r, m.settings);
  read_clocks(r, m.clocks);
  const json& items = r.get("measurements", true);
  if (!items.is_array()) r.fail("measurements", std::string("expected an array, got ") + json_type_name(items));
  for (size_t i = 0; i < items.size(); ++i) {
    m.items.push_back(read_measurement(items[i], "measurements[" + std::to_string(i) + "]", file));
  }
  read_skipped(r, m.skipped);
  r.finish();
  return m;
}

Measurements measurements_from_text(const std::string& text, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    // Byte offset -> line:column.
    const size_t at = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    int line = 1, col = 1;
    for (size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    const auto pos = what.find("syntax error");
    throw InputError({file, line, col}, "", "not valid JSON: " + (pos == std::string::npos ? what : what.substr(pos)));
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    throw InputError({file, 0, 0}, "", std::string("not valid JSON: ") + e.what());
  }
  const JsonPositions positions(text, file);  // a key given twice is an error here
  try {
    return measurements_from_json(j, file);
  } catch (const InputError& e) {
    rethrow_at_line(e, positions, file);  // the field's line and column
  }
}

Measurements read_measurements(const std::string& path) {
  if (!std::ifstream(path, std::ios::binary)) throw IoError("cannot read " + path);
  return measurements_from_text(read_input_file(path), path);  // size cap, no directory (model/input_file.h)
}
}  // namespace tp
