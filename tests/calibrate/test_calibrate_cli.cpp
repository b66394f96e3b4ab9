// `trainplan calibrate run | fit | show` end to end (the binary), without a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hardware_profile.h"
#include "measurements.h"
#include "synthetic.h"
#include "test_support.h"

namespace tp {
namespace {

std::string temp_path(const std::string& name) { return (std::filesystem::temp_directory_path() / name).string(); }

// Runs `binary` with environment assignments in front ("VAR=value ...").
test::RunResult run_binary(const std::string& env, const std::string& binary, const std::string& args) {
  return test::run_shell("env " + env + " " + binary + " " + args);
}

test::RunResult run_with_env(const std::string& env, const std::string& args) { return run_binary(env, TRAINPLAN_BINARY, args); }

TEST(CalibrateCli, RunWithoutDeviceOrCudaFailsClearly) {
  const std::string out = temp_path("trainplan_cli_run.json");
  std::filesystem::remove(out);
  // CUDA_VISIBLE_DEVICES= hides every device, so this holds on a GPU machine too.
  const auto r = run_with_env("CUDA_VISIBLE_DEVICES=", "calibrate run --suite gemm --quick -o " + out);
  EXPECT_EQ(r.exit_code, 3) << r.output;
#ifdef TRAINPLAN_TEST_CUDA_BUILD
  EXPECT_NE(r.output.find("error: no CUDA device found"), std::string::npos) << r.output;
#else
  EXPECT_NE(r.output.find("error: this build has no CUDA support"), std::string::npos) << r.output;
#endif
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CalibrateCli, RunChecksItsInputsFirst) {
  const auto r = test::run_trainplan("calibrate run --suite gemm,atention -o /tmp/x.json");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("unknown suite 'atention'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did you mean 'attention'?"), std::string::npos) << r.output;
}

TEST(CalibrateCli, FitThenShow) {
  const std::string meas = temp_path("trainplan_cli_meas.json");
  const std::string prof = temp_path("trainplan_cli_profile.yaml");
  std::filesystem::remove(prof);
  write_measurements(test::synthetic_measurements(test::SyntheticTruth{}, 0.02), meas);
  const auto fit = test::run_trainplan("calibrate fit " + meas + " -o " + prof);
  ASSERT_EQ(fit.exit_code, 0) << fit.output;
  EXPECT_NE(fit.output.find("(h100-sxm-80gb)"), std::string::npos) << fit.output;
  EXPECT_NE(fit.output.find("gemm bf16"), std::string::npos) << fit.output;
  ASSERT_TRUE(std::filesystem::exists(prof));
  const HardwareProfile p = load_profile(prof, test::dgx_h100().gpu);
  EXPECT_NEAR(p.gemm_for(Precision::bf16).efficiency, 0.74, 0.03 * 0.74);
  EXPECT_NEAR(p.memory_efficiency, 0.91, 0.03 * 0.91);

  const auto show = test::run_trainplan("calibrate show " + prof);
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("hardware profile " + prof + " (gpu: h100-sxm-80gb)"), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("fit quality (held-out measurements)"), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("memory efficiency  0.9"), std::string::npos) << show.output;
  // The synthetic attention records name no kernel: the profile keeps Hopper's default, cuDNN.
  EXPECT_NE(show.output.find("fused attention kernel cudnn"), std::string::npos) << show.output;

  // The profile drives the planner: evaluate with --profile accepts it.
  const auto eval = test::run_trainplan("evaluate --profile " + prof);
  EXPECT_EQ(eval.exit_code, 0) << eval.output;
  std::filesystem::remove(meas);
  std::filesystem::remove(prof);
}

// The whitespace-separated fields of the first output line whose first field is `first`.
std::vector<std::string> table_row(const std::string& output, const std::string& first) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    if (!fields.empty() && fields[0] == first) return fields;
  }
  return {};
}

// Oracle: the constants written by hand in the profile below; show must print each class's fitted terms
// (eff, row_half in elements, latency in us) and "-" for a term the class does not have.
TEST(CalibrateCli, ShowPrintsTheKernelClassShapeTerms) {
  const std::string prof = temp_path("trainplan_cli_shape_profile.yaml");
  std::ofstream(prof) << "gpu: h100-sxm-80gb\n"
                         "kernel_efficiency:\n  rmsnorm_fwd: 0.61\n  gelu_fwd: 0.87\n"
                         "kernel_shape:\n"
                         "  rmsnorm_fwd: {latency: 0 us, row_half: 3517}\n"
                         "  gelu_fwd: {latency: 12.5 us, row_half: 0}\n"
                         "  adamw: {latency: 700 us, element_time: 2.25 ps}\n";
  const auto show = test::run_trainplan("calibrate show " + prof);
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("row_half [elements]"), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("latency [us]"), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("element_time [ps]"), std::string::npos) << show.output;
  EXPECT_EQ(table_row(show.output, "rmsnorm_fwd"), (std::vector<std::string>{"rmsnorm_fwd", "0.610", "3517", "-", "-"}))
      << show.output;
  EXPECT_EQ(table_row(show.output, "gelu_fwd"), (std::vector<std::string>{"gelu_fwd", "0.870", "-", "12.50", "-"})) << show.output;
  // AdamW's SM time per parameter (its efficiency: the file gave none, so the generic memory_efficiency).
  EXPECT_EQ(table_row(show.output, "adamw"), (std::vector<std::string>{"adamw", "0.850", "-", "700.00", "2.250"})) << show.output;
  // A class the profile has no constant for is not listed.
  EXPECT_TRUE(table_row(show.output, "residual_add").empty()) << show.output;
  std::filesystem::remove(prof);
}

