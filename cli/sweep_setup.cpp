#include "sweep_setup.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "errors.h"
#include "mesh.h"
#include "scenario.h"

namespace tp {
namespace {

// Every combination of the slow axes' values, applied to the base document.
std::vector<SweepBase> make_bases(const SweepSpec& spec, const std::vector<Axis>& slow,
                                  const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  std::vector<SweepBase> bases;
  std::vector<size_t> digits(slow.size(), 0);
  std::uint64_t total = 1;
  for (const Axis& a : slow) total *= a.values.size();
  while (true) {
    YAML::Node doc = base_document(spec);
    std::string label;
    for (size_t i = 0; i < slow.size(); ++i) {
      const std::string& v = slow[i].values[digits[i]];
      apply_override(doc, slow[i].key + "=" + v);
      label += (label.empty() ? "" : " ") + slow[i].key + "=" + v;
    }
    SweepBase b;
    b.label = label;
    try {
      b.scenario = scenario_from_yaml(doc, spec.base_file, Catalog::builtin(), false);
    } catch (const InputError& e) {
      // Values applied from the grid carry no file position: name the grid axis instead.
      if (e.where().file != "--set") throw;
      // The field is the axis's key, inside it, or the part of it that is no key (nonexist of nonexist.key).
      for (const auto& a : slow) {
        const bool inside = e.field().rfind(a.key, 0) == 0;
        const bool above = a.key.rfind(e.field() + ".", 0) == 0;
        if (inside || above) throw InputError(a.where, "grid " + e.field(), e.message());
      }
      throw;
    }
    b.profile = profile_for(b.scenario);
    bases.push_back(std::move(b));
    if (progress) progress(bases.size(), total);
    size_t j = 0;
    for (; j < digits.size(); ++j) {
      if (++digits[j] < slow[j].values.size()) break;
      digits[j] = 0;
    }
    if (j == digits.size()) break;
  }
  return bases;
}

// A value given twice on one grid axis would evaluate (and count) the same points twice. (The fast axes'
// integers are compared by value as they are parsed, make_fast_axis.)
void reject_duplicate_values(const std::vector<Axis>& axes) {
  for (const Axis& a : axes) {
    std::unordered_set<std::string> seen;
    for (const std::string& v : a.values) {
      if (!seen.insert(v).second) throw InputError(a.where, "grid." + a.key, "value '" + v + "' is given twice");
    }
  }
}

// `parallel: auto` writes these keys into every layout it tries (planner/mesh.h, LayoutChoice), so an axis
// over one of them would only repeat each layout once per value.
void reject_axes_auto_chooses(const SweepSpec& spec) {
  if (!spec.parallel_auto) return;
  for (const Axis& a : spec.axes) {
    if (chosen_by_auto_layouts(a.key)) {
      throw InputError(a.where, "grid." + a.key,
                       "parallel: auto chooses this key in every layout it tries: sweep either parallel: auto or " +
                           a.key);
    }
  }
}

// Two keys that touch the same value: the same key, or one inside the other (model and model.layers):
// whichever is applied last replaces what the other set.
bool keys_overlap(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::string& shorter = a.size() < b.size() ? a : b;
  const std::string& longer = a.size() < b.size() ? b : a;
  return longer.rfind(shorter + ".", 0) == 0;
}

// Two axes over overlapping keys: the points labelled with one axis's values would be computed with the
// other's (a re-audit, 2026-12-01: model.layers=16,32 with model=... gave the two layer counts one result).
void reject_overlapping_axes(const std::vector<Axis>& axes) {
  for (std::size_t j = 0; j < axes.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      if (!keys_overlap(axes[i].key, axes[j].key)) continue;
      throw InputError(axes[j].where, "grid." + axes[j].key,
                       "overlaps the grid's axis " + axes[i].key + " (" + axes[i].where.str() +
                           "): one would replace what the other sets; sweep one of them");
    }
  }
}

// --set may not fix a key the grid varies (or one inside it, or one that holds it): the grid's values would
// silently replace it. A sweep file's axis is replaced by --grid; a --grid axis is given either to --set or to
// --grid.
void reject_sets_of_swept_keys(const std::vector<Axis>& axes, const std::vector<std::string>& sets, bool file_axes) {
  for (const std::string& s : sets) {
    const std::string key = s.substr(0, s.find('='));
    for (const Axis& a : axes) {
      if (!keys_overlap(a.key, key)) continue;
      const std::string hint = file_axes ? "give --grid " + key + "=... to replace its values"
                                         : "give the key to --set or to --grid, not both";
      throw InputError({"--set", 0, 0}, key, "the sweep's grid varies this key (" + a.where.str() + "): " + hint);
    }
  }
}

// The sweep file's grid with the command line's: a --grid axis replaces the file's axis of the same key.
void merge_command_line(SweepSpec& spec, const std::vector<std::string>& sets, const std::vector<std::string>& grids) {
  SweepSpec extra = sweep_from_cli("", {}, grids);
  reject_sets_of_swept_keys(spec.axes, sets, true);
  spec.sets.insert(spec.sets.end(), sets.begin(), sets.end());
  (void)base_document(spec);  // a bad --set before any work
  for (Axis& a : extra.axes) {
    auto same = std::find_if(spec.axes.begin(), spec.axes.end(), [&](const Axis& f) { return f.key == a.key; });
    if (same != spec.axes.end()) *same = std::move(a);
    else spec.axes.push_back(std::move(a));
  }
  spec.parallel_auto = spec.parallel_auto || extra.parallel_auto;
}

}  // namespace

