// Loading a scenario: YAML parsing, --set overrides, the sections read in order (scenario_sections.h), then the
// layout resolution and cross-field checks (checks.h), with errors located in the file.
#include "scenario.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "checks.h"
#include "input_file.h"
#include "scenario_sections.h"
#include "spec_reader.h"
#include "yaml_reader.h"

namespace tp {
namespace {

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
  std::string prefix;  // the dotted path down to `key`
  for (size_t j = 0; j <= i; ++j) prefix += (j > 0 ? "." : "") + path[j];
  const bool catalog_valued = prefix == "model" || prefix == "cluster" || prefix == "cluster.gpu";
  if (child.IsScalar() && catalog_valued) {
    // A catalog name: keep it as the preset and override fields on top of it.
    YAML::Node map(YAML::NodeType::Map);
    map["preset"] = YAML::Node(child.Scalar());
    node[key] = map;
  } else if (child.IsScalar()) {
    // Any other scalar (parallel.recompute: none) gives way to the mapping the key asks for.
    node[key] = YAML::Node(YAML::NodeType::Map);
  } else if (!child.IsDefined() || child.IsNull()) {
    node[key] = YAML::Node(YAML::NodeType::Map);
  } else if (!child.IsMap()) {
    throw InputError({"--set", 0, 0}, assignment, "'" + key + "' is a list; cannot set a field inside it");
  }
  set_path(node[key], path, i + 1, value, assignment);
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
  if (!key.empty() && key.back() == '.') throw InputError({"--set", 0, 0}, key, "empty component in the key");
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
                     "has no value ('" + value + "'); give one (" + key + "=VALUE) or leave the --set out for the default");
  }
  check_expanded_size(parsed, "--set " + key);  // an alias bomb in the value (model/yaml_reader.h)
  set_path(root, path, 0, without_marks(parsed), assignment);
}

namespace {
// The 1-based line where a second YAML document starts (its first content after a `---` or `...` marker at
// column 0 that follows content), or 0. Markers at column 0 end any scalar (YAML 1.2, c-forbidden), so a
// line scan finds them; yaml-cpp's LoadAll is not used, as it loops forever on some malformed text.
int second_document_line(const std::string& text) {
  std::istringstream in(text);
  bool content = false, marker = false;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const bool is_marker = (line.rfind("---", 0) == 0 || line.rfind("...", 0) == 0) &&
                           (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
    const std::size_t first = line.find_first_not_of(" \t\r");
    const bool blank = first == std::string::npos || line[first] == '#';
    if (is_marker) {
      const std::size_t rest = line.find_first_not_of(" \t\r", 3);
      const bool inline_content = rest != std::string::npos && line[rest] != '#';
      if (content && inline_content) return number;
      marker = marker || content;
      content = content || inline_content;
      continue;
    }
    if (blank || line[0] == '%') continue;  // comments, directives
    if (marker) return number;
    content = true;
  }
  return 0;
}
}  // namespace

YAML::Node parse_yaml_text(const std::string& text, const std::string& label, std::uint64_t max_nodes) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError({label, e.mark.line + 1, e.mark.column + 1}, "", "YAML syntax error: " + e.msg);
  }
  // A second document (after `---`) would be ignored without a word: which one the user meant is theirs to say.
  if (const int line = second_document_line(text); line > 0) {
    throw InputError({label, line, 1}, "",
                     "a second YAML document (after '---'): the file holds one; remove the separator or split the file");
  }
  if (max_nodes != kBuiltInYaml) check_expanded_size(root, label, max_nodes);  // alias bombs (model/yaml_reader.h)
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

// A required key that is missing because an unclosed quote swallowed it into another key's text ("name:
// \"Llama ..." without its closing quote said "model: required"; a CLI audit, 2026-12-01): that key named.
static std::string swallowed_by(const YAML::Node& root, const std::string& key) {
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!it->second.IsScalar() || it->second.Scalar().find(key + ":") == std::string::npos) continue;
    const std::string other = it->first.Scalar();
    return "; it is inside the text of " + other + " (line " + std::to_string(it->second.Mark().line + 1) +
           "): a quote left open?";
  }
  return "";
}

Scenario scenario_from_yaml(const YAML::Node& root, const std::string& file, const Catalog& catalog, bool check) {
  reject_nulls(root, "", file);
  MapReader r(root, "", file);
  Scenario s;
  s.source = file;
  for (const char* key : {"model", "cluster"}) {
    if (!r.has(key) && root.IsMap()) {
      const std::string hint = swallowed_by(root, key);
      if (!hint.empty()) r.fail(key, "required" + hint);
    }
  }
  s.name = r.string("name", "");
  if (!r.has("model")) r.fail("model", "required: a catalog name (see `trainplan catalog models`) or a mapping");
  s.model = read_model(r.node("model"), "model", file, catalog);
  if (s.model.name.empty()) s.model.name = "Custom model";  // an inline model without name: (titles, tables)
  if (!r.has("cluster")) r.fail("cluster", "required: a catalog name or a mapping with gpu, nodes, gpus_per_node");
  s.cluster = read_cluster(r.node("cluster"), "cluster", file, catalog);
  if (s.cluster.gpu.key.empty() && s.cluster.gpu.name.empty()) r.fail("cluster", "required: cluster.gpu");
  if (s.cluster.gpu.name.empty()) s.cluster.gpu.name = "custom GPU";  // likewise an inline GPU without name
  s.training = read_section(r, "training", read_training);
  s.parallel = read_section(r, "parallel", read_parallel);
  s.costs = read_section(r, "costs", read_costs);
  s.memory = read_section(r, "memory", [&](MapReader& m) { return read_memory(m, s.training.framework); });
  s.profile = r.string("profile", "");
  if (!s.profile.empty() && s.profile.front() != '/') {
    // Relative to the scenario file's folder, like an include.
    const size_t slash = file.rfind('/');
    if (slash != std::string::npos) s.profile = file.substr(0, slash + 1) + s.profile;
  }
  std::error_code no_file;
  if (!s.profile.empty() && !std::filesystem::exists(s.profile, no_file)) {
    r.fail("profile", s.profile + ": no such file (a path relative to this scenario's folder)");
  }
  if (!s.profile.empty() && !std::filesystem::is_regular_file(s.profile, no_file)) {
    r.fail("profile", s.profile + ": not a file (a folder or a device); give a profile's YAML file");
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
