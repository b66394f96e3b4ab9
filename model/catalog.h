// The built-in catalog of GPUs, models and clusters (scenarios/catalog/*.yaml, compiled in).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "errors.h"
#include "specs.h"

namespace tp {

class Catalog {
 public:
  // The catalog compiled into the program.
  static const Catalog& builtin();

  // A catalog from YAML texts (file names are used in messages).
  Catalog(const std::string& gpus_yaml, const std::string& models_yaml, const std::string& clusters_yaml);

  // Lookups by key or alias; an unknown name is an InputError at `where` naming `field`,
  // with the closest known name.
  const GpuSpec& gpu(const std::string& name, const SourceLocation& where, const std::string& field) const;
  const ModelSpec& model(const std::string& name, const SourceLocation& where, const std::string& field) const;
  const ClusterSpec& cluster(const std::string& name, const SourceLocation& where, const std::string& field) const;

  const std::map<std::string, GpuSpec>& gpus() const { return gpus_; }
  const std::map<std::string, ModelSpec>& models() const { return models_; }
  const std::map<std::string, ClusterSpec>& clusters() const { return clusters_; }
  std::vector<std::string> aliases_of(const std::string& key) const;
  // The key of the GPU a name or alias names ("h200" -> "h200-sxm-141gb"); the name itself when unknown.
  std::string gpu_key_of(const std::string& name) const;

 private:
  template <class T>
  const T& find(const std::map<std::string, T>& items, const std::string& name, const char* kind,
                const SourceLocation& where, const std::string& field) const;

  std::map<std::string, GpuSpec> gpus_;
  std::map<std::string, ModelSpec> models_;
  std::map<std::string, ClusterSpec> clusters_;
  std::map<std::string, std::string> alias_;  // alias -> key (all three kinds share one namespace per kind prefix)
};

// Text of the built-in default scenario (scenarios/examples/default.yaml).
const std::string& default_scenario_text();

}  // namespace tp
