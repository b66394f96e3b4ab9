#include "scenario.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "checks.h"
#include "input_file.h"
#include "spec_reader.h"
#include "yaml_reader.h"

namespace tp {
namespace {

constexpr std::int64_t kBig = std::int64_t(1) << 52;

// Upper bounds of the quantities that multiply into run totals: far above any real job, low enough
// that no product of them (tokens x step time x GPUs x price) leaves the range of a double.
constexpr double kMaxTokens = 1e18;        // the largest published runs train on ~1e13-1e14 tokens
constexpr double kMaxUsdPerGpuHour = 1e6;
constexpr double kMaxPerKwh = 1e6;         // USD or kg CO2 per kWh
constexpr double kMaxHostPower = 1e9;      // watts per node
constexpr double kMaxSeconds = 1e12;       // a restart, ~31,700 years
constexpr double kMaxBufferBytes = 1e15;   // CUDA context, communication bucket

// r.quantity() bounded above: an InputError naming the field when `value` exceeds `max`.
double at_most(MapReader& r, const std::string& key, double value, double max) {
  if (value > max) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", max);
    r.fail(key, "is out of range: at most " + std::string(buf) + " (in base SI units)");
  }
  return value;
}

// An explicit null (`tp:`, `tp: ~`, `tp: null`) is an error, not "the default": omit the key for that.
void reject_nulls(const YAML::Node& node, const std::string& path, const std::string& file) {
  if (!node.IsMap()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
    const std::string field = path.empty() ? key : path + "." + key;
    if (it->second.IsNull()) {
      throw InputError(location_of(it->first, file), field,
                       "has no value (null); give a value, or leave the key out for its default");
    }
    reject_nulls(it->second, field, file);
  }
}

// A copy of `n` without positions, so that --set values report "--set" in messages.
YAML::Node without_marks(const YAML::Node& n) {
  if (n.IsScalar()) return YAML::Node(n.Scalar());
  if (n.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (const auto& item : n) out.push_back(without_marks(item));
    return out;
  }
  if (n.IsMap()) {
    YAML::Node out(YAML::NodeType::Map);
    for (auto it = n.begin(); it != n.end(); ++it) out[it->first.Scalar()] = without_marks(it->second);
    return out;
  }
  return YAML::Node(YAML::NodeType::Null);
}

void set_path(YAML::Node node, const std::vector<std::string>& path, size_t i, const YAML::Node& value,
              const std::string& assignment) {
  const std::string& key = path[i];
  if (i + 1 == path.size()) {
    node[key] = value;
    return;
  }
  YAML::Node child = node[key];
  if (child.IsScalar()) {
    // A catalog name: keep it as the preset and override fields on top of it.
    YAML::Node map(YAML::NodeType::Map);
    map["preset"] = YAML::Node(child.Scalar());
    node[key] = map;
  } else if (!child.IsDefined() || child.IsNull()) {
    node[key] = YAML::Node(YAML::NodeType::Map);
  } else if (!child.IsMap()) {
    throw InputError({"--set", 0, 0}, assignment, "'" + key + "' is a list; cannot set a field inside it");
  }
  set_path(node[key], path, i + 1, value, assignment);
}

Precision read_precision(MapReader& r, const std::string& key, Precision def) {
  return r.choice(key, def,
                  {{"fp32", Precision::fp32}, {"tf32", Precision::tf32}, {"fp16", Precision::fp16},
                   {"bf16", Precision::bf16}, {"fp8", Precision::fp8}});
}

OffloadTarget read_offload(MapReader& r, const std::string& key) {
  return r.choice(key, OffloadTarget::none, {{"none", OffloadTarget::none}, {"cpu", OffloadTarget::cpu}});
}

// training.fused_loss and fp8_recipe, after precision and framework (docs/scenario-reference.md).
void read_loss_and_fp8_recipe(MapReader& r, TrainingSpec& t) {
  t.fused_loss = r.boolean("fused_loss", t.fused_loss);
  // Megatron's fused loss is Transformer Engine's parallel_cross_entropy, written and tested for bf16 and
  // fp32 logits only (transformer_engine/pytorch/cross_entropy.py; tests/pytorch/test_parallel_cross_entropy.py).
  if (t.fused_loss && t.framework == Framework::megatron && t.precision == Precision::fp16) {
    r.fail("fused_loss", "megatron's fused cross-entropy (Transformer Engine parallel_cross_entropy) takes bf16 or "
                         "fp32 logits; training.precision fp16 gives fp16 logits");
  }
  t.fp8_recipe = r.choice("fp8_recipe", t.fp8_recipe, {{"delayed", Fp8Recipe::delayed}, {"current", Fp8Recipe::current}});
  if (r.has("fp8_recipe") && t.precision != Precision::fp8) {
    r.fail("fp8_recipe", std::string("is the FP8 scaling recipe; only valid with training.precision: fp8 (here ") +
                             to_string(t.precision) + ")");
  }
}

TrainingSpec read_training(MapReader& r) {
  TrainingSpec t;
  t.sequence_length = r.integer("sequence_length", t.sequence_length, 1, kBig);
  const bool by_sequences = r.has("global_batch");
  const bool by_tokens = r.has("global_batch_tokens");
  if (by_sequences && by_tokens) {
    r.fail("global_batch_tokens", "give either training.global_batch (sequences) or global_batch_tokens, not both");
  }
  t.global_batch = r.integer("global_batch", 0, 1, kBig);
  if (by_tokens) {
    double tokens = r.quantity("global_batch_tokens", Dim::count, 0.0, 1.0);
    double seqs = tokens / static_cast<double>(t.sequence_length);
    if (seqs != static_cast<double>(static_cast<std::int64_t>(seqs))) {
      r.fail("global_batch_tokens", "is not a whole number of sequences of training.sequence_length (" +
                                        std::to_string(t.sequence_length) + ") tokens");
    }
    t.global_batch = static_cast<std::int64_t>(seqs);
  }
  t.micro_batch = r.integer("micro_batch", t.micro_batch, 1, kBig);
  if (!by_sequences && !by_tokens) t.global_batch = 0;  // resolve_layout(): micro_batch x dp
  t.tokens = at_most(r, "tokens", r.quantity("tokens", Dim::count, 1e12, 0.0), kMaxTokens);
  t.precision = read_precision(r, "precision", t.precision);
  // Framework and torch settings first: they set the defaults of the keys below (docs/model.md, "Frameworks").
  t.framework = r.choice("framework", t.framework,
                         {{"megatron", Framework::megatron}, {"deepspeed", Framework::deepspeed},
                          {"fsdp", Framework::fsdp}, {"pytorch", Framework::pytorch}});
  t.autocast = r.boolean("autocast", t.autocast);
  t.compile = r.boolean("compile", t.compile);
  read_loss_and_fp8_recipe(r, t);
  if (t.autocast && (t.framework == Framework::megatron || t.framework == Framework::deepspeed)) {
    r.fail("autocast", std::string("is a torch.autocast setting; ") + to_string(t.framework) +
                           " keeps 16-bit weights with an fp32 master copy (use framework: pytorch or fsdp)");
  }
  if (t.compile && t.framework != Framework::pytorch && t.framework != Framework::fsdp) {
    r.fail("compile", std::string("is a torch.compile setting; ") + to_string(t.framework) + " does not use it");
  }
  // Plain PyTorch keeps no master copy: a model cast to 16 bits trains in 16 bits, and under autocast
  // the fp32 parameters are the master (PyTorch AMP docs, "Automatic Mixed Precision").
  const bool own_master = t.framework == Framework::pytorch || t.autocast;
  std::string master =
      r.choice<std::string>("master_weights", own_master ? "none" : "fp32", {{"none", "none"}, {"fp32", "fp32"}});
  if (t.autocast && master == "fp32") r.fail("master_weights", "autocast keeps fp32 parameters: they are the master copy");
  t.master_weights = master == "fp32";
  Precision same = t.precision == Precision::fp8 ? Precision::bf16 : t.precision;
  if (same == Precision::tf32) same = Precision::fp32;
  if (t.autocast) same = Precision::fp32;  // gradients take the fp32 parameters' dtype
  t.grad_precision = r.choice(
      "grad_precision", same,
      {{"same", same}, {"fp32", Precision::fp32}, {"fp16", Precision::fp16}, {"bf16", Precision::bf16}});
  t.optimizer = r.choice("optimizer", t.optimizer,
                         {{"sgd", Optimizer::sgd}, {"momentum", Optimizer::momentum}, {"adam", Optimizer::adam},
                          {"adamw", Optimizer::adamw}, {"adafactor", Optimizer::adafactor},
                          {"adam8bit", Optimizer::adam8bit}, {"lion", Optimizer::lion}});
  t.flash_attention = r.boolean("flash_attention", t.flash_attention);
  // torch.optim.AdamW/SGD keep states like the parameter ("same"); Megatron, DeepSpeed and FSDP keep them in fp32.
  t.optimizer_state_precision =
      r.choice("optimizer_state_precision",
               t.framework == Framework::pytorch ? StatePrecision::same : StatePrecision::fp32,
               {{"fp32", StatePrecision::fp32}, {"same", StatePrecision::same}});
  return t;
}

Recompute read_recompute(MapReader& r) {
  Recompute rc;
  YAML::Node n = r.node("recompute");
  if (!n.IsDefined()) return rc;
  if (n.IsMap()) {
    MapReader m(n, r.field("recompute"), r.file());
    rc.mode = RecomputeMode::every;
    rc.every = static_cast<int>(m.integer("every", 0, 1, 100000));
    if (!m.has("every")) m.fail("every", "required: checkpoint every k layers, e.g. {every: 4}");
    m.finish();
    return rc;
  }
  rc.mode = r.choice("recompute", rc.mode,
                     {{"none", RecomputeMode::none}, {"selective", RecomputeMode::selective},
                      {"full", RecomputeMode::full}});
  return rc;
}

ParallelSpec read_parallel(MapReader& r) {
  ParallelSpec p;
  p.tp = static_cast<int>(r.integer("tp", 1, 1, 1 << 20));
  p.pp = static_cast<int>(r.integer("pp", 1, 1, 1 << 20));
  auto dp = r.integer_or_auto("dp", 1, 1 << 30);
  p.dp_auto = !dp.has_value();
  p.dp = dp.value_or(1);
  p.cp = static_cast<int>(r.integer("cp", 1, 1, 1 << 20));
  p.ep = static_cast<int>(r.integer("ep", 1, 1, 1 << 20));
  p.vpp = static_cast<int>(r.integer("vpp", 1, 1, 1 << 10));
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
  p.zero = static_cast<int>(r.integer("zero", 1, 0, 3));
  p.sequence_parallel = r.boolean("sequence_parallel", p.tp > 1);
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
    p.overlap_grad_reduce = o.boolean("grad_reduce", p.overlap_grad_reduce);
    p.overlap_param_gather = o.boolean("param_gather", p.overlap_param_gather);
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
        ByteRate(f.quantity("checkpoint_bandwidth", Dim::byte_rate, c.failures.checkpoint_bandwidth.value, 1.0));
    c.failures.restart = Seconds(at_most(f, "restart", f.quantity("restart", Dim::seconds, c.failures.restart.value),
                                         kMaxSeconds));
    f.finish();
  }
  return c;
}