std::string recompute_label(const SweepPoint& p) {
  switch (p.recompute) {
    case RecomputeMode::none: return "none";
    case RecomputeMode::selective: return "sel";
    case RecomputeMode::full: return "full";
    case RecomputeMode::selective_op: return "sel_op";
    case RecomputeMode::every: return "every" + std::to_string(p.recompute_every);
    case RecomputeMode::one_in: return "one_in" + std::to_string(p.recompute_every);
  }
  return "?";
}

std::string layout_label(const SweepPoint& p) {
  char buf[160];
  // Hybrid sharding: "z3/8", ZeRO-3 within groups of 8 data-parallel ranks.
  const std::string shard = sharding_group(p.dp_shard, p.dp) < p.dp ? "/" + std::to_string(p.dp_shard) : "";
  // Tensor parallelism without sequence parallelism (the scenario default is on): "tp4-nosp".
  const char* no_sp = p.tp > 1 && !p.sequence_parallel ? "-nosp" : "";
  std::snprintf(buf, sizeof buf, "tp%d%s pp%d dp%d cp%d ep%d v%d %s z%d%s %s mb%lld", p.tp, no_sp, p.pp, p.dp, p.cp, p.ep, p.vpp,
                to_string(p.schedule), p.zero, shard.c_str(), recompute_label(p).c_str(),
                static_cast<long long>(p.micro_batch));
  return buf;
}

// Values of the grid axes that the layout columns do not show.
std::string extra_label(const SweepPoint& p, const std::vector<SweepBase>& bases, const std::vector<FastAxis>& axes) {
  std::string out = bases[static_cast<size_t>(p.block)].label;
  for (size_t i = 0; i < axes.size() && i < p.fast_values.size(); ++i) {
    if (axes[i].key.rfind("parallel.", 0) == 0 || axes[i].key == "training.micro_batch") continue;
    out += (out.empty() ? "" : " ") + axes[i].key + "=" + axes[i].labels[p.fast_values[i]];
  }
  return out;
}

SweepSetup prepare_sweep(const std::string& input, const std::vector<std::string>& sets,
                         const std::vector<std::string>& grids,
                         const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  SweepSetup out;
  SweepSpec& spec = out.spec;
  bool from_file = false;
  if (!input.empty()) {
    YAML::Node doc = load_yaml_file(input);
    require_document(doc, input);
    from_file = is_sweep_document(doc);
  }
  if (from_file) {
    spec = load_sweep_file(input);
    merge_command_line(spec, sets, grids);
    (void)checked_point_count(spec);  // the file's axes and --grid's together
  } else {
    spec = sweep_from_cli(input, sets, grids);
    reject_sets_of_swept_keys(spec.axes, sets, false);
  }
  if (spec.axes.empty() && !spec.parallel_auto) {
    throw InputError({"command line", 0, 0}, "--grid",
                     "nothing to sweep: give --grid key=v1,v2,... or --grid parallel=auto (or grid: in a sweep file)");
  }
  reject_duplicate_values(spec.axes);
  reject_overlapping_axes(spec.axes);
  reject_axes_auto_chooses(spec);
  std::vector<Axis> slow;
  for (const auto& a : spec.axes) {
    if (is_fast_key(a.key)) out.fast.push_back(make_fast_axis(a));
    else slow.push_back(a);
  }
  out.bases = make_bases(spec, slow, progress);
  return out;
}

}  // namespace tp
