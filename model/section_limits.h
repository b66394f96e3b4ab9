// Bounds shared by the readers of a scenario's values: its section readers (scenario_sections.cpp,
// training_section.cpp, spec_reader.cpp) and the sweep's grid values (planner/sweep_axes.cpp), so that a
// value a scenario refuses is refused on a sweep axis too.
#pragma once

#include <cstdint>
#include <string>

#include "yaml_reader.h"

namespace tp::section_limits {

constexpr std::int64_t kBig = std::int64_t(1) << 52;  // sequence length, batch, micro-batch

// Parallel degrees: far above any real layout, low enough that their products stay exact in 64 bits.
constexpr std::int64_t kMaxDegree = std::int64_t(1) << 20;        // tp, pp, cp, ep, cp_a2a
constexpr std::int64_t kMaxDataParallel = std::int64_t(1) << 30;  // dp, dp_shard
constexpr std::int64_t kMaxVpp = std::int64_t(1) << 10;
constexpr std::int64_t kMaxRecomputeSpan = 100000;               // recompute: {every: k} or {one_in: k}
constexpr std::int64_t kMaxNodes = 2000000;  // cluster.nodes: x 1024 GPUs a node stays below 2^31

// Upper bounds of the quantities that multiply into run totals: far above any real job, low enough
// that no product of them (tokens x step time x GPUs x price) leaves the range of a double.
constexpr double kMaxTokens = 1e18;        // the largest published runs train on ~1e13-1e14 tokens
constexpr double kMaxUsdPerGpuHour = 1e6;
constexpr double kMaxPerKwh = 1e6;         // USD or kg CO2 per kWh
constexpr double kMaxHostPower = 1e9;      // watts per node
constexpr double kMaxSeconds = 1e12;       // a restart, ~31,700 years
constexpr double kMaxBufferBytes = 1e15;   // CUDA context, communication bucket

// r.quantity() bounded above: an InputError naming the field when `value` exceeds `max`.
inline double at_most(MapReader& r, const std::string& key, double value, double max) {
  if (value > max) r.fail(key, "is out of range: at most " + shown(max) + " (in base SI units)");
  return value;
}

}  // namespace tp::section_limits
