#include "catalog.h"

#include <yaml-cpp/yaml.h>

#include "scenario.h"
#include "spec_reader.h"
#include "yaml_reader.h"

namespace tp {
namespace embedded {
extern const char* const kGpusYaml;
extern const char* const kModelsYaml;
extern const char* const kClustersYaml;
extern const char* const kDefaultScenarioYaml;
}  // namespace embedded

namespace {

// Calls `add(key, reader)` for every entry of a catalog file and records its aliases.
template <class Add>
void for_each_entry(const YAML::Node& root, const std::string& file, std::map<std::string, std::string>& alias,
                    const std::string& kind, Add add) {
  if (!root.IsDefined() || root.IsNull()) return;
  if (!root.IsMap()) throw InputError(location_of(root, file), "", "a catalog file must be a mapping of names");
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.Scalar();
    MapReader r(it->second, key, file);
    YAML::Node aliases = r.node("aliases");
    if (aliases.IsDefined()) {
      if (!aliases.IsSequence()) r.fail("aliases", "expected a list of names");
      for (const auto& a : aliases) alias[kind + ":" + a.Scalar()] = key;
    }
    add(key, r);
    r.finish();
  }
}

}  // namespace

Catalog::Catalog(const std::string& gpus_yaml, const std::string& models_yaml, const std::string& clusters_yaml) {
  const std::string gpu_file = "catalog/gpus.yaml";
  const std::string model_file = "catalog/models.yaml";
  const std::string cluster_file = "catalog/clusters.yaml";
  for_each_entry(parse_yaml_text(gpus_yaml, gpu_file, kBuiltInYaml), gpu_file, alias_, "gpu", [&](const std::string& key, MapReader& r) {
    GpuSpec base;
    base.key = key;
    GpuSpec g = read_gpu_fields(r, base);
    require_gpu_complete(g, r.where("name"), key);
    gpus_[key] = g;
  });
  for_each_entry(parse_yaml_text(models_yaml, model_file, kBuiltInYaml), model_file, alias_, "model",
                 [&](const std::string& key, MapReader& r) {
                   ModelSpec base;
                   base.key = key;
                   ModelSpec m = read_model_fields(r, base);
                   require_model_complete(m, r.where("name"), key);
                   models_[key] = m;
                 });
  for_each_entry(parse_yaml_text(clusters_yaml, cluster_file, kBuiltInYaml), cluster_file, alias_, "cluster",
                 [&](const std::string& key, MapReader& r) {
                   ClusterSpec base;
                   base.key = key;
                   if (!r.has("gpu")) r.fail("gpu", "required: the GPU of the cluster");
                   clusters_[key] = read_cluster_fields(r, base, *this);
                 });
}

const Catalog& Catalog::builtin() {
  static const Catalog catalog(embedded::kGpusYaml, embedded::kModelsYaml, embedded::kClustersYaml);
  return catalog;
}

template <class T>
const T& Catalog::find(const std::map<std::string, T>& items, const std::string& name, const char* kind,
                       const SourceLocation& where, const std::string& field) const {
  auto it = items.find(name);
  if (it != items.end()) return it->second;
  auto a = alias_.find(std::string(kind) + ":" + name);
  if (a != alias_.end()) return items.at(a->second);
  std::vector<std::string> names;
  for (const auto& [k, v] : items) names.push_back(k);
  for (const auto& [k, v] : alias_) {
    if (k.rfind(std::string(kind) + ":", 0) == 0) names.push_back(k.substr(k.find(':') + 1));
  }
  std::string hint = closest_key(name, names);
  std::string msg = std::string("unknown ") + kind + " '" + name + "'";
  msg += hint.empty() ? "; see `trainplan catalog`" : "; did you mean '" + hint + "'?";
  throw InputError(where, field, msg);
}

std::string Catalog::gpu_key_of(const std::string& name) const {
  if (gpus_.count(name) > 0) return name;
  const auto a = alias_.find("gpu:" + name);
  return a != alias_.end() ? a->second : name;
}

const GpuSpec& Catalog::gpu(const std::string& name, const SourceLocation& where, const std::string& field) const {
  return find(gpus_, name, "gpu", where, field);
}
const ModelSpec& Catalog::model(const std::string& name, const SourceLocation& where,
                                const std::string& field) const {
  return find(models_, name, "model", where, field);
}
const ClusterSpec& Catalog::cluster(const std::string& name, const SourceLocation& where,
                                    const std::string& field) const {
  return find(clusters_, name, "cluster", where, field);
}

std::vector<std::string> Catalog::aliases_of(const std::string& key) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : alias_) {
    if (v == key) out.push_back(k.substr(k.find(':') + 1));
  }
  return out;
}

const std::string& default_scenario_text() {
  static const std::string text(embedded::kDefaultScenarioYaml);
  return text;
}

}  // namespace tp