MemorySettings read_memory(MapReader& r) {
  MemorySettings m;
  m.cuda_context =
      Bytes(at_most(r, "cuda_context", r.quantity("cuda_context", Dim::bytes, m.cuda_context.value), kMaxBufferBytes));
  m.allocator_overhead = r.number("allocator_overhead", m.allocator_overhead, 0.0, 1.0);
  m.headroom = r.number("headroom", m.headroom, 0.0, 0.9);
  m.comm_bucket =
      Bytes(at_most(r, "comm_bucket", r.quantity("comm_bucket", Dim::bytes, m.comm_bucket.value), kMaxBufferBytes));
  m.zero3_prefetch_layers = static_cast<int>(r.integer("zero3_prefetch_layers", m.zero3_prefetch_layers, 0, 1000));
  return m;
}

// One top-level section (optional: every key has a default), read strictly.
template <class Read>
auto read_section(MapReader& root, const char* key, Read read) {
  MapReader section(root.node(key), key, root.file());
  auto value = read(section);
  section.finish();
  return value;
}

// Location of a dotted field in the document, or of the closest enclosing node.
SourceLocation locate(const YAML::Node& root, const std::string& field, const std::string& file) {
  YAML::Node cur = root;
  SourceLocation best = location_of(root, file);
  size_t start = 0;
  while (start <= field.size()) {
    size_t dot = field.find('.', start);
    std::string key = field.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur.IsMap() || !cur[key].IsDefined()) break;
    YAML::Node next = cur[key];
    best = location_of(next, file);
    cur.reset(next);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return best;
}

}  // namespace

