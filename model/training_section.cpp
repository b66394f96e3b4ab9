// The training: section of a scenario file (scenario_sections.h): value ranges, defaults and in-section checks.
#include <string>

#include "scenario_sections.h"
#include "section_limits.h"
#include "spec_reader.h"
#include "units.h"

namespace tp {
namespace {

using section_limits::at_most;
using section_limits::kBig;
using section_limits::kMaxTokens;

Precision read_precision(MapReader& r, const std::string& key, Precision def) {
  return r.choice(key, def,
                  {{"fp32", Precision::fp32}, {"tf32", Precision::tf32}, {"fp16", Precision::fp16},
                   {"bf16", Precision::bf16}, {"fp8", Precision::fp8}});
}

// training.fused_loss and fp8_recipe, after precision and framework (docs/scenario-reference.md).
void read_loss_and_fp8_recipe(MapReader& r, TrainingSpec& t) {
  t.fused_loss = r.boolean("fused_loss", t.fused_loss);
  // Megatron's fused loss is Transformer Engine's parallel_cross_entropy, written and tested for bf16 and
  // fp32 logits only (transformer_engine/pytorch/cross_entropy.py; tests/pytorch/test_parallel_cross_entropy.py).
  if (t.fused_loss && layer_code_of(t) == LayerCode::fused && t.precision == Precision::fp16) {
    r.fail("fused_loss", "the fused layer code's cross-entropy (Transformer Engine parallel_cross_entropy) takes bf16 "
                         "or fp32 logits; training.precision fp16 gives fp16 logits");
  }
  t.fp8_recipe = r.choice("fp8_recipe", t.fp8_recipe, {{"delayed", Fp8Recipe::delayed}, {"current", Fp8Recipe::current}});
  if (r.has("fp8_recipe") && t.precision != Precision::fp8) {
    r.fail("fp8_recipe", std::string("is the FP8 scaling recipe; only valid with training.precision: fp8 (here ") +
                             to_string(t.precision) + ")");
  }
}

// training.layer_code (docs/scenario-reference.md), after framework, autocast and compile: absent, the
// framework's own. Fused code is Megatron's model with 16-bit weights: torch.autocast (fp32 weights cast per
// module) and torch.compile (Inductor fusing eager elementwise chains) are settings of eager PyTorch modules,
// and the fused code's rules (planner/framework_rules.cpp) model neither, so both are refused with it.
void read_layer_code(MapReader& r, TrainingSpec& t) {
  if (r.has("layer_code")) {
    t.layer_code = r.choice("layer_code", LayerCode::fused, {{"fused", LayerCode::fused}, {"eager", LayerCode::eager}});
  }
  if (layer_code_of(t) != LayerCode::fused) return;
  if (t.autocast) {
    r.fail("layer_code", "fused layer code (Megatron's model, Transformer Engine kernels) keeps 16-bit weights; "
                         "training.autocast: true is a setting of eager PyTorch modules (use layer_code: eager)");
  }
  if (t.compile) {
    r.fail("layer_code", "fused layer code runs its own fused kernels; training.compile: true (torch.compile) "
                         "fuses eager PyTorch modules (use layer_code: eager)");
  }
  if (t.fused_norm) {
    r.fail("fused_norm", "is a setting of eager layer code; the fused layer code (Megatron's model) fuses its norms "
                         "already (use layer_code: eager)");
  }
}

// training.checkpoint_early_stop, after framework and layer_code: absent, on for fsdp's eager code (torch's
// non-reentrant checkpoint_wrapper, early stop on since torch 2.1), off elsewhere (Hugging Face's reentrant
// default, DeepSpeed's and Megatron's own checkpoint functions). Fused code checkpoints with Megatron's own
// function, which reruns the whole region (tensor_parallel/random.py CheckpointFunction).
void read_checkpoint_early_stop(MapReader& r, TrainingSpec& t) {
  const bool eager = layer_code_of(t) == LayerCode::eager;
  t.checkpoint_early_stop = r.boolean("checkpoint_early_stop", eager && t.framework == Framework::fsdp);
  if (t.checkpoint_early_stop && !eager) {
    r.fail("checkpoint_early_stop", "is torch.utils.checkpoint's early stop (use_reentrant=False); the fused layer "
                                    "code checkpoints with Megatron's own function, which reruns the whole region "
                                    "(use layer_code: eager)");
  }
}

// Sequence length, the batch in sequences or in tokens, the micro-batch and the run's tokens.
void read_batch(MapReader& r, TrainingSpec& t) {
  t.sequence_length = r.integer("sequence_length", t.sequence_length, 1, kBig);
  const bool by_sequences = r.has("global_batch");
  const bool by_tokens = r.has("global_batch_tokens");
  if (by_sequences && by_tokens) {
    r.fail("global_batch_tokens", "give either training.global_batch (sequences) or global_batch_tokens, not both");
  }
  t.global_batch = r.integer("global_batch", 0, 1, kBig);
  if (by_tokens) {
    double tokens = r.quantity("global_batch_tokens", Dim::count, 0.0, 1.0);
    double seqs = tokens / static_cast<double>(t.sequence_length);
    if (seqs != static_cast<double>(static_cast<std::int64_t>(seqs))) {
      r.fail("global_batch_tokens", "is not a whole number of sequences of training.sequence_length (" +
                                        std::to_string(t.sequence_length) + ") tokens");
    }
    t.global_batch = static_cast<std::int64_t>(seqs);
  }
  t.micro_batch = r.integer("micro_batch", t.micro_batch, 1, kBig);
  if (!by_sequences && !by_tokens) t.global_batch = 0;  // resolve_layout(): micro_batch x dp
  t.tokens = at_most(r, "tokens", r.quantity("tokens", Dim::count, 1e12, 0.0), kMaxTokens);
}

// The framework and the torch settings: they set the defaults of the keys read after them
// (docs/model.md, "Frameworks").
void read_framework(MapReader& r, TrainingSpec& t) {
  t.framework = r.choice("framework", t.framework,
                         {{"megatron", Framework::megatron}, {"deepspeed", Framework::deepspeed},
                          {"fsdp", Framework::fsdp}, {"pytorch", Framework::pytorch}});
  t.autocast = r.boolean("autocast", t.autocast);
  t.compile = r.boolean("compile", t.compile);
  t.fused_norm = r.boolean("fused_norm", t.fused_norm);
  if (t.autocast && (t.framework == Framework::megatron || t.framework == Framework::deepspeed)) {
    r.fail("autocast", std::string("is a torch.autocast setting; ") + to_string(t.framework) +
                           " keeps 16-bit weights with an fp32 master copy (use framework: pytorch or fsdp)");
  }
  if (t.compile && t.framework != Framework::pytorch && t.framework != Framework::fsdp) {
    r.fail("compile", std::string("is a torch.compile setting; ") + to_string(t.framework) + " does not use it");
  }
}

// The master copy and the gradients' dtype. Plain PyTorch keeps no master copy: a model cast to 16 bits
// trains in 16 bits, and under autocast the fp32 parameters are the master (PyTorch AMP docs, "Automatic
// Mixed Precision").
void read_master_and_gradients(MapReader& r, TrainingSpec& t) {
  const bool own_master = t.framework == Framework::pytorch || t.autocast;
  std::string master =
      r.choice<std::string>("master_weights", own_master ? "none" : "fp32", {{"none", "none"}, {"fp32", "fp32"}});
  if (t.autocast && master == "fp32") r.fail("master_weights", "autocast keeps fp32 parameters: they are the master copy");
  t.master_weights = master == "fp32";
  Precision same = t.precision == Precision::fp8 ? Precision::bf16 : t.precision;
  if (same == Precision::tf32) same = Precision::fp32;
  if (t.autocast) same = Precision::fp32;  // gradients take the fp32 parameters' dtype
  // Megatron-LM accumulates and all-reduces a bf16 model's gradients in fp32 (arguments.py: "bfloat16 requires
  // gradient accumulation and all-reduce to be done in fp32", accumulate_allreduce_grads_in_fp32; the DDP
  // config's grad_reduce_in_fp32): its default here, FP8 training included (bf16 parameters).
  const bool megatron_bf16 = t.framework == Framework::megatron && same == Precision::bf16;
  // FSDP2 as torchtitan runs it reduces a bf16 mixed-precision model's gradients in fp32 (torchtitan
  // config/configs.py mixed_precision_reduce: "float32", its only value, passed as MixedPrecisionPolicy's
  // reduce_dtype by models/llama3/parallelize.py; NeMo AutoModel's FSDP2Config alike). A model cast to bf16
  // (master_weights: none) has no fp32 dtype to reduce in.
  const bool fsdp_mixed_bf16 = t.framework == Framework::fsdp && same == Precision::bf16 && t.master_weights;
  t.grad_precision = r.choice(
      "grad_precision", megatron_bf16 || fsdp_mixed_bf16 ? Precision::fp32 : same,
      {{"same", same}, {"fp32", Precision::fp32}, {"fp16", Precision::fp16}, {"bf16", Precision::bf16}});
}

// The optimizer, the dtype of its states and the kernel its step runs.
void read_optimizer(MapReader& r, TrainingSpec& t) {
  t.optimizer = r.choice("optimizer", t.optimizer,
                         {{"sgd", Optimizer::sgd}, {"momentum", Optimizer::momentum}, {"adam", Optimizer::adam},
                          {"adamw", Optimizer::adamw}, {"adafactor", Optimizer::adafactor},
                          {"adam8bit", Optimizer::adam8bit}, {"lion", Optimizer::lion}});
  // torch.optim.AdamW/SGD keep states like the parameter ("same"); Megatron, DeepSpeed and FSDP keep them in fp32.
  t.optimizer_state_precision =
      r.choice("optimizer_state_precision",
               t.framework == Framework::pytorch ? StatePrecision::same : StatePrecision::fp32,
               {{"fp32", StatePrecision::fp32}, {"same", StatePrecision::same}});
  // torch.optim.AdamW without fused/foreach runs its multi-tensor (foreach) code on CUDA (torch/optim/
  // optimizer.py _default_to_fused_or_foreach); Megatron, DeepSpeed and torchtitan use fused kernels.
  t.optimizer_kernel = r.choice(
      "optimizer_kernel", t.framework == Framework::pytorch ? OptimizerKernel::foreach : OptimizerKernel::fused,
      {{"fused", OptimizerKernel::fused}, {"foreach", OptimizerKernel::foreach}, {"for_loop", OptimizerKernel::for_loop}});
  if (r.has("optimizer_kernel") && !is_adam(t.optimizer)) {
    r.fail("optimizer_kernel", std::string("sets how an Adam or AdamW step runs; optimizer is ") + to_string(t.optimizer));
  }
}

// The attention: fused or explicit, which fused kernel, unpadded around it or not.
void read_attention(MapReader& r, TrainingSpec& t) {
  t.flash_attention = r.boolean("flash_attention", t.flash_attention);
  if (r.has("attention_kernel")) {
    t.attention_kernel = read_attention_kernel(r, "attention_kernel", AttentionKernel::flash);
    if (!t.flash_attention) {
      r.fail("attention_kernel", "names the fused attention kernel, but flash_attention is false (explicit attention); "
                                 "set flash_attention: true or remove the key");
    }
  }
  if (r.has("repeat_kv")) {
    t.repeat_kv = r.boolean("repeat_kv", false);
    if (*t.repeat_kv && (t.framework == Framework::megatron || t.framework == Framework::deepspeed)) {
      r.fail("repeat_kv", std::string("is a setting of eager PyTorch model code; ") + to_string(t.framework) +
                              "'s attention takes grouped K and V");
    }
  }
  t.attention_unpad = r.boolean("attention_unpad", t.attention_unpad);
  if (t.attention_unpad && !t.flash_attention) {
    r.fail("attention_unpad", "unpads Q, K, V around a fused attention kernel's variable-length entry point, but "
                              "flash_attention is false (explicit attention); set flash_attention: true or remove the key");
  }
}

// When gradients are reduced across micro-batches. Megatron's schedules always run the first micro-batches
// under no_sync; DeepSpeed's engine decides by ZeRO stage (its no_sync refuses partitioned gradients). FSDP
// and plain PyTorch leave it to the loop.
void read_gradient_sync(MapReader& r, TrainingSpec& t) {
  if (!r.has("gradient_sync")) return;
  if (t.framework == Framework::megatron || t.framework == Framework::deepspeed) {
    r.fail("gradient_sync", std::string("is the training loop's choice under fsdp or pytorch; ") + to_string(t.framework) +
                                " decides it itself (docs/scenario-reference.md); remove the key");
  }
  t.gradient_sync = r.choice("gradient_sync", GradientSync::every_micro_batch,
                             {{"every_micro_batch", GradientSync::every_micro_batch},
                              {"last_micro_batch", GradientSync::last_micro_batch}});
}

}  // namespace

TrainingSpec read_training(MapReader& r) {
  TrainingSpec t;
  read_batch(r, t);
  t.precision = read_precision(r, "precision", t.precision);
  read_framework(r, t);
  read_layer_code(r, t);
  read_checkpoint_early_stop(r, t);
  read_loss_and_fp8_recipe(r, t);
  read_master_and_gradients(r, t);
  read_optimizer(r, t);
  read_attention(r, t);
  t.moe_dispatcher = r.choice("moe_dispatcher", t.moe_dispatcher,
                              {{"all_to_all", MoeDispatcher::all_to_all}, {"deepep", MoeDispatcher::deepep}});
  read_gradient_sync(r, t);
  return t;
}

}  // namespace tp
