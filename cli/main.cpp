// trainplan: will this LLM training job fit, how fast, at what cost, and which layout is best.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.h"
#include "errors.h"

int main(int argc, char** argv) {
  CLI::App app{"trainplan: plan LLM training jobs before renting GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainplan 0.1.0");

  tp::EvaluateOptions eval;
  CLI::App* evaluate = app.add_subcommand("evaluate", "Per-GPU memory, FLOPs and verdict of one scenario");
  evaluate->add_option("scenario", eval.scenario, "Scenario YAML (default: the built-in scenario)");
  evaluate->add_option("--profile", eval.profile, "Hardware profile YAML");
  evaluate->add_option("--set", eval.sets, "Override a key: --set parallel.tp=4 (repeatable)");
  evaluate->add_option("--format", eval.format, "table or json")->check(CLI::IsMember({"table", "json"}));

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
  sweep->add_option("--top", sweep_opts.top, "How many of the best points to show (default 10)");
  sweep->add_option("--csv", sweep_opts.csv, "Write the kept points (or all with --csv-all) to a CSV file");
  sweep->add_flag("--csv-all", sweep_opts.csv_all, "With --csv: every evaluated point");
  sweep->add_option("--format", sweep_opts.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  sweep->add_option("--threads", sweep_opts.threads, "Worker threads (default: all cores)");

  std::string validation_dir = TRAINPLAN_VALIDATION_DIR;
  CLI::App* validate = app.add_subcommand("validate", "Predict the published runs and report the error per run");
  validate->add_option("--dir", validation_dir, "Folder with index.yaml and the validation scenarios");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    if (evaluate->parsed()) return tp::run_evaluate(eval);
    if (catalog->parsed()) return tp::run_catalog(catalog_what, catalog_format);
    if (validate->parsed()) return tp::run_validate(validation_dir);
    if (sweep->parsed()) return tp::run_sweep_command(sweep_opts);
  } catch (const tp::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const tp::IoError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 70;
  }
  return 0;
}