void apply_override(YAML::Node root, const std::string& assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError({"--set", 0, 0}, assignment, "expected key=value, e.g. parallel.tp=4");
  }
  std::string key = assignment.substr(0, eq);
  std::string value = assignment.substr(eq + 1);
  std::vector<std::string> path;
  std::stringstream ss(key);
  for (std::string part; std::getline(ss, part, '.');) {
    if (part.empty()) throw InputError({"--set", 0, 0}, key, "empty component in the key");
    path.push_back(part);
  }
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw InputError({"--set", 0, 0}, key, "cannot parse value '" + value + "': " + e.msg);
  }
  if (!parsed.IsDefined() || parsed.IsNull()) {
    throw InputError({"--set", 0, 0}, key,
                     "has no value ('" + value + "'); give one, e.g. " + key + "=4, or leave the --set out for the default");
  }
  check_expanded_size(parsed, "--set " + key);  // an alias bomb in the value (model/yaml_reader.h)
  set_path(root, path, 0, without_marks(parsed), assignment);
}

YAML::Node parse_yaml_text(const std::string& text, const std::string& label) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError({label, e.mark.line + 1, e.mark.column + 1}, "", "YAML syntax error: " + e.msg);
  }
  check_expanded_size(root, label);  // alias bombs (model/yaml_reader.h)
  return root;
}

