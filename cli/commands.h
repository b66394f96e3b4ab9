// The trainplan subcommands. Each returns the process exit code; library errors propagate as
// exceptions to main(), which maps them to exit codes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tp {

struct EvaluateOptions {
  std::string scenario;  // "" = built-in default
  std::string profile;
  std::vector<std::string> sets;
  std::string format = "table";
  bool simulate = false;  // --simulate: also run the step simulator and show its step time
};

int run_evaluate(const EvaluateOptions& o);

struct SimulateOptions {
  std::string scenario;
  std::string profile;
  std::vector<std::string> sets;
  std::string trace;  // Chrome trace JSON ("" = none)
  int steps = 1;
  double jitter = 0.0;  // relative spread of task durations
  std::uint64_t seed = 1;
  std::string format = "table";
};
// trainplan simulate: the step simulator's breakdown (and trace) of one scenario.
int run_simulate(const SimulateOptions& o);

// One published run predicted from its scenario (scenarios/validation/index.yaml).
struct ValidationRow {
  std::string scenario, source, name;
  std::string failure_class;  // index.yaml `class` (sharded set), "" where absent
  std::string gpu;            // the scenario's GPU (catalog key)
  double measured_step = 0;   // seconds (or implied by the published tokens/s per GPU); 0: out of memory
  double predicted_step = 0;  // seconds
  double mfu = 0;
  // Measured steps with memory (the real H100 steps): torch.cuda.max_memory_allocated against the
  // predicted total - overhead, in bytes; `oom`: the run did not fit, `predicted_to_fit` what we say.
  bool has_memory = false;
  double measured_memory = 0, predicted_memory = 0;
  bool oom = false, predicted_to_fit = true;
};
// The published runs of dir/index.yaml (each `measured` has step_seconds or tokens_per_second_per_gpu).
std::vector<ValidationRow> validation_rows(const std::string& dir);
// `trainplan validate`: every set under `dir` (cli/validate_sets.h), as tables or as JSON.
int run_validate(const std::string& dir, const std::string& format);
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
  int simulate_top = 0;  // re-score the best N with the event simulator
};
// Exit 0 with results; 2 when no point is feasible.
int run_sweep_command(const SweepCommandOptions& o);


// `trainplan calibrate run | fit | show` (cli/calibrate_cmd.cpp, docs/calibration.md).
struct CalibrateRunOptions {
  std::string suites = "all";  // gemm,attention,kernels,memory,collectives,power
  std::string scenario;        // layer shapes to measure ("" = generic grids only)
  std::string output;          // measurements JSON (written atomically)
  std::string gpu;             // catalog key to record ("" = guessed from the device name)
  bool quick = false;          // small grids, fewer repetitions
  bool no_flush = false;       // keep the L2 cache warm between timed runs
  double max_bytes = 0;        // largest collective size (0 = 1 GiB)
};
// 3 when this build has no CUDA or the machine no CUDA device.
int run_calibrate_run(const CalibrateRunOptions& o);
struct CalibrateFitOptions {
  std::string input;     // measurements JSON
  std::vector<std::string> more_inputs;  // further measurements files fitted together with `input`
  std::string output;    // profile YAML ("" = print it)
  std::string gpu;       // catalog GPU ("" = from the file)
  std::string scenario;  // cluster (link bandwidths) to fit the collective tiers against
  int holdout_every = 5;
};
int run_calibrate_fit(const CalibrateFitOptions& o);
struct CalibrateCheckOptions {
  std::string profile;   // profile YAML
  std::string input;     // measurements JSON
  std::string format = "table";
  std::string gpu;       // catalog GPU ("" = the profile's, else the file's)
  bool no_exact_shapes = false;
};
int run_calibrate_check(const CalibrateCheckOptions& o);
int run_calibrate_import_torch(const std::string& input, const std::string& output, const std::string& gpu_key);
int run_calibrate_show(const std::string& profile, const std::string& gpu);

}  // namespace tp
