// trainplan: will this LLM training job fit, how fast, at what cost, and which layout is best.
// The subcommands register themselves (cli_setup.h); main parses and runs the one given.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

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
  } catch (const CLI::RequiredError& e) {
    // A word that is no command ("trainplan frobnicate") said only "A subcommand is required": name it and
    // the commands (a CLI audit, 2026-12-01).
    for (int i = 1; i < argc; ++i) {
      const std::string word = argv[i];
      if (word.empty() || word[0] == '-') {
        // The work limits take a value (--max-points 5): it is no command.
        if (word.rfind("--max-", 0) == 0 && word.find('=') == std::string::npos) ++i;
        continue;
      }
      std::string names;
      for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
      std::fprintf(stderr, "error: unknown command '%s'; the commands: %s (trainplan --help)\n", word.c_str(), names.c_str());
      return 1;
    }
    return app.exit(e) == 0 ? 0 : 1;
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
