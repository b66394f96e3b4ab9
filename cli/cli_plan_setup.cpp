// Command-line set-up of the planning subcommands: evaluate, simulate, catalog, sweep, validate, report.
// Each binds its options to storage owned by its run step (cli_setup.h).
#include <memory>
#include <string>

#include "cli_setup.h"
#include "commands.h"
#include "report_cmd.h"

namespace tp {

void add_evaluate_command(CLI::App& app, CliCommands& commands) {
  auto eval = std::make_shared<EvaluateOptions>();
  CLI::App* evaluate = app.add_subcommand("evaluate", "Per-GPU memory, FLOPs and verdict of one scenario");
  add_scenario_options(*evaluate, eval->scenario, eval->profile, eval->sets, "parallel.tp=4");
  add_format_option(*evaluate, eval->format);
  evaluate->add_flag("--simulate", eval->simulate, "Also simulate the step (event simulator) and show its step time");
  commands.push_back({evaluate, [eval] { return run_evaluate(*eval); }});
}

void add_simulate_command(CLI::App& app, CliCommands& commands) {
  auto sim = std::make_shared<SimulateOptions>();
  CLI::App* simulate = app.add_subcommand("simulate", "Simulate one training step: schedule, overlap, bubbles, timeline");
  add_scenario_options(*simulate, sim->scenario, sim->profile, sim->sets, "parallel.pp=8");
  simulate->add_option("--trace", sim->trace, "Write a Chrome trace JSON of the step (open in Perfetto)")
      ->check(non_empty_path());
  simulate->add_option("--steps", sim->steps, "Simulated steps (with --jitter: the step-time distribution)")
      ->check(CLI::Range(1, 1000000));
  simulate->add_option("--jitter", sim->jitter, "Spread of every task's duration, as a fraction (0.05 = 5%)")
      ->check(finite_range(0.0, 1.0));  // sigma of a log-normal: past 1 the draws lose meaning (a step below its lower bound)
  simulate->add_option("--seed", sim->seed, "Seed of the jitter draws")->check(whole_number_64());
  add_format_option(*simulate, sim->format);
  commands.push_back({simulate, [sim] { return run_simulate(*sim); }});
}

void add_catalog_command(CLI::App& app, CliCommands& commands) {
  struct CatalogOptions {
    std::string what;
    std::string format = "table";
  };
  auto opts = std::make_shared<CatalogOptions>();
  CLI::App* catalog = app.add_subcommand("catalog", "List the built-in GPUs, models and clusters");
  catalog->add_option("what", opts->what, "gpus, models or clusters (default: all)");
  add_format_option(*catalog, opts->format);
  commands.push_back({catalog, [opts] { return run_catalog(opts->what, opts->format); }});
}

void add_sweep_command(CLI::App& app, CliCommands& commands) {
  auto opts = std::make_shared<SweepCommandOptions>();
  CLI::App* sweep = app.add_subcommand("sweep", "Evaluate a grid of layouts; rank, Pareto fronts, rejections");
  sweep->add_option("input", opts->input, "Scenario YAML or sweep YAML (default: the built-in scenario)")
      ->check(non_empty_path());
  // --grid and --set take one value per flag, so that a scenario after them is the input (cli_setup.cpp).
  sweep->add_option("--grid", opts->grids, "key=v1,v2,... | key=lo..hi | key=lo..hi:pow2 | parallel=auto")
      ->allow_extra_args(false);
  sweep->add_option("--set", opts->sets, "Override a key of the base scenario (repeatable)")->allow_extra_args(false);
  sweep->add_option("--objective", opts->objective, "time | cost | energy | tokens_per_gpu | mfu");
  sweep->add_option("--top", opts->top, "How many of the best points to show (default 10)")
      ->check(CLI::Range(1, 1000000));
  CLI::Option* csv = sweep->add_option("--csv", opts->csv, "Write the kept points (or all with --csv-all) to a CSV file")
                         ->check(non_empty_path());
  sweep->add_flag("--csv-all", opts->csv_all, "With --csv: every evaluated point")->needs(csv);
  add_format_option(*sweep, opts->format);
  sweep->add_option("--threads", opts->threads, "Worker threads (default: all cores)")
      ->check(CLI::Range(1, max_threads()));
  sweep->add_option("--simulate-top", opts->simulate_top, "Re-score the best N layouts with the step simulator")
      ->check(CLI::Range(1, 1000));
  commands.push_back({sweep, [opts] { return run_sweep_command(*opts); }});
}

void add_validate_command(CLI::App& app, CliCommands& commands) {
  struct Options {
    std::string dir = TRAINPLAN_VALIDATION_DIR;
    std::string format = "table";
  };
  auto opts = std::make_shared<Options>();
  CLI::App* validate = app.add_subcommand("validate", "Predict the published runs and report the error per run");
  validate->add_option("--dir", opts->dir, "Folder with index.yaml and the validation scenarios")
      ->check(non_empty_path());
  add_format_option(*validate, opts->format);
  commands.push_back({validate, [opts] { return run_validate(opts->dir, opts->format); }});
}

void add_report_command(CLI::App& app, CliCommands& commands) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* report = app.add_subcommand("report", "Write one self-contained HTML page with the plan's charts");
  report->add_option("scenario", opts->scenario, "Scenario YAML (default: the sweep's best layout, else the built-in one)")
      ->check(non_empty_path());
  report->add_option("--sweep", opts->sweep, "Sweep YAML: adds the run time vs cost scatter and the feasibility map")
      ->check(non_empty_path());
  report->add_option("--grid", opts->grids, "Sweep the scenario: key=v1,v2,... (as trainplan sweep --grid)")
      ->allow_extra_args(false);
  report->add_option("--profile", opts->profile, "Hardware profile YAML")
      ->check(non_empty_path());
  report->add_option("--measurements", opts->measurements, "Measurements JSON: adds the calibration charts")
      ->check(non_empty_path());
  report->add_option("--set", opts->sets, "Override a key: --set parallel.tp=4 (repeatable)")->allow_extra_args(false);
  report->add_option("-o,--output", opts->output, "HTML file to write")->required()
      ->check(non_empty_path());
  commands.push_back({report, [opts] { return run_report(*opts); }});
}

}  // namespace tp
