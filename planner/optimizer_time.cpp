// The optimizer step: a memory-bound sweep over the local shard, or the offloaded CPU update.
#include <algorithm>
#include <cmath>

#include "early_stop.h"
#include "framework_rules.h"
#include "kernel_class.h"
#include "kernel_class_time.h"
#include "step_time_parts.h"

namespace tp {
namespace {

// Parameters of the FP8 GEMMs one GPU of `stage` holds (split by tp, experts further by ep).
double fp8_weight_parameters(const OpGraph& g, const Scenario& s, int stage) {
  const ParallelSpec& p = s.parallel;
  if (stage < 0 || static_cast<size_t>(stage) >= p.layers_per_stage.size()) return 0.0;
  double per_layer = 0;
  for (const Op& op : g.layer) {
    if (op.kind != OpKind::gemm || op.compute_precision != Precision::fp8) continue;
    per_layer += op.params_split / p.tp / (op.expert ? std::max(1, p.ep) : 1) + op.params_replicated;
  }
  return per_layer * p.layers_per_stage[static_cast<size_t>(stage)];
}

// Parameter tensors one GPU of `stage` updates: one per op with parameters (a weight; bias and norm
// weights ride with their op), the embedding on the first stage and the head on the last.
double parameter_tensors(const OpGraph& g, const ParallelSpec& p, int stage) {
  const auto count = [](const std::vector<Op>& ops) {
    double n = 0;
    for (const Op& op : ops) n += op.params_split > 0 || op.params_replicated > 0 ? 1.0 : 0.0;
    return n;
  };
  if (stage < 0 || static_cast<size_t>(stage) >= p.layers_per_stage.size()) return 0.0;
  double n = count(g.layer) * p.layers_per_stage[static_cast<size_t>(stage)];
  if (stage == 0) n += count(g.embedding);
  if (stage + 1 == static_cast<int>(p.layers_per_stage.size())) n += count(g.head);
  return n;
}

// What torch's unfused Adam(W) adds to one fused pass (docs/model.md, "Optimizer step"). torch/optim/adam.py
// with decoupled weight decay, _multi_tensor_adam (foreach) and _single_tensor_adam (for_loop) run the same
// ops, per element (p the parameter the step updates, m and v the states, g the gradient):
//   p *= 1 - lr wd               read p, write p
//   m.lerp_(g, 1 - b1)           read m, g, write m
//   v *= b2                      read v, write v
//   v.addcmul_(g, g, 1 - b2)     read v, g, write v
//   d = sqrt(v)                  read v, write d
//   d /= sqrt(1 - b2^t)          read d, write d
//   d += eps                     read d, write d
//   p.addcdiv_(m, d, -step)      read p, m, d, write p       -> 4p + 14s + 2g bytes, 8 kernels
// against one fused pass reading p, m, v, g and writing p, m, v (2p + 4s + g): 2p + 10s + g more, in
// flat elementwise kernels (the residual_add class), 8 of them over all tensors (foreach) or 8 per
// tensor (for_loop). Composer's DecoupledAdamW (llm-foundry's decoupled_adamw) is the for_loop with
// m.mul_(b1).add_(g) for the lerp: one more pass over m (2s), left out.
double unfused_adam_extra_seconds(const Scenario& s, const OpGraph& g, const HardwareProfile& hw, const MemoryBreakdown& stage,
                                  int stage_index, double shard) {
  const TrainingSpec& t = s.training;
  if (t.optimizer_kernel == OptimizerKernel::fused || !is_adam(t.optimizer)) return 0.0;
  const double n = std::max(1.0, shard);
  const double master = stage.master_weights.value / n;
  const double param = master > 0 ? master : parameter_bytes(t);
  const double state = stage.optimizer.value / n / 2.0;
  const double extra = shard * (2.0 * param + 10.0 * state + kept_gradient_bytes(s));
  const double tensors = t.optimizer_kernel == OptimizerKernel::for_loop ? parameter_tensors(g, s.parallel, stage_index) : 1.0;
  return kernel_class_calls_seconds(hw, s.cluster.gpu, KernelClass::residual_add, extra, 8.0 * tensors).value;
}

// FrameworkRules::casts_gradients_to_fp32_accumulator: each micro-batch's 16-bit gradients cast to fp32
// (read 2, write 4 B per parameter) and added to the fp32 accumulator (read 4 + 4, write 4 B), a kernel of
// each per parameter tensor. DeepSpeed's BF16_Optimizer (bf16) does both in every micro-batch, also in a
// step of one; its ZeRO-1 optimizer (fp16) only casts the first micro-batch's gradient.
double fp32_accumulator_seconds(const Scenario& s, const HardwareProfile& hw, double params, double micro_batches,
                                double tensors) {
  const GpuSpec& gpu = s.cluster.gpu;
  const double adds = keeps_16bit_gradients_beside_fp32_copy(s) ? micro_batches : micro_batches - 1.0;
  const double cast = kernel_class_calls_seconds(hw, gpu, KernelClass::cast_to_fp32, 6.0 * params, tensors).value;
  const double add = kernel_class_calls_seconds(hw, gpu, KernelClass::residual_add, 12.0 * params, tensors).value;
  return micro_batches * cast + adds * add;
}

// Gradient accumulation (FrameworkRules::accumulates_gradients_in_place): every micro-batch after the
// first adds its gradients to those kept so far, `grad += new` (read 2, write 1 gradient element), one
// flat elementwise kernel per parameter tensor, over the gradients the GPU keeps (sharded with ZeRO >= 2, but
// whole and in the gathered dtype under FSDP's no_sync).
double gradient_accumulation_seconds(const Scenario& s, const OpGraph& g, const HardwareProfile& hw, int stage_index,
                                     double params, double micro_batches) {
  const ParallelSpec& p = s.parallel;
  const FrameworkRules& fw = framework_rules(s.training.framework);
  if (!fw.accumulates_gradients_in_place || p.zero > fw.in_place_accumulation_max_zero) return 0.0;
  if (accumulates_into_fp32_copy(s)) {
    return fp32_accumulator_seconds(s, hw, params, micro_batches, parameter_tensors(g, p, stage_index));
  }
  if (micro_batches <= 1) return 0.0;
  // FSDP under no_sync adds into the whole gradients (accumulates_unsharded_gradients, unsharded_gradient_bytes).
  const bool unsharded = accumulates_unsharded_gradients(s);
  const double kept = p.zero >= 2 && !unsharded ? params / p.shard_ranks() : params;
  const double bytes = 3.0 * kept * (unsharded ? unsharded_gradient_bytes(s) : kept_gradient_bytes(s));
  const double tensors = parameter_tensors(g, p, stage_index);
  return (micro_batches - 1.0) * kernel_class_calls_seconds(hw, s.cluster.gpu, KernelClass::residual_add, bytes, tensors).value;
}

// torch DistributedDataParallel without gradient_as_bucket_view (plain PyTorch, dp > 1): each gradient is
// copied into its bucket when it is ready and back after the all-reduce (reducer.cpp
// mark_variable_ready_dense `bucket_view.copy_(grad)`, finalize_bucket_dense `copy_bucket_to_grad`), on the
// compute stream, in every synchronised backward: once per step when the other micro-batches run under
// no_sync, every micro-batch otherwise (training.gradient_sync): two passes of read + write over the
// gradients, one kernel per parameter tensor each.
double ddp_bucket_copy_seconds(const Scenario& s, const OpGraph& g, const HardwareProfile& hw, int stage_index,
                               double params, double micro_batches) {
  if (!runs_ddp(s) || s.memory.ddp_gradient_as_bucket_view) return 0.0;
  const double syncs =
      reduces_every_micro_batch(framework_rules(s.training.framework), s.training, s.parallel) ? micro_batches : 1.0;
  const double bytes = 4.0 * params * element_bytes(s.training.grad_precision);
  const double tensors = parameter_tensors(g, s.parallel, stage_index);
  return syncs * kernel_class_calls_seconds(hw, s.cluster.gpu, KernelClass::residual_add, bytes, 2.0 * tensors).value;
}

// FrameworkRules::copies_gradients_into_reduce_bucket (DeepSpeed's ZeRO-1 and ZeRO-2 optimizer, not
// BF16_Optimizer): in every synchronised backward (each micro-batch at ZeRO-2, the step's last at ZeRO-1:
// reduces_every_micro_batch) each gradient is copied into the reduce bucket, which holds the parameters' dtype
// (read the kept gradient element, fp32 where fp16 accumulates in fp32; write a 16-bit one) and, reduced, the
// rank's own partition into its partition buffer of that dtype (read and write over params / dp); one copy
// kernel per parameter tensor each.
double reduce_bucket_copy_seconds(const Scenario& s, const OpGraph& g, const HardwareProfile& hw, int stage_index,
                                  double params, double micro_batches) {
  const ParallelSpec& p = s.parallel;
  const FrameworkRules& fw = framework_rules(s.training.framework);
  if (!fills_reduce_bucket(s)) return 0.0;
  const double syncs = reduces_every_micro_batch(fw, s.training, p) ? micro_batches : 1.0;
  const double bucket = parameter_bytes(s.training);
  const double bytes = (kept_gradient_bytes(s) + bucket) * params + 2.0 * bucket * params / p.shard_ranks();
  const double tensors = parameter_tensors(g, p, stage_index);
  return syncs * kernel_class_calls_seconds(hw, s.cluster.gpu, KernelClass::residual_add, bytes, 2.0 * tensors).value;
}

// FrameworkRules::engine_all_reduce_bucket (DeepSpeed's buffered_allreduce_fallback), once per step:
//  - BF16_Optimizer (keeps_16bit_gradients_beside_fp32_copy) hands over its fp32 flat gradient buffers, one
//    tensor per parameter group, which `_flatten_dense_tensors` returns as they are (no copy); allreduce_bucket
//    casts each to the communication dtype (communication_data_type: bf16 under bf16; read 4, write 2 B per
//    parameter), scales it by 1/dp after the all-reduce (postscale_gradients and gradient_average by default;
//    read 2, write 2 B) and copies it back (read 2, write 4 B). The all-reduce of bf16 gradients moves the
//    ring traffic of the fp32 reduce-scatter the planner times for ZeRO-1 (2 (n-1)/n x 2 B = (n-1)/n x 4 B).
//  - ZeRO 0 otherwise (FP16_Optimizer, fp32): the `.grad` tensors are flattened into buckets of about
//    engine_all_reduce_bucket elements (torch.cat: read and write), scaled (read and write) and copied back
//    tensor by tensor (`buf.copy_(synced)`): three read-and-write passes over the kept gradients, in the
//    communication dtype they already have.
double engine_all_reduce_copy_seconds(const Scenario& s, const OpGraph& g, const HardwareProfile& hw, int stage_index,
                                      double params) {
  const EngineAllReduce path = engine_all_reduce_of(s);
  if (path == EngineAllReduce::none) return 0.0;
  const GpuSpec& gpu = s.cluster.gpu;
  if (path == EngineAllReduce::bf16_optimizer_buffers) {
    const double groups = 1.0;  // a flat buffer per parameter group: a second group adds only latency
    return kernel_class_calls_seconds(hw, gpu, KernelClass::cast_to_16bit, 6.0 * params, groups).value +
           kernel_class_calls_seconds(hw, gpu, KernelClass::residual_add, 4.0 * params, groups).value +
           kernel_class_calls_seconds(hw, gpu, KernelClass::cast_to_fp32, 6.0 * params, groups).value;
  }
  const FrameworkRules& fw = framework_rules(s.training.framework);
  const double bytes = 2.0 * params * kept_gradient_bytes(s);  // one read-and-write pass
  const double buckets = std::ceil(params / fw.engine_all_reduce_bucket);
  const double tensors = parameter_tensors(g, s.parallel, stage_index);
  return kernel_class_calls_seconds(hw, gpu, KernelClass::residual_add, 2.0 * bytes, 2.0 * buckets).value +
         kernel_class_calls_seconds(hw, gpu, KernelClass::residual_add, bytes, tensors).value;
}

}  // namespace

OptimizerTime optimizer_step_seconds(const Scenario& s, const OpGraph& g, const HardwareProfile& hw,
                                     const MemoryBreakdown& stage, int stage_index, double bw,
                                     const OffloadTimes& offload, double backward_window, double micro_batches) {
  const ParallelSpec& p = s.parallel;
  const TrainingSpec& t = s.training;
  const GpuSpec& gpu = s.cluster.gpu;
  const double params = stage.parameters;
  // Optimizer step: memory-bound sweep over the local shard (read master, states, gradient; write them back).
  const double shard = p.zero >= 1 ? params / p.shard_ranks() : params;
  const double state_bytes = (stage.master_weights + stage.optimizer).value / std::max(1.0, shard);
  const double per_param = 2.0 * state_bytes + kept_gradient_bytes(s) + 2.0;
  double optimizer = shard * per_param / bw;
  if (framework_rules(t.framework).adamw_class_optimizer) {
    // torch's fused AdamW (DeepSpeed's FusedAdam alike): one pass reading and writing parameters and both
    // states, reading gradients (the adamw kernel class: 7 x the parameter bytes with states in the
    // parameter dtype), and the update's arithmetic per parameter (the class's element term). The host's
    // work per tensor runs while the GPU finishes the backward, so the class's latency is left out. A
    // framework property: the layer code does not change the optimizer.
    const double wb = parameter_bytes(t);
    const double eager_per_param = 2.0 * wb + kept_gradient_bytes(s) + 2.0 * state_bytes;
    optimizer = kernel_class_pass_seconds(hw, gpu, KernelClass::adamw, shard * eager_per_param, 0.0, shard).value;
  }
  optimizer += unfused_adam_extra_seconds(s, g, hw, stage, stage_index, shard);
  double passes = 0;  // over the weights and gradients, beside the update
  const double m = std::max(1.0, micro_batches);
  if (t.autocast) {
    // Autocast casts every fp32 weight to 16 bits in each micro-batch's forward (read 4, write 2 B; its
    // cache lives for one autocast region, torch/amp/autocast_mode.py clear_autocast_cache on exit), and
    // the recomputed layers' weights again in the recompute, which torch.utils.checkpoint runs in an
    // autocast region of its own; each 16-bit weight gradient goes back to fp32 in each backward (read 2,
    // write 4 B). A layer recomputed up to its early stop is counted whole.
    const LayerRecompute rerun = layer_recompute(s);
    const double recast = (rerun.whole + rerun.stopped) * stage.layer_parameters;
    passes += m * ((params + recast) * 6.0 / (gpu.memory_bandwidth.value * hw.efficiency_of(KernelClass::cast_to_16bit)) +
                      params * 6.0 / (gpu.memory_bandwidth.value * hw.efficiency_of(KernelClass::cast_to_fp32)));
  }
  passes += gradient_accumulation_seconds(s, g, hw, stage_index, params, m);
  passes += ddp_bucket_copy_seconds(s, g, hw, stage_index, params, m);
  passes += reduce_bucket_copy_seconds(s, g, hw, stage_index, params, m);
  passes += engine_all_reduce_copy_seconds(s, g, hw, stage_index, params);
  // FP8 training: Transformer Engine casts each FP8 GEMM's bf16 weight to FP8 with its transpose once
  // per step (fp8_cast_transpose_fused; read 2 B, write 2 B per parameter): Megatron-Core's schedules
  // set is_first_microbatch on the first micro-batch only, later ones reuse the cached FP8 weights
  // (docs/model.md, "FP8 training"). Current scaling reads each weight once more for its amax before the
  // cast (TE 2.9 Float8CurrentScalingQuantizer::quantize_impl, nvte_compute_amax): 2 B per parameter.
  const double weight_cast_bytes = t.fp8_recipe == Fp8Recipe::current ? 4.0 + 2.0 : 4.0;
  passes += fp8_weight_parameters(g, s, stage_index) * weight_cast_bytes /
               (gpu.memory_bandwidth.value * hw.efficiency_of(KernelClass::cast_to_16bit));
  if (p.offload_optimizer == OffloadTarget::cpu || p.offload_params == OffloadTarget::cpu) {
    // The step runs on the host; the updated parameters come back over PCIe, and the gradient copies
    // to the host show beyond the backward passes they overlap, or in full where the framework's copy
    // holds the backward (FrameworkRules::host_gradient_copy_blocks).
    const bool copy_waited = host_gradient_copy_holds_backward(framework_rules(t.framework), p);
    const double hidden_behind = copy_waited ? 0.0 : backward_window;
    // The step waits for the host, which the device's passes above do not run beside (they are not counted).
    return {offload.cpu_step + offload.params_h2d + std::max(0.0, offload.grads_d2h - hidden_behind), 0.0};
  }
  return {optimizer, passes};
}

}  // namespace tp