TEST(CalibrateCli, FitErrorsNameFileAndField) {
  const std::string bad = temp_path("trainplan_cli_bad.json");
  {
    std::ofstream(bad) << R"({"schema": "trainplan-measurements/1", "device": {"name": "NVIDIA H100 80GB HBM3"},
      "measurements": [{"op": "gemm", "dtype": "bf16", "shape": {"m": 1, "n": true, "k": 1}, "time": {"median": 1}}]})";
  }
  const auto r = test::run_trainplan("calibrate fit " + bad + " -o /tmp/never.yaml");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error: " + bad + ":2:79: measurements[0].shape.n: expected an integer, got a boolean"), std::string::npos)
      << r.output;
  const auto missing = test::run_trainplan("calibrate fit /nonexistent-trainplan.json");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("cannot read /nonexistent-trainplan.json"), std::string::npos) << missing.output;
  std::filesystem::remove(bad);
}

TEST(CalibrateCli, FitNeedsToKnowTheGpu) {
  Measurements m = test::synthetic_measurements(test::SyntheticTruth{}, 0.0);
  m.device.name = "Mystery Accelerator";
  m.device.gpu_key = "";
  const std::string meas = temp_path("trainplan_cli_mystery.json");
  write_measurements(m, meas);
  const auto r = test::run_trainplan("calibrate fit " + meas);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("cannot tell which catalog GPU 'Mystery Accelerator' is; give --gpu KEY or --scenario FILE"),
            std::string::npos)
      << r.output;
  const auto ok = test::run_trainplan("calibrate fit " + meas + " --gpu h100");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("gpu: h100-sxm-80gb"), std::string::npos) << ok.output;  // printed profile
  std::filesystem::remove(meas);
}

#ifdef TRAINPLAN_TEST_CUDA_BUILD
// trainplan-calibrate-run, the executable `calibrate run` execs (also started directly under mpirun / srun).
TEST(CalibrateRunner, ChecksItsArgumentsBeforeAnyDeviceQuestion) {
  const auto bad_suite = run_binary("CUDA_VISIBLE_DEVICES=", TRAINPLAN_RUNNER, "--suite gemm,kernel -o /tmp/x.json");
  EXPECT_EQ(bad_suite.exit_code, 1) << bad_suite.output;
  EXPECT_NE(bad_suite.output.find("unknown suite 'kernel'"), std::string::npos) << bad_suite.output;
  EXPECT_NE(bad_suite.output.find("did you mean 'kernels'?"), std::string::npos) << bad_suite.output;
  const auto no_output = run_binary("CUDA_VISIBLE_DEVICES=", TRAINPLAN_RUNNER, "--suite gemm");
  EXPECT_EQ(no_output.exit_code, 1) << no_output.output;  // a usage error exits 1, not CLI11's 106
  EXPECT_NE(no_output.output.find("--output is required"), std::string::npos) << no_output.output;
  const auto bad_scenario = run_binary("CUDA_VISIBLE_DEVICES=", TRAINPLAN_RUNNER, "--scenario /nonexistent.yaml -o /tmp/x.json");
  EXPECT_EQ(bad_scenario.exit_code, 1) << bad_scenario.output;
  EXPECT_NE(bad_scenario.output.find("/nonexistent.yaml"), std::string::npos) << bad_scenario.output;
  const auto unknown_flag = run_binary("CUDA_VISIBLE_DEVICES=", TRAINPLAN_RUNNER, "--no-such-flag -o /tmp/x.json");
  EXPECT_EQ(unknown_flag.exit_code, 1) << unknown_flag.output;
  const auto help = run_binary("CUDA_VISIBLE_DEVICES=", TRAINPLAN_RUNNER, "--help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
}

// As one rank of an mpirun / srun launch (the launchers' environment variables), without a device: the
// clear error and exit 3, before MPI is initialised (so no hang waiting for the other ranks).
TEST(CalibrateRunner, RankWithoutDeviceFailsClearly) {
  const std::string out = temp_path("trainplan_runner_mpi.json");
  std::filesystem::remove(out);
  const auto r = run_binary("CUDA_VISIBLE_DEVICES= OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 PMI_SIZE=2 SLURM_NTASKS=2",
                            TRAINPLAN_RUNNER, "--suite collectives --quick -o " + out);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("error: no CUDA device found"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}
#endif

}  // namespace
}  // namespace tp
