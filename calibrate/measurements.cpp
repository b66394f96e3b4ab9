#include "measurements.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "errors.h"
#include "input_file.h"
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

bool is_attention(MeasuredOp op) { return op == MeasuredOp::attention_forward || op == MeasuredOp::attention_backward; }

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

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

using nlohmann::json;

json stats_json(const TimeStats& t) {
  return json{{"median", t.median}, {"mean", t.mean},     {"min", t.min},   {"max", t.max},          {"p10", t.p10},
              {"p90", t.p90},       {"stddev", t.stddev}, {"reps", t.reps}, {"stable", t.stable}};
}

json measurement_json(const Measurement& m) {
  json j;
  j["op"] = to_string(m.op);
  if (!m.label.empty()) j["label"] = m.label;
  if (m.op == MeasuredOp::gemm) {
    j["dtype"] = to_string(m.dtype);
    j["shape"] = json{{"m", m.gemm.m}, {"n", m.gemm.n}, {"k", m.gemm.k}, {"batch", m.gemm.batch}};
  } else if (is_attention(m.op)) {
    const AttentionShape& a = m.attention;
    j["dtype"] = to_string(m.dtype);
    j["impl"] = to_string(m.impl);
    j["shape"] = json{{"batch", a.batch},   {"heads", a.heads},       {"kv_heads", a.kv_heads}, {"seq_q", a.seq_q},
                      {"seq_kv", a.seq_kv}, {"head_dim", a.head_dim}, {"causal", a.causal}};
  } else if (m.op == MeasuredOp::memory_kernel) {
    j["kernel"] = to_string(m.kernel);
    j["dtype"] = to_string(m.dtype);
    j["shape"] = json{{"rows", m.rows}, {"cols", m.cols}, {"bytes", m.bytes}};
  } else if (is_memory(m.op)) {
    j["dtype"] = to_string(m.dtype);
    j["shape"] = json{{"bytes", m.bytes}};
  } else if (is_collective(m.op)) {
    j["dtype"] = to_string(m.dtype);
    j["shape"] = json{{"bytes", m.bytes}, {"ranks", m.ranks}, {"nodes", m.nodes}};
    j["algbw"] = m.algbw;
    j["busbw"] = m.busbw;
  } else if (m.op == MeasuredOp::power) {
    j["phase"] = m.phase;
    j["watts"] = m.watts;
    j["samples"] = m.samples;
  }
  j["time"] = stats_json(m.time);
  if (m.op != MeasuredOp::power && m.op != MeasuredOp::kernel_launch) j["rate"] = m.rate;
  if (!m.algorithm.empty()) j["algorithm"] = m.algorithm;
  if (!m.note.empty()) j["note"] = m.note;
  return j;
}

}  // namespace

nlohmann::json to_json(const Measurements& m) {
  json j;
  j["schema"] = m.schema;
  j["created"] = m.created;
  const DeviceInfo& d = m.device;
  j["device"] = json{{"name", d.name},
                     {"gpu_key", d.gpu_key},
                     {"compute_capability", d.compute_capability},
                     {"count", d.count},
                     {"sm_count", d.sm_count},
                     {"memory_bytes", d.memory_bytes},
                     {"l2_bytes", d.l2_bytes},
                     {"sm_clock_max_mhz", d.sm_clock_max_mhz},
                     {"memory_clock_max_mhz", d.memory_clock_max_mhz},
                     {"hostname", d.hostname}};
  const SoftwareInfo& s = m.software;
  j["software"] = json{{"trainplan", s.trainplan},     {"driver", s.driver}, {"cuda_driver", s.cuda_driver},
                       {"cuda_runtime", s.cuda_runtime}, {"cublas", s.cublas}, {"cudnn", s.cudnn},
                       {"nccl", s.nccl}};
  const RunSettings& r = m.settings;
  j["settings"] = json{{"suites", r.suites},
                       {"scenario", r.scenario},
                       {"warmup", r.policy.warmup},
                       {"min_reps", r.policy.min_reps},
                       {"max_reps", r.policy.max_reps},
                       {"target_spread", r.policy.target_spread},
                       {"max_seconds", r.policy.max_seconds},
                       {"l2_flush", r.l2_flush},
                       {"ranks", r.ranks},
                       {"nodes", r.nodes},
                       {"gpus_per_node", r.gpus_per_node}};
  const ClockReport& c = m.clocks;
  j["clocks"] = json{{"sm_mhz_min", c.sm_mhz_min},
                     {"sm_mhz_max", c.sm_mhz_max},
                     {"memory_mhz", c.memory_mhz},
                     {"temperature_c_max", c.temperature_c_max},
                     {"throttle_reasons", c.throttle_reasons}};
  json items = json::array();
  for (const auto& it : m.items) items.push_back(measurement_json(it));
  j["measurements"] = items;
  json skipped = json::array();
  for (const auto& sk : m.skipped) {
    skipped.push_back(json{{"op", to_string(sk.op)}, {"label", sk.label}, {"shape", sk.shape}, {"reason", sk.reason}});
  }
  j["skipped"] = skipped;
  return j;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError("cannot write " + tmp);
    out << text;
    out.flush();
    if (!out) throw IoError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw IoError("cannot rename " + tmp + " to " + path);
  }
}

