// Loading a scenario YAML (the format of docs/scenario-reference.md) into a checked Scenario.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "catalog.h"
#include "specs.h"

namespace tp {

// Reads, applies `overrides` ("parallel.tp=4", as given to --set), checks and resolves.
// Throws InputError (file:line:column, field, message) or IoError.
Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides = {},
                            const Catalog& catalog = Catalog::builtin());
Scenario load_scenario_text(const std::string& text, const std::string& file_label,
                            const std::vector<std::string>& overrides = {},
                            const Catalog& catalog = Catalog::builtin());
// The built-in default scenario (Llama 3.1 70B on 64 H100s).
Scenario default_scenario(const std::vector<std::string>& overrides = {});

// Reads a YAML file or text (syntax errors become InputError with the label and position).
YAML::Node load_yaml_file(const std::string& path);
// `max_nodes`: the alias-expansion limit (check_expanded_size; 0 = --max-yaml-nodes); the built-in catalog and
// profile pass kBuiltInYaml, as --max-yaml-nodes bounds what a user gives, not the program's own data.
YAML::Node parse_yaml_text(const std::string& text, const std::string& label, std::uint64_t max_nodes = 0);
inline constexpr std::uint64_t kBuiltInYaml = ~std::uint64_t(0);
// An InputError naming `path` when its document is empty or only comments.
void require_document(const YAML::Node& root, const std::string& path);

// Applies one "dotted.key=value" assignment to a YAML tree. A catalog name met on the way
// (model: llama3.1-70b) becomes {preset: name} so that its fields can be overridden.
void apply_override(YAML::Node root, const std::string& assignment);

// Builds a Scenario from an already parsed YAML tree; `file` labels messages. With `check` false the
// cross-field rules are not enforced (a sweep checks every point itself and counts what fails).
Scenario scenario_from_yaml(const YAML::Node& root, const std::string& file, const Catalog& catalog,
                            bool check = true);

}  // namespace tp
