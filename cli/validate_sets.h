// The validation sets of `trainplan validate`: DIR/index.yaml (published runs), and where they exist
// DIR/sharded/index.yaml (published sharded-data-parallel and Megatron-Core runs, grouped by failure
// class) and DIR/h100-pytorch/index.yaml, DIR/h200-pytorch/index.yaml (real single-GPU steps, with memory). Each run predicted from
// its scenario alone, ready to print as tables (validate_print.cpp) or as JSON (docs/json-output.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"

namespace tp {

enum class ValidationKind { published, sharded, steps };

struct ValidationSet {
  ValidationKind kind = ValidationKind::published;
  std::string key;    // "published", "sharded", "h100_pytorch", "h200_pytorch" (the JSON name)
  std::string index;  // path of its index.yaml
  std::vector<ValidationRow> rows;
};

// The sets under `dir`; the published one is required, the others are read when present.
std::vector<ValidationSet> validation_sets(const std::string& dir);

// The step-time error of a row, predicted / measured - 1 (a row that ran out of memory has none).
inline double step_error(const ValidationRow& r) { return r.predicted_step / r.measured_step - 1.0; }
// The memory error of a measured real step, predicted total - overhead / peak allocated - 1.
inline double memory_error(const ValidationRow& r) { return r.predicted_memory / r.measured_memory - 1.0; }

void print_validation_tables(const std::vector<ValidationSet>& sets);
nlohmann::json validation_json(const std::vector<ValidationSet>& sets);

}  // namespace tp
