// Passes that run once per micro-batch, not once per step (planner/optimizer_time.cpp). Oracles by hand:
// - torch autograd's AccumulateGrad adds every later micro-batch's gradient to the kept one in place
//   (`grad += new`: read 2, write 1 element), one flat elementwise kernel per parameter tensor;
// - autocast casts the fp32 weights to 16 bits in every forward (and again in a recompute) and the weight
//   gradients back to fp32 in every backward (its cache lives for one autocast region);
// - Megatron accumulates inside the weight-gradient GEMM (gradient_accumulation_fusion): nothing extra;
// - DeepSpeed ZeRO-2 copies every gradient into its reduce bucket in every micro-batch;
// - DeepSpeed below ZeRO-2 with fp32 gradients casts each micro-batch's 16-bit gradients to fp32 (read 2,
//   write 4 B) and adds them to its fp32 accumulator (read 4 + 4, write 4 B), one kernel of each per
//   tensor: bf16_optimizer.py _update_hp_grad after every micro-batch; stage_1_and_2.py
//   fill_grad_accum_attribute (fp16 at ZeRO-1), the first micro-batch's gradient only cast;
// - DeepSpeed's engine all-reduces the gradients itself at ZeRO 0 and under BF16_Optimizer, once per step, with
//   copies around the all-reduce (engine.py buffered_allreduce_fallback, allreduce_and_copy, allreduce_bucket).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "estimate.h"
#include "kernel_class_time.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const char* kBase =
    "model: llama2-7b\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
    "training: {framework: pytorch, sequence_length: 1024, micro_batch: 1, precision: bf16}\n"
    "parallel: {tp: 1, pp: 1, zero: 0}\n";

struct Rates {
  double bandwidth = 0, latency = 0;  // the residual_add class: bytes/s and seconds per kernel
};

Rates residual_add_rates(const Scenario& s, const HardwareProfile& hw) {
  const GpuSpec& gpu = s.cluster.gpu;
  return {kernel_class_bandwidth(hw, gpu, KernelClass::residual_add, 0.0),
          kernel_class_seconds(hw, gpu, KernelClass::residual_add, 0.0, 0.0).value};
}

double optimizer_seconds(std::vector<std::string> sets, int global_batch) {
  sets.push_back("training.global_batch=" + std::to_string(global_batch));
  const Scenario s = test::scenario(kBase, sets);
  return make_plan(s, profile_for(s)).time.optimizer.value;
}

TEST(GradientAccumulation, EachLaterMicroBatchAddsItsGradientsInPlace) {
  const Scenario s = test::scenario(kBase, {"training.global_batch=4"});
  const Rates r = residual_add_rates(s, profile_for(s));
  const double p = static_cast<double>(estimate(s).parameters_per_gpu);
  // bf16 gradients (2 B): 3 x 2 B per parameter per add; 195 parameter tensors (llama2-7b's op graph, as
  // in test_optimizer_kernel.cpp), one kernel each; 4 micro-batches: 3 adds.
  const double one_add = 6.0 * p / r.bandwidth + 195.0 * r.latency;
  EXPECT_NEAR(optimizer_seconds({"training.optimizer_kernel=fused"}, 4) - optimizer_seconds({"training.optimizer_kernel=fused"}, 1),
              3.0 * one_add, 1e-12);
  EXPECT_GT(3.0 * one_add, 10e-3);  // 6.7 B parameters: ~13 ms per add on an H100
}

TEST(GradientAccumulation, AutocastCastsInEveryMicroBatch) {
  const Scenario s = test::scenario(kBase, {"training.global_batch=4", "training.autocast=true"});
  const HardwareProfile hw = profile_for(s);
  const Rates r = residual_add_rates(s, hw);
  const GpuSpec& gpu = s.cluster.gpu;
  const double p = static_cast<double>(estimate(s).parameters_per_gpu);
  // Each micro-batch casts the fp32 weights (read 4, write 2 B) and the weight gradients back (read 2,
  // write 4 B); the fp32 gradients (4 B: grad_precision same = fp32 under autocast) add 3 x 4 B per
  // parameter per later micro-batch.
  const double casts = p * 6.0 / (gpu.memory_bandwidth.value * hw.efficiency_of(KernelClass::cast_to_16bit)) +
                       p * 6.0 / (gpu.memory_bandwidth.value * hw.efficiency_of(KernelClass::cast_to_fp32));
  const double one_add = 12.0 * p / r.bandwidth + 195.0 * r.latency;
  EXPECT_NEAR(optimizer_seconds({"training.autocast=true"}, 4) - optimizer_seconds({"training.autocast=true"}, 1),
              3.0 * (casts + one_add), 1e-9);
}

