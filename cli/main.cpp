// trainplan: will this LLM training job fit, how fast, at what cost, and which layout is best.
// The subcommands register themselves (cli_setup.h); main parses and runs the one given.
#include <CLI/CLI.hpp>

#include "cli_setup.h"
#include "errors.h"

int main(int argc, char** argv) {
  CLI::App app{"trainplan: plan LLM training jobs before renting GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainplan 0.1.0");
  app.fallthrough();  // the work limits (--max-*) may follow the subcommand too
  const auto apply_work_limits = tp::add_work_limit_options(app);

  tp::CliCommands commands;  // in the order --help lists them
  tp::add_evaluate_command(app, commands);
  tp::add_simulate_command(app, commands);
  tp::add_catalog_command(app, commands);
  tp::add_sweep_command(app, commands);
  tp::add_calibrate_command(app, commands);
  tp::add_validate_command(app, commands);
  tp::add_report_command(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error exits 1 (CLI11's own codes are 105-114).
    return app.exit(e) == 0 ? 0 : 1;
  }

  apply_work_limits();

  return tp::run_with_exit_codes([&] {
    for (const tp::CliCommand& command : commands) {
      if (command.app->parsed()) return command.run();
    }
    return 0;
  });
}
