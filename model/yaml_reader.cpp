#include "yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <limits>

#include "work_limits.h"

namespace tp {

SourceLocation location_of(const YAML::Node& node, const std::string& file) {
  if (!node.IsDefined()) return {file, 0, 0};
  YAML::Mark mark = node.Mark();
  if (mark.line < 0) return {"--set", 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// A decimal integer; an underscore may group digits (YAML 1.1's 1_000_000), between two of them only.
bool parse_int(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  std::string digits;
  const auto digit_at = [&](size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0; };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '_') digits += s[i];
    else if (i == 0 || !digit_at(i - 1) || !digit_at(i + 1)) return false;
  }
  if (digits.empty() || std::isspace(static_cast<unsigned char>(digits.front())) != 0) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(digits.c_str(), &end, 10);
  if (end == nullptr || *end != '\0' || errno == ERANGE) return false;
  out = v;
  return true;
}

}  // namespace

std::string closest_key(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const auto& c : candidates) {
    size_t d = edit_distance(key, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // Close enough to be a typo: within a third of the length, or a prefix/suffix relation.
  size_t limit = std::max<size_t>(2, key.size() / 3);
  if (best_d <= limit) return best;
  for (const auto& c : candidates) {
    if (!key.empty() && (c.rfind(key, 0) == 0 || key.rfind(c, 0) == 0)) return c;
  }
  return "";
}

void check_expanded_size(const YAML::Node& root, const std::string& file, std::uint64_t max_nodes) {
  if (max_nodes == 0) max_nodes = work_limits().yaml_nodes;
  // Depth-first over the expanded tree with an explicit stack: an alias is walked again at each use.
  std::vector<YAML::Node> pending{root};
  std::uint64_t seen = 0;
  while (!pending.empty()) {
    const YAML::Node node = pending.back();
    pending.pop_back();
    if (++seen > max_nodes) {
      throw InputError({file, 0, 0}, "",
                       "the YAML document has more than " + limit_count_text(max_nodes) +
                           " nodes once its aliases (*name) are expanded: an alias bomb or an alias inside its "
                           "own anchor? (raise the limit with --max-yaml-nodes)");
    }
    if (node.IsSequence()) {
      for (const YAML::Node& child : node) pending.push_back(child);
    } else if (node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it) {
        pending.push_back(it->first);
        pending.push_back(it->second);
      }
    }
  }
}

std::int64_t scalar_integer(const YAML::Node& node, const std::string& field, const std::string& file,
                            std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  if (!node.IsScalar() || !parse_int(node.Scalar(), v)) {
    throw InputError(location_of(node, file), field,
                     "expected an integer, got " + (node.IsScalar() ? "'" + node.Scalar() + "'" : std::string("a list or mapping")));
  }
  if (v < min || v > max) {
    throw InputError(location_of(node, file), field,
                     "value " + std::to_string(v) + " is out of range [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
  }
  return v;
}

MapReader::MapReader(const YAML::Node& node, std::string path, std::string file)
    : node_(node), path_(std::move(path)), file_(std::move(file)) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
    throw InputError(location_of(node_, file_), path_.empty() ? "(document)" : path_,
                     "expected a mapping of keys to values");
  }
}

