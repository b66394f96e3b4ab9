#include "progress_bar.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "format_units.h"

namespace tp {
namespace {

void draw(const char* things, std::uint64_t done, std::uint64_t total, double seconds) {
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int width = 30;
  const int filled = static_cast<int>(frac * width);
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0;
  std::fprintf(stderr, "\r  [%.*s%*s] %5.1f%%  %s %s/s  ETA %.0f s ", filled, "==============================",
               width - filled, "", 100 * frac, format_count(rate).c_str(), things, eta);
  if (done >= total) std::fprintf(stderr, "\n");
}

}  // namespace

std::function<void(std::uint64_t, std::uint64_t)> terminal_progress(const char* things) {
  if (isatty(STDERR_FILENO) == 0) return {};
  const auto started = std::chrono::steady_clock::now();
  double drawn = -1.0;  // when the bar was last drawn, in seconds since `started`
  return [started, things, drawn](std::uint64_t done, std::uint64_t total) mutable {
    const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (done < total && drawn >= 0.0 && now - drawn < 0.1) return;  // ten times a second at most, and the end
    drawn = now;
    draw(things, done, total, now);
  };
}

}  // namespace tp
