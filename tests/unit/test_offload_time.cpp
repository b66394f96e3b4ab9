// Host offload (planner/offload_time.h), by hand computation.
// Oracles: bytes per parameter counted from what each step reads and writes (fp32 parameter and
// states read and written, fp32 gradient read, DeepSpeed's 16-bit copy written: Adam 28 B, DeepSpeed
// Adam 30 B, SGD 12 B; SGD on an fp16 FSDP shard without a master 6 B); the DGX hosts' memory channels from their datasheets (DGX A100: 2 x 8 x
// DDR4-3200 = 409.6 GB/s; DGX H100: 2 x 8 x DDR5-4800 = 614.4 GB/s) at 0.8; PCIe per GPU and
// direction from the catalog (A100 32 GB/s, H100 64 GB/s) at the profile's efficiency, shared by the GPUs
// behind one PCIe switch (the DGX A100's four switches serve two GPUs each: cluster.gpus_per_host_link 2;
// the DGX H100 preset keeps one link per GPU).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "estimate.h"
#include "framework_rules.h"
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
  const double pcie = 32e9 * hw.pcie_efficiency / 2;  // two GPUs per switch uplink
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

TEST(OffloadTime, FsdpOffloadOfASixteenBitModelMovesSixteenBitShards) {
  // PyTorch 1.11's FSDP on a model built in fp16 without a master (the FSDP blog's runs): the host shard
  // and its gradients are fp16, so each copy moves 2 B per parameter, and SGD reads and writes the 2 B
  // parameter and reads the 2 B gradient: 6 B, 8 x 1e9 over 491.52 GB/s.
  const Scenario s = offload_scenario("dgx-h100", "framework: fsdp, precision: fp16, optimizer: sgd, master_weights: none",
                                      "params: cpu, optimizer: cpu");
  const HardwareProfile hw = profile_for(s);
  const OffloadTimes o = offload_times(s, hw, 1e9, 2);
  const double pcie = 64e9 * hw.pcie_efficiency;
  EXPECT_NEAR(o.gather_h2d, 1e9 * 2 / pcie, 1e-12);
  EXPECT_NEAR(o.grads_d2h, 2 * 1e9 * 2 / pcie, 1e-12);
  EXPECT_NEAR(o.cpu_step, 8 * 1e9 * 6 / 491.52e9, 1e-9);
}

TEST(OffloadTime, TorchCpuAdamIsSixTimesTheStreamingPass) {
  // torch.optim.AdamW on the host: 28 B per parameter x 6 (DeepSpeedCPUAdam is 5-7x faster).
  const Scenario s = offload_scenario("dgx-h100", "framework: fsdp, precision: bf16, optimizer: adamw",
                                      "params: cpu, optimizer: cpu");
  EXPECT_NEAR(cpu_optimizer_seconds(s, 1e9), 8 * 1e9 * 28 * 6 / 491.52e9, 1e-9);
}

TEST(OffloadTime, ZeroOffloadStepOfOneConfiguration) {
  // The step's optimizer part = CPU step + parameters back over PCIe + the 16-bit gradient copies to the
  // host, for the shard P / 32 of each of the 32 GPUs. DeepSpeed's ZeRO-3 copies each gradient partition
  // with a blocking copy_ (stage3.py __partition_grads), so the copies do not hide behind the backward.
  const Scenario s = offload_scenario("dgx-a100", "framework: deepspeed, precision: fp16, grad_precision: fp16, optimizer: adamw",
                                      "optimizer: cpu");
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Estimate e = estimate(s, g);
  const HardwareProfile hw = profile_for(s);
  const StepTime t = step_time(s, g, e, hw);
  const double shard = e.stages[0].parameters / 32.0;
  const double pcie = 32e9 * hw.pcie_efficiency / 2;  // two GPUs behind each PCIe switch
  const double hand = 8 * shard * 30 / 327.68e9 + shard * 2 / pcie + shard * 2 / pcie;
  EXPECT_NEAR(t.optimizer.value, hand, 1e-9 * hand);
}

TEST(OffloadTime, BlockingGradientCopyHoldsOnlyDeepSpeedZero3) {
  // host_gradient_copy_blocks: DeepSpeed's ZeRO-3 with the optimizer on the host waits for each gradient
  // bucket's reduce-scatter and copy; the same layout under FSDP, or DeepSpeed without the offload, does not.
  const std::string training = "framework: deepspeed, precision: fp16, grad_precision: fp16, optimizer: adamw";
  const Scenario offloaded = offload_scenario("dgx-a100", training, "optimizer: cpu");
  const FrameworkRules& deepspeed = framework_rules(Framework::deepspeed);
  EXPECT_TRUE(host_gradient_copy_holds_backward(deepspeed, offloaded.parallel));
  EXPECT_FALSE(gradient_reduce_overlaps(deepspeed, offloaded.parallel));
  ParallelSpec on_gpu = offloaded.parallel;
  on_gpu.offload_optimizer = OffloadTarget::none;
  EXPECT_TRUE(gradient_reduce_overlaps(deepspeed, on_gpu));
  ParallelSpec zero2 = offloaded.parallel;
  zero2.zero = 2;
  // Below ZeRO-3 DeepSpeed's overlap_comm is off by default (grad_reduce_overlapped); asked for, the host copy
  // does not hold the backward there.
  EXPECT_FALSE(gradient_reduce_overlaps(deepspeed, zero2));
  zero2.overlap_grad_reduce = true;
  EXPECT_TRUE(gradient_reduce_overlaps(deepspeed, zero2));
  EXPECT_TRUE(gradient_reduce_overlaps(framework_rules(Framework::fsdp), offloaded.parallel));
}