TEST(GradientAccumulation, AutocastCastsTheRecomputedWeightsAgain) {
  // torch.utils.checkpoint reruns a layer's forward in an autocast region of its own, whose cache starts
  // empty: with every layer recomputed, each layer weight is cast once more (read 4, write 2 B).
  const Scenario s = test::scenario(kBase, {"training.global_batch=1", "training.autocast=true"});
  const HardwareProfile hw = profile_for(s);
  const double layer_params = estimate(s).memory.layer_parameters;
  const double recast = layer_params * 6.0 / (s.cluster.gpu.memory_bandwidth.value * hw.efficiency_of(KernelClass::cast_to_16bit));
  EXPECT_NEAR(optimizer_seconds({"training.autocast=true", "parallel.recompute=full"}, 1) -
                  optimizer_seconds({"training.autocast=true"}, 1),
              recast, 1e-9);
}

TEST(GradientAccumulation, MegatronAccumulatesInsideTheGemm) {
  EXPECT_DOUBLE_EQ(optimizer_seconds({"training.framework=megatron"}, 4), optimizer_seconds({"training.framework=megatron"}, 1));
}

TEST(GradientAccumulation, FsdpAddsIntoItsFp32ShardsWhateverTheReduceDtype) {
  // FSDP at ZeRO-3 over 8 GPUs: each later micro-batch adds its reduced shard into the kept one, which FSDP
  // holds in the fp32 master's dtype (FSDP1 _cast_grad_to_param_dtype, FSDP2 foreach_reduce): 3 x 4 B per
  // sharded parameter per add, with a bf16 reduce (grad_precision bf16) as with an fp32 one.
  const std::string fsdp =
      "model: llama2-7b\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {framework: fsdp, sequence_length: 1024, micro_batch: 1, precision: bf16, optimizer_kernel: fused}\n"
      "parallel: {tp: 1, pp: 1, dp: 8, zero: 3}\n";
  const auto optimizer = [&](const std::string& reduce, int global_batch) {
    const Scenario s = test::scenario(fsdp, {"training.grad_precision=" + reduce,
                                             "training.global_batch=" + std::to_string(global_batch)});
    return make_plan(s, profile_for(s)).time.optimizer.value;
  };
  const Scenario s = test::scenario(fsdp, {"training.global_batch=8"});
  const Rates r = residual_add_rates(s, profile_for(s));
  const double shard = static_cast<double>(estimate(s).parameters_per_gpu) / 8.0;
  const double one_add = 12.0 * shard / r.bandwidth + 195.0 * r.latency;  // 195 tensors, as above
  EXPECT_NEAR(optimizer("bf16", 32) - optimizer("bf16", 8), 3.0 * one_add, 1e-12);
  EXPECT_NEAR(optimizer("bf16", 32), optimizer("fp32", 32), 1e-15);
}

// DeepSpeed at ZeRO-1 over 8 GPUs (llama2-7b, 195 parameter tensors as above).
const char* kDeepSpeed =
    "model: llama2-7b\n"
    "cluster: {preset: dgx-h100, nodes: 1}\n"
    "training: {framework: deepspeed, sequence_length: 1024, micro_batch: 1, optimizer_kernel: fused}\n"
    "parallel: {tp: 1, pp: 1, dp: 8, zero: 1}\n";

double deepspeed_optimizer(std::vector<std::string> sets, int micro_batches) {
  sets.push_back("training.global_batch=" + std::to_string(8 * micro_batches));
  const Scenario s = test::scenario(kDeepSpeed, sets);
  return make_plan(s, profile_for(s)).time.optimizer.value;
}

struct Fp32Accumulator {
  double cast = 0, add = 0;  // one micro-batch's cast to fp32 and add into the accumulator [s]
};

Fp32Accumulator fp32_accumulator(const std::string& precision) {
  const Scenario s = test::scenario(kDeepSpeed, {"training.precision=" + precision, "training.grad_precision=fp32"});
  const HardwareProfile hw = profile_for(s);
  const GpuSpec& gpu = s.cluster.gpu;
  const double p = static_cast<double>(estimate(s).parameters_per_gpu);  // whole gradients below ZeRO-2
  const double cast_latency = kernel_class_seconds(hw, gpu, KernelClass::cast_to_fp32, 0.0, 0.0).value;
  const Rates r = residual_add_rates(s, hw);
  return {6.0 * p / kernel_class_bandwidth(hw, gpu, KernelClass::cast_to_fp32, 0.0) + 195.0 * cast_latency,
          12.0 * p / r.bandwidth + 195.0 * r.latency};
}

