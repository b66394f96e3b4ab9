// Plain PyTorch on several GPUs runs torch DistributedDataParallel (planner/stage_memory.cpp ddp_buckets,
// planner/optimizer_time.cpp ddp_bucket_copy_seconds). Oracles by hand from torch's reducer.cpp:
// initialize_buckets allocates flat buckets as large as all the gradients, once for the run; without
// gradient_as_bucket_view (the default) every gradient is copied into its bucket and back after the
// all-reduce, on the compute stream; with it the gradients are views into the buckets, held for the run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "estimate.h"
#include "kernel_class_time.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// Llama 2 7B in bf16 on one node, one micro-batch per GPU: one GPU, or DDP over 8.
Scenario ddp_scenario(int gpus, const std::vector<std::string>& sets = {}) {
  return test::scenario(
      "model: llama2-7b\n"
      "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: " + std::to_string(gpus) + "}\n"
      "training: {framework: pytorch, sequence_length: 1024, micro_batch: 1, global_batch: " + std::to_string(gpus) +
          ", precision: bf16, optimizer_kernel: fused}\n"
      "parallel: {tp: 1, pp: 1, zero: 0, dp: " + std::to_string(gpus) + "}\n",
      sets);
}

TEST(DdpBuckets, TheBucketsHoldOneMoreCopyOfTheGradients) {
  const Estimate one = estimate(ddp_scenario(1)), eight = estimate(ddp_scenario(8));
  // bf16 gradients: 2 B per parameter, allocated once for the run (no allocator slack on them).
  const double buckets = 2.0 * static_cast<double>(one.parameters_per_gpu);
  EXPECT_NEAR(eight.memory.buffers.value - one.memory.buffers.value, buckets, 1.0);
  EXPECT_NEAR(eight.memory.total.value - one.memory.total.value, buckets, 1.0);
}

TEST(DdpBuckets, BucketViewsHoldTheGradientsForTheRun) {
  const Estimate views = estimate(ddp_scenario(8, {"memory.ddp_gradient_as_bucket_view=true"}));
  const double gradients = 2.0 * static_cast<double>(views.parameters_per_gpu);
  EXPECT_NEAR(views.memory.gradients.value, gradients, 1.0);  // held at every phase, the peak included
  EXPECT_NEAR(views.memory.buffers.value, estimate(ddp_scenario(1)).memory.buffers.value, 1.0);
}

TEST(DdpBuckets, GradientsAreCopiedIntoTheirBucketsAndBack) {
  const Scenario s = ddp_scenario(8);
  const HardwareProfile hw = profile_for(s);
  const GpuSpec& gpu = s.cluster.gpu;
  const double bandwidth = kernel_class_bandwidth(hw, gpu, KernelClass::residual_add, 0.0);
  const double latency = kernel_class_seconds(hw, gpu, KernelClass::residual_add, 0.0, 0.0).value;
  const double p = static_cast<double>(estimate(s).parameters_per_gpu);
  // Two passes, each reading and writing the 2 B gradients, one kernel per parameter tensor each (195 in
  // llama2-7b's op graph, as in test_optimizer_kernel.cpp).
  const double copies = 4.0 * 2.0 * p / bandwidth + 2.0 * 195.0 * latency;
  const auto optimizer = [&](const Scenario& x) { return make_plan(x, profile_for(x)).time.optimizer.value; };
  EXPECT_NEAR(optimizer(s) - optimizer(ddp_scenario(1)), copies, 1e-12);
  EXPECT_NEAR(optimizer(ddp_scenario(8, {"memory.ddp_gradient_as_bucket_view=true"})), optimizer(ddp_scenario(1)), 1e-12);
}

}  // namespace
}  // namespace tp
