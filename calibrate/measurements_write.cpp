// Writing the measurements file (JSON, atomically). Format: docs/calibration.md, "The measurements file".
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
    if (m.rate > 0) j["rate"] = m.rate;  // gemm phase: sustained FLOP/s of its back-to-back GEMMs
  }
  j["time"] = stats_json(m.time);
  if (m.op != MeasuredOp::power && m.op != MeasuredOp::kernel_launch) j["rate"] = m.rate;
  if (!m.algorithm.empty()) j["algorithm"] = m.algorithm;
  if (!m.note.empty()) j["note"] = m.note;
  if (m.sm_mhz > 0) j["sm_mhz"] = m.sm_mhz;
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

void write_measurements(const Measurements& m, const std::string& path) {
  write_output_file(path, [&](std::ostream& out) { out << to_json(m).dump(1) << "\n"; }, "the measurements file");
}

}  // namespace tp
