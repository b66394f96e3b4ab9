// Helpers shared by the test suites: scenario building and running the trainplan binary.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hardware_profile.h"
#include "plan.h"
#include "scenario.h"

namespace tp::test {

inline std::string source_path(const std::string& relative) { return std::string(TRAINPLAN_SOURCE_DIR) + "/" + relative; }

// The cells of a markdown table row `| a | b |` (each without its one space of padding on either side).
inline std::vector<std::string> markdown_cells(const std::string& row) {
  std::vector<std::string> cells;
  std::stringstream ss(row.substr(1));
  std::string cell;
  while (std::getline(ss, cell, '|')) cells.push_back(cell.substr(1, cell.size() - 2));
  return cells;
}

// The cells of each row of a markdown table in a data file (path relative to the source tree) whose line `keep`
// accepts and which has at least `min_cells` cells.
inline std::vector<std::vector<std::string>> markdown_rows(const std::string& relative,
                                                           const std::function<bool(const std::string&)>& keep,
                                                           std::size_t min_cells) {
  std::ifstream in(source_path(relative));
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!keep(line)) continue;
    std::vector<std::string> cells = markdown_cells(line);
    if (cells.size() >= min_cells) rows.push_back(std::move(cells));
  }
  return rows;
}

// A line that starts with `prefix` (markdown_rows' usual filter: data rows start with their first cell's text).
inline std::function<bool(const std::string&)> starts_with(const std::string& prefix) {
  return [prefix](const std::string& line) { return line.rfind(prefix, 0) == 0; };
}

// A scenario from YAML text (label "test.yaml" in messages).
inline Scenario scenario(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  return load_scenario_text(yaml, "test.yaml", sets);
}

// The plan of a scenario's YAML text with the profile the scenario would get (profile_for).
inline Plan plan(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  const Scenario s = scenario(yaml, sets);
  return make_plan(s, profile_for(s));
}

struct RunResult {
  int exit_code = 0;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line; stdout and stderr together.
inline RunResult run_shell(const std::string& command) {
  RunResult r;
  const std::string cmd = "(" + command + ") 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs the trainplan binary with `args` (a shell-quoted string).
inline RunResult run_trainplan(const std::string& args) { return run_shell(std::string(TRAINPLAN_BINARY) + " " + args); }

}  // namespace tp::test
