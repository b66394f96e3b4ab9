#include "format_units.h"

#include <cmath>
#include <cstdio>

namespace tp {

std::string format_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = bytes;
  int u = 0;
  while (std::fabs(v) >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  return format_fixed(v, u == 0 ? 0 : 2) + " " + units[u];
}

std::string format_count(double v) {
  static const char* units[] = {"", " k", " M", " B", " T"};
  int u = 0;
  while (std::fabs(v) >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  return format_fixed(v, u == 0 ? 0 : 2) + units[u];
}

}  // namespace tp
