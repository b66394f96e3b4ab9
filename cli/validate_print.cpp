// `trainplan validate` output: one table per set with the error per run and the summaries (per GPU; per
// failure class in the sharded set; step time and memory in the real-step set), or the same as JSON
// (docs/json-output.md, "trainplan validate --format json"). Errors are predicted / measured - 1.
#include <cctype>
#include <cstdio>
#include <string>

#include "error_summary.h"
#include "format_units.h"
#include "validate_sets.h"

namespace tp {
namespace {

// The summaries of a set over its measured runs (a run that ran out of memory has no error): step time
// whole and per GPU, per failure class where the index gives one, memory where the run measured it. The
// tables and the JSON print these same numbers.
struct SetSummary {
  ErrorSummary step, memory;
  GroupedErrors by_gpu, by_class;
};

SetSummary summarize(const ValidationSet& set) {
  SetSummary s;
  for (const auto& r : set.rows) {
    if (r.oom) continue;
    s.step.add(step_error(r));
    s.by_gpu[r.gpu].add(step_error(r));
    if (!r.failure_class.empty()) s.by_class[r.failure_class].add(step_error(r));
    if (r.has_memory) s.memory.add(memory_error(r));
  }
  return s;
}

void print_published(const ValidationSet& set) {
  std::printf("%-52s %14s %14s %9s %7s\n", "run", "measured [s]", "predicted [s]", "error", "MFU");
  for (const auto& r : set.rows) {
    // format_amount: a step of a few microseconds keeps its digits (it printed 0.000).
    std::printf("%-52s %14s %14s %8.1f%% %6.1f%%\n", r.name.c_str(), format_amount(r.measured_step, 3).c_str(),
                format_amount(r.predicted_step, 3).c_str(), 100 * step_error(r), 100 * r.mfu);
  }
  const SetSummary s = summarize(set);
  print_groups("class", s.by_class);  // a user's own runs may give classes
  print_groups("gpu", s.by_gpu);
  s.step.print("step time");
}

void print_sharded(const ValidationSet& set) {
  std::printf("\nPublished sharded and Megatron-Core runs (%s)\n", set.index.c_str());
  std::printf("%-52s %-22s %12s %12s %8s %7s\n", "run", "class", "meas. [s]", "pred. [s]", "error", "MFU");
  for (const auto& r : set.rows) {
    std::printf("%-52s %-22s %12s %12s %7.1f%% %6.1f%%\n", r.name.c_str(), r.failure_class.c_str(),
                format_amount(r.measured_step, 3).c_str(), format_amount(r.predicted_step, 3).c_str(), 100 * step_error(r),
                100 * r.mfu);
  }
  const SetSummary s = summarize(set);
  print_groups("class", s.by_class);
  print_groups("gpu", s.by_gpu);
  s.step.print("step time");
}

void print_steps(const ValidationSet& set) {
  // The set's key names its GPU: "h100_pytorch" -> H100.
  std::string gpu = set.key.substr(0, set.key.find('_'));
  for (char& c : gpu) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::printf("\nReal %s steps, PyTorch + Hugging Face (%s)\n", gpu.c_str(), set.index.c_str());
  std::printf("%-34s %10s %10s %8s %11s %11s %8s\n", "run", "meas. [s]", "pred. [s]", "error", "meas. [GB]", "pred. [GB]",
              "error");
  for (const auto& r : set.rows) {
    if (r.oom) {
      std::printf("%-34s %10s %10s %8s %11s %11s   out of memory; predicted %s\n", r.name.c_str(), "-",
                  format_amount(r.predicted_step, 3).c_str(), "", "OOM", format_amount(r.predicted_memory / 1e9, 2).c_str(),
                  r.predicted_to_fit ? "to fit" : "not to fit");
    } else {
      std::printf("%-34s %10s %10s %7.1f%% %11s %11s %7.1f%%\n", r.name.c_str(), format_amount(r.measured_step, 3).c_str(),
                  format_amount(r.predicted_step, 3).c_str(), 100 * step_error(r),
                  format_amount(r.measured_memory / 1e9, 2).c_str(), format_amount(r.predicted_memory / 1e9, 2).c_str(),
                  100 * memory_error(r));
    }
  }
  const SetSummary s = summarize(set);
  s.step.print("step time");
  s.memory.print("memory (total - overhead vs peak allocated)");
}

// Over no runs the errors are null, not 0 (which would read as a perfect score).
nlohmann::json summary_json(const ErrorSummary& e) {
  if (e.n == 0) {
    return {{"runs", 0}, {"mean_absolute_error", nullptr}, {"signed_mean_error", nullptr}, {"max_absolute_error", nullptr}};
  }
  return {{"runs", e.n}, {"mean_absolute_error", e.mean()}, {"signed_mean_error", e.signed_mean()},
          {"max_absolute_error", e.worst}};
}

nlohmann::json groups_json(const GroupedErrors& groups) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, e] : groups) j[name] = summary_json(e);
  return j;
}

nlohmann::json row_json(const ValidationRow& r) {
  nlohmann::json j = {{"run", r.name}, {"scenario", r.scenario}, {"gpu", r.gpu},
                      {"predicted_step_seconds", r.predicted_step}, {"mfu", r.mfu}};
  if (!r.source.empty()) j["source"] = r.source;
  if (!r.failure_class.empty()) j["class"] = r.failure_class;
  if (!r.oom) {
    j["measured_step_seconds"] = r.measured_step;
    j["step_error"] = step_error(r);
  }
  if (r.has_memory) {
    j["predicted_allocated_bytes"] = r.predicted_memory;
    j["predicted_to_fit"] = r.predicted_to_fit;
    j["out_of_memory"] = r.oom;
    if (!r.oom) {
      j["measured_peak_allocated_bytes"] = r.measured_memory;
      j["memory_error"] = memory_error(r);
    }
  }
  return j;
}

nlohmann::json set_json(const ValidationSet& set) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : set.rows) runs.push_back(row_json(r));
  const SetSummary s = summarize(set);
  nlohmann::json j = {{"index", set.index}, {"runs", runs}, {"step_time", summary_json(s.step)}, {"by_gpu", groups_json(s.by_gpu)}};
  if (set.kind == ValidationKind::sharded || !s.by_class.empty()) j["by_class"] = groups_json(s.by_class);
  if (set.kind == ValidationKind::steps) j["memory"] = summary_json(s.memory);
  return j;
}

}  // namespace

void print_validation_tables(const std::vector<ValidationSet>& sets) {
  for (const ValidationSet& set : sets) {
    switch (set.kind) {
      case ValidationKind::published: print_published(set); break;
      case ValidationKind::sharded: print_sharded(set); break;
      case ValidationKind::steps: print_steps(set); break;
    }
  }
}

nlohmann::json validation_json(const std::vector<ValidationSet>& sets) {
  nlohmann::json j;
  j["units"] = {{"time", "seconds"}, {"memory", "bytes"}, {"errors", "fraction: predicted / measured - 1"}};
  for (const ValidationSet& set : sets) j["sets"][set.key] = set_json(set);
  return j;
}

}  // namespace tp
