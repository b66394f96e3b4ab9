// Helpers of the work-limit tests: running the binary under a wall-clock and memory bound, and
// writing a temporary input file.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "error_test_support.h"
#include "test_support.h"

namespace tp::limtest {

// Generous bounds: a limit error must come long before either (ASan builds are ~3x slower).
constexpr double kMaxSeconds = 20.0;
constexpr long kMaxKiB = 2L << 20;  // 2 GiB of address space (not applied under ASan, which reserves more)

using errtest::temp_path;
using errtest::write_file;
using test::run_shell;

struct BoundedRun {
  test::RunResult result;
  double seconds = 0;
};

// Runs trainplan with `args` under `timeout` and, outside ASan, `ulimit -v`: a hang or a runaway
// allocation fails the test instead of the machine.
inline BoundedRun run_bounded(const std::string& args) {
#if defined(__SANITIZE_ADDRESS__)
  const std::string limit;
#else
  const std::string limit = "ulimit -v " + std::to_string(kMaxKiB) + "; ";
#endif
  const auto start = std::chrono::steady_clock::now();
  BoundedRun r;
  r.result = run_shell(limit + "exec timeout 60 " + std::string(TRAINPLAN_BINARY) + " " + args);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// A YAML alias bomb of `levels` levels, nine aliases each (9^levels leaves), as the lines of a
// mapping indented by `indent`.
inline std::string alias_bomb(int levels, const std::string& indent) {
  std::string out = indent + "l0: &l0 [x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= levels; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    out += indent + "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) out += (k ? ", " : "") + prev;
    out += "]\n";
  }
  return out;
}

}  // namespace tp::limtest