void write_measurements(const Measurements& m, const std::string& path) {
  write_file_atomically(path, to_json(m).dump(1) + "\n");
}

// ---------------------------------------------------------------------------------------------
// Strict reading

namespace {

const char* type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "an unknown value";
  }
}

// A JSON object read field by field; every key not asked for is an error (with a "did you mean").
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path, const std::string& file) : j_(j), path_(std::move(path)), file_(file) {
    if (!j_.is_object()) fail_here(std::string("expected an object, got ") + type_name(j_));
  }

  std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError({file_, 0, 0}, field(key), message);
  }
  [[noreturn]] void fail_here(const std::string& message) const { throw InputError({file_, 0, 0}, path_, message); }

  bool has(const std::string& key) {
    known_.push_back(key);
    return j_.contains(key);
  }

  const json& get(const std::string& key, bool required) {
    static const json kNull;
    if (!has(key)) {
      if (required) fail(key, "missing (required)");
      return kNull;
    }
    return j_.at(key);
  }

  double number(const std::string& key, double def, bool required = false, double min = -1e300) {
    const json& v = get(key, required);
    if (v.is_null() && !j_.contains(key)) return def;
    if (!v.is_number()) fail(key, std::string("expected a number, got ") + type_name(v));
    const double x = v.get<double>();
    if (!(x >= min)) fail(key, "must be at least " + std::to_string(min) + ", got " + std::to_string(x));
    return x;
  }

  std::int64_t integer(const std::string& key, std::int64_t def, bool required = false, std::int64_t min = 0) {
    const json& v = get(key, required);
    if (v.is_null() && !j_.contains(key)) return def;
    if (!v.is_number_integer()) fail(key, std::string("expected an integer, got ") + type_name(v));
    const std::int64_t x = v.get<std::int64_t>();
    if (x < min) fail(key, "must be at least " + std::to_string(min) + ", got " + std::to_string(x));
    return x;
  }

  bool boolean(const std::string& key, bool def, bool required = false) {
    const json& v = get(key, required);
    if (v.is_null() && !j_.contains(key)) return def;
    if (!v.is_boolean()) fail(key, std::string("expected true or false, got ") + type_name(v));
    return v.get<bool>();
  }

  std::string string(const std::string& key, const std::string& def, bool required = false) {
    const json& v = get(key, required);
    if (v.is_null() && !j_.contains(key)) return def;
    if (!v.is_string()) fail(key, std::string("expected a string, got ") + type_name(v));
    return v.get<std::string>();
  }

  std::vector<std::string> strings(const std::string& key) {
    const json& v = get(key, false);
    std::vector<std::string> out;
    if (v.is_null() && !j_.contains(key)) return out;
    if (!v.is_array()) fail(key, std::string("expected an array of strings, got ") + type_name(v));
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        throw InputError({file_, 0, 0}, field(key) + "[" + std::to_string(i) + "]",
                         std::string("expected a string, got ") + type_name(v[i]));
      }
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
      const std::string hint = closest_key(it.key(), known_);
      fail(it.key(), "unknown key" + (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
    }
  }

  const std::string& file() const { return file_; }

 private:
  const json& j_;
  std::string path_;
  const std::string& file_;
  std::vector<std::string> known_;
};

