// Shared pieces of the command-line set-up: validators, the options several subcommands take and the
// global work limits (cli_setup.h).
#include "cli_setup.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "work_limits.h"

namespace tp {

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
          return "value " + text + " is not a finite number in [" + CLI::detail::to_string(lo) + " - " +
                 CLI::detail::to_string(hi) + "]";
        }
        return "";
      },
      "FINITE in [" + CLI::detail::to_string(lo) + " - " + CLI::detail::to_string(hi) + "]");
}

CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& path) { return path.empty() ? std::string("an empty path: give a file name") : std::string(); },
      "PATH");
}

CLI::Validator whole_number_64() {
  return CLI::Validator(
      [](std::string& text) {
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        const bool whole = !text.empty() && error == std::errc() && end == text.data() + text.size();
        return whole ? std::string() : "'" + text + "' is not a whole number in [0, 18446744073709551615]";
      },
      "UINT64");
}

int max_threads() { return 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void add_scenario_options(CLI::App& cmd, std::string& scenario, std::string& profile, std::vector<std::string>& sets,
                          const std::string& set_example) {
  cmd.add_option("scenario", scenario, "Scenario YAML (default: the built-in scenario)")->check(non_empty_path());
  cmd.add_option("--profile", profile, "Hardware profile YAML")->check(non_empty_path());
  // One key per --set: a scenario file after it is the scenario (CLI11 lets a list option take every
  // following word otherwise).
  cmd.add_option("--set", sets, "Override a key: --set " + set_example + " (repeatable)")->allow_extra_args(false);
}

void add_format_option(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format", format, "table or json")->check(CLI::IsMember({"table", "json"}));
}

std::function<void()> add_work_limit_options(CLI::App& app) {
  WorkLimits& limits = work_limits();
  auto max_input_mib = std::make_shared<std::uint64_t>(limits.input_bytes >> 20);
  app.add_option("--max-input-mib", *max_input_mib, "Largest input file read, in MiB (default 16)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--max-yaml-nodes", limits.yaml_nodes, "Most YAML nodes once aliases are expanded (default 1000000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_option("--max-tasks", limits.sim_tasks, "Most tasks in one simulated step (default 2000000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_option("--max-points", limits.sweep_points, "Most points in one sweep (default 50000000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 50));
  return [&limits, max_input_mib] { limits.input_bytes = *max_input_mib << 20; };
}

}  // namespace tp
