// Strict reading of YAML mappings: every key a reader does not ask for is an error with
// file:line:column and the closest valid key; type and range errors name the field.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "errors.h"
#include "quantity.h"

namespace tp {

// The `min` of MapReader::quantity for a value that must be greater than 0 (a clock): the smallest
// positive double, so that the error says "must be positive".
inline constexpr double kAnyPositive = std::numeric_limits<double>::min();

// Position of a node in its file; nodes made from --set have no mark and report "--set".
SourceLocation location_of(const YAML::Node& node, const std::string& file);

// The key among `candidates` closest to `key` (edit distance), or "" when none is close.
std::string closest_key(const std::string& key, const std::vector<std::string>& candidates);

class MapReader {
 public:
  // `path` is the dotted field path of this mapping ("" for the document root).
  MapReader(const YAML::Node& node, std::string path, std::string file);

  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  bool has(const std::string& key);
  YAML::Node node(const std::string& key);  // undefined node when absent
  SourceLocation where(const std::string& key) const;

  std::int64_t integer(const std::string& key, std::int64_t def, std::int64_t min, std::int64_t max);
  // An integer or the word "auto" (returns nullopt for auto or absent).
  std::optional<std::int64_t> integer_or_auto(const std::string& key, std::int64_t min, std::int64_t max);
  double number(const std::string& key, double def, double min, double max);
  bool boolean(const std::string& key, bool def);
  std::string string(const std::string& key, const std::string& def);
  // A quantity of `dim` in its base unit, at least `min` (kAnyPositive: greater than 0).
  double quantity(const std::string& key, Dim dim, double def, double min = 0.0);

  template <class E>
  E choice(const std::string& key, E def, std::initializer_list<std::pair<const char*, E>> options) {
    std::vector<std::string> names;
    for (const auto& o : options) names.emplace_back(o.first);
    std::string value = choice_name(key, names);
    if (value.empty()) return def;
    for (const auto& o : options) {
      if (value == o.first) return o.second;
    }
    return def;  // unreachable: choice_name validated the value
  }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  // Every key present must have been asked for; the first stranger is an error.
  void finish() const;

 private:
  std::string choice_name(const std::string& key, const std::vector<std::string>& names);
  std::string scalar(const std::string& key, const char* what);

  YAML::Node node_;
  std::string path_;
  std::string file_;
  std::vector<std::string> known_;
};

// Throws InputError naming `file` when `root`, with every alias expanded, has more than `max_nodes`
// nodes (work_limits().yaml_nodes when 0): an alias bomb, or an alias inside its own anchor. Walks at
// most max_nodes + 1 nodes, so it is fast whatever the document.
void check_expanded_size(const YAML::Node& root, const std::string& file, std::uint64_t max_nodes = 0);

// Integer value of a scalar node, or an InputError naming `field`.
std::int64_t scalar_integer(const YAML::Node& node, const std::string& field, const std::string& file,
                            std::int64_t min, std::int64_t max);

}  // namespace tp
