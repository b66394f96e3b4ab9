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

}  // namespace tp
