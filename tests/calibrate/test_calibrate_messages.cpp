// `calibrate fit` / `calibrate show` messages (issue 11, "Messages and exits"): the culprit of an unknown
// GPU key is the file's field, dropped single-rank collectives and unmeasured families get a note, and a
// directory is an error. Oracles: the measurements written by each test (synthetic.h) and the fields
// they set.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "fitter.h"
#include "measurements.h"
#include "synthetic.h"
#include "test_support.h"

namespace tp {
namespace {

std::string temp_path(const std::string& name) { return (std::filesystem::temp_directory_path() / name).string(); }

bool has_note(const FitResult& r, const std::string& text) {
  for (const auto& n : r.report.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

// Before: "error: --gpu: gpu: unknown gpu 'b300'" although no --gpu was given.
TEST(CalibrateMessages, UnknownGpuKeyInTheFileBlamesTheFileField) {
  Measurements m = test::synthetic_measurements(test::SyntheticTruth{}, 0.0);
  m.device.gpu_key = "no-such-gpu";
  const std::string meas = temp_path("trainplan_msg_unknown_key.json");
  write_measurements(m, meas);
  const auto r = test::run_trainplan("calibrate fit " + meas);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(meas + ": device.gpu_key"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("--gpu:"), std::string::npos) << r.output;
  // The same key given with --gpu is blamed on --gpu.
  const auto flag = test::run_trainplan("calibrate fit " + meas + " --gpu no-such-gpu");
  EXPECT_EQ(flag.exit_code, 1) << flag.output;
  EXPECT_NE(flag.output.find("--gpu"), std::string::npos) << flag.output;
  std::filesystem::remove(meas);
}

// A measurements file with no measurement was fitted, exit 0, into a profile of the defaults (a CLI audit,
// 2026-12-01): an error naming the file, nothing written.
TEST(CalibrateMessages, NoMeasurementsIsNothingToFit) {
  Measurements m = test::synthetic_measurements(test::SyntheticTruth{}, 0.0);
  m.items.clear();
  const std::string meas = temp_path("trainplan_msg_empty.json");
  const std::string out = temp_path("trainplan_msg_empty_profile.yaml");
  std::filesystem::remove(out);
  write_measurements(m, meas);
  const auto r = test::run_trainplan("calibrate fit " + meas + " -o " + out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(meas + ": measurements: no measurements to fit"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove(meas);
}

// Three collectives measured on one rank: the fit drops them and says how many.
TEST(CalibrateMessages, SingleRankCollectivesAreDroppedWithANote) {
  Measurements m = test::synthetic_measurements(test::SyntheticTruth{}, 0.0);
  int single = 0;
  for (auto& it : m.items) {
    if (is_collective(it.op) && single < 3) {
      it.ranks = 1;
      ++single;
    }
  }
  ASSERT_EQ(single, 3);
  FitOptions o;
  o.cluster.gpu = Catalog::builtin().gpu(m.device.gpu_key, {}, "gpu");
  const FitResult r = fit_profile(m, o);
  EXPECT_TRUE(has_note(r, "collectives: 3 measurement(s) with ranks: 1 dropped")) << r.report.notes.size();
}

// A file with only GEMM measurements: every other family is named as not measured.
TEST(CalibrateMessages, UnmeasuredFamiliesAreNamed) {
  Measurements m = test::synthetic_measurements(test::SyntheticTruth{}, 0.0);
  std::vector<Measurement> gemm_only;
  for (const auto& it : m.items) {
    if (it.op == MeasuredOp::gemm) gemm_only.push_back(it);
  }
  ASSERT_FALSE(gemm_only.empty());
  m.items = gemm_only;
  FitOptions o;
  o.cluster.gpu = Catalog::builtin().gpu(m.device.gpu_key, {}, "gpu");
  const FitResult r = fit_profile(m, o);
  // Each family on its own: fused and unfused attention, the memory sweeps and the kernel classes (a file with
  // one of them said nothing of the other: calibrate-llama3.1-8b-shapes.json, with no fused attention).
  EXPECT_TRUE(has_note(r, "attention fused: not measured"));
  EXPECT_TRUE(has_note(r, "attention unfused: not measured"));
  EXPECT_TRUE(has_note(r, "memory: not measured"));
  EXPECT_TRUE(has_note(r, "kernel classes (memory_kernel): not measured"));
  EXPECT_TRUE(has_note(r, "collectives (multi-rank): not measured"));
  EXPECT_TRUE(has_note(r, "power: not measured"));
  // Measured: the synthetic full suite names none of them.
  const FitResult full = fit_profile(test::synthetic_measurements(test::SyntheticTruth{}, 0.0), o);
  EXPECT_FALSE(has_note(full, "attention fused: not measured"));
  EXPECT_FALSE(has_note(full, "memory: not measured"));
}

// Before: `calibrate show DIR` exited 0 and printed the defaults.
TEST(CalibrateMessages, ShowOfADirectoryIsAnError) {
  const std::string dir = temp_path("trainplan_msg_profile_dir");
  std::filesystem::create_directories(dir);
  const auto r = test::run_trainplan("calibrate show " + dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(dir + ": is a directory"), std::string::npos) << r.output;
  std::filesystem::remove(dir);
}

// GEMM times a hundred thousand times too long (a unit slip) fitted an efficiency near 1e-5, written with exit 0
// and refused later by `calibrate show` and `evaluate`; the fit now loads its own profile and refuses it,
// writing nothing. A denormal time crashed the fit (SIGSEGV); the reader now refuses it. Found by
// black-box testing, 2026-11-30.
TEST(CalibrateMessages, AFitThePlannerCannotLoadIsRefusedAndNotWritten) {
  Measurements m = test::synthetic_measurements(test::SyntheticTruth{}, 0.0);
  for (auto& it : m.items) {
    if (it.op == MeasuredOp::gemm) it.time.median = std::min(3600.0, it.time.median * 1e5);
  }
  const std::string meas = temp_path("trainplan_msg_slow_gemm.json");
  const std::string out = temp_path("trainplan_msg_slow_gemm.yaml");
  write_measurements(m, meas);
  std::filesystem::remove(out);
  const auto r = test::run_trainplan("calibrate fit " + meas + " -o " + out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("outside the planner's ranges"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  // Measurements faster than the GPU they are fitted for: the GPU is named among the suspects (H100 timings
  // under an A100's device.gpu_key named only the fitted profile's field; a re-audit, 2026-12-01).
  const std::string h100 = test::source_path("tests/data/h100-sxm/calibrate-quick.json");
  const auto as_a100 = test::run_trainplan("calibrate fit '" + h100 + "' --gpu a100-sxm4-80gb -o " + out);
  EXPECT_EQ(as_a100.exit_code, 1) << as_a100.output;
  EXPECT_NE(as_a100.output.find("that it is the a100-sxm4-80gb they are fitted for"), std::string::npos) << as_a100.output;
  m.items.front().time.median = 1e-320;
  write_measurements(m, meas);
  const auto denormal = test::run_trainplan("calibrate fit " + meas);
  EXPECT_EQ(denormal.exit_code, 1) << denormal.output;
  EXPECT_NE(denormal.output.find("time.median: a kernel time of"), std::string::npos) << denormal.output;
  std::filesystem::remove(meas);
}

// "error: --gpu: --gpu: unknown gpu": the place and the field were the same word.
TEST(CalibrateMessages, AnUnknownGpuFlagIsNamedOnce) {
  Measurements m = test::synthetic_measurements(test::SyntheticTruth{}, 0.0);
  const std::string meas = temp_path("trainplan_msg_gpu_once.json");
  write_measurements(m, meas);
  const auto r = test::run_trainplan("calibrate fit " + meas + " --gpu no-such-gpu");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("--gpu: --gpu:"), std::string::npos) << r.output;
  std::filesystem::remove(meas);
}

// Files of two GPUs were fitted together into one profile without a word (an H200's and an H100's).
// Oracle: the devices written in the test; a torch import of the same GPU (the catalog's name, no memory)
// still fits with a calibration run (the driver's name).
TEST(CalibrateMessages, MeasurementsOfTwoGpusAreNotFittedTogether) {
  Measurements h100 = test::synthetic_measurements(test::SyntheticTruth{}, 0.0);
  h100.device.name = "NVIDIA H100 80GB HBM3";
  h100.device.memory_bytes = 85017493504.0;
  Measurements h200 = h100;
  h200.device.name = "NVIDIA H200";
  h200.device.memory_bytes = 150e9;
  Measurements imported = h100;
  imported.device.name = "NVIDIA H100 SXM5 80GB";
  imported.device.memory_bytes = 0;
  const std::string a = temp_path("trainplan_msg_h100.json");
  const std::string b = temp_path("trainplan_msg_h200.json");
  const std::string c = temp_path("trainplan_msg_h100_import.json");
  write_measurements(h100, a);
  write_measurements(h200, b);
  write_measurements(imported, c);
  const auto mixed = test::run_trainplan("calibrate fit " + a + " " + b);
  EXPECT_EQ(mixed.exit_code, 1) << mixed.output;
  EXPECT_NE(mixed.output.find(b + ": device.name: measured on 'NVIDIA H200'"), std::string::npos) << mixed.output;
  const auto same = test::run_trainplan("calibrate fit " + a + " " + c + " > /dev/null");
  EXPECT_EQ(same.exit_code, 0) << same.output;
  for (const auto& f : {a, b, c}) std::filesystem::remove(f);
}

// `calibrate import-torch` wrote, with exit 0, files its own fit then refused (a time of 1e308 s) or values it
// had changed (m: 1.5 written as 1). Oracle: the values each case writes; the reader's ranges.
TEST(CalibrateMessages, ImportTorchRefusesWhatTheFitWouldRefuse) {
  struct Case {
    const char* name;
    std::string json, message;
  };
  const std::string row = R"({"op": "gemm", "label": "x", "dtype": "bf16", "n": 4096, "k": 4096, "flops": 1e11, )";
  const std::string attention = R"({"attention": [{"backend": "flash", "batch": 16, "heads": 32, "kv_heads": 32, "seq": 1024, )";
  const Case cases[] = {
      // At the field's line and column (2026-12-01; column 116 by hand: the prefix is 115 characters).
      {"fraction", R"({"torch": "2.11", "rows": [)" + row + R"("m": 1.5, "torch_s": 1e-4}]})",
       ":1:116: rows[0].m: expected a whole number up to 2^53"},
      {"twice", R"({"torch": "2.11", "torch": "2.12", "rows": []})", ":1:19: torch: given twice in one object"},
      {"eternal", attention + R"("head_dim": 64, "causal": true, "forward_s": 1e308, "backward_s": 1e-3}]})",
       "measurements[0].time.median: a kernel time of 1e+308 s is outside [1 ns, 1 h]"},
      // At the input's field (it named the imported file's measurements[0].shape.kv_heads; 2026-12-01).
      {"kv_heads", R"({"attention": [{"backend": "flash", "batch": 16, "heads": 3, "kv_heads": 2, "seq": 1024, )"
                   R"("head_dim": 64, "causal": true, "forward_s": 1e-3, "backward_s": 1e-3}]})",
       "attention[0].kv_heads: must divide heads (3)"},
  };
  for (const Case& c : cases) {
    const std::string in = temp_path(std::string("trainplan_import_") + c.name + ".json");
    const std::string out = temp_path(std::string("trainplan_import_") + c.name + ".out.json");
    std::ofstream(in) << c.json;
    std::filesystem::remove(out);
    const auto r = test::run_trainplan("calibrate import-torch " + in + " -o " + out);
    EXPECT_EQ(r.exit_code, 1) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.name << ": " << r.output;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.name;
    std::filesystem::remove(in);
  }
}

// A CLI audit (2026-12-01): `calibrate show` on a measurement file said "clocks: unknown key; did you mean
// 'clock'?", and a profile checked against another GPU (--gpu) failed on its measured shapes' peak, not on
// the GPU. Both name the real mistake now.
TEST(CalibrateMessages, AMeasurementFileOrAnotherGpuIsNamedAsSuch) {
  const std::string measurements = test::source_path("tests/data/h100-sxm/calibrate-quick.json");
  const auto shown = test::run_trainplan("calibrate show '" + measurements + "'");
  EXPECT_EQ(shown.exit_code, 1) << shown.output;
  EXPECT_NE(shown.output.find("is a measurement file of `trainplan calibrate run`, not a hardware profile"), std::string::npos)
      << shown.output;
  const std::string profile = test::source_path("scenarios/profiles/h100-sxm.yaml");
  for (const std::string& command : {"calibrate show '" + profile + "' --gpu a100",
                                     "calibrate check '" + profile + "' '" + measurements + "' --gpu a100"}) {
    const auto r = test::run_trainplan(command);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("gpu: the profile describes 'h100-sxm-80gb'"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("faster than the GPU's"), std::string::npos) << r.output;
  }
  // A re-audit (2026-12-01): a profile that is a bare scalar ended in an internal error (exit 70), and an
  // unknown --gpu was blamed on the profile's gpu: line.
  const std::string scalar = temp_path("trainplan_msg_scalar_profile.yaml");
  std::ofstream(scalar) << "hello\n";
  for (const std::string& command : {"calibrate show '" + scalar + "'", "calibrate check '" + scalar + "' '" + measurements + "'"}) {
    const auto r = test::run_trainplan(command);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("(document): expected a mapping of keys to values"), std::string::npos) << r.output;
  }
  // PyTorch's reference timings given to fit: the import step is named.
  const auto torch = test::run_trainplan("calibrate fit '" + test::source_path("tests/data/h100-sxm/torch-same-shapes.json") + "'");
  EXPECT_EQ(torch.exit_code, 1) << torch.output;
  EXPECT_NE(torch.output.find("`trainplan calibrate import-torch FILE -o OUT.json` first"), std::string::npos) << torch.output;
  // The files swapped, and another GPU's measurements checked or fitted as asked: said.
  const auto swapped = test::run_trainplan("calibrate check '" + measurements + "' '" + profile + "'");
  EXPECT_EQ(swapped.exit_code, 1) << swapped.output;
  EXPECT_NE(swapped.output.find("takes the PROFILE (YAML) first, then the MEASUREMENTS (JSON)"), std::string::npos)
      << swapped.output;
  const std::string h200 = test::source_path("scenarios/profiles/h200.yaml");
  const auto other = test::run_trainplan("calibrate check '" + h200 + "' '" + measurements + "'");
  EXPECT_NE(other.output.find("warning: " + measurements + ": measured on h100-sxm-80gb, checked against the profile of h200"),
            std::string::npos) << other.output;
  const auto refit = test::run_trainplan("calibrate fit '" + measurements + "' --gpu h200 -o '" + temp_path("trainplan_msg_h200.yaml") + "'");
  EXPECT_NE(refit.output.find("fitted as --gpu h200-sxm-141gb (151 GB) as asked"), std::string::npos) << refit.output;
  // Likewise a --scenario on another GPU (it fitted H100 timings as an RTX 3090 without a word; a re-audit).
  const std::string rtx = test::source_path("scenarios/examples/gpt2-124m-2x3090.yaml");
  const auto as_scenario = test::run_trainplan("calibrate fit '" + measurements + "' --scenario '" + rtx + "' -o '" +
                                               temp_path("trainplan_msg_3090.yaml") + "'");
  EXPECT_NE(as_scenario.output.find("fitted as " + rtx + "'s GPU rtx3090-24gb"), std::string::npos) << as_scenario.output;
  const auto unknown = test::run_trainplan("calibrate show '" + profile + "' --gpu nope");
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_NE(unknown.output.find("error: --gpu: gpu: unknown gpu 'nope'"), std::string::npos) << unknown.output;
}

// A GEMM shape beyond the profile's range (2^62) was reported at the fitted profile's field
// (gemm_measured[10].m, "check their times"): it is the measurement's own field now (a CLI audit, 2026-12-01).
TEST(CalibrateMessages, AShapeOutOfRangeIsTheMeasurementsField) {
  Measurements m = test::synthetic_measurements(test::SyntheticTruth{}, 0.0);
  std::size_t at = m.items.size();
  for (std::size_t i = 0; i < m.items.size() && at == m.items.size(); ++i) {
    if (m.items[i].op == MeasuredOp::gemm) at = i;
  }
  ASSERT_LT(at, m.items.size());
  m.items[at].gemm.m = std::int64_t(1) << 62;
  const std::string meas = temp_path("trainplan_msg_huge_shape.json");
  write_measurements(m, meas);
  const auto r = test::run_trainplan("calibrate fit " + meas);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("measurements[" + std::to_string(at) + "].shape.m: must be at most 1099511627776"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("gemm_measured"), std::string::npos) << r.output;
}

// A power phase NVML gave no sample of records 0 W; fitted from, it made a profile of idle: 0 W and
// busy_fraction 0.01 (a CLI audit, 2026-12-01). Such phases are left out with a note: the power stays the
// generation's (the same fit without power records).
TEST(CalibrateMessages, AnUnsampledPowerPhaseIsNotFittedFrom) {
  Measurements m = test::synthetic_measurements(test::SyntheticTruth{}, 0.0);
  Measurements without = m;
  std::erase_if(without.items, [](const Measurement& it) { return it.op == MeasuredOp::power; });
  int zeroed = 0;
  for (Measurement& it : m.items) {
    if (it.op != MeasuredOp::power) continue;
    it.watts = 0;
    ++zeroed;
  }
  ASSERT_GT(zeroed, 0);
  FitOptions o;
  o.cluster = test::dgx_h100();
  const FitResult r = fit_profile(m, o);
  const FitResult reference = fit_profile(without, o);
  EXPECT_GT(r.profile.idle_power.value, 0.0);
  EXPECT_DOUBLE_EQ(r.profile.idle_power.value, reference.profile.idle_power.value);
  EXPECT_DOUBLE_EQ(r.profile.busy_power_fraction, reference.profile.busy_power_fraction);
  EXPECT_TRUE(has_note(r, "recorded 0 W (no NVML sample)"));
}

}  // namespace
}  // namespace tp