TimeStats read_stats(ObjectReader& parent, const std::string& key, bool required) {
  TimeStats t;
  if (!parent.has(key)) {
    if (required) parent.fail(key, "missing (required)");
    return t;
  }
  ObjectReader r(parent.get(key, true), parent.field(key), parent.file());
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

Precision read_dtype(ObjectReader& r) {
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

Measurement read_measurement(const json& j, const std::string& path, const std::string& file) {
  ObjectReader r(j, path, file);
  Measurement m;
  const std::string op = r.string("op", "", true);
  auto parsed = measured_op_from_string(op);
  if (!parsed) {
    const std::string hint = closest_key(op, measured_op_names());
    r.fail("op", "unknown op '" + op + "'" + (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
  }
  m.op = *parsed;
  m.label = r.string("label", "");
  if (m.op == MeasuredOp::gemm) {
    m.dtype = read_dtype(r);
    ObjectReader s(r.get("shape", true), r.field("shape"), file);
    m.gemm.m = s.integer("m", 0, true, 1);
    m.gemm.n = s.integer("n", 0, true, 1);
    m.gemm.k = s.integer("k", 0, true, 1);
    m.gemm.batch = s.integer("batch", 1, false, 1);
    s.finish();
  } else if (is_attention(m.op)) {
    m.dtype = read_dtype(r);
    const std::string impl = r.string("impl", "", true);
    if (impl != "fused" && impl != "unfused") r.fail("impl", "expected 'fused' or 'unfused', got '" + impl + "'");
    m.impl = impl == "fused" ? AttentionImpl::fused : AttentionImpl::unfused;
    ObjectReader s(r.get("shape", true), r.field("shape"), file);
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
      throw InputError({file, 0, 0}, r.field("shape.kv_heads"), "must divide heads (" + std::to_string(a.heads) + ")");
    }
  } else if (m.op == MeasuredOp::memory_kernel) {
    const std::string kernel = r.string("kernel", "", true);
    const auto k = kernel_class_from_string(kernel);
    if (!k) r.fail("kernel", "unknown kernel class '" + kernel + "'; expected one of " + kernel_class_names());
    m.kernel = *k;
    m.dtype = read_dtype(r);
    ObjectReader s(r.get("shape", true), r.field("shape"), file);
    m.rows = s.integer("rows", 0, true, 1);
    m.cols = s.integer("cols", 1, false, 1);
    m.bytes = s.number("bytes", 0, true, 1.0);
    s.finish();
  } else if (is_memory(m.op)) {
    m.dtype = read_dtype(r);
    ObjectReader s(r.get("shape", true), r.field("shape"), file);
    m.bytes = s.number("bytes", 0, true, 1.0);
    s.finish();
  } else if (is_collective(m.op)) {
    m.dtype = read_dtype(r);
    ObjectReader s(r.get("shape", true), r.field("shape"), file);
    m.bytes = s.number("bytes", 0, true, 0.0);
    m.ranks = static_cast<int>(s.integer("ranks", 0, true, 1));
    m.nodes = static_cast<int>(s.integer("nodes", 1, false, 1));
    s.finish();
    if (m.nodes > m.ranks) {
      throw InputError({file, 0, 0}, r.field("shape.nodes"),
                       "more nodes (" + std::to_string(m.nodes) + ") than ranks (" + std::to_string(m.ranks) + ")");
    }
    m.algbw = r.number("algbw", 0, false, 0.0);
    m.busbw = r.number("busbw", 0, false, 0.0);
  } else if (m.op == MeasuredOp::power) {
    m.phase = r.string("phase", "", true);
    if (m.phase != "idle" && m.phase != "gemm" && m.phase != "memory") {
      r.fail("phase", "expected idle, gemm or memory, got '" + m.phase + "'");
    }
    m.watts = r.number("watts", 0, true, 0.0);
    m.samples = static_cast<int>(r.integer("samples", 0, false, 0));
  }
  m.time = read_stats(r, "time", m.op != MeasuredOp::power);
  if (m.op != MeasuredOp::power && m.time.median <= 0) {
    throw InputError({file, 0, 0}, r.field("time.median"), "must be positive");
  }
  if (m.op != MeasuredOp::power && m.op != MeasuredOp::kernel_launch) m.rate = r.number("rate", 0, false, 0.0);
  m.algorithm = r.string("algorithm", "");
  m.note = r.string("note", "");
  r.finish();
  return m;
}

}  // namespace

Measurements measurements_from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) {
    throw InputError({file, 0, 0}, "", std::string("expected a JSON object at the top, got ") + type_name(j));
  }
  ObjectReader r(j, "", file);
  Measurements m;
  if (!j.contains("schema")) {
    r.fail("schema", std::string("missing: not a trainplan measurements file (expected \"schema\": \"") +
                         kMeasurementsSchema + "\")");
  }
  m.schema = r.string("schema", "", true);
  if (m.schema != kMeasurementsSchema) {
    if (m.schema.rfind("trainplan-measurements/", 0) == 0) {
      r.fail("schema", "unsupported version '" + m.schema + "'; this trainplan reads " + kMeasurementsSchema);
    }
    r.fail("schema", "'" + m.schema + "' is not a trainplan measurements file (expected " + kMeasurementsSchema + ")");
  }
  m.created = r.string("created", "");
  {
    ObjectReader d(r.get("device", true), "device", file);
    DeviceInfo& v = m.device;
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
  if (r.has("software")) {
    ObjectReader s(r.get("software", true), "software", file);
    SoftwareInfo& v = m.software;
    v.trainplan = s.string("trainplan", "");
    v.driver = s.string("driver", "");
    v.cuda_driver = s.string("cuda_driver", "");
    v.cuda_runtime = s.string("cuda_runtime", "");
    v.cublas = s.string("cublas", "");
    v.cudnn = s.string("cudnn", "");
    v.nccl = s.string("nccl", "");
    s.finish();
  }
  if (r.has("settings")) {
    ObjectReader s(r.get("settings", true), "settings", file);
    RunSettings& v = m.settings;
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
  if (r.has("clocks")) {
    ObjectReader c(r.get("clocks", true), "clocks", file);
    ClockReport& v = m.clocks;
    v.sm_mhz_min = c.number("sm_mhz_min", 0, false, 0.0);
    v.sm_mhz_max = c.number("sm_mhz_max", 0, false, 0.0);
    v.memory_mhz = c.number("memory_mhz", 0, false, 0.0);
    v.temperature_c_max = c.number("temperature_c_max", 0);
    v.throttle_reasons = c.strings("throttle_reasons");
    c.finish();
  }
  const json& items = r.get("measurements", true);
  if (!items.is_array()) r.fail("measurements", std::string("expected an array, got ") + type_name(items));
  for (size_t i = 0; i < items.size(); ++i) {
    m.items.push_back(read_measurement(items[i], "measurements[" + std::to_string(i) + "]", file));
  }
  if (r.has("skipped")) {
    const json& sk = r.get("skipped", true);
    if (!sk.is_array()) r.fail("skipped", std::string("expected an array, got ") + type_name(sk));
    for (size_t i = 0; i < sk.size(); ++i) {
      ObjectReader s(sk[i], "skipped[" + std::to_string(i) + "]", file);
      SkippedCase c;
      const std::string op = s.string("op", "", true);
      auto parsed = measured_op_from_string(op);
      if (!parsed) s.fail("op", "unknown op '" + op + "'");
      c.op = *parsed;
      c.label = s.string("label", "");
      c.shape = s.string("shape", "");
      c.reason = s.string("reason", "", true);
      s.finish();
      m.skipped.push_back(c);
    }
  }
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
  return measurements_from_json(j, file);
}

Measurements read_measurements(const std::string& path) {
  if (!std::ifstream(path, std::ios::binary)) throw IoError("cannot read " + path);
  return measurements_from_text(read_input_file(path), path);  // size cap, no directory (model/input_file.h)
}

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
