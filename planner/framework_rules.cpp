#include "framework_rules.h"

namespace tp {
namespace {

// One entry per framework. Sources (read with the project's code search; docs/model.md, "Frameworks"):
// - megatron: megatron/core/distributed/param_and_grad_buffer.py (one contiguous gradient buffer kept for
//   the run), megatron/core/optimizer/distrib_optimizer.py (fp32 main parameters and Adam states),
//   Transformer Engine layernorm_linear.py / megatron/core/fusions/fused_bias_gelu.py, fused_bias_swiglu.py
//   (fused norm+GEMM and activation kernels: one pass each), tensor_parallel/cross_entropy.py (fp32 loss).
// - deepspeed: deepspeed/runtime/zero/stage_1_and_2.py and stage3.py (fp32 partitions of parameters and
//   Adam states, gradient partitions kept across steps), runtime/bf16_optimizer.py (the fp32 gradient
//   accumulator of bf16 below ZeRO-2); the layer code is the user's PyTorch model,
//   usually Hugging Face transformers (https://huggingface.co/docs/transformers/deepspeed), eager by default;
//   Megatron-DeepSpeed's fused Megatron layer is training.layer_code: fused.
// - fsdp: torch/distributed/fsdp/_fully_shard (FSDP2: sharded fp32 parameters, MixedPrecisionPolicy
//   param_dtype bf16 gathered per layer, gradients freed by zero_grad); torchtitan models/llama3/model.py
//   (eager RMSNorm, separate wq/wk/wv and w1/w3 Linear modules, SDPA).
// - pytorch: torch/optim/adamw.py (exp_avg, exp_avg_sq = zeros_like(param): states in the parameter
//   dtype), torch/optim/optimizer.py zero_grad(set_to_none=True); transformers modeling_llama.py
//   (LlamaRMSNorm upcasts to fp32), activations.py (NewGELUActivation composed of pow/tanh/mul: the
//   model's `gelu_tanh`; `gelu` is torch's one-kernel GELU, llm-foundry MPT's ffn_act_fn default),
//   loss/loss_utils.py ForCausalLMLoss (logits.float() then cross_entropy).
const FrameworkRules kRules[] = {
    {.framework = Framework::megatron,
     .name = "megatron",
     .persistent_gradients = true,
     .transformer_engine_attention = true,
     .adamw_class_optimizer = false,
     .source = "Megatron-Core + Transformer Engine: param_and_grad_buffer.py, distrib_optimizer.py, fused_bias_gelu.py",
     // Megatron-FSDP (zero 2: optim_grads, 3: optim_grads_params) reduce-scatters in every backward:
     // megatron_fsdp.py, grad_reduce_every_bprop; the distributed optimizer (zero 0, 1) once per step.
     .reduce_every_micro_batch = true,
     .reduce_every_micro_batch_from_zero = 2,
     .tied_embedding_grad_sync = true,
     .sequence_parallel_grad_sync = true,
     .waits_for_reduce_after_backward = false},
    {.framework = Framework::deepspeed,
     .name = "deepspeed",
     .persistent_gradients = true,
     .source = "DeepSpeed ZeRO: runtime/zero/stage_1_and_2.py, stage3.py; layers: the user's (Hugging Face) model",
     .zero3_whole_layers = false,
     .zero3_prefetch_parameters = 5e7,
     .zero3_live_parameters = 1e9,
     .zero3_reuse_distance = 1e9,
     .reduce_every_micro_batch = true,
     .reduce_every_micro_batch_from_zero = 2,
     .accumulates_gradients_in_place = true,
     .in_place_accumulation_max_zero = 2,
     .copies_gradients_into_reduce_bucket = true,
     .engine_all_reduce_bucket = 5e8,
     .casts_gradients_to_fp32_accumulator = true,
     .recompute_regathers = true,
     .host_gradient_copy_blocks = true,
     .zero3_persistence_threshold = 1e5,
     .zero3_reduce_bucket = 5e8,
     .tied_embedding_grad_sync = true,
     .overlaps_zero12_collectives = false,
     .replica_all_reduce_once_per_step = true,
     .gradient_partitions_on_host = true},
    {.framework = Framework::fsdp,
     .name = "fsdp",
     .persistent_gradients = false,
     .sharded_parameter_is_master = true,
     .source = "FSDP2 fully_shard + torchtitan models/llama3/model.py",
     .reduce_every_micro_batch = true,  // no no_sync / set_requires_gradient_sync(False) unless asked
     .accumulates_gradients_in_place = true,
     .replica_all_reduce_own_stream = true,
     .zero2_gathers_per_unit = true,
     .sharded_gradient_in_parameter_dtype = true,
     .pipeline_syncs_last_micro_batch = true},
    {.framework = Framework::pytorch,
     .name = "pytorch",
     .persistent_gradients = false,
     .source = "PyTorch eager + Hugging Face transformers: optim/adamw.py, modeling_llama.py, loss_utils.py",
     .accumulates_gradients_in_place = true},
};

}  // namespace

const FrameworkRules& framework_rules(Framework f) {
  for (const FrameworkRules& r : kRules) {
    if (r.framework == f) return r;
  }
  return kRules[0];
}

double kept_gradient_bytes(const Scenario& s) {
  const TrainingSpec& t = s.training;
  if (!framework_rules(t.framework).sharded_gradient_in_parameter_dtype) {
    return element_bytes(t.grad_precision);
  }
  return sharded_parameter_bytes(t);
}

double unsharded_gradient_bytes(const Scenario& s) {
  if (s.memory.fsdp_version == FsdpVersion::fsdp2) return element_bytes(s.training.grad_precision);
  return parameter_bytes(s.training);
}

bool accumulates_into_fp32_copy(const Scenario& s) {
  const FrameworkRules& fw = framework_rules(s.training.framework);
  return fw.casts_gradients_to_fp32_accumulator && s.parallel.zero < 2 && s.training.grad_precision == Precision::fp32 &&
         parameter_bytes(s.training) == 2.0;
}

bool keeps_16bit_gradients_beside_fp32_copy(const Scenario& s) {
  return accumulates_into_fp32_copy(s) && s.training.precision != Precision::fp16;
}

EngineAllReduce engine_all_reduce_of(const Scenario& s) {
  if (framework_rules(s.training.framework).engine_all_reduce_bucket <= 0) return EngineAllReduce::none;
  if (keeps_16bit_gradients_beside_fp32_copy(s)) return EngineAllReduce::bf16_optimizer_buffers;
  return s.parallel.zero == 0 ? EngineAllReduce::flattened_buckets : EngineAllReduce::none;
}

bool fills_reduce_bucket(const Scenario& s) {
  const int zero = s.parallel.zero;
  return framework_rules(s.training.framework).copies_gradients_into_reduce_bucket &&
         (zero == 2 || (zero == 1 && !keeps_16bit_gradients_beside_fp32_copy(s)));
}

double sharded_parameter_bytes(const TrainingSpec& t) {
  const double master = master_bytes(t);
  return master > 0 ? master : parameter_bytes(t);
}

Zero3Settings zero3_settings_of(const FrameworkRules& fw, const MemorySettings& m) {
  Zero3Settings z;
  z.whole_layers = fw.zero3_whole_layers;
  z.prefetch_parameters = m.zero3_prefetch_bucket.value_or(fw.zero3_prefetch_parameters);
  z.live_parameters = m.zero3_max_live_parameters.value_or(fw.zero3_live_parameters);
  z.reuse_distance = m.zero3_max_reuse_distance.value_or(fw.zero3_reuse_distance);
  z.persistence_threshold = m.zero3_persistence_threshold.value_or(fw.zero3_persistence_threshold);
  z.reduce_bucket = m.zero3_reduce_bucket.value_or(fw.zero3_reduce_bucket);
  z.recompute_regathers = fw.recompute_regathers;
  if (fw.framework == Framework::fsdp) z.backward_prefetch = m.fsdp_backward_prefetch;
  // FSDP units of one submodule each: gathered module by module like DeepSpeed, but with no live limit
  // (FSDP prefetches the next unit whatever its size) and nothing kept for reuse. Under an activation
  // checkpoint that wraps the units (ptd_benchmark: checkpoint_wrapper(Block) around wrap()ped
  // submodules) the recompute forward runs every unit's FSDP forward inside the backward: it gathers the
  // unit and frees it again after its forward (PyTorch 1.11 FullyShardedDataParallel.forward frees
  // whenever reshard_after_forward; later FSDP1 skips the reshard only for a handle already in
  // BACKWARD_PRE, i.e. a checkpoint inside the unit, torch/distributed/fsdp/_runtime_utils.py
  // _post_forward), so its pre-backward hook gathers it once more: a recompute pass of gathers, and a
  // backward pass after it.
  if (fw.framework == Framework::fsdp && m.fsdp_unit == FsdpUnit::submodule) {
    z.whole_layers = false;
    z.live_parameters = std::numeric_limits<double>::infinity();
    z.reuse_distance = 0;
    z.recompute_regathers = true;
  }
  return z;
}

}  // namespace tp