bool MapReader::has(const std::string& key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

YAML::Node MapReader::node(const std::string& key) {
  if (!has(key)) return YAML::Node(YAML::NodeType::Undefined);
  return node_[key];
}

SourceLocation MapReader::where(const std::string& key) const {
  if (node_.IsMap() && node_[key].IsDefined()) return location_of(node_[key], file_);
  return location_of(node_, file_);
}

void MapReader::fail(const std::string& key, const std::string& message) const {
  throw InputError(where(key), field(key), message);
}

std::string MapReader::scalar(const std::string& key, const char* what) {
  YAML::Node n = node(key);
  if (!n.IsScalar()) fail(key, std::string("expected ") + what + ", got a list or mapping");
  return n.Scalar();
}

std::int64_t MapReader::integer(const std::string& key, std::int64_t def, std::int64_t min, std::int64_t max) {
  if (!has(key)) return def;
  return scalar_integer(node_[key], field(key), file_, min, max);
}

std::optional<std::int64_t> MapReader::integer_or_auto(const std::string& key, std::int64_t min,
                                                       std::int64_t max) {
  if (!has(key)) return std::nullopt;
  if (node_[key].IsScalar() && node_[key].Scalar() == "auto") return std::nullopt;
  std::int64_t v = 0;
  if (!node_[key].IsScalar() || !parse_int(node_[key].Scalar(), v)) {
    fail(key, "expected an integer or 'auto', got " +
                  (node_[key].IsScalar() ? "'" + node_[key].Scalar() + "'" : std::string("a list or mapping")));
  }
  return scalar_integer(node_[key], field(key), file_, min, max);
}

double MapReader::number(const std::string& key, double def, double min, double max) {
  if (!has(key)) return def;
  std::string s = scalar(key, "a number");
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0' || !std::isfinite(v)) {
    fail(key, "expected a number, got '" + s + "'");
  }
  if (v < min || v > max) {
    fail(key, "value " + s + " is out of range [" + shown(min) + ", " + shown(max) + "]");
  }
  return v;
}

bool MapReader::boolean(const std::string& key, bool def) {
  if (!has(key)) return def;
  std::string s = scalar(key, "true or false");
  std::string lower;
  for (char ch : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "false" || lower == "no" || lower == "off") return false;
  fail(key, "expected true or false, got '" + s + "'");
}

std::string MapReader::string(const std::string& key, const std::string& def) {
  if (!has(key)) return def;
  std::string s = scalar(key, "a string");
  // Names are printed in tables and titles: a control character (an escape sequence, a NUL) would be written
  // to the terminal as it is.
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) fail(key, "control characters (tab, newline, escape, NUL ...) are not allowed in a text value");
  }
  return s;
}

double MapReader::quantity(const std::string& key, Dim dim, double def, double min) {
  if (!has(key)) return def;
  std::string s = scalar(key, "a quantity with a unit");
  double v = 0.0;
  try {
    v = parse_quantity(s, dim);
  } catch (const UnitError& e) {
    fail(key, e.what());
  }
  if (v < min) {
    // The minimum is in the base unit of `dim` (parse_quantity): "at least 1 W", "at least 1 B/s".
    const std::string unit = dim_base_unit(dim);
    const std::string need = min == kAnyPositive ? "positive" : "at least " + shown(min) + (unit.empty() ? "" : " " + unit);
    fail(key, "value '" + s + "' must be " + need);
  }
  return v;
}

std::string MapReader::choice_name(const std::string& key, const std::vector<std::string>& names) {
  if (!has(key)) return "";
  std::string s = scalar(key, "one of the listed words");
  if (std::find(names.begin(), names.end(), s) != names.end()) return s;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : " | ") + n;
  std::string hint = closest_key(s, names);
  fail(key, "'" + s + "' is not one of " + list + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
}

void MapReader::finish() const {
  if (!node_.IsMap()) return;
  std::vector<std::pair<std::string, YAML::Node>> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    std::string key = it->first.Scalar();
    for (const auto& [k, n] : seen) {
      if (k == key) {
        throw InputError(location_of(it->first, file_), field(key),
                         "duplicate key (first given at " + location_of(n, file_).str() + ")");
      }
    }
    seen.emplace_back(key, it->first);
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::string hint = closest_key(key, known_);
    std::string msg = "unknown key";
    if (!hint.empty()) msg += "; did you mean '" + hint + "'?";
    else {
      std::string list;
      for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
      msg += "; valid keys here: " + list;
    }
    throw InputError(location_of(it->first, file_), field(key), msg);
  }
}

}  // namespace tp
