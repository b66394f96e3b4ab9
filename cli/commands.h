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
int run_catalog(const std::string& what, const std::string& format);

}  // namespace tp
