#include "format_units.h"

#include <cmath>
#include <cstdio>

namespace tp {
namespace {

constexpr double kScientificFrom = 1e15;  // fixed notation below, scientific from here on

std::string scientific(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits, v);
  return buf;
}

// v scaled by `step` until below it or out of units; past the last unit: scientific notation.
std::string scaled(double v, double step, const char* const* units, int count, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  int u = 0;
  while (std::fabs(v) >= step && u < count - 1) {
    v /= step;
    ++u;
  }
  const std::string number = std::fabs(v) >= 1000.0 && u == count - 1 ? scientific(v, 2)
                                                                      : format_fixed(v, u == 0 ? 0 : decimals);
  return number + units[u];
}

}  // namespace

std::string format_fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  if (std::fabs(v) >= kScientificFrom) return scientific(v, 3);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string format_amount(double v, int decimals) {
  if (std::isfinite(v) && v != 0.0 && std::fabs(v) < 100.0 * std::pow(10.0, -decimals)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  return format_fixed(v, decimals);
}

std::string format_bytes(double bytes) {
  // IEC binary prefixes (IEC 80000-13): Ki, Mi, Gi, Ti, Pi, Ei, Zi, Yi.
  static const char* const units[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB", " EiB", " ZiB", " YiB"};
  return scaled(bytes, 1024.0, units, 9, 2);
}

std::string format_count(double v) {
  static const char* const units[] = {"", " k", " M", " B", " T"};
  // A fraction below 10 keeps three significant digits: 0.05 tokens/s is not 0.
  if (std::isfinite(v) && std::fabs(v) < 10.0 && v != std::floor(v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  return scaled(v, 1000.0, units, 5, 2);
}

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "n/a";
  struct Unit {
    double seconds;
    const char* name;
    double below;  // use this unit while |s| < below
  };
  // Julian year: 365.25 days.
  static const Unit units[] = {{1e-6, " us", 1e-3}, {1e-3, " ms", 1.0},         {1.0, " s", 120.0},
                               {60.0, " min", 7200.0}, {3600.0, " h", 172800.0}, {86400.0, " days", 2 * 31557600.0},
                               {31557600.0, " years", 0.0}};
  const double a = std::fabs(s);
  if (a == 0.0) return "0 s";
  for (const Unit& u : units) {
    if (u.below > 0.0 && a >= u.below) continue;
    const double v = s / u.seconds;
    if (std::fabs(v) >= 1e6) return scientific(v, 2) + u.name;
    return format_fixed(v, std::fabs(v) < 10.0 ? 2 : 1) + u.name;
  }
  return "n/a";  // unreachable: the last unit has no upper bound
}

std::string format_micro_batches(long long n) { return std::to_string(n) + (n == 1 ? " micro-batch" : " micro-batches"); }

}  // namespace tp