// BF16_Optimizer's all-reduce (engine.py allreduce_bucket): its fp32 flat gradients cast to bf16 (read 4,
// write 2 B per parameter), scaled by 1/dp (read 2, write 2 B) and cast back (read 2, write 4 B), one kernel
// of each over the one flat buffer; once per step.
double bf16_optimizer_all_reduce_casts() {
  const Scenario s = test::scenario(kDeepSpeed, {"training.precision=bf16", "training.grad_precision=fp32"});
  const HardwareProfile hw = profile_for(s);
  const GpuSpec& gpu = s.cluster.gpu;
  const double p = static_cast<double>(estimate(s).parameters_per_gpu);
  const auto pass = [&](KernelClass k, double bytes) {
    return bytes / kernel_class_bandwidth(hw, gpu, k, 0.0) + kernel_class_seconds(hw, gpu, k, 0.0, 0.0).value;
  };
  return pass(KernelClass::cast_to_16bit, 6.0 * p) + pass(KernelClass::residual_add, 4.0 * p) +
         pass(KernelClass::cast_to_fp32, 6.0 * p);
}

TEST(GradientAccumulation, DeepSpeedBf16CastsAndAddsEveryMicroBatchIntoFp32) {
  const Fp32Accumulator a = fp32_accumulator("bf16");
  const std::vector<std::string> fp32_grads = {"training.precision=bf16", "training.grad_precision=fp32"};
  EXPECT_NEAR(deepspeed_optimizer(fp32_grads, 4) - deepspeed_optimizer(fp32_grads, 1), 3.0 * (a.cast + a.add), 1e-12);
  EXPECT_GT(a.cast + a.add, 10e-3);  // 6.7 B parameters, 18 B each: ~50 ms per micro-batch on an H100
  // With one micro-batch BF16_Optimizer still casts and adds, where fp16's ZeRO-1 optimizer only casts (the
  // step itself is the same: fp32 master, states and gradients either way). On top, BF16_Optimizer's casts
  // around its all-reduce (DeepSpeedBf16OptimizerCasts... below), and fp16's copies into its fp16 reduce
  // bucket at the step's end (read 4, write 2 B per parameter) and of its partition (read 2, write 2 B over
  // p / 8), a kernel per tensor each.
  const std::vector<std::string> fp16 = {"training.precision=fp16", "training.grad_precision=fp32"};
  const Scenario s = test::scenario(kDeepSpeed, fp16);
  const Rates r = residual_add_rates(s, profile_for(s));
  const double p = static_cast<double>(estimate(s).parameters_per_gpu);
  const double fp16_bucket_copies = (6.0 * p + 4.0 * p / 8.0) / r.bandwidth + 2.0 * 195.0 * r.latency;
  EXPECT_NEAR(deepspeed_optimizer(fp32_grads, 1) - deepspeed_optimizer(fp16, 1),
              a.add + bf16_optimizer_all_reduce_casts() - fp16_bucket_copies, 1e-12);
}

TEST(GradientAccumulation, DeepSpeedWith16BitGradientsAccumulatesThroughAutograd) {
  const Scenario s = test::scenario(kDeepSpeed, {"training.precision=bf16"});
  const Rates r = residual_add_rates(s, profile_for(s));
  const double one_add = 6.0 * static_cast<double>(estimate(s).parameters_per_gpu) / r.bandwidth + 195.0 * r.latency;
  EXPECT_NEAR(deepspeed_optimizer({}, 4) - deepspeed_optimizer({}, 1), 3.0 * one_add, 1e-12);
}

