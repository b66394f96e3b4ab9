// Host offload (planner/offload_time.h), by hand computation.
// Oracles: bytes per parameter counted from what each step reads and writes (fp32 parameter and
// states read and written, fp32 gradient read, DeepSpeed's 16-bit copy written: Adam 28 B, DeepSpeed
// Adam 30 B, SGD 12 B); the DGX hosts' memory channels from their datasheets (DGX A100: 2 x 8 x
// DDR4-3200 = 409.6 GB/s; DGX H100: 2 x 8 x DDR5-4800 = 614.4 GB/s) at 0.8; PCIe per GPU and
// direction from the catalog (A100 32 GB/s, H100 64 GB/s) at the profile's efficiency.
#include <gtest/gtest.h>

#include "estimate.h"
#include "hardware_profile.h"
#include "offload_time.h"
#include "step_time.h"
#include "tests/test_support.h"

namespace tp {
namespace {

Scenario offload_scenario(const std::string& cluster, const std::string& training, const std::string& offload) {
  return test::scenario(
      "model: {layers: 8, hidden: 8192, heads: 64, ffn_hidden: 32768, vocab: 50304, bias: false}\n"
      "cluster: {preset: " + cluster + ", nodes: 4}\n"
      "training: {" + training + ", sequence_length: 2048, global_batch: 64, micro_batch: 1}\n"
      "parallel: {tp: 1, pp: 1, zero: 3, recompute: full, offload: {" + offload + "}}\n");
}

TEST(OffloadTime, ZeroOffloadAdamOnDgxA100) {
  const Scenario s = offload_scenario("dgx-a100", "framework: deepspeed, precision: fp16, grad_precision: fp16, optimizer: adamw",
                                      "optimizer: cpu");
  const HardwareProfile hw = profile_for(s);
  const OffloadTimes o = offload_times(s, hw, 1e9, 2);
  const double pcie = 32e9 * hw.pcie_efficiency;
  // 8 GPUs x 1e9 parameters x 30 B over 409.6 GB/s x 0.8 = 327.68 GB/s: 0.732421875 s.
  EXPECT_NEAR(o.cpu_step, 8 * 1e9 * 30 / 327.68e9, 1e-9);
  EXPECT_NEAR(o.cpu_step, 0.732421875, 1e-9);
  EXPECT_NEAR(o.params_h2d, 1e9 * 2 / pcie, 1e-12);  // 16-bit parameters back after the step
  EXPECT_NEAR(o.grads_d2h, 1e9 * 2 / pcie, 1e-12);   // 16-bit gradients down, once per step
  EXPECT_DOUBLE_EQ(o.gather_h2d, 0.0);               // parameters stay on the GPU
}

TEST(OffloadTime, FsdpOffloadParamsSgdOnDgxH100) {
  const Scenario s = offload_scenario("dgx-h100", "framework: fsdp, precision: bf16, optimizer: sgd",
                                      "params: cpu, optimizer: cpu");
  const HardwareProfile hw = profile_for(s);
  const OffloadTimes o = offload_times(s, hw, 1e9, 2);
  const double pcie = 64e9 * hw.pcie_efficiency;
  // SGD: 12 B per parameter, 8 x 1e9 over 614.4 GB/s x 0.8 = 491.52 GB/s: 0.1953125 s.
  EXPECT_NEAR(o.cpu_step, 0.1953125, 1e-9);
  EXPECT_NEAR(o.gather_h2d, 1e9 * 4 / pcie, 1e-12);      // the fp32 shard before every gather
  EXPECT_NEAR(o.grads_d2h, 2 * 1e9 * 4 / pcie, 1e-12);   // fp32 gradients after each of 2 backwards
  EXPECT_DOUBLE_EQ(o.params_h2d, 0.0);                    // the next gather copies them
}

TEST(OffloadTime, TorchCpuAdamIsSixTimesTheStreamingPass) {
  // torch.optim.AdamW on the host: 28 B per parameter x 6 (DeepSpeedCPUAdam is 5-7x faster).
  const Scenario s = offload_scenario("dgx-h100", "framework: fsdp, precision: bf16, optimizer: adamw",
                                      "params: cpu, optimizer: cpu");
  EXPECT_NEAR(cpu_optimizer_seconds(s, 1e9), 8 * 1e9 * 28 * 6 / 491.52e9, 1e-9);
}

TEST(OffloadTime, ZeroOffloadStepOfOneConfiguration) {
  // The step's optimizer part = CPU step + parameters back over PCIe (the gradient copies hide behind
  // the backward), for the shard P / 32 of each of the 32 GPUs.
  const Scenario s = offload_scenario("dgx-a100", "framework: deepspeed, precision: fp16, grad_precision: fp16, optimizer: adamw",
                                      "optimizer: cpu");
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Estimate e = estimate(s, g);
  const HardwareProfile hw = profile_for(s);
  const StepTime t = step_time(s, g, e, hw);
  const double shard = e.stages[0].parameters / 32.0;
  const double hand = 8 * shard * 30 / 327.68e9 + shard * 2 / (32e9 * hw.pcie_efficiency);
  EXPECT_NEAR(t.optimizer.value, hand, 1e-9 * hand);
}

}  // namespace
}  // namespace tp
