// trainplan: will this LLM training job fit, how fast, at what cost, and which layout is best.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <string>
#include <thread>

#include "commands.h"
#include "errors.h"
#include "report_cmd.h"
#include "work_limits.h"

namespace {

// A number that is finite and in [lo, hi] (CLI::Range lets NaN through: every comparison with it is false).
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

// Worker threads: 1 ... 4 x the hardware threads (more only adds memory and switching).
int max_threads() { return 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainplan: plan LLM training jobs before renting GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainplan 0.1.0");
  app.fallthrough();  // the limits below may follow the subcommand too
  tp::WorkLimits& limits = tp::work_limits();
  std::uint64_t max_input_mib = limits.input_bytes >> 20;
  app.add_option("--max-input-mib", max_input_mib, "Largest input file read, in MiB (default 16)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--max-yaml-nodes", limits.yaml_nodes, "Most YAML nodes once aliases are expanded (default 1000000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_option("--max-tasks", limits.sim_tasks, "Most tasks in one simulated step (default 2000000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_option("--max-points", limits.sweep_points, "Most points in one sweep (default 50000000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 50));

  tp::EvaluateOptions eval;
  CLI::App* evaluate = app.add_subcommand("evaluate", "Per-GPU memory, FLOPs and verdict of one scenario");
  evaluate->add_option("scenario", eval.scenario, "Scenario YAML (default: the built-in scenario)");
  evaluate->add_option("--profile", eval.profile, "Hardware profile YAML");
  evaluate->add_option("--set", eval.sets, "Override a key: --set parallel.tp=4 (repeatable)");
  evaluate->add_option("--format", eval.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  evaluate->add_flag("--simulate", eval.simulate, "Also simulate the step (event simulator) and show its step time");

  tp::SimulateOptions sim;
  CLI::App* simulate = app.add_subcommand("simulate", "Simulate one training step: schedule, overlap, bubbles, timeline");
  simulate->add_option("scenario", sim.scenario, "Scenario YAML (default: the built-in scenario)");
  simulate->add_option("--profile", sim.profile, "Hardware profile YAML");
  simulate->add_option("--set", sim.sets, "Override a key: --set parallel.pp=8 (repeatable)");
  simulate->add_option("--trace", sim.trace, "Write a Chrome trace JSON of the step (open in Perfetto)");
  simulate->add_option("--steps", sim.steps, "Simulated steps (with --jitter: the step-time distribution)")
      ->check(CLI::Range(1, 1000000));
  simulate->add_option("--jitter", sim.jitter, "Spread of every task's duration, as a fraction (0.05 = 5%)")
      ->check(finite_range(0.0, 10.0));
  simulate->add_option("--seed", sim.seed, "Seed of the jitter draws");
  simulate->add_option("--format", sim.format, "table or json")->check(CLI::IsMember({"table", "json"}));

  std::string catalog_what;
  std::string catalog_format = "table";
  CLI::App* catalog = app.add_subcommand("catalog", "List the built-in GPUs, models and clusters");
  catalog->add_option("what", catalog_what, "gpus, models or clusters (default: all)");
  catalog->add_option("--format", catalog_format, "table or json")->check(CLI::IsMember({"table", "json"}));

  tp::SweepCommandOptions sweep_opts;
  CLI::App* sweep = app.add_subcommand("sweep", "Evaluate a grid of layouts; rank, Pareto fronts, rejections");
  sweep->add_option("input", sweep_opts.input, "Scenario YAML or sweep YAML (default: the built-in scenario)");
  sweep->add_option("--grid", sweep_opts.grids, "key=v1,v2,... | key=lo..hi | key=lo..hi:pow2 | parallel=auto");
  sweep->add_option("--set", sweep_opts.sets, "Override a key of the base scenario (repeatable)");
  sweep->add_option("--objective", sweep_opts.objective, "time | cost | energy | tokens_per_gpu | mfu");
  sweep->add_option("--top", sweep_opts.top, "How many of the best points to show (default 10)")
      ->check(CLI::Range(1, 1000000));
  CLI::Option* csv = sweep->add_option("--csv", sweep_opts.csv, "Write the kept points (or all with --csv-all) to a CSV file");
  sweep->add_flag("--csv-all", sweep_opts.csv_all, "With --csv: every evaluated point")->needs(csv);
  sweep->add_option("--format", sweep_opts.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  sweep->add_option("--threads", sweep_opts.threads, "Worker threads (default: all cores)")
      ->check(CLI::Range(1, max_threads()));
  sweep->add_option("--simulate-top", sweep_opts.simulate_top, "Re-score the best N layouts with the step simulator")
      ->check(CLI::Range(1, 1000));

  tp::CalibrateRunOptions cal_run;
  tp::CalibrateFitOptions cal_fit;
  std::string cal_show_profile, cal_show_gpu;
  CLI::App* calibrate = app.add_subcommand("calibrate", "Measure GPU kernels and fit a hardware profile");
  calibrate->require_subcommand(1);
  CLI::App* cal_run_cmd = calibrate->add_subcommand("run", "Run GEMM, attention, memory and NCCL kernels on this machine's GPUs");
  cal_run_cmd->add_option("--suite", cal_run.suites, "gemm,attention,kernels,memory,collectives,power or all (default all)");
  cal_run_cmd->add_option("--scenario", cal_run.scenario, "Also measure this scenario's layer shapes");
  cal_run_cmd->add_option("-o,--output", cal_run.output, "Measurements JSON to write")->required();
  cal_run_cmd->add_option("--gpu", cal_run.gpu, "Catalog GPU key to record (default: from the device name)");
  cal_run_cmd->add_option("--max-bytes", cal_run.max_bytes, "Largest collective size in bytes (default 1 GiB)")
      ->check(finite_range(0.0, 1e13));
  cal_run_cmd->add_flag("--quick", cal_run.quick, "Small grids and fewer repetitions (smoke test)");
  cal_run_cmd->add_flag("--no-flush", cal_run.no_flush, "Do not flush the L2 cache between timed runs");
  CLI::App* cal_fit_cmd = calibrate->add_subcommand("fit", "Fit a hardware profile to a measurements file");
  cal_fit_cmd->add_option("measurements", cal_fit.input, "Measurements JSON from `calibrate run`")->required();
  cal_fit_cmd->add_option("more", cal_fit.more_inputs, "Further measurements files fitted together (e.g. from `calibrate import-torch`)");
  cal_fit_cmd->add_option("-o,--output", cal_fit.output, "Profile YAML to write (default: print it)");
  cal_fit_cmd->add_option("--gpu", cal_fit.gpu, "Catalog GPU (default: the one recorded in the file)");
  cal_fit_cmd->add_option("--scenario", cal_fit.scenario, "Scenario whose cluster gives the link bandwidths");
  cal_fit_cmd->add_option("--holdout", cal_fit.holdout_every, "Hold out every k-th measurement for the fit quality (0: none)")
      ->check(CLI::Range(0, 1000000));
  CLI::App* cal_show_cmd = calibrate->add_subcommand("show", "Print a hardware profile and its fit quality");
  cal_show_cmd->add_option("profile", cal_show_profile, "Profile YAML")->required();
  cal_show_cmd->add_option("--gpu", cal_show_gpu, "Catalog GPU (default: the profile's)");
  tp::CalibrateCheckOptions cal_check;
  CLI::App* cal_check_cmd = calibrate->add_subcommand("check", "Predict every measurement of a file with a profile; error per family");
  cal_check_cmd->add_option("profile", cal_check.profile, "Profile YAML")->required();
  cal_check_cmd->add_option("measurements", cal_check.input, "Measurements JSON")->required();
  cal_check_cmd->add_option("--format", cal_check.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cal_check_cmd->add_option("--gpu", cal_check.gpu, "Catalog GPU (default: the profile's, else the file's)");
  cal_check_cmd->add_flag("--no-exact-shapes", cal_check.no_exact_shapes, "Ignore the profile's measured GEMM shapes (judge the model alone)");
  std::string cal_import_in, cal_import_out, cal_import_gpu = "h100-sxm-80gb";
  CLI::App* cal_import_cmd = calibrate->add_subcommand("import-torch", "Convert a PyTorch reference file (fused_ref.py, kernel_ref.py) to measurements");
  cal_import_cmd->add_option("input", cal_import_in, "torch-attention-and-kernels.json or torch-same-shapes.json")->required();
  cal_import_cmd->add_option("-o,--output", cal_import_out, "Measurements JSON to write")->required();
  cal_import_cmd->add_option("--gpu", cal_import_gpu, "Catalog GPU the file was measured on (default: h100-sxm-80gb)");

  std::string validation_dir = TRAINPLAN_VALIDATION_DIR;
  CLI::App* validate = app.add_subcommand("validate", "Predict the published runs and report the error per run");
  validate->add_option("--dir", validation_dir, "Folder with index.yaml and the validation scenarios");

  tp::ReportOptions report_opts;
  CLI::App* report = app.add_subcommand("report", "Write one self-contained HTML page with the plan's charts");
  report->add_option("scenario", report_opts.scenario, "Scenario YAML (default: the sweep's best layout, else the built-in one)");
  report->add_option("--sweep", report_opts.sweep, "Sweep YAML: adds the run time vs cost scatter and the feasibility map");
  report->add_option("--grid", report_opts.grids, "Sweep the scenario: key=v1,v2,... (as trainplan sweep --grid)");
  report->add_option("--profile", report_opts.profile, "Hardware profile YAML");
  report->add_option("--measurements", report_opts.measurements, "Measurements JSON: adds the calibration charts");
  report->add_option("--set", report_opts.sets, "Override a key: --set parallel.tp=4 (repeatable)");
  report->add_option("-o,--output", report_opts.output, "HTML file to write")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error exits 1 (CLI11's own codes are 105-114).
    return app.exit(e) == 0 ? 0 : 1;
  }

  limits.input_bytes = max_input_mib << 20;

  return tp::run_with_exit_codes([&] {
    if (evaluate->parsed()) return tp::run_evaluate(eval);
    if (catalog->parsed()) return tp::run_catalog(catalog_what, catalog_format);
    if (simulate->parsed()) return tp::run_simulate(sim);
    if (validate->parsed()) return tp::run_validate(validation_dir);
    if (cal_run_cmd->parsed()) return tp::run_calibrate_run(cal_run);
    if (cal_fit_cmd->parsed()) return tp::run_calibrate_fit(cal_fit);
    if (cal_show_cmd->parsed()) return tp::run_calibrate_show(cal_show_profile, cal_show_gpu);
    if (cal_check_cmd->parsed()) return tp::run_calibrate_check(cal_check);
    if (cal_import_cmd->parsed()) return tp::run_calibrate_import_torch(cal_import_in, cal_import_out, cal_import_gpu);
    if (sweep->parsed()) return tp::run_sweep_command(sweep_opts);
    if (report->parsed()) return tp::run_report(report_opts);
    return 0;
  });
}