TEST(GradientAccumulation, DeepSpeedZero2CopiesEveryGradientIntoTheReduceBucket) {
  // ZeRO-2 over 8 GPUs, 16-bit gradients: in every micro-batch each gradient is copied into the reduce bucket
  // (read 2, write 2 B per parameter) and the rank's partition into its buffer (the same over p / 8), one
  // copy kernel per tensor each; each later micro-batch autograd adds into the kept partition (3 x 2 B over
  // p / 8). stage_1_and_2.py reduce_independent_p_g_buckets_and_remove_grads, copy_grads_in_partition.
  const Scenario s = test::scenario(kDeepSpeed, {"parallel.zero=2"});
  const Rates r = residual_add_rates(s, profile_for(s));
  const double p = static_cast<double>(estimate(s).parameters_per_gpu);
  const double copies = 4.0 * (p + p / 8.0) / r.bandwidth + 2.0 * 195.0 * r.latency;
  const double partition_add = 6.0 * p / 8.0 / r.bandwidth + 195.0 * r.latency;
  const std::vector<std::string> zero2 = {"parallel.zero=2"};
  EXPECT_NEAR(deepspeed_optimizer(zero2, 4) - deepspeed_optimizer(zero2, 1), 3.0 * (copies + partition_add), 1e-12);
  // ZeRO-1 has no gradient hooks (they come with partitioned gradients or overlap_comm): its reduce_gradients
  // copies into the bucket once, at the step's last micro-batch, and autograd adds into the whole gradients.
  const double whole_add = 6.0 * p / r.bandwidth + 195.0 * r.latency;
  EXPECT_NEAR(deepspeed_optimizer({}, 4) - deepspeed_optimizer({}, 1), 3.0 * whole_add, 1e-12);
}

// The passes over weights and gradients beside the optimizer's update, for one micro-batch per GPU.
double weight_passes(const std::vector<std::string>& sets) {
  std::vector<std::string> all = sets;
  all.emplace_back("training.global_batch=8");
  const Scenario s = test::scenario(kDeepSpeed, all);
  const Plan plan = make_plan(s, profile_for(s));
  return plan.time.optimizer.value - plan.time.compute_by_kind.optimizer.value;
}

TEST(GradientAccumulation, DeepSpeedZero0FlattensScalesAndCopiesBackItsGradients) {
  // ZeRO 0 with fp16 (FP16_Optimizer): engine.py allreduce_no_retain flattens the fp16 .grad tensors into
  // buckets of up to 5e8 elements (torch.cat: read 2, write 2 B per parameter, a kernel per bucket), scales
  // the bucket (read 2, write 2 B, a kernel per bucket) and copies each tensor back (read 2, write 2 B, a
  // kernel per tensor: 195 for llama2-7b), once per step.
  const std::vector<std::string> zero0 = {"parallel.zero=0", "training.precision=fp16"};
  const Scenario s = test::scenario(kDeepSpeed, zero0);
  const Rates r = residual_add_rates(s, profile_for(s));
  const double p = static_cast<double>(estimate(s).parameters_per_gpu);
  const double buckets = std::ceil(p / 5e8);
  ASSERT_DOUBLE_EQ(buckets, 14.0);  // 6.74 B parameters
  const double expected = 3.0 * 4.0 * p / r.bandwidth + (2.0 * buckets + 195.0) * r.latency;
  EXPECT_NEAR(weight_passes(zero0), expected, 1e-12);
  EXPECT_GT(expected, 20e-3);  // 81 GB moved: ~35 ms on an H100
  // At ZeRO-1 stage_1_and_2.py reduces them itself (reduce_gradients): no such pass, but its copies into the
  // reduce bucket (read 2, write 2 B) and of the rank's partition (the same over p / 8), a kernel per tensor
  // each, once per step (reduce_independent_p_g_buckets_and_remove_grads, copy_grads_in_partition).
  EXPECT_NEAR(weight_passes({"parallel.zero=1", "training.precision=fp16"}),
              4.0 * (p + p / 8.0) / r.bandwidth + 2.0 * 195.0 * r.latency, 1e-12);
}

TEST(GradientAccumulation, DeepSpeedBf16OptimizerCastsItsFp32GradientsForTheAllReduceAndBack) {
  // BF16_Optimizer at one micro-batch: its cast and add into the fp32 gradients (fp32_accumulator) and the
  // casts around the all-reduce, at ZeRO 0 as at ZeRO 1 (it partitions its fp32 copy either way).
  const Fp32Accumulator a = fp32_accumulator("bf16");
  for (const char* zero : {"parallel.zero=0", "parallel.zero=1"}) {
    EXPECT_NEAR(weight_passes({zero, "training.precision=bf16", "training.grad_precision=fp32"}),
                a.cast + a.add + bf16_optimizer_all_reduce_casts(), 1e-12)
        << zero;
  }
}

TEST(GradientAccumulation, DeepSpeedZero3PartitionAccumulationIsNotModelled) {
  // ZeRO-3 copies into its bucket on the reduce stream and accumulates into the fp32 partition (stage3.py
  // partition_grads): no pass is counted on the compute stream.
  const std::vector<std::string> zero3 = {"parallel.zero=3", "training.grad_precision=fp32"};
  EXPECT_DOUBLE_EQ(deepspeed_optimizer(zero3, 4), deepspeed_optimizer(zero3, 1));
}

}  // namespace
}  // namespace tp
