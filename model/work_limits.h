// Bounds on the work one command may do: input size, YAML nodes after alias expansion, simulated
// tasks per step, sweep points. Each bound is an error naming the limit and the flag that raises it,
// raised before the memory or time is spent. main() may raise them from the command line before any
// work starts; library code reads them where the work is sized.
#pragma once

#include <cstdint>
#include <string>

namespace tp {

struct WorkLimits {
  std::uint64_t input_bytes = 16ull << 20;   // a scenario, sweep, profile or measurements file: --max-input-mib
  std::uint64_t yaml_nodes = 1'000'000;      // nodes of a YAML document with its aliases expanded: --max-yaml-nodes
  std::uint64_t sim_tasks = 2'000'000;       // tasks of one simulated step: --max-tasks
  std::uint64_t sweep_points = 50'000'000;   // points of one sweep: --max-points
};

// The process's limits (defaults above until main() changes them).
WorkLimits& work_limits();

// "16 MiB", "1,000,000": how a limit is printed in messages.
std::string limit_count_text(std::uint64_t n);
std::string limit_bytes_text(std::uint64_t bytes);

// a × b, or `ceiling` + 1 when the product exceeds `ceiling` (no 64-bit wrap).
std::uint64_t capped_product(std::uint64_t a, std::uint64_t b, std::uint64_t ceiling);

}  // namespace tp
