// Command-line set-up of `trainplan calibrate run | fit | show | check | import-torch` (calibrate_cmd.cpp,
// calibrate_check_cmd.cpp, docs/calibration.md). Each binds its options to storage owned by its run step.
#include <memory>
#include <string>

#include "cli_setup.h"
#include "commands.h"

namespace tp {
namespace {

void add_calibrate_run(CLI::App& calibrate, CliCommands& commands) {
  auto opts = std::make_shared<CalibrateRunOptions>();
  CLI::App* cmd = calibrate.add_subcommand("run", "Run GEMM, attention, memory and NCCL kernels on this machine's GPUs");
  cmd->add_option("--suite", opts->suites, "gemm,attention,kernels,memory,collectives,power or all (default all)");
  cmd->add_option("--scenario", opts->scenario, "Also measure this scenario's layer shapes");
  cmd->add_option("-o,--output", opts->output, "Measurements JSON to write")->required();
  cmd->add_option("--gpu", opts->gpu, "Catalog GPU key to record (default: from the device name)");
  cmd->add_option("--max-bytes", opts->max_bytes, "Largest collective size in bytes (default 1 GiB)")
      ->check(finite_range(0.0, 1e13));
  cmd->add_flag("--quick", opts->quick, "Small grids and fewer repetitions (smoke test)");
  cmd->add_flag("--no-flush", opts->no_flush, "Do not flush the L2 cache between timed runs");
  commands.push_back({cmd, [opts] { return run_calibrate_run(*opts); }});
}

void add_calibrate_fit(CLI::App& calibrate, CliCommands& commands) {
  auto opts = std::make_shared<CalibrateFitOptions>();
  CLI::App* cmd = calibrate.add_subcommand("fit", "Fit a hardware profile to a measurements file");
  cmd->add_option("measurements", opts->input, "Measurements JSON from `calibrate run`")->required();
  cmd->add_option("more", opts->more_inputs, "Further measurements files fitted together (e.g. from `calibrate import-torch`)");
  cmd->add_option("-o,--output", opts->output, "Profile YAML to write (default: print it)");
  cmd->add_option("--gpu", opts->gpu, "Catalog GPU (default: the one recorded in the file)");
  cmd->add_option("--scenario", opts->scenario, "Scenario whose cluster gives the link bandwidths");
  cmd->add_option("--holdout", opts->holdout_every, "Hold out every k-th measurement for the fit quality (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  commands.push_back({cmd, [opts] { return run_calibrate_fit(*opts); }});
}

void add_calibrate_show(CLI::App& calibrate, CliCommands& commands) {
  struct ShowOptions {
    std::string profile, gpu;
  };
  auto opts = std::make_shared<ShowOptions>();
  CLI::App* cmd = calibrate.add_subcommand("show", "Print a hardware profile and its fit quality");
  cmd->add_option("profile", opts->profile, "Profile YAML")->required();
  cmd->add_option("--gpu", opts->gpu, "Catalog GPU (default: the profile's)");
  commands.push_back({cmd, [opts] { return run_calibrate_show(opts->profile, opts->gpu); }});
}

void add_calibrate_check(CLI::App& calibrate, CliCommands& commands) {
  auto opts = std::make_shared<CalibrateCheckOptions>();
  CLI::App* cmd = calibrate.add_subcommand("check", "Predict every measurement of a file with a profile; error per family");
  cmd->add_option("profile", opts->profile, "Profile YAML")->required();
  cmd->add_option("measurements", opts->input, "Measurements JSON")->required();
  add_format_option(*cmd, opts->format);
  cmd->add_option("--gpu", opts->gpu, "Catalog GPU (default: the profile's, else the file's)");
  cmd->add_flag("--no-exact-shapes", opts->no_exact_shapes, "Ignore the profile's measured GEMM shapes (judge the model alone)");
  commands.push_back({cmd, [opts] { return run_calibrate_check(*opts); }});
}

void add_calibrate_import_torch(CLI::App& calibrate, CliCommands& commands) {
  struct ImportOptions {
    std::string input, output, gpu = "h100-sxm-80gb";
  };
  auto opts = std::make_shared<ImportOptions>();
  CLI::App* cmd = calibrate.add_subcommand("import-torch", "Convert a PyTorch reference file (fused_ref.py, kernel_ref.py) to measurements");
  cmd->add_option("input", opts->input, "torch-attention-and-kernels.json or torch-same-shapes.json")->required();
  cmd->add_option("-o,--output", opts->output, "Measurements JSON to write")->required();
  cmd->add_option("--gpu", opts->gpu, "Catalog GPU the file was measured on (default: h100-sxm-80gb)");
  commands.push_back({cmd, [opts] { return run_calibrate_import_torch(opts->input, opts->output, opts->gpu); }});
}

}  // namespace

void add_calibrate_command(CLI::App& app, CliCommands& commands) {
  CLI::App* calibrate = app.add_subcommand("calibrate", "Measure GPU kernels and fit a hardware profile");
  calibrate->require_subcommand(1);
  add_calibrate_run(*calibrate, commands);
  add_calibrate_fit(*calibrate, commands);
  add_calibrate_show(*calibrate, commands);
  add_calibrate_check(*calibrate, commands);
  add_calibrate_import_torch(*calibrate, commands);
}

}  // namespace tp
