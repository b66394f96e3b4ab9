// trainplan-calibrate-run: the executable that holds every CUDA kernel of `trainplan calibrate run`.
// `trainplan calibrate run ARGS` checks its inputs and execs this program (found next to it) with the
// same options, so that `trainplan` itself links no CUDA library (docs/calibration.md, "The runner").
// It can also be started directly, e.g. one rank per GPU under mpirun / srun.
// Exit codes: 0 done, 1 bad input, 3 no CUDA device, 70 internal error.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "catalog.h"
#include "cuda_runner.h"
#include "errors.h"
#include "scenario.h"
#include "suite_plan.h"

namespace tp {
namespace {

struct RunnerOptions {
  std::string suites = "all";
  std::string scenario;
  std::string output;
  std::string gpu;
  bool quick = false;
  bool no_flush = false;
  double max_bytes = 0;
};

std::string trim_label(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

// Progress on stderr, redrawn in place, only when stderr is a terminal.
class ProgressBar {
 public:
  ProgressBar() : enabled_(isatty(STDERR_FILENO) == 1) {}
  void update(size_t done, size_t total, const std::string& what) {
    if (!enabled_ || total == 0) return;
    const int width = 30;
    const int filled = static_cast<int>(static_cast<double>(width) * static_cast<double>(done) / static_cast<double>(total));
    std::string bar(static_cast<size_t>(filled), '=');
    bar.resize(static_cast<size_t>(width), ' ');
    std::fprintf(stderr, "\r[%s] %zu/%zu %-60s", bar.c_str(), done, total, trim_label(what, 60).c_str());
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_) std::fprintf(stderr, "\n");
  }

 private:
  bool enabled_;
};

CudaRunOptions run_options(const RunnerOptions& o, const std::vector<Suite>& suites, const Scenario* scenario) {
  CudaRunOptions ro;
  for (Suite s : suites) ro.suites.emplace_back(to_string(s));
  ro.scenario = o.scenario;
  ro.gpu_key = scenario != nullptr ? scenario->cluster.gpu.key : o.gpu;
  ro.l2_flush = !o.no_flush;
  if (o.quick) {
    ro.policy.max_reps = 20;
    ro.policy.max_seconds = 0.5;
  }
  return ro;
}

// Writes the measurements file (rank 0) and says what was measured and what was skipped, and why.
void write_and_summarize(const Measurements& m, const std::string& output) {
  write_measurements(m, output);
  std::cout << "measured " << m.items.size() << " cases on " << m.device.name << " (" << m.skipped.size()
            << " skipped) -> " << output << "\n";
  for (const auto& s : m.skipped) std::cout << "  skipped " << to_string(s.op) << " " << s.shape << ": " << s.reason << "\n";
}

int run(const RunnerOptions& o) {
  // Inputs first, so that their errors come before any device question.
  const std::vector<Suite> suites = parse_suites(o.suites);
  Scenario scenario;
  const bool has_scenario = !o.scenario.empty();
  if (has_scenario) scenario = load_scenario_file(o.scenario);
  if (o.output.empty()) throw InputError({"command line", 0, 0}, "-o", "an output file is required");
  check_output_target(o.output, "the measurements file");
  if (!o.gpu.empty()) (void)Catalog::builtin().gpu(o.gpu, {"--gpu", 0, 0}, "--gpu");
  if (!(o.max_bytes >= 0)) throw InputError({"command line", 0, 0}, "--max-bytes", "must be a number of bytes >= 0");
  const DeviceProbe probe = probe_cuda_devices();
  if (probe.count == 0) {
    std::cerr << "error: no CUDA device found" << (probe.error.empty() ? "" : " (" + probe.error + ")")
              << ": `calibrate run` measures the GPUs of the machine it runs on\n";
    return 3;
  }
  const RankInfo ranks = init_ranks();
  SuiteOptions so;
  so.suites = suites;
  so.quick = o.quick;
  if (o.max_bytes > 0) so.collective_max_bytes = o.max_bytes;
  const std::vector<Measurement> plan = plan_suite(so, has_scenario ? &scenario : nullptr);
  CudaRunOptions ro = run_options(o, suites, has_scenario ? &scenario : nullptr);
  ProgressBar bar;
  const bool show = ranks.rank == 0;
  ro.progress = [&](size_t done, size_t total, const Measurement& next) {
    if (show) bar.update(done, total, std::string(to_string(next.op)) + " " + shape_text(next));
  };
  const Measurements m = run_calibration(plan, ro, ranks);
  if (show) bar.finish();
  if (ranks.rank == 0) write_and_summarize(m, o.output);
  finalize_ranks();
  return 0;
}

}  // namespace
}  // namespace tp

int main(int argc, char** argv) {
  tp::RunnerOptions o;
  CLI::App app{"trainplan-calibrate-run: the CUDA kernels of `trainplan calibrate run`"};
  app.add_option("--suite", o.suites, "gemm,attention,kernels,memory,collectives,power or all (default all)");
  app.add_option("--scenario", o.scenario, "Also measure this scenario's layer shapes");
  app.add_option("-o,--output", o.output, "Measurements JSON to write")->required();
  app.add_option("--gpu", o.gpu, "Catalog GPU key to record (default: from the device name)");
  app.add_option("--max-bytes", o.max_bytes, "Largest collective size in bytes (default 1 GiB)");
  app.add_flag("--quick", o.quick, "Small grids and fewer repetitions (smoke test)");
  app.add_flag("--no-flush", o.no_flush, "Do not flush the L2 cache between timed runs");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help exits 0; every usage error exits 1, as trainplan does (CLI11's own codes are 105-114).
    return app.exit(e) == 0 ? 0 : 1;
  }
  return tp::run_with_exit_codes([&] { return tp::run(o); });
}
