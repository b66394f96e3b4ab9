// What `trainplan sweep` and `trainplan report --sweep` share: reading a sweep (a sweep file, or a
// scenario with --grid axes), splitting its axes into fast ones (set per point) and slow ones (one
// base scenario per combination), and the labels of a point's layout.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sweep.h"
#include "sweep_spec.h"

namespace tp {

struct SweepSetup {
  SweepSpec spec;
  std::vector<FastAxis> fast;
  std::vector<SweepBase> bases;  // every combination of the slow axes' values
};

// `input`: a sweep YAML, a scenario YAML, or "" (the built-in default scenario); `sets` override
// keys of the base scenario; `grids` add axes ("key=v1,v2"). Throws InputError when there is nothing
// to sweep or a value is malformed (naming the file or the grid axis).
// `progress` (may be empty) is told of each base scenario made, one per combination of the slow axes' values
// (a model or cluster axis: thousands may take seconds).
SweepSetup prepare_sweep(const std::string& input, const std::vector<std::string>& sets,
                         const std::vector<std::string>& grids,
                         const std::function<void(std::uint64_t done, std::uint64_t total)>& progress = {});

// "tp8 pp4 dp2 cp1 ep1 v1 1f1b z1 sel mb1"
std::string layout_label(const SweepPoint& p);
// Values of the grid axes that layout_label does not show ("cluster.nodes=16").
std::string extra_label(const SweepPoint& p, const std::vector<SweepBase>& bases, const std::vector<FastAxis>& axes);
// "none", "sel", "full", "every4"
std::string recompute_label(const SweepPoint& p);

}  // namespace tp
