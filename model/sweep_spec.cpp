#include "sweep_spec.h"

#include <cstdint>
#include <sstream>

#include "catalog.h"
#include "input_file.h"
#include "quantity.h"
#include "scenario.h"
#include "work_limits.h"
#include "yaml_reader.h"

namespace tp {
namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  size_t b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool to_int(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == nullptr || *end != '\0') return false;
  out = v;
  return true;
}

// Splits at commas that are not inside {...} or [...].
std::vector<std::string> split_top(const std::string& text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(trim(cur));
  return out;
}

Axis axis_from_node(const std::string& key, const YAML::Node& value, const std::string& file) {
  Axis a;
  a.key = key;
  a.where = location_of(value, file);
  if (value.IsSequence()) {
    for (const auto& v : value) {
      if (v.IsScalar()) {
        a.values.push_back(v.Scalar());
      } else {
        YAML::Emitter e;
        e << YAML::Flow << v;
        a.values.push_back(e.c_str());
      }
    }
  } else if (value.IsScalar()) {
    a.values = expand_values(value.Scalar(), a.where, "grid." + key);
  } else {
    throw InputError(a.where, "grid." + key, "expected a list of values or a range like 1..16");
  }
  if (a.values.empty()) throw InputError(a.where, "grid." + key, "no values");
  return a;
}

void add_axis(SweepSpec& spec, Axis a) {
  for (const auto& existing : spec.axes) {
    if (existing.key == a.key) throw InputError(a.where, "grid." + a.key, "given twice");
  }
  // The values label the points in tables and the CSV: a newline broke the table's rows (a CLI audit,
  // 2026-12-01), as the scenario's own text values refuse control characters.
  for (const std::string& v : a.values) {
    for (char ch : v) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c == 0x7f) {
        throw InputError(a.where, "grid." + a.key, "control characters (tab, newline, escape, NUL ...) are not allowed in a value");
      }
    }
  }
  spec.axes.push_back(std::move(a));
}

}  // namespace

const char* to_string(Objective o) {
  switch (o) {
    case Objective::time: return "time";
    case Objective::cost: return "cost";
    case Objective::energy: return "energy";
    case Objective::tokens_per_gpu: return "tokens_per_gpu";
    case Objective::mfu: return "mfu";
  }
  return "?";
}

