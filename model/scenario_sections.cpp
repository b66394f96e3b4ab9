// Section readers of a scenario file (scenario_sections.h): value ranges, defaults and in-section checks.
#include "scenario_sections.h"

#include <string>

#include "quantity.h"
#include "section_limits.h"
#include "spec_reader.h"
#include "units.h"

namespace tp {
namespace {

using section_limits::at_most;
using section_limits::kMaxDataParallel;
using section_limits::kMaxDegree;
using section_limits::kMaxRecomputeSpan;
using section_limits::kMaxVpp;
using section_limits::kMaxBufferBytes;
using section_limits::kMaxHostPower;
using section_limits::kMaxPerKwh;
using section_limits::kMaxSeconds;
using section_limits::kMaxUsdPerGpuHour;

OffloadTarget read_offload(MapReader& r, const std::string& key) {
  return r.choice(key, OffloadTarget::none, {{"none", OffloadTarget::none}, {"cpu", OffloadTarget::cpu}});
}

}  // namespace

Recompute read_recompute(MapReader& r) {
  Recompute rc;
  YAML::Node n = r.node("recompute");
  if (!n.IsDefined()) return rc;
  if (n.IsMap()) {
    MapReader m(n, r.field("recompute"), r.file());
    const bool one_in = m.has("one_in");
    if (one_in && m.has("every")) m.fail("one_in", "give either every or one_in, not both");
    rc.mode = one_in ? RecomputeMode::one_in : RecomputeMode::every;
    rc.every = static_cast<int>(m.integer(one_in ? "one_in" : "every", 0, 1, kMaxRecomputeSpan));
    m.finish();  // an unknown key first: it is named, with the closest known one
    if (!one_in && !m.has("every")) {
      m.fail("every", "required: {every: k} (segments of k layers) or {one_in: k} (one layer in k checkpointed)");
    }
    return rc;
  }
  rc.mode = r.choice("recompute", rc.mode,
                     {{"none", RecomputeMode::none}, {"selective", RecomputeMode::selective},
                      {"full", RecomputeMode::full}, {"selective_op", RecomputeMode::selective_op}});
  return rc;
}

ParallelSpec read_parallel(MapReader& r) {
  ParallelSpec p;
  p.tp = static_cast<int>(r.integer("tp", 1, 1, kMaxDegree));
  p.pp = static_cast<int>(r.integer("pp", 1, 1, kMaxDegree));
  auto dp = r.integer_or_auto("dp", 1, kMaxDataParallel);
  p.dp_auto = !dp.has_value();
  p.dp = dp.value_or(1);
  p.cp = static_cast<int>(r.integer("cp", 1, 1, kMaxDegree));
  p.ep = static_cast<int>(r.integer("ep", 1, 1, kMaxDegree));
  p.vpp = static_cast<int>(r.integer("vpp", 1, 1, kMaxVpp));
  YAML::Node lps = r.node("layers_per_stage");
  p.layers_auto = !lps.IsDefined() || (lps.IsScalar() && lps.Scalar() == "auto");
  if (!p.layers_auto) {
    if (!lps.IsSequence()) r.fail("layers_per_stage", "expected 'auto' or a list of layer counts, one per stage");
    for (const auto& item : lps) {
      p.layers_per_stage.push_back(
          static_cast<int>(scalar_integer(item, r.field("layers_per_stage"), r.file(), 1, 100000)));
    }
  }
  p.schedule = r.choice("schedule", p.schedule,
                        {{"gpipe", Schedule::gpipe}, {"1f1b", Schedule::one_f_one_b},
                         {"interleaved", Schedule::interleaved}, {"zb-h1", Schedule::zb_h1}});
  if (r.has("cp_comm")) {
    p.cp_comm = r.choice("cp_comm", CpComm::p2p,
                         {{"p2p", CpComm::p2p},
                          {"all_gather", CpComm::all_gather},
                          {"a2a", CpComm::a2a},
                          {"ring_all_gather", CpComm::ring_all_gather},
                          {"a2a+p2p", CpComm::a2a_p2p}});
  }
  if (r.has("cp_a2a")) p.cp_a2a = static_cast<int>(r.integer("cp_a2a", 1, 1, kMaxDegree));
  // zero and sequence_parallel as given; unsaid, resolve_layout sets the layout's defaults (default_zero; on
  // when tp > 1), the one place that derives them, for the scenario and for each sweep point alike.
  p.zero_given = r.has("zero");
  p.zero = static_cast<int>(r.integer("zero", p.zero, 0, 3));
  if (r.has("dp_shard")) p.dp_shard = static_cast<int>(r.integer("dp_shard", 1, 1, kMaxDataParallel));
  p.sequence_parallel_given = r.has("sequence_parallel");
  p.sequence_parallel = r.boolean("sequence_parallel", p.sequence_parallel);
  p.recompute = read_recompute(r);
  if (r.has("offload")) {
    MapReader o(r.node("offload"), r.field("offload"), r.file());
    p.offload_optimizer = read_offload(o, "optimizer");
    p.offload_params = read_offload(o, "params");
    p.offload_activations = read_offload(o, "activations");
    o.finish();
  }
  if (r.has("placement")) {
    YAML::Node order = r.node("placement");
    const std::string expected = "a list of tp, cp, dp, pp in some order, innermost first, e.g. [tp, cp, dp, pp]";
    if (!order.IsSequence() || order.size() != 4) r.fail("placement", "expected " + expected);
    bool seen[4] = {false, false, false, false};
    for (size_t i = 0; i < 4; ++i) {
      const std::string name = order[i].IsScalar() ? order[i].Scalar() : "";
      int d = name == "tp" ? 0 : name == "cp" ? 1 : name == "dp" ? 2 : name == "pp" ? 3 : -1;
      if (d < 0 || seen[d]) {
        throw InputError(location_of(order[i], r.file()), r.field("placement"),
                         "'" + name + "' " + (d < 0 ? "is not a mesh dimension" : "is given twice") + ": expected " + expected);
      }
      seen[d] = true;
      p.placement[i] = static_cast<MeshDim>(d);
    }
  }
  if (r.has("overlap")) {
    MapReader o(r.node("overlap"), r.field("overlap"), r.file());
    if (o.has("grad_reduce")) p.overlap_grad_reduce = o.boolean("grad_reduce", true);
    if (o.has("param_gather")) p.overlap_param_gather = o.boolean("param_gather", true);
    p.overlap_tp_comm = o.boolean("tp_comm", p.overlap_tp_comm);
    o.finish();
  }
  return p;
}

CostSpec read_costs(MapReader& r) {
  CostSpec c;
  c.gpu_hour = Usd(at_most(r, "gpu_hour", r.quantity("gpu_hour", Dim::usd, c.gpu_hour.value), kMaxUsdPerGpuHour));
  c.spot_gpu_hour = Usd(at_most(r, "spot_gpu_hour", r.quantity("spot_gpu_hour", Dim::usd, 0.0), kMaxUsdPerGpuHour));
  c.preemptions_per_day = r.number("preemptions_per_day", 0.0, 0.0, 1e6);
  c.host_power_per_node =
      Watts(at_most(r, "host_power_per_node", r.quantity("host_power_per_node", Dim::watts, 0.0), kMaxHostPower));
  c.pue = r.number("pue", c.pue, 1.0, 10.0);
  c.electricity_usd_per_j = at_most(r, "electricity", r.quantity("electricity", Dim::usd_per_kwh, c.electricity_usd_per_j),
                                    kMaxPerKwh / kJoulesPerKwh);
  c.carbon_kg_per_j =
      at_most(r, "carbon", r.quantity("carbon", Dim::kg_per_kwh, c.carbon_kg_per_j), kMaxPerKwh / kJoulesPerKwh);
  if (r.has("failures")) {
    MapReader f(r.node("failures"), r.field("failures"), r.file());
    c.failures.gpu_mtbf = Seconds(f.quantity("gpu_mtbf", Dim::seconds, c.failures.gpu_mtbf.value, 1.0));
    c.failures.checkpoint_bandwidth =
        ByteRate(f.quantity("checkpoint_bandwidth", Dim::byte_rate, c.failures.checkpoint_bandwidth.value, kLeastByteRate));
    c.failures.restart = Seconds(at_most(f, "restart", f.quantity("restart", Dim::seconds, c.failures.restart.value),
                                         kMaxSeconds));
    f.finish();
  }
  return c;
}

// A DeepSpeed ZeRO-3 setting (ds_config zero_optimization.stage3_*, deepspeed/runtime/zero/config.py), a
// parameter count; absent = the framework's default. Only DeepSpeed has them: FSDP gathers whole units,
// Megatron's distributed optimizer gathers no parameters per module (docs/model.md §15).
namespace {
std::optional<double> read_zero3_setting(MapReader& r, const char* key, const char* ds_key, Framework framework,
                                         double min) {
  if (!r.has(key)) return std::nullopt;
  if (framework != Framework::deepspeed) {
    r.fail(key, std::string("is DeepSpeed's ") + ds_key + "; framework " + to_string(framework) +
                    " has no such setting (set training.framework: deepspeed or remove the key)");
  }
  constexpr double kMaxParameterCount = 1e15;  // far above any model's parameters; keeps sums finite
  return at_most(r, key, r.quantity(key, Dim::count, 0.0, min), kMaxParameterCount);
}
}  // namespace

MemorySettings read_memory(MapReader& r, Framework framework) {
  MemorySettings m;
  m.cuda_context =
      Bytes(at_most(r, "cuda_context", r.quantity("cuda_context", Dim::bytes, m.cuda_context.value), kMaxBufferBytes));
  m.allocator_overhead = r.number("allocator_overhead", m.allocator_overhead, 0.0, 1.0);
  m.headroom = r.number("headroom", m.headroom, 0.0, 0.9);
  m.comm_bucket =
      Bytes(at_most(r, "comm_bucket", r.quantity("comm_bucket", Dim::bytes, m.comm_bucket.value), kMaxBufferBytes));
  m.zero3_prefetch_layers = static_cast<int>(r.integer("zero3_prefetch_layers", m.zero3_prefetch_layers, 0, 1000));
  m.fsdp_unit = r.choice("fsdp_unit", m.fsdp_unit, {{"layer", FsdpUnit::layer}, {"submodule", FsdpUnit::submodule}});
  if (r.has("fsdp_unit") && framework != Framework::fsdp) {
    r.fail("fsdp_unit", std::string("is how FSDP wraps its units; framework ") + to_string(framework) +
                            " has none (DeepSpeed gathers per submodule already; set training.framework: fsdp or "
                            "remove the key)");
  }
  m.fsdp_backward_prefetch = r.choice("fsdp_backward_prefetch", m.fsdp_backward_prefetch,
                                      {{"pre", BackwardPrefetch::pre}, {"post", BackwardPrefetch::post},
                                       {"none", BackwardPrefetch::none}});
  if (r.has("fsdp_backward_prefetch") && framework != Framework::fsdp) {
    r.fail("fsdp_backward_prefetch", std::string("is FSDP1's backward_prefetch; framework ") + to_string(framework) +
                                          " has no such setting (set training.framework: fsdp or remove the key)");
  }
  m.fsdp_version = r.choice("fsdp_version", m.fsdp_version, {{"1", FsdpVersion::fsdp1}, {"2", FsdpVersion::fsdp2}});
  if (r.has("fsdp_version") && framework != Framework::fsdp) {
    r.fail("fsdp_version", std::string("is which FSDP the run uses; framework ") + to_string(framework) +
                               " is not FSDP (set training.framework: fsdp or remove the key)");
  }
  if (r.has("fsdp_backward_prefetch") && m.fsdp_version == FsdpVersion::fsdp2 &&
      m.fsdp_backward_prefetch != BackwardPrefetch::pre) {
    r.fail("fsdp_backward_prefetch", "is FSDP1's backward_prefetch; FSDP2 (fsdp_version: 2, the default) always "
                                     "prefetches the next unit's gather before the backward (pre): set fsdp_version: 1 "
                                     "or remove the key");
  }
  m.ddp_gradient_as_bucket_view = r.boolean("ddp_gradient_as_bucket_view", m.ddp_gradient_as_bucket_view);
  if (r.has("ddp_gradient_as_bucket_view") && framework != Framework::pytorch) {
    r.fail("ddp_gradient_as_bucket_view", std::string("is torch DistributedDataParallel's gradient_as_bucket_view; "
                                                      "framework ") + to_string(framework) +
                                              " does not run DDP (set training.framework: pytorch or remove the key)");
  }
  // The prefetch bucket is at least one parameter: 0 would stand for whole-layer gathers in the planner.
  m.zero3_prefetch_bucket =
      read_zero3_setting(r, "zero3_prefetch_bucket", "stage3_prefetch_bucket_size", framework, 1.0);
  m.zero3_max_live_parameters =
      read_zero3_setting(r, "zero3_max_live_parameters", "stage3_max_live_parameters", framework, 0.0);
  m.zero3_max_reuse_distance =
      read_zero3_setting(r, "zero3_max_reuse_distance", "stage3_max_reuse_distance", framework, 0.0);
  m.zero3_persistence_threshold =
      read_zero3_setting(r, "zero3_persistence_threshold", "stage3_param_persistence_threshold", framework, 0.0);
  // At least one element: a bucket of 0 would stand for one reduce-scatter per unit in the planner.
  m.zero3_reduce_bucket = read_zero3_setting(r, "zero3_reduce_bucket", "reduce_bucket_size", framework, 1.0);
  return m;
}

}  // namespace tp
