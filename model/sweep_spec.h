// A sweep: a base scenario, grid axes (key -> values), an objective, constraints and how many of
// the best points to keep. From the command line (--grid key=v1,v2 ...) or a sweep YAML file.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "errors.h"

namespace tp {

enum class Objective { time, cost, energy, tokens_per_gpu, mfu };
const char* to_string(Objective o);

struct Constraints {
  int max_gpus = 0;         // 0 = none
  int max_nodes = 0;        // "must fit on N nodes"
  double budget_usd = 0;    // run cost
  double deadline_s = 0;    // run wall time (with failures)
  double memory_headroom = -1;  // capacity fraction kept free; < 0 = the scenario's memory.headroom
};

struct Axis {
  std::string key;                  // dotted scenario key, e.g. parallel.tp
  std::vector<std::string> values;  // as YAML scalars, e.g. "4", "selective", "{every: 4}"
  SourceLocation where;
};

struct SweepSpec {
  // The base scenario, kept as text and parsed afresh for each of its variants (base_document), so that every
  // error in it keeps its file, line and column (a copied YAML node loses them).
  std::string base_text;          // the scenario file's text, the sweep file's (base_inline) or the built-in one
  std::string base_file;          // for messages
  std::string sweep_file;         // the sweep file given, if any (else the base scenario was given)
  // What the sweep was given, for its title: the sweep file (and its base) or the base scenario.
  std::string label() const { return sweep_file.empty() ? base_file : sweep_file + " (base " + base_file + ")"; }
  bool base_inline = false;       // the base is the `base:` mapping of the sweep file base_text
  std::vector<std::string> sets;  // --set overrides, applied after parsing
  std::vector<Axis> axes;
  bool parallel_auto = false;  // parallel: auto
  Objective objective = Objective::time;
  Constraints constraints;
  int top = 10;
};

// The base scenario document, parsed from spec.base_text with spec.sets applied.
YAML::Node base_document(const SweepSpec& spec);

// Expands one axis value list: "1,2,4,8", "1..16" (integers), "1..64:pow2" (powers of two in range),
// or plain words "none,selective,full". Throws InputError naming `field`.
std::vector<std::string> expand_values(const std::string& text, const SourceLocation& where, const std::string& field);

// --grid "key=values" (repeatable) on top of a scenario file (or the default scenario when empty).
SweepSpec sweep_from_cli(const std::string& scenario_path, const std::vector<std::string>& sets,
                         const std::vector<std::string>& grids);

// A sweep YAML: base: <file or inline scenario>, grid: {key: values | list, parallel: auto},
// objective:, constraints: {max_gpus, max_nodes, budget, deadline, memory_headroom}, top:.
SweepSpec load_sweep_file(const std::string& path);
// The same from the text of a sweep file; `path` labels messages and anchors a relative base file.
SweepSpec load_sweep_text(const std::string& text, const std::string& path);

// The number of grid points (the product of the axes' value counts), checked without 64-bit wrap.
// Throws InputError naming the first axis when it exceeds work_limits().sweep_points (--max-points).
std::uint64_t checked_point_count(const SweepSpec& spec);

// The error of a sweep of more than work_limits().sweep_points points ("more than" when `points` is
// past the limit by an unknown amount).
[[noreturn]] void too_many_points(const SourceLocation& where, const std::string& field, const std::string& what);

// True when the YAML document looks like a sweep file (has `grid:` or `base:`).
bool is_sweep_document(const YAML::Node& root);

Objective parse_objective(const std::string& text, const SourceLocation& where, const std::string& field);

}  // namespace tp
