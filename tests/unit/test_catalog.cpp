// The built-in catalog (scenarios/catalog/*.yaml compiled in): required entries, aliases, published
// parameter counts reproduced exactly by the op graph, datasheet peaks, strict lookups, and the rule
// that every value carries its source (DESIGN.md, "Layout": "each value with its source").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "catalog.h"
#include "errors.h"
#include "op_graph.h"
#include "specs.h"
#include "test_support.h"
#include "units.h"

namespace tp {
namespace {

using ::testing::HasSubstr;

const SourceLocation kWhere{"test.yaml", 3, 8};

TEST(Catalog, BuiltinLoads) {
  const Catalog& c = Catalog::builtin();
  EXPECT_FALSE(c.gpus().empty());
  EXPECT_FALSE(c.models().empty());
  EXPECT_FALSE(c.clusters().empty());
}

TEST(Catalog, RequiredGpusExist) {
  const Catalog& c = Catalog::builtin();
  for (const char* key : {"v100-sxm2-32gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm-80gb", "h100-pcie-80gb",
                          "h200-sxm-141gb", "b200-sxm-180gb", "mi300x-192gb", "l40s-48gb", "rtx3090-24gb",
                          "rtx4090-24gb"}) {
    ASSERT_EQ(c.gpus().count(key), 1u) << key;
    const GpuSpec& g = c.gpus().at(key);
    EXPECT_EQ(g.key, key);
    EXPECT_FALSE(g.name.empty()) << key;
    EXPECT_GT(g.memory.value, 0.0) << key;
    EXPECT_GT(g.memory_bandwidth.value, 0.0) << key;
    EXPECT_GT(g.tdp.value, 0.0) << key;
  }
}

TEST(Catalog, RequiredModelsExist) {
  const Catalog& c = Catalog::builtin();
  for (const char* key : {"gpt2-124m", "gpt2-355m", "gpt2-774m", "gpt2-1.5b", "gpt3-175b", "megatron-22b",
                          "mt-nlg-530b", "megatron-1t", "llama2-7b", "llama2-13b", "llama2-70b", "llama3.1-8b",
                          "llama3.1-70b", "llama3.1-405b", "mixtral-8x7b", "qwen3-30b-a3b", "qwen3-235b-a22b",
                          "bloom-176b", "opt-175b", "nemotron4-340b"}) {
    ASSERT_EQ(c.models().count(key), 1u) << key;
    const ModelSpec& m = c.models().at(key);
    EXPECT_EQ(m.key, key);
    EXPECT_GT(m.layers, 0) << key;
    EXPECT_GT(m.hidden, 0) << key;
    EXPECT_GT(m.heads, 0) << key;
    EXPECT_GT(m.vocab, 0) << key;
  }
}

TEST(Catalog, RequiredClustersExist) {
  const Catalog& c = Catalog::builtin();
  for (const char* key : {"dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "workstation-4x4090", "workstation-2x3090"}) {
    ASSERT_EQ(c.clusters().count(key), 1u) << key;
    const ClusterSpec& cl = c.clusters().at(key);
    EXPECT_EQ(c.gpus().count(cl.gpu.key), 1u) << key << " uses GPU '" << cl.gpu.key << "'";
    EXPECT_GT(cl.gpus_per_node, 0) << key;
    EXPECT_GT(cl.intra_node.bandwidth.value, 0.0) << key;
  }
  EXPECT_EQ(c.clusters().at("dgx-h100").gpu.key, "h100-sxm-80gb");
  // DGX B200 user guide: NVLink 5 at 1.8 TB/s bidirectional per GPU, 8 x 400 Gb/s ConnectX-7.
  EXPECT_EQ(c.clusters().at("dgx-b200").gpu.key, "b200-sxm-180gb");
  EXPECT_DOUBLE_EQ(c.clusters().at("dgx-b200").intra_node.bandwidth.value, 900e9);
  EXPECT_DOUBLE_EQ(c.clusters().at("dgx-b200").inter_node.bandwidth.value, 400e9 / 8);
  EXPECT_EQ(c.clusters().at("workstation-4x4090").gpus_per_node, 4);
  EXPECT_EQ(c.clusters().at("workstation-2x3090").gpus_per_node, 2);
}

TEST(Catalog, AliasesResolve) {
  const Catalog& c = Catalog::builtin();
  EXPECT_EQ(c.model("llama3-70b", kWhere, "model").key, "llama3.1-70b");
  EXPECT_EQ(c.model("llama3-8b", kWhere, "model").key, "llama3.1-8b");
  EXPECT_EQ(c.model("gpt2", kWhere, "model").key, "gpt2-124m");
  EXPECT_EQ(c.gpu("h100", kWhere, "cluster.gpu").key, "h100-sxm-80gb");
  EXPECT_EQ(c.gpu("v100", kWhere, "cluster.gpu").key, "v100-sxm2-32gb");
  // Keys resolve to themselves.
  EXPECT_EQ(c.model("llama3.1-70b", kWhere, "model").key, "llama3.1-70b");
  EXPECT_EQ(c.cluster("dgx-h100", kWhere, "cluster").key, "dgx-h100");
  std::vector<std::string> aliases = c.aliases_of("llama3.1-70b");
  EXPECT_THAT(aliases, ::testing::Contains("llama3-70b"));
}

// Every published parameter count in the catalog is reproduced to the unit by the op graph.
TEST(Catalog, PublishedParameterCountsMatchTheOpGraphExactly) {
  int checked = 0;
  for (const auto& [key, m] : Catalog::builtin().models()) {
    if (m.published_parameters <= 0) continue;
    ++checked;
    EXPECT_EQ(total_parameters(m), static_cast<double>(m.published_parameters))
        << key << ": op graph " << static_cast<long long>(total_parameters(m)) << " vs published "
        << m.published_parameters;
  }
  // gpt2-124m, llama2-7b/13b/70b, llama3.1-8b/70b/405b, mixtral-8x7b, bloom-176b publish counts.
  EXPECT_GE(checked, 9);
}

TEST(Catalog, GpuPeaksFromDatasheets) {
  const Catalog& c = Catalog::builtin();
  const GpuSpec& v100 = c.gpus().at("v100-sxm2-32gb");
  EXPECT_EQ(v100.peak_for(Precision::bf16).value, 0.0) << "Volta has no bf16";
  EXPECT_EQ(v100.peak_for(Precision::fp8).value, 0.0) << "Volta has no fp8";
  EXPECT_GT(v100.peak_for(Precision::fp16).value, 0.0);
  EXPECT_EQ(v100.memory.value, 32.0 * kGiB);

  const GpuSpec& h100 = c.gpus().at("h100-sxm-80gb");
  EXPECT_NEAR(h100.peak_for(Precision::bf16).value, 989.4e12, 1e9);
  // Dense, never the with-sparsity figure: fp8 is twice bf16, not four times.
  EXPECT_NEAR(h100.peak_for(Precision::fp8).value, 1978.9e12, 1e9);
  EXPECT_EQ(h100.memory.value, 80.0 * kGiB);
  EXPECT_NEAR(h100.memory_bandwidth.value, 3.35e12, 1e6);
}

TEST(Catalog, UnknownNamesThrowWithDidYouMean) {
  const Catalog& c = Catalog::builtin();
  try {
    (void)c.model("llama3.1-8bb", kWhere, "model");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'llama3.1-8b'"));
    EXPECT_THAT(e.what(), HasSubstr("test.yaml:3:8"));
    EXPECT_EQ(e.field(), "model");
  }
  try {
    (void)c.gpu("h100-sxm-80g", kWhere, "cluster.gpu");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'h100-sxm-80gb'"));
  }
  try {
    (void)c.cluster("dgx-h10", kWhere, "cluster");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'dgx-h100'"));
  }
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool is_comment(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  return i != std::string::npos && line[i] == '#';
}

// Every value with a unit has its source: a comment on the line or on the line just above.
TEST(Catalog, EveryUnitValueHasASourceComment) {
  const std::regex unit_value(
      R"([0-9.]+ ?(GB/s|TB/s|GiB|TiB|GB|TB|TFLOP/s|PFLOP/s|Gbit/s|W|kW|us|ms)([ ,}\]]|$))");
  int values = 0;
  for (const char* file : {"scenarios/catalog/gpus.yaml", "scenarios/catalog/models.yaml",
                           "scenarios/catalog/clusters.yaml"}) {
    std::vector<std::string> lines = read_lines(test::source_path(file));
    ASSERT_FALSE(lines.empty()) << file;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i];
      if (is_comment(line) || !std::regex_search(line, unit_value)) continue;
      if (line.find("name:") != std::string::npos) continue;  // display names like "A100 SXM4 80GB"
      ++values;
      const bool sourced = line.find('#') != std::string::npos || (i > 0 && is_comment(lines[i - 1]));
      EXPECT_TRUE(sourced) << file << ":" << (i + 1) << " has no source comment: " << line;
    }
  }
  EXPECT_GT(values, 50);  // the regex did find the catalog's values
}

// The architecture numbers of models.yaml carry their source too (config.json, paper table).
TEST(Catalog, EveryModelShapeNumberHasASourceComment) {
  const std::regex numeric_field(R"(^\s+(layers|hidden|heads|kv_heads|head_dim|ffn_hidden|vocab|max_positions|parameters|moe):.*[0-9])");
  std::vector<std::string> lines = read_lines(test::source_path("scenarios/catalog/models.yaml"));
  ASSERT_FALSE(lines.empty());
  int values = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (!std::regex_search(line, numeric_field)) continue;
    ++values;
    // Within an entry, a comment may cover the block of fields that follows it.
    bool sourced = line.find('#') != std::string::npos;
    for (size_t j = i; !sourced && j > 0; --j) {
      const std::string& prev = lines[j - 1];
      if (is_comment(prev) || prev.find('#') != std::string::npos) sourced = true;
      if (prev.empty() || prev[0] != ' ') break;  // start of the entry reached
    }
    EXPECT_TRUE(sourced) << "models.yaml:" << (i + 1) << " has no source comment: " << line;
  }
  EXPECT_GT(values, 100);
}

}  // namespace
}  // namespace tp
