// Model-state memory under ZeRO 0-3.
// Oracles: ../shared/reference/formulas-seed004-003-000-002.md section 7, items 1-3:
//   7B on 8 GPUs with (2, 2, 12) bytes/param: 112 / 38.5 / 26.25 / 14 GB (seed 004 table);
//   7.5B on 64 GPUs, K = 12: 120 / 31.40625 / 16.640625 / 1.875 GB (Rajbhandari et al. 2020, sec. 3);
//   7B pure FP32 (4, 4, 8) on 8 GPUs: 112 / 63 / 38.5 / 14 GB (exercise 26.18).
// The oracles are stated for a nominal P (7e9, 7.5e9); the planner's model has its exact count, so
// the tests compare bytes per parameter times the nominal P. Their mixed precision keeps gradients in the
// parameters' 16 bits (grad_precision: same); Megatron's own default is fp32 (docs/scenario-reference.md).
#include <gtest/gtest.h>

#include "estimate.h"
#include "tests/test_support.h"

namespace tp {
namespace {

double state_bytes(const MemoryBreakdown& b) {
  return (b.weights + b.gradients + b.master_weights + b.optimizer).value;
}

// Model states per GPU for llama2-7b, data parallel only, scaled to `nominal` parameters.
double states_for(double nominal, int gpus, int zero, const std::string& precision) {
  Scenario s = test::scenario(
      "model: llama2-7b\n"
      "cluster: {preset: dgx-h100, nodes: " + std::to_string(gpus / 8) + "}\n"
      "training: {sequence_length: 2048, global_batch: 512, micro_batch: 1, precision: " + precision +
      ", grad_precision: same}\n"
      "parallel: {tp: 1, pp: 1, zero: " + std::to_string(zero) + "}\n");
  Estimate e = estimate(s);
  return state_bytes(e.memory) / e.parameters_per_gpu * nominal;
}

TEST(ZeroOracles, SevenBillionOnEightGpusMixedPrecision) {
  const double expected[] = {112e9, 38.5e9, 26.25e9, 14e9};
  for (int z = 0; z <= 3; ++z) EXPECT_NEAR(states_for(7e9, 8, z, "bf16"), expected[z], 1.0) << "zero " << z;
}

TEST(ZeroOracles, ZeroPaperSevenPointFiveBillionOn64Gpus) {
  const double expected[] = {120e9, 31.40625e9, 16.640625e9, 1.875e9};
  for (int z = 0; z <= 3; ++z) EXPECT_NEAR(states_for(7.5e9, 64, z, "fp16"), expected[z], 1.0) << "zero " << z;
}

TEST(ZeroOracles, SevenBillionPureFp32) {
  // fp32 training: 4 B weights, 4 B gradients, 8 B Adam moments, no separate master copy.
  const double expected[] = {112e9, 63e9, 38.5e9, 14e9};
  for (int z = 0; z <= 3; ++z) EXPECT_NEAR(states_for(7e9, 8, z, "fp32"), expected[z], 1.0) << "zero " << z;
}

TEST(ZeroOracles, MegatronDistributedOptimizerKeepsFp32Gradients) {
  // Megatron-LM docs (distributed optimizer): 16-bit params, fp32 grads: 6 + 12/d bytes per parameter.
  Scenario s = test::scenario(
      "model: llama2-7b\ncluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 2048, global_batch: 64, precision: bf16, grad_precision: fp32}\n"
      "parallel: {tp: 1, pp: 1, zero: 1}\n");
  Estimate e = estimate(s);
  EXPECT_NEAR(state_bytes(e.memory) / e.parameters_per_gpu, 6.0 + 12.0 / 8.0, 1e-12);
  // And without sharding, 18 bytes per parameter (Korthikanti et al. 2022 Figure 1 accounting).
  s.parallel.zero = 0;
  e = estimate(s);
  EXPECT_NEAR(state_bytes(e.memory) / e.parameters_per_gpu, 18.0, 1e-12);
}

TEST(ZeroOracles, OptimizerStateBytesPerParameter) {
  // sgd 0, momentum 4, adam/adamw 8, lion 4, 8-bit Adam 2 (+ fp32 absmax per 2048-value block).
  Scenario s = test::scenario(
      "model: llama2-7b\ncluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 2048, global_batch: 64, precision: bf16}\nparallel: {tp: 1, pp: 1, zero: 0}\n");
  const std::pair<Optimizer, double> cases[] = {{Optimizer::sgd, 0.0},   {Optimizer::momentum, 4.0},
                                                {Optimizer::adam, 8.0},  {Optimizer::adamw, 8.0},
                                                {Optimizer::lion, 4.0},  {Optimizer::adam8bit, 2.0 + 8.0 / 2048.0}};
  for (auto [opt, bytes] : cases) {
    s.training.optimizer = opt;
    Estimate e = estimate(s);
    EXPECT_NEAR(e.memory.optimizer.value / e.parameters_per_gpu, bytes, 1e-12) << to_string(opt);
  }
  // Adafactor keeps factored row/column statistics: far below one fp32 value per parameter.
  s.training.optimizer = Optimizer::adafactor;
  Estimate e = estimate(s);
  EXPECT_GT(e.memory.optimizer.value, 0.0);
  EXPECT_LT(e.memory.optimizer.value / e.parameters_per_gpu, 0.05);
}

TEST(ZeroOracles, OptimizerOffloadMovesStatesToTheHost) {
  // ZeRO-Offload (Ren et al. 2021): fp32 master, optimizer states and fp32 gradients on the CPU.
  Scenario s = test::scenario(
      "model: llama2-7b\ncluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 2048, global_batch: 64, precision: bf16}\n"
      "parallel: {tp: 1, pp: 1, zero: 2, offload: {optimizer: cpu}}\n");
  Estimate e = estimate(s);
  EXPECT_EQ(e.memory.optimizer.value, 0.0);
  EXPECT_EQ(e.memory.master_weights.value, 0.0);
  // Host per GPU: (4 master + 8 Adam + 4 fp32 grads) / 8 shards bytes per parameter.
  EXPECT_NEAR(e.memory.host.value / e.parameters_per_gpu, 16.0 / 8.0, 1e-12);
  EXPECT_NEAR(e.host_per_node.value, e.memory.host.value * 8, 1.0);
}

}  // namespace
}  // namespace tp
