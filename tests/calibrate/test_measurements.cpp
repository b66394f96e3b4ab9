// The measurements file: round trip, atomic write, strict reading with clear messages, nccl-tests
// bandwidth conventions and the timing statistics / stop rule.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "errors.h"
#include "measurements.h"
#include "synthetic.h"
#include "timing_stats.h"

namespace tp {
namespace {

std::string temp_path(const std::string& name) { return (std::filesystem::temp_directory_path() / name).string(); }

Measurements one_of_each() {
  Measurements m;
  m.created = "2025-06-01T12:00:00Z";
  m.device = {"NVIDIA H100 80GB HBM3", "h100-sxm-80gb", "9.0", 8, 132, 85520809984.0, 52428800.0, 1980, 2619, "node-01"};
  m.software = {"0.1.0", "570.86.15", "12.8", "13.0", "13.0.0", "9.19.0", "2.27.3"};
  m.settings.suites = {"gemm", "collectives"};
  m.settings.scenario = "scenarios/examples/llama3.1-8b-8xh100.yaml";
  m.settings.policy.max_reps = 77;
  m.settings.ranks = 16;
  m.settings.nodes = 2;
  m.settings.gpus_per_node = 8;
  m.clocks.sm_mhz_min = 1755;
  m.clocks.sm_mhz_max = 1980;
  m.clocks.throttle_reasons = {"sw_power_cap"};
  Measurement g;
  g.op = MeasuredOp::gemm;
  g.dtype = Precision::fp8;
  g.gemm = {8192, 768, 4096, 1};
  g.label = "qkv fwd tp=8";
  g.time = {1.25e-4, 1.26e-4, 1.2e-4, 1.4e-4, 1.21e-4, 1.33e-4, 3.1e-6, 42, true};
  g.rate = 4.1e14;
  g.algorithm = "algo 23 tile 128x256";
  g.sm_mhz = 1755;  // the clock as its timed calls ended
  m.items.push_back(g);
  Measurement a;
  a.op = MeasuredOp::attention_backward;
  a.impl = AttentionImpl::unfused;
  a.dtype = Precision::bf16;
  a.attention = {2, 32, 8, 4096, 4096, 128, true};
  a.time = test::stats_of(3.3e-3);
  a.note = "cuBLAS batched + softmax";
  m.items.push_back(a);
  Measurement mem;
  mem.op = MeasuredOp::memory_triad;
  mem.dtype = Precision::fp32;
  mem.bytes = 3.0 * 1024 * 1024 * 1024;
  mem.time = test::stats_of(1.1e-3);
  m.items.push_back(mem);
  Measurement l;
  l.op = MeasuredOp::kernel_launch;
  l.time = test::stats_of(2.5e-6);
  m.items.push_back(l);
  Measurement c;
  c.op = MeasuredOp::reduce_scatter;
  c.dtype = Precision::fp32;
  c.bytes = 1 << 20;
  c.ranks = 16;
  c.nodes = 2;
  c.time = test::stats_of(8e-5);
  c.algbw = c.bytes / 8e-5;
  c.busbw = c.algbw * 15.0 / 16.0;
  m.items.push_back(c);
  Measurement p;
  p.op = MeasuredOp::power;
  p.phase = "gemm";
  p.watts = 651.5;
  p.rate = 7.35e14;  // the gemm phase's sustained FLOP/s
  p.samples = 140;
  p.time = test::stats_of(3.0);
  m.items.push_back(p);
  m.skipped.push_back({MeasuredOp::attention_forward, "grid", "b=1 h=32/32 s=65536 d=128", "out of memory"});
  return m;
}

TEST(MeasurementsFile, RoundTripsEveryField) {
  const Measurements m = one_of_each();
  const std::string path = temp_path("trainplan_meas_roundtrip.json");
  write_measurements(m, path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  const Measurements r = read_measurements(path);
  EXPECT_EQ(r.schema, "trainplan-measurements/1");
  EXPECT_EQ(r.created, m.created);
  EXPECT_EQ(r.device.name, m.device.name);
  EXPECT_EQ(r.device.gpu_key, m.device.gpu_key);
  EXPECT_EQ(r.device.sm_count, 132);
  EXPECT_EQ(r.device.memory_bytes, m.device.memory_bytes);
  EXPECT_EQ(r.software.cudnn, "9.19.0");
  EXPECT_EQ(r.software.nccl, "2.27.3");
  EXPECT_EQ(r.settings.suites, m.settings.suites);
  EXPECT_EQ(r.settings.policy.max_reps, 77);
  EXPECT_EQ(r.settings.nodes, 2);
  EXPECT_EQ(r.clocks.throttle_reasons, m.clocks.throttle_reasons);
  ASSERT_EQ(r.items.size(), m.items.size());
  // JSON numbers are written with round-trip precision: equality is exact.
  EXPECT_EQ(to_json(r), to_json(m));
  const Measurement& g = r.items[0];
  EXPECT_EQ(g.op, MeasuredOp::gemm);
  EXPECT_EQ(g.dtype, Precision::fp8);
  EXPECT_EQ(g.gemm.n, 768);
  EXPECT_EQ(g.time.p90, 1.33e-4);
  EXPECT_EQ(g.time.reps, 42);
  EXPECT_EQ(g.algorithm, m.items[0].algorithm);
  EXPECT_EQ(g.sm_mhz, 1755);
  EXPECT_EQ(r.items[1].sm_mhz, 0);  // not sampled: absent from the file, read as 0
  EXPECT_EQ(r.items[1].impl, AttentionImpl::unfused);
  EXPECT_EQ(r.items[1].attention.kv_heads, 8);
  EXPECT_TRUE(r.items[1].attention.causal);
  EXPECT_EQ(r.items[4].ranks, 16);
  EXPECT_EQ(r.items[4].busbw, m.items[4].busbw);
  EXPECT_EQ(r.items[5].phase, "gemm");
  EXPECT_EQ(r.items[5].watts, 651.5);
  EXPECT_EQ(r.items[5].rate, 7.35e14);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].reason, "out of memory");
  std::filesystem::remove(path);
}

TEST(MeasurementsFile, SyntheticSetRoundTrips) {
  const Measurements m = test::synthetic_measurements(test::SyntheticTruth{}, 0.02);
  const Measurements r = measurements_from_text(to_json(m).dump(), "synthetic.json");
  EXPECT_EQ(to_json(r), to_json(m));
}

TEST(MeasurementsFile, AtomicWriteReplacesAndFailsCleanly) {
  const std::string path = temp_path("trainplan_meas_atomic.json");
  {
    std::ofstream(path) << "old contents";
  }
  write_measurements(one_of_each(), path);
  EXPECT_EQ(read_measurements(path).items.size(), 6u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove(path);
  EXPECT_THROW(write_measurements(one_of_each(), "/nonexistent-dir-trainplan/x.json"), IoError);
}

// The message a malformed document gives.
std::string error_of(const std::string& text) {
  try {
    (void)measurements_from_text(text, "meas.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string with_item(const std::string& item) {
  return R"({"schema": "trainplan-measurements/1", "device": {"name": "NVIDIA H100 80GB HBM3"}, "measurements": [)" + item + "]}";
}

const char* kGoodGemm = R"({"op": "gemm", "dtype": "bf16", "shape": {"m": 64, "n": 64, "k": 64}, "time": {"median": 1e-5}})";

TEST(MeasurementsFile, MinimalDocumentReads) {
  const Measurements m = measurements_from_text(with_item(kGoodGemm), "meas.json");
  ASSERT_EQ(m.items.size(), 1u);
  EXPECT_EQ(m.items[0].gemm.batch, 1);
  EXPECT_EQ(m.items[0].time.median, 1e-5);
}

TEST(MeasurementsFile, MissingVersion) {
  EXPECT_EQ(error_of(R"({"device": {"name": "x"}, "measurements": []})"),
            "meas.json: schema: missing: not a trainplan measurements file (expected \"schema\": \"trainplan-measurements/1\")");
}

TEST(MeasurementsFile, UnsupportedVersion) {
  EXPECT_EQ(error_of(R"({"schema": "trainplan-measurements/2", "device": {"name": "x"}, "measurements": []})"),
            "meas.json:1:12: schema: unsupported version 'trainplan-measurements/2'; this trainplan reads trainplan-measurements/1");
}

TEST(MeasurementsFile, WrongType) {
  EXPECT_EQ(error_of(with_item(R"({"op": "gemm", "dtype": "bf16", "shape": {"m": "64", "n": 64, "k": 64}, "time": {"median": 1e-5}})")),
            "meas.json:1:149: measurements[0].shape.m: expected an integer, got a string");
  EXPECT_EQ(error_of(with_item(R"({"op": "gemm", "dtype": "bf16", "shape": {"m": 64, "n": 64, "k": 64}, "time": 3})")),
            "meas.json:1:180: measurements[0].time: expected an object, got an integer");
  EXPECT_EQ(error_of(R"({"schema": "trainplan-measurements/1", "device": {"name": "x"}, "measurements": {}})"),
            "meas.json:1:81: measurements: expected an array, got an object");
}

// Errors name the line and column of the field (they named the file only; a CLI audit, 2026-12-01), and a key
// given twice in one object is an error at the second (nlohmann::json kept the last silently). Positions by
// hand: line 3 is `    "median": -1`, the value at column 15; line 2 is `  "device": {"name": "x", "name": "y"}`, the
// second "name" at column 27.
TEST(MeasurementsFile, ErrorsNameTheLineAndAKeyGivenTwice) {
  EXPECT_EQ(error_of("{\"schema\": \"trainplan-measurements/1\", \"device\": {\"name\": \"x\"}, \"measurements\": [\n"
                     "  {\"op\": \"gemm\", \"dtype\": \"bf16\", \"shape\": {\"m\": 64, \"n\": 64, \"k\": 64}, \"time\": {\n"
                     "    \"median\": -1}}]}"),
            "meas.json:3:15: measurements[0].time.median: must be at least 0, got -1");
  EXPECT_EQ(error_of("{\"schema\": \"trainplan-measurements/1\",\n"
                     "  \"device\": {\"name\": \"x\", \"name\": \"y\"}, \"measurements\": []}"),
            "meas.json:2:27: device.name: given twice in one object (a JSON reader would keep the last silently)");
}

TEST(MeasurementsFile, UnknownOp) {
  EXPECT_EQ(error_of(with_item(R"({"op": "gemmm", "time": {"median": 1e-5}})")),
            "meas.json:1:109: measurements[0].op: unknown op 'gemmm'; did you mean 'gemm'?");
  EXPECT_EQ(error_of(with_item(R"({"op": "allreduce", "time": {"median": 1e-5}})")),
            "meas.json:1:109: measurements[0].op: unknown op 'allreduce'; did you mean 'all_reduce'?");
}

TEST(MeasurementsFile, UnknownKeyAndBadValues) {
  EXPECT_EQ(error_of(with_item(R"({"op": "gemm", "dtype": "bf16", "shape": {"m": 64, "n": 64, "k": 64}, "time": {"median": 1e-5}, "rte": 1})")),
            "meas.json:1:205: measurements[0].rte: unknown key; did you mean 'rate'?");
  EXPECT_EQ(error_of(with_item(R"({"op": "gemm", "dtype": "bf61", "shape": {"m": 64, "n": 64, "k": 64}, "time": {"median": 1e-5}})")),
            "meas.json:1:126: measurements[0].dtype: unknown dtype 'bf61' (fp32, tf32, fp16, bf16 or fp8); did you mean 'bf16'?");
  EXPECT_EQ(error_of(with_item(R"({"op": "gemm", "dtype": "bf16", "shape": {"m": 64, "n": 64}, "time": {"median": 1e-5}})")),
            "meas.json:1:143: measurements[0].shape.k: missing (required)");
  EXPECT_EQ(error_of(with_item(R"({"op": "gemm", "dtype": "bf16", "shape": {"m": 64, "n": 64, "k": 64}, "time": {"median": 0}})")),
            "meas.json:1:191: measurements[0].time.median: a kernel time of 0 s is outside [1 ns, 1 h]: times are in seconds");
  // A denormal time crashed the GEMM fit (every residual infinite); a time in microseconds read as seconds.
  EXPECT_EQ(error_of(with_item(R"({"op": "gemm", "dtype": "bf16", "shape": {"m": 64, "n": 64, "k": 64}, "time": {"median": 1e-320}})")),
            "meas.json:1:191: measurements[0].time.median: a kernel time of 9.99989e-321 s is outside [1 ns, 1 h]: times are in seconds");
  // 2^63 was read as int64 and reported as "got -9223372036854775808".
  EXPECT_EQ(error_of(with_item(R"({"op": "gemm", "dtype": "bf16", "shape": {"m": 64, "n": 64, "k": 9223372036854775808}, "time": {"median": 1e-5}})")),
            "meas.json:1:167: measurements[0].shape.k: is out of range: at most 9223372036854775807");
  EXPECT_EQ(error_of(with_item(R"({"op": "gemm", "dtype": "bf16", "shape": {"m": 64, "n": 64, "k": 64}, "time": {"median": 12000}})")),
            "meas.json:1:191: measurements[0].time.median: a kernel time of 12000 s is outside [1 ns, 1 h]: times are in seconds");
  EXPECT_EQ(error_of(with_item(R"({"op": "all_reduce", "dtype": "fp32", "shape": {"bytes": 8, "ranks": 2, "nodes": 4}, "time": {"median": 1e-5}})")),
            "meas.json:1:183: measurements[0].shape.nodes: more nodes (4) than ranks (2)");
  EXPECT_EQ(error_of(with_item(R"({"op": "gemm", "dtype": "bf16", "shape": {"m": 64, "n": 64, "k": 64}, "time": {"median": 1e-5}, "sm_mhz": -5})")),
            "meas.json:1:208: measurements[0].sm_mhz: must be at least 0, got -5");
  EXPECT_EQ(error_of(with_item(R"({"op": "power", "phase": "busy", "watts": 3})")),
            "meas.json:1:127: measurements[0].phase: expected idle, gemm or memory, got 'busy'");
  // 1e9 W was fitted into an idle power of 1e9 W (a CLI audit, 2026-12-01): at most 10 kW.
  EXPECT_EQ(error_of(with_item(R"({"op": "power", "phase": "idle", "watts": 1e9, "samples": 3})")),
            "meas.json:1:144: measurements[0].watts: must be at most 10000, got 1e+09");
}

TEST(MeasurementsFile, NotJsonGivesLineAndColumn) {
  const std::string e = error_of("{\n  \"schema\": \"trainplan-measurements/1\",\n  \"device\": {\"name\": \"x\",}\n}");
  EXPECT_EQ(e.rfind("meas.json:3:", 0), 0u) << e;
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
}

TEST(MeasurementsFile, MissingFileIsAnIoError) {
  try {
    (void)read_measurements("/nonexistent-trainplan/meas.json");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read /nonexistent-trainplan/meas.json");
  }
}

// nccl-tests doc/PERFORMANCE.md: busbw = algbw x factor, factor all_reduce 2(n-1)/n; all_gather,
// reduce_scatter, all_to_all (n-1)/n; broadcast and send_recv 1.
TEST(NcclTestsConventions, BusBandwidthFactors) {
  const double s = 1e9, t = 0.01;  // algbw 100 GB/s
  struct Row {
    Collective c;
    int n;
    double factor;
  };
  for (const Row& r : {Row{Collective::all_reduce, 8, 14.0 / 8}, Row{Collective::all_reduce, 2, 1.0},
                       Row{Collective::all_gather, 8, 7.0 / 8}, Row{Collective::reduce_scatter, 16, 15.0 / 16},
                       Row{Collective::all_to_all, 4, 3.0 / 4}, Row{Collective::send_recv, 8, 1.0},
                       Row{Collective::broadcast, 8, 1.0}}) {
    const BusRates b = nccl_test_rates(r.c, s, r.n, t);
    EXPECT_DOUBLE_EQ(b.algbw, 1e11) << to_string(r.c);
    EXPECT_DOUBLE_EQ(b.busbw / b.algbw, r.factor) << to_string(r.c) << " n=" << r.n;
  }
}

TEST(NcclTestsConventions, SizesRoundLikeNcclTests) {
  // all_gather of 1000 B of floats on 8 ranks: 250 elements -> floor(250 / 32) x 4 = 28 per rank -> 896 B.
  EXPECT_DOUBLE_EQ(nccl_test_bytes(Collective::all_gather, 1000, 8, 4), 896);
  EXPECT_DOUBLE_EQ(nccl_test_bytes(Collective::reduce_scatter, 8, 8, 4), 0);  // too small for 8 ranks
  EXPECT_DOUBLE_EQ(nccl_test_bytes(Collective::all_to_all, 1000, 8, 4), 992);
  EXPECT_DOUBLE_EQ(nccl_test_bytes(Collective::all_reduce, 1002, 8, 4), 1000);
  EXPECT_DOUBLE_EQ(nccl_test_bytes(Collective::all_reduce, 1 << 30, 8, 4), 1 << 30);
}

TEST(TimingStats, SummaryOfKnownSamples) {
  const TimeStats s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.reps, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.p10, 1.4);
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  EXPECT_NEAR(s.stddev, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(s.relative_spread(), 3.2 / 3, 1e-12);
}

TEST(TimingStats, StopRule) {
  RepetitionPolicy p;
  p.min_reps = 5;
  p.max_reps = 8;
  p.target_spread = 0.05;
  p.max_seconds = 1.0;
  EXPECT_FALSE(enough_repetitions({1e-3, 1e-3, 1e-3}, p));                   // below min_reps
  EXPECT_TRUE(enough_repetitions({1e-3, 1e-3, 1e-3, 1e-3, 1.01e-3}, p));    // stable
  EXPECT_FALSE(enough_repetitions({1e-3, 2e-3, 1e-3, 3e-3, 1e-3}, p));      // noisy: go on
  EXPECT_TRUE(enough_repetitions({1e-3, 2e-3, 1e-3, 3e-3, 1e-3, 2e-3, 1e-3, 3e-3}, p));  // max_reps
  EXPECT_TRUE(enough_repetitions({0.6, 0.5}, p));                            // time budget spent
}

TEST(DeviceNames, GuessCatalogKey) {
  EXPECT_EQ(guess_gpu_key("NVIDIA H100 80GB HBM3", 85e9), "h100-sxm-80gb");
  EXPECT_EQ(guess_gpu_key("NVIDIA H100 PCIe", 85e9), "h100-pcie-80gb");
  EXPECT_EQ(guess_gpu_key("NVIDIA A100-SXM4-40GB", 42e9), "a100-sxm4-40gb");
  EXPECT_EQ(guess_gpu_key("NVIDIA A100-SXM4-80GB", 85e9), "a100-sxm4-80gb");
  EXPECT_EQ(guess_gpu_key("NVIDIA H200", 150e9), "h200-sxm-141gb");
  EXPECT_EQ(guess_gpu_key("Some Other GPU", 1e9), "");
}

}  // namespace
}  // namespace tp