Objective parse_objective(const std::string& text, const SourceLocation& where, const std::string& field) {
  const std::vector<std::string> names = {"time", "cost", "energy", "tokens_per_gpu", "mfu"};
  for (size_t i = 0; i < names.size(); ++i) {
    if (text == names[i]) return static_cast<Objective>(i);
  }
  std::string hint = closest_key(text, names);
  throw InputError(where, field, "'" + text + "' is not one of time | cost | energy | tokens_per_gpu | mfu" +
                                     (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
}

std::vector<std::string> expand_values(const std::string& raw, const SourceLocation& where, const std::string& field) {
  std::vector<std::string> out;
  for (const std::string& part : split_top(raw)) {
    if (part.empty()) throw InputError(where, field, "empty value in '" + raw + "'");
    const size_t dots = part.find("..");
    if (dots == std::string::npos || part.front() == '{' || part.front() == '[') {
      out.push_back(part);
      continue;
    }
    std::string lo_text = trim(part.substr(0, dots));
    std::string hi_text = trim(part.substr(dots + 2));
    bool pow2 = false;
    const size_t colon = hi_text.find(':');
    if (colon != std::string::npos) {
      if (trim(hi_text.substr(colon + 1)) != "pow2") {
        throw InputError(where, field, "unknown range step '" + hi_text.substr(colon + 1) + "' (only ':pow2')");
      }
      pow2 = true;
      hi_text = trim(hi_text.substr(0, colon));
    }
    std::int64_t lo = 0, hi = 0;
    if (!to_int(lo_text, lo) || !to_int(hi_text, hi) || lo > hi || lo < 0) {
      throw InputError(where, field, "bad range '" + part + "': expected lo..hi with integers lo <= hi");
    }
    if (pow2) {  // at most 63 values, whatever the range: the key's own range judges them
      for (std::int64_t v = 1; v <= hi; v *= 2) {
        if (v >= lo) out.push_back(std::to_string(v));
        if (v > hi / 2) break;
      }
    } else {
      if (hi - lo > 100000) throw InputError(where, field, "range '" + part + "' has more than 100,000 values");
      if (static_cast<std::uint64_t>(hi - lo) >= work_limits().sweep_points - out.size()) {
        too_many_points(where, field, "the values of '" + raw + "'");
      }
      for (std::int64_t v = lo; v <= hi; ++v) out.push_back(std::to_string(v));
    }
    if (out.empty()) throw InputError(where, field, "range '" + part + "' has no values");
  }
  return out;
}

void too_many_points(const SourceLocation& where, const std::string& field, const std::string& what) {
  throw InputError(where, field,
                   what + " make more than the limit of " + limit_count_text(work_limits().sweep_points) +
                       " sweep points: narrow the grid, or raise the limit with --max-points");
}

std::uint64_t checked_point_count(const SweepSpec& spec) {
  const std::uint64_t limit = work_limits().sweep_points;
  std::uint64_t points = 1;
  std::string product;
  for (const Axis& a : spec.axes) {
    points = capped_product(points, a.values.size(), limit);
    product += (product.empty() ? "" : " x ") + a.key + " (" + std::to_string(a.values.size()) + ")";
    if (points > limit) too_many_points(spec.axes.front().where, "grid", "the axes " + product);
  }
  return points;
}

SweepSpec sweep_from_cli(const std::string& scenario_path, const std::vector<std::string>& sets,
                         const std::vector<std::string>& grids) {
  SweepSpec spec;
  spec.base_text = scenario_path.empty() ? default_scenario_text() : read_input_file(scenario_path);
  spec.base_file = scenario_path.empty() ? "built-in default scenario" : scenario_path;
  spec.sets = sets;
  (void)base_document(spec);  // a bad --set or YAML error before any axis
  for (const auto& g : grids) {
    const size_t eq = g.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError({"--grid", 0, 0}, g, "expected key=v1,v2,... or key=lo..hi, e.g. parallel.tp=1,2,4,8");
    }
    const std::string key = g.substr(0, eq);
    const std::string values = g.substr(eq + 1);
    if (key == "parallel" && values == "auto") {
      spec.parallel_auto = true;
      continue;
    }
    Axis a;
    a.key = key;
    a.where = {"--grid", 0, 0};
    a.values = expand_values(values, a.where, key);
    add_axis(spec, std::move(a));
  }
  (void)checked_point_count(spec);
  return spec;
}

YAML::Node base_document(const SweepSpec& spec) {
  YAML::Node doc = parse_yaml_text(spec.base_text, spec.base_file);
  if (spec.base_inline) doc = doc["base"];
  for (const auto& s : spec.sets) apply_override(doc, s);
  return doc;
}

bool is_sweep_document(const YAML::Node& root) { return root.IsMap() && (root["grid"] || root["base"]); }

SweepSpec load_sweep_file(const std::string& path) { return load_sweep_text(read_input_file(path), path); }

SweepSpec load_sweep_text(const std::string& text, const std::string& path) {
  YAML::Node root = parse_yaml_text(text, path);
  MapReader r(root, "", path);
  SweepSpec spec;
  spec.sweep_file = path;
  if (!r.has("base")) r.fail("base", "required: a scenario file (relative to this file) or an inline scenario");
  YAML::Node base = r.node("base");
  if (base.IsScalar()) {
    std::string file = base.Scalar();
    if (!file.empty() && file.front() != '/') {
      const size_t slash = path.rfind('/');
      if (slash != std::string::npos) file = path.substr(0, slash + 1) + file;
    }
    try {
      spec.base_text = read_input_file(file);
    } catch (const InputError& e) {  // say which line of the sweep file names it
      throw InputError(r.where("base"), "base", e.what());
    }
    spec.base_file = file;
  } else if (!base.IsMap()) {
    // A list of bases ("base: [a.yaml, b.yaml]") said "(document): expected a mapping" (a CLI audit).
    r.fail("base", "expected one scenario file or an inline scenario (a mapping), got a list; sweep a model or cluster "
                   "with a grid axis instead (grid: {model: [...]})");
  } else {
    spec.base_text = text;
    spec.base_file = path;
    spec.base_inline = true;
  }
  (void)base_document(spec);
  if (!r.has("grid")) r.fail("grid", "required: a mapping of scenario keys to values");
  YAML::Node grid = r.node("grid");
  if (!grid.IsMap() || grid.size() == 0) {
    r.fail("grid", grid.IsMap() ? "nothing to sweep: give at least one key with its values, or parallel: auto"
                                : "expected a mapping of scenario keys to values");
  }
  for (auto it = grid.begin(); it != grid.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (key == "parallel" && it->second.IsScalar() && it->second.Scalar() == "auto") {
      spec.parallel_auto = true;
      continue;
    }
    add_axis(spec, axis_from_node(key, it->second, path));
  }
  if (r.has("objective")) {
    spec.objective = parse_objective(r.string("objective", "time"), r.where("objective"), "objective");
  }
  spec.top = static_cast<int>(r.integer("top", spec.top, 1, 1000000));  // as --top
  if (r.has("constraints")) {
    MapReader c(r.node("constraints"), "constraints", path);
    spec.constraints.max_gpus = static_cast<int>(c.integer("max_gpus", 0, 1, 100000000));
    spec.constraints.max_nodes = static_cast<int>(c.integer("max_nodes", 0, 1, 10000000));
    // A budget or deadline given is a limit: 0 would be none (the unset value), so it is refused.
    spec.constraints.budget_usd = c.quantity("budget", Dim::usd, 0.0, kAnyPositive);
    spec.constraints.deadline_s = c.quantity("deadline", Dim::seconds, 0.0, kAnyPositive);
    spec.constraints.memory_headroom = c.number("memory_headroom", -1.0, 0.0, 0.9);
    c.finish();
  }
  r.finish();
  (void)checked_point_count(spec);
  return spec;
}

}  // namespace tp
