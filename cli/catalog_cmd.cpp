#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "catalog.h"
#include "commands.h"
#include "errors.h"
#include "format_units.h"
#include "op_graph.h"
#include "report.h"

namespace tp {
namespace {

std::string aliases(const Catalog& c, const std::string& key) {
  std::string out;
  for (const auto& a : c.aliases_of(key)) out += (out.empty() ? "" : ", ") + a;
  return out.empty() ? "" : "  (also: " + out + ")";
}

// A dense peak in TFLOP/s, or "-" where the GPU has no tensor-core path for the precision (a V100 has no bf16).
std::string peak_cell(const GpuSpec& g, Precision p) {
  const double peak = g.peak_for(p).value;
  return peak > 0 ? format_fixed(peak / 1e12, 1) : "-";
}

void print_gpus(const Catalog& c) {
  std::printf("%-18s %-32s %10s %12s %12s %12s %12s %8s\n", "GPU", "name", "memory", "bandwidth", "bf16 dense",
              "fp16 dense", "fp8 dense", "TDP");
  std::printf("%-18s %-32s %10s %12s %12s %12s %12s %8s\n", "", "", "[GiB]", "[TB/s]", "[TFLOP/s]", "[TFLOP/s]",
              "[TFLOP/s]", "[W]");
  for (const auto& [key, g] : c.gpus()) {
    std::printf("%-18s %-32s %10.1f %12.2f %12s %12s %12s %8.0f%s\n", key.c_str(), g.name.c_str(), g.memory.value / kGiB,
                g.memory_bandwidth.value / 1e12, peak_cell(g, Precision::bf16).c_str(),
                peak_cell(g, Precision::fp16).c_str(), peak_cell(g, Precision::fp8).c_str(), g.tdp.value,
                aliases(c, key).c_str());
  }
}

void print_models(const Catalog& c) {
  std::printf("%-16s %-22s %14s %7s %7s %11s %11s %8s\n", "model", "name", "parameters", "layers", "hidden",
              "heads/kv", "ffn", "vocab");
  for (const auto& [key, m] : c.models()) {
    std::string heads = std::to_string(m.heads) + "/" + std::to_string(m.kv_heads);
    std::string ffn = m.moe.enabled() ? std::to_string(m.moe.experts) + "x" + std::to_string(m.moe.expert_ffn_hidden)
                                      : std::to_string(m.ffn_hidden);
    std::printf("%-16s %-22s %14s %7d %7lld %11s %11s %8lld%s\n", key.c_str(), m.name.c_str(),
                format_count(total_parameters(m)).c_str(), m.layers, static_cast<long long>(m.hidden), heads.c_str(),
                ffn.c_str(), static_cast<long long>(m.vocab), aliases(c, key).c_str());
  }
}

void print_clusters(const Catalog& c) {
  std::printf("%-20s %-28s %-16s %6s %14s %16s %9s\n", "cluster", "name", "gpu", "GPUs", "intra [GB/s]", "inter [Gbit/s]",
              "host CPU");
  for (const auto& [key, k] : c.clusters()) {
    std::printf("%-20s %-28s %-16s %6d %14.1f %16s %9s\n", key.c_str(), k.name.c_str(), k.gpu.key.c_str(),
                k.gpus_per_node, k.intra_node.bandwidth.value / 1e9,
                k.inter_node.bandwidth.value > 0 ? format_fixed(k.inter_node.bandwidth.value * 8 / 1e9, 0).c_str() : "-",
                to_string(k.host_cpu));
  }
}

// The catalog as JSON (docs/json-output.md, "trainplan catalog --format json"): what the tables show, in base
// SI units, counts as integers; `what` selects one kind ("" = all three).
nlohmann::json catalog_json(const Catalog& c, const std::string& what) {
  nlohmann::json j;
  for (const auto& [key, g] : c.gpus()) {
    nlohmann::json peaks = nlohmann::json::object();
    for (int i = 0; i < kPrecisionCount; ++i) {
      const Precision p = static_cast<Precision>(i);
      if (g.peak_for(p).value > 0) peaks[to_string(p)] = g.peak_for(p).value;
    }
    j["gpus"][key] = {{"name", g.name}, {"memory_bytes", g.memory.value}, {"memory_bandwidth_bytes_per_second", g.memory_bandwidth.value},
                      {"peak_flops_per_second", peaks}, {"tdp_watts", g.tdp.value}, {"aliases", c.aliases_of(key)}};
  }
  for (const auto& [key, m] : c.models()) {
    j["models"][key] = {{"name", m.name}, {"parameters", std::llround(total_parameters(m))}, {"layers", m.layers},
                        {"hidden", m.hidden}, {"heads", m.heads}, {"kv_heads", m.kv_heads}, {"ffn_hidden", m.ffn_hidden},
                        {"vocab", m.vocab}, {"experts", m.moe.experts}, {"top_k", m.moe.top_k},
                        {"expert_ffn_hidden", m.moe.expert_ffn_hidden}, {"aliases", c.aliases_of(key)}};
  }
  for (const auto& [key, k] : c.clusters()) {
    j["clusters"][key] = {{"name", k.name}, {"gpu", k.gpu.key}, {"gpus_per_node", k.gpus_per_node},
                          {"intra_node_bytes_per_second", k.intra_node.bandwidth.value},
                          {"inter_node_bytes_per_second", k.inter_node.bandwidth.value}, {"nics_per_node", k.nics_per_node},
                          {"host_cpu", to_string(k.host_cpu)}, {"aliases", c.aliases_of(key)}};
  }
  return what.empty() ? j : j[what];
}

}  // namespace

int run_catalog(const std::string& what, const std::string& format) {
  const Catalog& c = Catalog::builtin();
  if (what != "" && what != "gpus" && what != "models" && what != "clusters") {
    throw InputError({"command line", 0, 0}, "catalog", "expected gpus, models or clusters, got '" + what + "'");
  }
  if (format == "json") {
    print_json(std::cout, catalog_json(c, what));
    return 0;
  }
  if (what.empty() || what == "gpus") print_gpus(c);
  if (what.empty()) std::printf("\n");
  if (what.empty() || what == "models") print_models(c);
  if (what.empty()) std::printf("\n");
  if (what.empty() || what == "clusters") print_clusters(c);
  return 0;
}

}  // namespace tp
