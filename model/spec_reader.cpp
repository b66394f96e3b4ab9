#include "spec_reader.h"

#include <limits>

#include "catalog.h"
#include "quantity.h"
#include "section_limits.h"
#include "sustained_clock.h"

namespace tp {
namespace {

constexpr std::int64_t kBig = std::numeric_limits<std::int64_t>::max() / 4;


}  // namespace

ModelSpec read_model_fields(MapReader& r, ModelSpec m) {
  m.name = r.string("name", m.name);
  m.layers = static_cast<int>(r.integer("layers", m.layers, 1, 100000));
  m.hidden = r.integer("hidden", m.hidden, 1, kBig);
  const bool shape_given = r.has("heads") || r.has("hidden");
  m.heads = static_cast<int>(r.integer("heads", m.heads, 1, 1000000));
  // Without kv_heads, a mapping that sets heads means multi-head attention (kv_heads = heads).
  const int default_kv = (r.has("heads") || m.kv_heads == 0) ? m.heads : m.kv_heads;
  m.kv_heads = static_cast<int>(r.integer("kv_heads", default_kv, 1, 1000000));
  // head_dim defaults to hidden / heads, recomputed when this mapping changes either.
  m.head_dim = r.integer("head_dim", shape_given ? 0 : m.head_dim, 1, kBig);
  m.ffn_hidden = r.integer("ffn_hidden", m.ffn_hidden, 1, kBig);
  m.vocab = r.integer("vocab", m.vocab, 1, kBig);
  m.activation = r.choice("activation", m.activation,
                          {{"gelu", Activation::gelu}, {"gelu_tanh", Activation::gelu_tanh}, {"swiglu", Activation::swiglu},
                           {"relu", Activation::relu}, {"relu2", Activation::relu2}});
  m.norm = r.choice("norm", m.norm, {{"layernorm", Norm::layernorm}, {"rmsnorm", Norm::rmsnorm}});
  m.position = r.choice("position", m.position,
                        {{"rope", Position::rope}, {"learned", Position::learned}, {"alibi", Position::alibi}});
  m.max_positions = r.integer("max_positions", m.max_positions, 1, kBig);
  m.embedding_norm = r.boolean("embedding_norm", m.embedding_norm);
  m.qk_norm = r.boolean("qk_norm", m.qk_norm);
  m.tied_embeddings = r.boolean("tied_embeddings", m.tied_embeddings);
  m.bias = r.boolean("bias", m.bias);
  m.dropout = r.boolean("dropout", m.dropout);
  m.published_parameters = r.integer("parameters", m.published_parameters, 0, kBig);
  if (r.has("moe")) {
    MapReader moe(r.node("moe"), r.field("moe"), r.file());
    m.moe.experts = static_cast<int>(moe.integer("experts", m.moe.experts, 1, 100000));
    m.moe.top_k = static_cast<int>(moe.integer("top_k", m.moe.top_k, 1, 100000));
    m.moe.expert_ffn_hidden = moe.integer("expert_ffn_hidden", m.moe.expert_ffn_hidden ? m.moe.expert_ffn_hidden : m.ffn_hidden, 1, kBig);
    m.moe.capacity_factor = moe.number("capacity_factor", m.moe.capacity_factor, 0.01, 1000.0);
    moe.finish();
  }
  if (m.head_dim == 0 && m.heads > 0) {
    if (m.hidden % m.heads != 0) {
      r.fail(r.has("heads") ? "heads" : "hidden", "heads (" + std::to_string(m.heads) + ") must divide hidden (" +
                                                      std::to_string(m.hidden) + ") unless head_dim is given");
    }
    m.head_dim = m.hidden / m.heads;
  }
  if (m.position == Position::learned && m.max_positions == 0) {
    r.fail(r.has("position") ? "position" : "max_positions",
           "learned positions need model.max_positions (rows of the position table)");
  }
  return m;
}

GpuSpec read_gpu_fields(MapReader& r, GpuSpec g) {
  g.name = r.string("name", g.name);
  g.vendor = r.string("vendor", g.vendor);
  g.generation = r.string("generation", g.generation);
  g.memory = Bytes(r.quantity("memory", Dim::bytes, g.memory.value, 1.0));
  g.memory_bandwidth = ByteRate(r.quantity("memory_bandwidth", Dim::byte_rate, g.memory_bandwidth.value, kLeastByteRate));
  if (r.has("peak")) {
    MapReader peak(r.node("peak"), r.field("peak"), r.file());
    for (int i = 0; i < kPrecisionCount; ++i) {
      const char* name = to_string(static_cast<Precision>(i));
      g.peak[static_cast<size_t>(i)] =
          FlopRate(peak.quantity(name, Dim::flop_rate, g.peak[static_cast<size_t>(i)].value, 0.0));
    }
    peak.finish();
  }
  g.tdp = Watts(r.quantity("tdp", Dim::watts, g.tdp.value, 1.0));
  g.nvlink = ByteRate(r.quantity("nvlink", Dim::byte_rate, g.nvlink.value));
  g.pcie = ByteRate(r.quantity("pcie", Dim::byte_rate, g.pcie.value));
  g.boost_clock_hz = r.quantity("boost_clock", Dim::frequency, g.boost_clock_hz, kAnyPositive);
  g.sustained_clock_hz = r.quantity("sustained_clock", Dim::frequency, g.sustained_clock_hz, kAnyPositive);
  g.sms = static_cast<int>(r.integer("sms", g.sms, 1, 100000));
  return g;
}

ClusterSpec read_cluster_fields(MapReader& r, ClusterSpec c, const Catalog& catalog) {
  c.name = r.string("name", c.name);
  if (r.has("gpu")) c.gpu = read_gpu(r.node("gpu"), r.field("gpu"), r.file(), catalog, &c.gpu);
  c.nodes = static_cast<int>(r.integer("nodes", c.nodes, 1, section_limits::kMaxNodes));
  c.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", c.gpus_per_node, 1, 1024));
  if (r.has("intra_node")) {
    MapReader link(r.node("intra_node"), r.field("intra_node"), r.file());
    c.intra_node.bandwidth = ByteRate(link.quantity("bandwidth", Dim::byte_rate, c.intra_node.bandwidth.value, kLeastByteRate));
    c.intra_node.latency = Seconds(link.quantity("latency", Dim::seconds, c.intra_node.latency.value));
    link.finish();
  }
  if (r.has("inter_node")) {
    MapReader link(r.node("inter_node"), r.field("inter_node"), r.file());
    c.inter_node.bandwidth = ByteRate(link.quantity("bandwidth", Dim::byte_rate, c.inter_node.bandwidth.value, kLeastByteRate));
    c.inter_node.latency = Seconds(link.quantity("latency", Dim::seconds, c.inter_node.latency.value));
    c.nics_per_node = static_cast<int>(link.integer("nics_per_node", c.nics_per_node, 1, 1024));
    c.oversubscription = link.number("oversubscription", c.oversubscription, 1.0, 1000.0);
    link.finish();
  }
  c.gpus_per_host_link = static_cast<int>(r.integer("gpus_per_host_link", c.gpus_per_host_link, 1, 1024));
  c.host_memory = Bytes(r.quantity("host_memory", Dim::bytes, c.host_memory.value));
  c.host_power = Watts(r.quantity("host_power", Dim::watts, c.host_power.value));
  c.sustained_clock_hz = r.quantity("sustained_clock", Dim::frequency, c.sustained_clock_hz, kAnyPositive);
  const std::string clock_problem = sustained_clock_problem(c.sustained_clock_hz, c.gpu);
  if (!clock_problem.empty()) r.fail("sustained_clock", clock_problem);
  c.host_cpu = r.choice("host_cpu", c.host_cpu,
                        {{"intel", HostCpu::intel}, {"amd", HostCpu::amd}, {"other", HostCpu::other}});
  return c;
}

namespace {

// Shared shape of read_model / read_gpu / read_cluster: a name, or a mapping with preset:.
template <class Spec, class Lookup, class Fields>
Spec read_value(const YAML::Node& node, const std::string& path, const std::string& file, Lookup lookup,
                Fields fields, const Spec* inherit = nullptr) {
  if (node.IsScalar()) return lookup(node.Scalar(), location_of(node, file));
  MapReader r(node, path, file);
  Spec base{};
  if (r.has("preset")) {
    YAML::Node preset = r.node("preset");
    if (!preset.IsScalar()) r.fail("preset", "expected a catalog name");
    base = lookup(preset.Scalar(), location_of(preset, file));
  } else if (inherit != nullptr) {
    base = *inherit;
  } else {
    base.key = "inline";
  }
  Spec out = fields(r, base);
  r.finish();
  return out;
}

}  // namespace

ModelSpec read_model(const YAML::Node& node, const std::string& path, const std::string& file,
                     const Catalog& catalog) {
  ModelSpec m = read_value<ModelSpec>(
      node, path, file,
      [&](const std::string& name, const SourceLocation& where) { return catalog.model(name, where, path); },
      [](MapReader& r, ModelSpec base) { return read_model_fields(r, base); });
  require_model_complete(m, location_of(node, file), path);
  return m;
}

GpuSpec read_gpu(const YAML::Node& node, const std::string& path, const std::string& file,
                 const Catalog& catalog, const GpuSpec* inherit) {
  GpuSpec g = read_value<GpuSpec>(
      node, path, file,
      [&](const std::string& name, const SourceLocation& where) { return catalog.gpu(name, where, path); },
      [](MapReader& r, GpuSpec base) { return read_gpu_fields(r, base); },
      inherit != nullptr && !inherit->key.empty() ? inherit : nullptr);
  require_gpu_complete(g, location_of(node, file), path);
  return g;
}

ClusterSpec read_cluster(const YAML::Node& node, const std::string& path, const std::string& file,
                         const Catalog& catalog) {
  return read_value<ClusterSpec>(
      node, path, file,
      [&](const std::string& name, const SourceLocation& where) { return catalog.cluster(name, where, path); },
      [&](MapReader& r, ClusterSpec base) { return read_cluster_fields(r, base, catalog); });
}

void require_model_complete(const ModelSpec& m, const SourceLocation& where, const std::string& path) {
  auto need = [&](bool ok, const char* key) {
    if (!ok) {
      throw InputError(where, path + "." + key,
                       "required: an inline model needs layers, hidden, heads, ffn_hidden and vocab "
                       "(or preset: <catalog name>)");
    }
  };
  need(m.layers > 0, "layers");
  need(m.hidden > 0, "hidden");
  need(m.heads > 0, "heads");
  need(m.ffn_hidden > 0 || m.moe.enabled(), "ffn_hidden");
  need(m.vocab > 0, "vocab");
  if (m.moe.enabled() && m.moe.expert_ffn_hidden <= 0) {  // an expert of no width: no parameters, NaN times
    throw InputError(where, path + ".moe.expert_ffn_hidden",
                     "required: the width of an expert's feed-forward layer (or the model's ffn_hidden, its default)");
  }
}

void require_gpu_complete(const GpuSpec& g, const SourceLocation& where, const std::string& path) {
  auto need = [&](bool ok, const char* key) {
    if (!ok) {
      throw InputError(where, path + "." + key,
                       "required: an inline GPU needs memory, memory_bandwidth, peak and tdp "
                       "(or preset: <catalog name>)");
    }
  };
  need(g.memory.value > 0, "memory");
  need(g.memory_bandwidth.value > 0, "memory_bandwidth");
  bool any_peak = false;
  for (const auto& p : g.peak) any_peak = any_peak || p.value > 0;
  need(any_peak, "peak");
  need(g.tdp.value > 0, "tdp");
}

AttentionKernel read_attention_kernel(MapReader& r, const std::string& key, AttentionKernel def) {
  return r.choice(key, def,
                  {{"cudnn", AttentionKernel::cudnn}, {"flash", AttentionKernel::flash}, {"triton", AttentionKernel::triton}});
}

}  // namespace tp
