// training.optimizer_kernel: how an Adam/AdamW step runs. Oracles by hand from torch/optim/adam.py
// (_multi_tensor_adam and _single_tensor_adam with decoupled weight decay, the op list quoted in
// planner/optimizer_time.cpp): per element the unfused step moves 4p + 14s + 2g bytes in 8 kernels where the
// fused kernel moves 2p + 4s + g; the difference runs at the residual_add class's bandwidth, with one class
// latency per kernel (8 over all tensors for foreach, 8 per tensor for for_loop).
#include <gtest/gtest.h>

#include "errors.h"
#include "estimate.h"
#include "kernel_class_time.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const char* kBase =
    "model: llama2-7b\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
    "training: {framework: pytorch, sequence_length: 1024, global_batch: 1, micro_batch: 1, precision: bf16}\n"
    "parallel: {tp: 1, pp: 1, zero: 0}\n";

double optimizer_seconds(const std::string& kernel) {
  const Scenario s = test::scenario(kBase, {"training.optimizer_kernel=" + kernel});
  return make_plan(s, profile_for(s)).time.optimizer.value;
}

TEST(OptimizerKernel, UnfusedAdamMovesTheBytesOfItsTorchOps) {
  const Scenario s = test::scenario(kBase);
  const Estimate e = estimate(s);
  const HardwareProfile hw = profile_for(s);
  const GpuSpec& gpu = s.cluster.gpu;
  const double bandwidth = kernel_class_bandwidth(hw, gpu, KernelClass::residual_add, 0.0);
  const double latency = kernel_class_seconds(hw, gpu, KernelClass::residual_add, 0.0, 0.0).value;
  // A bf16 model under plain PyTorch: p = 2 B (no master copy), each state s = 2 B (states in the
  // parameter dtype), g = 2 B: 2p + 10s + g = 4 + 20 + 2 = 26 B per parameter beyond the fused pass.
  const double extra = 26.0 * e.parameters_per_gpu / bandwidth;
  EXPECT_NEAR(optimizer_seconds("foreach") - optimizer_seconds("fused"), extra + 8.0 * latency, 1e-12);
  // for_loop: 8 kernels per parameter tensor. llama2-7b's op graph holds 6 per layer (attention norm, qkv,
  // attention out, MLP norm, fc1, fc2) x 32 layers, the embedding, the final norm and the untied output
  // layer: 195 tensors.
  EXPECT_NEAR(optimizer_seconds("for_loop") - optimizer_seconds("fused"), extra + 8.0 * 195.0 * latency, 1e-12);
}

TEST(OptimizerKernel, FrameworksDefaultToWhatTheirCodeRuns) {
  // torch.optim.AdamW picks foreach on CUDA when neither flag is given; Megatron, DeepSpeed and
  // torchtitan (optimizer.implementation "fused") run fused kernels.
  EXPECT_EQ(test::scenario(kBase).training.optimizer_kernel, OptimizerKernel::foreach);
  for (const char* f : {"megatron", "deepspeed", "fsdp"}) {
    const Scenario s = test::scenario(kBase, {std::string("training.framework=") + f});
    EXPECT_EQ(s.training.optimizer_kernel, OptimizerKernel::fused) << f;
  }
}

TEST(OptimizerKernel, OtherOptimizersRefuseTheKey) {
  try {
    test::scenario(kBase, {"training.optimizer=sgd", "training.optimizer_kernel=foreach"});
    FAIL() << "expected an error";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("optimizer_kernel"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("sgd"), std::string::npos) << err.what();
  }
  EXPECT_THROW(test::scenario(kBase, {"training.optimizer_kernel=fast"}), InputError);
}

}  // namespace
}  // namespace tp
