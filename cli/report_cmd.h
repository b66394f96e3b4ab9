// `trainplan report`: one self-contained HTML page with the pictures of a plan (docs/report.md).
#pragma once

#include <string>
#include <vector>

namespace tp {

struct ReportOptions {
  std::string scenario;  // "" = the best layout of the sweep, else the built-in default
  std::string sweep;     // sweep YAML ("" = none, unless grids are given)
  std::vector<std::string> grids;  // sweep axes over the scenario (as `trainplan sweep --grid`)
  std::string profile;
  std::string measurements;  // measurements JSON for the calibration section ("" = none)
  std::vector<std::string> sets;
  std::string output;  // the HTML file, written atomically once everything succeeded
};

int run_report(const ReportOptions& o);

}  // namespace tp