// cluster.gpus_per_host_link: the host copies of the GPUs behind one PCIe switch divide its uplink.
TEST(OffloadTime, GpusBehindOneSwitchShareItsUplink) {
  const std::string training = "framework: deepspeed, precision: fp16, grad_precision: fp16, optimizer: adamw";
  const Scenario a100 = offload_scenario("dgx-a100", training, "optimizer: cpu");
  EXPECT_EQ(a100.cluster.gpus_per_host_link, 2);
  EXPECT_EQ(offload_scenario("dgx-h100", training, "optimizer: cpu").cluster.gpus_per_host_link, 1);
  const HardwareProfile hw = profile_for(a100);
  EXPECT_NEAR(host_link_rate(a100, hw), 32e9 * hw.pcie_efficiency / 2, 1e-3);
  const Scenario own = offload_scenario("dgx-a100, gpus_per_host_link: 1", training, "optimizer: cpu");
  EXPECT_NEAR(host_link_rate(own, hw), 32e9 * hw.pcie_efficiency, 1e-3);
  EXPECT_NEAR(offload_times(a100, hw, 1e9, 1).params_h2d, 2 * offload_times(own, hw, 1e9, 1).params_h2d, 1e-12);
}

// Activation offload (DeepSpeed cpu_checkpointing): each layer's checkpointed input, s x b x h x 2 B =
// 2048 x 1 x 8192 x 2 = 33,554,432 B in fp16, goes to the host in the forward pass and back before its
// recompute, blocking the compute stream both times. 64 sequences over 32 GPUs: 2 micro-batches, 8 layers.
TEST(OffloadTime, ActivationOffloadCopiesEachCheckpointDownAndUp) {
  const std::string training = "framework: deepspeed, precision: fp16, grad_precision: fp16, optimizer: adamw";
  const Scenario on = offload_scenario("dgx-a100", training, "optimizer: cpu, activations: cpu");
  const Scenario off = offload_scenario("dgx-a100", training, "optimizer: cpu");
  const HardwareProfile hw = profile_for(on);
  const double pcie = 32e9 * hw.pcie_efficiency / 2;  // two GPUs per switch uplink
  const double per_copy = 2048.0 * 8192 * 2 / pcie;
  const OpGraph g = build_op_graph(on.model, on.training, on.parallel.tp);
  EXPECT_NEAR(activation_offload_seconds(on, hw, g), per_copy, 1e-15);
  EXPECT_DOUBLE_EQ(activation_offload_seconds(off, hw, g), 0.0);
  const StepTime t_on = step_time(on, g, estimate(on, g), hw);
  const StepTime t_off = step_time(off, g, estimate(off, g), hw);
  const double hand = 2 /* micro-batches */ * 8 /* layers */ * 2 /* down and up */ * per_copy;
  EXPECT_NEAR(t_on.exposed.offload.value, hand, 1e-12);
  // The step grows by at most the copies: a ZeRO-3 gather already in flight on its own stream runs on
  // beside a copy (planner: the copies are part of the forward and backward windows the gathers hide in).
  EXPECT_GT(t_on.step.value - t_off.step.value, 0.5 * hand);
  EXPECT_LE(t_on.step.value - t_off.step.value, hand * (1 + 1e-12));
  EXPECT_DOUBLE_EQ(t_off.exposed.offload.value, 0.0);
  // One checkpoint every 2 layers: half the copies.
  Scenario every2 = on;
  every2.parallel.recompute.mode = RecomputeMode::every;
  every2.parallel.recompute.every = 2;
  EXPECT_NEAR(activation_offload_seconds(every2, hw, g), per_copy / 2, 1e-15);
}

// The JSON contract: time.exposed_comm.offload carries the copies, and the step's parts still add up
// (compute + recompute + bubble + optimizer + overlap contention + exposed communication = step;
// docs/json-output.md).
TEST(OffloadTime, JsonReportsTheCopiesAsAPartOfTheStep) {
  const std::string file =
      "\"" + test::source_path("scenarios/validation/sharded/deepspeed-azure-530b-512xa100-mbs8-s1024.yaml") + "\"";
  const test::RunResult r = test::run_trainplan("evaluate " + file + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json t = nlohmann::json::parse(r.output).at("time");
  const nlohmann::json& x = t.at("exposed_comm");
  // 105 layers x 2 copies of s x b x h x 2 B = 1024 x 8 x 20480 x 2 B over 32 GB/s x pcie_efficiency 0.8,
  // halved: two GPUs share each PCIe switch's uplink on the DGX A100 preset.
  EXPECT_NEAR(x.at("offload").get<double>(), 105 * 2 * (1024.0 * 8 * 20480 * 2) / (32e9 * 0.8 / 2), 1e-9);
  double exposed = 0;
  for (const char* k : {"tp", "cp", "ep", "pp", "dp", "offload"}) exposed += x.at(k).get<double>();
  EXPECT_NEAR(x.at("total").get<double>(), exposed, 1e-9);
  const double parts = t.at("compute").get<double>() + t.at("recompute").get<double>() + t.at("bubble").get<double>() +
                       t.at("optimizer").get<double>() + t.at("overlap_contention").get<double>() + exposed;
  EXPECT_NEAR(parts, t.at("step_seconds").get<double>(), 1e-9 * parts);
}

}  // namespace
}  // namespace tp
