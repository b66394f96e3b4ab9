// Bounds shared by the section readers of a scenario file (scenario_sections.cpp, training_section.cpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "yaml_reader.h"

namespace tp::section_limits {

constexpr std::int64_t kBig = std::int64_t(1) << 52;

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
  if (value > max) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", max);
    r.fail(key, "is out of range: at most " + std::string(buf) + " (in base SI units)");
  }
  return value;
}

}  // namespace tp::section_limits
