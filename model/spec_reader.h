// Reading model, GPU and cluster specs from YAML mappings (catalog entries and inline
// scenario values share one schema). Values not given keep those of `base`.
#pragma once

#include <string>
#include <vector>

#include "specs.h"
#include "yaml_reader.h"

namespace tp {

class Catalog;

ModelSpec read_model_fields(MapReader& r, ModelSpec base);
GpuSpec read_gpu_fields(MapReader& r, GpuSpec base);
// `gpu` of a cluster may be a catalog name or an inline mapping (with optional preset:).
ClusterSpec read_cluster_fields(MapReader& r, ClusterSpec base, const Catalog& catalog);

// A model/GPU/cluster value: a catalog name, or a mapping with an optional `preset:` name
// whose fields override the preset's.
ModelSpec read_model(const YAML::Node& node, const std::string& path, const std::string& file,
                     const Catalog& catalog);
// A mapping without preset: starts from `inherit` when given (a cluster preset's GPU).
GpuSpec read_gpu(const YAML::Node& node, const std::string& path, const std::string& file,
                 const Catalog& catalog, const GpuSpec* inherit = nullptr);
ClusterSpec read_cluster(const YAML::Node& node, const std::string& path, const std::string& file,
                         const Catalog& catalog);

// A fused-attention kernel name at `key` (cudnn | flash | triton): the scenario's
// training.attention_kernel and the profile's attention.kernel read the one word list.
AttentionKernel read_attention_kernel(MapReader& r, const std::string& key, AttentionKernel def);

// Required fields of a model/GPU (after presets and overrides are applied).
void require_model_complete(const ModelSpec& m, const SourceLocation& where, const std::string& path);
void require_gpu_complete(const GpuSpec& g, const SourceLocation& where, const std::string& path);

}  // namespace tp
