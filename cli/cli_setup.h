// Command-line set-up of trainplan (CLI11): one registration function per subcommand, each binding its
// options and returning how to run it once parsed. main.cpp calls them in help order and dispatches.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace tp {

// A registered subcommand: the CLI11 node (parsed() tells whether it was given) and the code it drives.
struct CliCommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
using CliCommands = std::vector<CliCommand>;

// A number that is finite and in [lo, hi] (CLI::Range lets NaN through: every comparison with it is false).
CLI::Validator finite_range(double lo, double hi);
// A file path that is not empty: `evaluate ""` (an unset shell variable) would otherwise mean "no file given"
// and plan the built-in scenario, and `--trace ""` would write nothing and say nothing.
CLI::Validator non_empty_path();
// An unsigned 64-bit integer written as digits only: "-1" and "99999999999999999999" would otherwise both
// become 18446744073709551615 (a seed giving the same draws for two different words).
CLI::Validator whole_number_64();
// Worker threads: 1 ... 4 x the hardware threads (more only adds memory and switching).
int max_threads();

// The scenario inputs of evaluate and simulate: the optional scenario positional (the built-in scenario when
// absent), --profile and the repeatable --set, whose help shows `set_example` (key=value).
void add_scenario_options(CLI::App& cmd, std::string& scenario, std::string& profile, std::vector<std::string>& sets,
                          const std::string& set_example);
// --format: table or json.
void add_format_option(CLI::App& cmd, std::string& format);

// The global limits (--max-input-mib ... --max-points); returns the step that applies them after parsing.
std::function<void()> add_work_limit_options(CLI::App& app);

// cli_plan_setup.cpp: the planning subcommands.
void add_evaluate_command(CLI::App& app, CliCommands& commands);
void add_simulate_command(CLI::App& app, CliCommands& commands);
void add_catalog_command(CLI::App& app, CliCommands& commands);
void add_sweep_command(CLI::App& app, CliCommands& commands);
void add_validate_command(CLI::App& app, CliCommands& commands);
void add_report_command(CLI::App& app, CliCommands& commands);
// cli_calibrate_setup.cpp: `calibrate run | fit | show | check | import-torch`.
void add_calibrate_command(CLI::App& app, CliCommands& commands);

}  // namespace tp
