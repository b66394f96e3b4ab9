// The sustained SM clock (model/sustained_clock.h; docs/model.md §15, "Sustained clock"): which clock a
// cluster's GPUs hold, and the compute-bound GEMM time it scales. Oracles: the catalog's sourced clocks
// (H100 SXM boost 1980 MHz, sustained 1575 MHz; A100 SXM sustained 1305 MHz) and hand computation.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "op_graph.h"
#include "op_times.h"
#include "sustained_clock.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const char* kH100 =
    "model: llama3-8b\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 8}\n"
    "training: {sequence_length: 4096, global_batch: 8, micro_batch: 1}\n"
    "parallel: {tp: 1, pp: 1, recompute: none}\n";

TEST(SustainedClock, BusyNodeHoldsTheCatalogClock) {
  const Scenario s = test::scenario(kH100);
  const HardwareProfile hw = profile_for(s);  // the committed profile, measured at 1980 MHz
  EXPECT_DOUBLE_EQ(hw.clock_hz, 1980e6);
  EXPECT_DOUBLE_EQ(tensor_time_scale(s.cluster, hw), 1980.0 / 1575.0);
  // One GPU alone runs as the calibration's GPU did: no scaling.
  const Scenario one = test::scenario(kH100, {"cluster.gpus_per_node=1"});
  EXPECT_DOUBLE_EQ(tensor_time_scale(one.cluster, profile_for(one)), 1.0);
  // The scenario's clock wins; then a clock the profile measured under load, for any node size.
  const Scenario own = test::scenario(kH100, {"cluster.sustained_clock=1800 MHz"});
  EXPECT_DOUBLE_EQ(tensor_time_scale(own.cluster, hw), 1980.0 / 1800.0);
  HardwareProfile measured = hw;
  measured.sustained_clock_hz = 1700e6;
  EXPECT_DOUBLE_EQ(tensor_time_scale(one.cluster, measured), 1980.0 / 1700.0);
  EXPECT_DOUBLE_EQ(tensor_time_scale(own.cluster, measured), 1980.0 / 1800.0);
}

// Ampere's default efficiencies are sustained rates (0.74 = ~0.80 of the boost-clock peak x 1305/1410):
// they stand for the catalog's sustained clock, so a busy node is not scaled again, and a cluster that
// says its clock scales from 1305 MHz.
TEST(SustainedClock, AmpereDefaultsStandForTheSustainedClock) {
  const Scenario s = test::scenario(kH100, {"cluster.preset=dgx-a100"});
  const HardwareProfile hw = profile_for(s);
  EXPECT_EQ(hw.clock_hz, 0.0);
  EXPECT_DOUBLE_EQ(profile_rates_clock_hz(hw, s.cluster.gpu), 1305e6);
  EXPECT_DOUBLE_EQ(tensor_time_scale(s.cluster, hw), 1.0);
  const Scenario slow = test::scenario(kH100, {"cluster.preset=dgx-a100", "cluster.sustained_clock=1.2 GHz"});
  EXPECT_DOUBLE_EQ(tensor_time_scale(slow.cluster, hw), 1305.0 / 1200.0);
}

// The scale multiplies the compute-bound part of every GEMM: at twice the time per FLOP, each large
// GEMM's forward grows by its own compute time, so gemm_fwd(2) - gemm_fwd(1) = gemm_fwd(1) - launches.
// Memory-bound kernels (norms, elementwise) do not change.
TEST(SustainedClock, ScalesTheComputeBoundGemmTime) {
  const Scenario s = test::scenario(kH100);
  const HardwareProfile hw = profile_for(s);
  OpTimeContext c{s, hw, 1, 1, false, 1.0, s.cluster.gpu.peak_for(Precision::bf16).value,
                  attention_peak(s.cluster.gpu, Precision::bf16).value, s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency};
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  const OpTimes base = time_ops(g.layer, c);
  c.tensor_time_scale = 2.0;
  const OpTimes slow = time_ops(g.layer, c);
  double gemm_ops = 0;
  for (const Op& op : g.layer) gemm_ops += op.kind == OpKind::gemm ? 1 : 0;
  ASSERT_GT(gemm_ops, 0);
  const double launches = gemm_ops * hw.kernel_launch.value;
  EXPECT_NEAR(slow.gemm_fwd - base.gemm_fwd, base.gemm_fwd - launches, 1e-9);
  // Non-GEMM forward time unchanged except the fused attention's compute-bound part.
  EXPECT_NEAR((slow.fwd - slow.gemm_fwd - slow.attention) - (base.fwd - base.gemm_fwd - base.attention), 0.0, 1e-12);
  EXPECT_GT(slow.attention, base.attention);
}

// Blackwell's defaults are Hopper's burst fractions: they stand for the B200's boost clock, and a busy DGX
// B200 node holds the catalog's sustained clock (flashinfer #2899: 1965 -> ~1580 MHz under load). A Hopper
// part with no sourced sustained clock (H100 PCIe) runs at its boost clock, and the table says so.
TEST(SustainedClock, B200DefaultsStandForItsBoostClock) {
  const Scenario s = test::scenario(kH100, {"cluster.preset=dgx-b200"});
  const HardwareProfile hw = profile_for(s);
  EXPECT_DOUBLE_EQ(hw.clock_hz, 1965e6);
  EXPECT_DOUBLE_EQ(tensor_time_scale(s.cluster, hw), 1965.0 / 1580.0);
  const test::RunResult pcie = test::run_trainplan("evaluate --set cluster.gpu=h100-pcie-80gb");
  ASSERT_EQ(pcie.exit_code, 0) << pcie.output;
  EXPECT_NE(pcie.output.find("tensor-core kernels at the profile's 1755 MHz: no sustained clock is known"), std::string::npos)
      << pcie.output;
  const test::RunResult sxm = test::run_trainplan("evaluate");
  EXPECT_EQ(sxm.output.find("no sustained clock is known"), std::string::npos);
}

// The JSON report says which clocks the step used (docs/json-output.md, `clocks`): the built-in default
// scenario runs 64 H100 on 8-GPU nodes; --set cluster.sustained_clock overrides the catalog's.
TEST(SustainedClock, JsonReportsTheClocks) {
  const test::RunResult r = test::run_trainplan("evaluate --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json c = nlohmann::json::parse(r.output).at("clocks");
  EXPECT_DOUBLE_EQ(c.at("profile_rates").get<double>(), 1980e6);
  EXPECT_DOUBLE_EQ(c.at("sustained").get<double>(), 1575e6);
  EXPECT_DOUBLE_EQ(c.at("tensor_time_scale").get<double>(), 1980.0 / 1575.0);
  const test::RunResult own = test::run_trainplan("evaluate --format json --set \"cluster.sustained_clock=1980 MHz\"");
  ASSERT_EQ(own.exit_code, 0) << own.output;
  const nlohmann::json o = nlohmann::json::parse(own.output);
  EXPECT_DOUBLE_EQ(o.at("clocks").at("tensor_time_scale").get<double>(), 1.0);
  EXPECT_LT(o.at("time").at("step_seconds").get<double>(), nlohmann::json::parse(r.output).at("time").at("step_seconds").get<double>());
}

}  // namespace
}  // namespace tp
