// The trainplan subcommands. Each returns the process exit code; library errors propagate as
// exceptions to main(), which maps them to exit codes.
#pragma once

#include <string>
#include <vector>

namespace tp {

struct EvaluateOptions {
  std::string scenario;  // "" = built-in default
  std::string profile;
  std::vector<std::string> sets;
  std::string format = "table";
};

int run_evaluate(const EvaluateOptions& o);

// One published run predicted from its scenario (scenarios/validation/index.yaml).
struct ValidationRow {
  std::string scenario, source, name;
  double measured_step = 0;   // seconds (or implied by the published tokens/s per GPU)
  double predicted_step = 0;  // seconds
  double mfu = 0;
};
std::vector<ValidationRow> validation_rows(const std::string& dir);
int run_validate(const std::string& dir);
int run_catalog(const std::string& what, const std::string& format);

struct SweepCommandOptions {
  std::string input;  // scenario or sweep YAML ("" = built-in default scenario)
  std::vector<std::string> grids;
  std::vector<std::string> sets;
  std::string objective;  // "" = the file's, else time
  int top = 0;            // 0 = the file's, else 10
  std::string csv;
  bool csv_all = false;
  std::string format = "table";
  int threads = 0;
};
// Exit 0 with results; 2 when no point is feasible.
int run_sweep_command(const SweepCommandOptions& o);

}  // namespace tp
