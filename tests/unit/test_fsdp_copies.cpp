// FSDP's copies around its collectives on the compute stream (planner/fsdp_copies.h, docs/model.md §15,
// "FSDP's copies"). Oracles by hand from the torch source the header cites: per layer and micro-batch, with
// W the layer's parameters (counted here from the model's shape), FSDP2 copies each gather out (2 W x 2 B,
// forward and backward) and copies the gradients into an fp32 reduce-scatter input (W x (2 + 4) B); FSDP1
// only concatenates the gradients into its flat gradient in the backward (2 W x 2 B). Each is one kernel
// per unit at the flat elementwise class.
#include <gtest/gtest.h>

#include <cmath>

#include "comm_time.h"
#include "fsdp_copies.h"
#include "hardware_profile.h"
#include "kernel_class_time.h"
#include "plan.h"
#include "tests/test_support.h"
#include "zero3_modules.h"

namespace tp {
namespace {

// Llama 3 8B: h 4096, 32 heads of 128, 8 KV heads, SwiGLU 14336, RMSNorm without biases.
constexpr double kH = 4096, kKv = 8 * 128, kFfn = 14336;
constexpr double kLayerParams = kH * kH + 2 * kH * kKv + kH * kH + 3 * kH * kFfn + 2 * kH;  // q, k, v, o, MLP, 2 norms

const std::string kBase =
    "model: llama3-8b\n"
    "cluster: {preset: dgx-h100, nodes: 4}\n"
    "training: {framework: fsdp, precision: bf16, grad_precision: fp32, sequence_length: 4096, global_batch: 64, "
    "micro_batch: 1}\n"
    "parallel: {tp: 1, pp: 1, dp: 32, recompute: full, zero: 3}\n";

struct CopyCase {
  Scenario s;
  HardwareProfile hw;
  FsdpCopies copies;
  double copy(double bytes) const {  // one kernel of the flat elementwise class
    return kernel_class_seconds(hw, s.cluster.gpu, KernelClass::residual_add, bytes, 0.0).value;
  }
};

// FSDP's copies of scenario `s` sharded over `ranks`, from its own graph and units (as the step time builds them).
FsdpCopies copies_of(const Scenario& s, const HardwareProfile& hw, int ranks) {
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  return fsdp_copies(s, zero3_layer(s, g.layer, s.parallel.tp, s.parallel.ep), hw, ranks);
}

CopyCase copy_case(const std::string& memory) {
  Scenario s = test::scenario(kBase + memory);
  HardwareProfile hw = default_profile(s.cluster.gpu);
  const FsdpCopies c = copies_of(s, hw, s.parallel.dp);
  return {s, hw, c};
}

TEST(FsdpCopies, Fsdp2CopiesEachGatherOutAndTheGradientsIn) {
  const CopyCase u = copy_case("");  // FSDP2, the default
  EXPECT_NEAR(u.copies.forward, u.copy(2 * kLayerParams * 2), 1e-12);
  EXPECT_NEAR(u.copies.backward, u.copy(2 * kLayerParams * 2) + u.copy(kLayerParams * (2 + 4)), 1e-12);
  // 218 M parameters: 0.87 + 0.87 + 1.31 GB per layer and micro-batch, about 1 ms at an H100's 3.35 TB/s.
  EXPECT_GT(u.copies.forward + u.copies.backward, 0.9e-3);
  EXPECT_LT(u.copies.forward + u.copies.backward, 2.0e-3);
}

TEST(FsdpCopies, Fsdp1ConcatenatesTheGradientsInTheBackwardOnly) {
  const CopyCase u = copy_case("memory: {fsdp_version: 1}\n");
  EXPECT_EQ(u.copies.forward, 0.0);
  EXPECT_NEAR(u.copies.backward, u.copy(2 * kLayerParams * 2), 1e-12);
}

TEST(FsdpCopies, SubmoduleUnitsLaunchOneKernelEach) {
  // Units of one submodule each (the norms and every Linear): the same bytes, in one kernel per unit.
  const CopyCase units = copy_case("memory: {fsdp_version: 1, fsdp_unit: submodule}\n");
  const OpGraph g = build_op_graph(units.s.model, units.s.training, 1);
  const double n = static_cast<double>(zero3_modules(g.layer, 1, 1, 0.0).count);
  EXPECT_GE(n, 4.0);  // q/k/v, o, the MLP's Linears, the norms: several units
  EXPECT_NEAR(units.copies.backward, n * units.copy(2 * kLayerParams * 2 / n), 1e-12);
}

// FSDP2 copies through its buffers on one rank as on many (measured at world size 1 on an H100:
// h100-framework-steps.json, test_h100_framework_steps.cpp): the same per-GPU copies; FSDP1 on one rank runs
// NO_SHARD and has none; DeepSpeed has none.
TEST(FsdpCopies, Fsdp2OnOneRankFsdp1AndDeepSpeedNone) {
  const Scenario s = test::scenario(kBase);
  const HardwareProfile hw = default_profile(s.cluster.gpu);
  const FsdpCopies one_rank = copies_of(s, hw, 1), many = copies_of(s, hw, s.parallel.dp);
  EXPECT_GT(one_rank.forward, 0.0);
  EXPECT_EQ(one_rank.forward, many.forward);
  EXPECT_EQ(one_rank.backward, many.backward);
  const Scenario fsdp1 = test::scenario(kBase + "memory: {fsdp_version: 1}\n");
  const FsdpCopies fsdp1_one_rank = copies_of(fsdp1, hw, 1);
  EXPECT_EQ(fsdp1_one_rank.forward + fsdp1_one_rank.backward, 0.0);
  EXPECT_GT(copies_of(fsdp1, hw, fsdp1.parallel.dp).backward, 0.0);
  const Scenario ds = test::scenario(
      "model: llama3-8b\ncluster: {preset: dgx-h100, nodes: 4}\n"
      "training: {framework: deepspeed, sequence_length: 4096, global_batch: 64, micro_batch: 1}\n"
      "parallel: {tp: 1, pp: 1, dp: 32, recompute: full, zero: 3}\n");
  const FsdpCopies deepspeed = copies_of(ds, hw, 32);
  EXPECT_EQ(deepspeed.forward + deepspeed.backward, 0.0);
}

// Under autocast the parameters are fp32 (parameter_bytes): FSDP gathers 4 B per parameter, copies those
// out, and the memory's gathered buffer holds them at 4 B too. One rule for all three.
TEST(FsdpCopies, AutocastGathersAndCopiesFp32Parameters) {
  const CopyCase u = copy_case("");
  Scenario s = test::scenario(
      "model: llama3-8b\ncluster: {preset: dgx-h100, nodes: 4}\n"
      "training: {framework: fsdp, precision: bf16, autocast: true, grad_precision: fp32, sequence_length: 4096, "
      "global_batch: 64, micro_batch: 1}\n"
      "parallel: {tp: 1, pp: 1, dp: 32, recompute: full, zero: 3}\n");
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  const FsdpCopies c = copies_of(s, u.hw, 32);
  EXPECT_NEAR(c.forward, u.copy(2 * kLayerParams * 4), 1e-12);
  EXPECT_NEAR(c.backward, u.copy(2 * kLayerParams * 4) + u.copy(kLayerParams * (4 + 4)), 1e-12);
  // The ZeRO-3 gather entry moves the stage's parameters at 4 B each.
  const CommLayout l = comm_layout(s, u.hw);
  int gathers = 0;
  for (const Op& op : g.step) {
    if (op.kind != OpKind::collective || op.comm.source != CommBytes::weights) continue;
    EXPECT_DOUBLE_EQ(comm_bytes(op.comm, l, 1e9), 4e9);
    ++gathers;
  }
  EXPECT_GT(gathers, 0);
}

// The step carries them as compute: FSDP2's compute exceeds FSDP1's by m x L x their difference.
TEST(FsdpCopies, TheStepsComputeCarriesThem) {
  const CopyCase v1 = copy_case("memory: {fsdp_version: 1}\n");
  const CopyCase v2 = copy_case("");
  const Plan p1 = make_plan(v1.s, v1.hw), p2 = make_plan(v2.s, v2.hw);
  const double m = static_cast<double>(p1.estimate.micro_batches), layers = 32;
  ASSERT_EQ(m, 2.0);  // 64 sequences over 32 replicas
  const double difference = m * layers * (v2.copies.forward + v2.copies.backward - v1.copies.backward);
  EXPECT_NEAR(p2.time.compute.value - p1.time.compute.value, difference, 1e-9);
  EXPECT_GT(p2.time.step.value, p1.time.step.value);
}

}  // namespace
}  // namespace tp