YAML::Node load_yaml_file(const std::string& path) { return parse_yaml_text(read_input_file(path), path); }

void require_document(const YAML::Node& root, const std::string& path) {
  if (!root.IsDefined() || root.IsNull()) {
    throw InputError({path, 0, 0}, "",
                     "holds no scenario (the file is empty or only comments); it needs at least model: and cluster: "
                     "(docs/scenario-reference.md)");
  }
}

Scenario scenario_from_yaml(const YAML::Node& root, const std::string& file, const Catalog& catalog, bool check) {
  reject_nulls(root, "", file);
  MapReader r(root, "", file);
  Scenario s;
  s.source = file;
  s.name = r.string("name", "");
  if (!r.has("model")) r.fail("model", "required: a catalog name (see `trainplan catalog models`) or a mapping");
  s.model = read_model(r.node("model"), "model", file, catalog);
  if (!r.has("cluster")) r.fail("cluster", "required: a catalog name or a mapping with gpu, nodes, gpus_per_node");
  s.cluster = read_cluster(r.node("cluster"), "cluster", file, catalog);
  if (s.cluster.gpu.key.empty() && s.cluster.gpu.name.empty()) r.fail("cluster", "required: cluster.gpu");
  s.training = read_section(r, "training", read_training);
  s.parallel = read_section(r, "parallel", read_parallel);
  s.costs = read_section(r, "costs", read_costs);
  s.memory = read_section(r, "memory", read_memory);
  s.profile = r.string("profile", "");
  if (!s.profile.empty() && s.profile.front() != '/') {
    // Relative to the scenario file's folder, like an include.
    const size_t slash = file.rfind('/');
    if (slash != std::string::npos) s.profile = file.substr(0, slash + 1) + s.profile;
  }
  r.finish();
  if (s.name.empty()) s.name = s.model.name + " on " + std::to_string(s.gpus()) + " " + s.cluster.gpu.name;

  std::vector<Problem> problems = resolve_layout(s);
  if (problems.empty()) problems = check_scenario(s, true);
  if (!problems.empty() && check) {
    const Problem& p = problems.front();
    std::string message = p.message;
    if (!p.other_field.empty()) message += " (conflicts with " + p.other_field + ")";
    throw InputError(locate(root, p.field, file), p.field, message);
  }
  return s;
}

namespace {
Scenario scenario_with_overrides(YAML::Node root, const std::string& label, const std::vector<std::string>& overrides,
                                 const Catalog& catalog) {
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const auto& o : overrides) apply_override(root, o);
  return scenario_from_yaml(root, label, catalog);
}
}  // namespace

Scenario load_scenario_text(const std::string& text, const std::string& file_label,
                            const std::vector<std::string>& overrides, const Catalog& catalog) {
  return scenario_with_overrides(parse_yaml_text(text, file_label), file_label, overrides, catalog);
}

Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides,
                            const Catalog& catalog) {
  YAML::Node root = load_yaml_file(path);
  require_document(root, path);
  return scenario_with_overrides(root, path, overrides, catalog);
}

Scenario default_scenario(const std::vector<std::string>& overrides) {
  Scenario s = load_scenario_text(default_scenario_text(), "built-in default scenario", overrides);
  return s;
}

}  // namespace tp
