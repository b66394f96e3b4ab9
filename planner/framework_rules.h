// What each training framework does with memory and kernels, as a table: one entry per framework,
// each rule citing the code or documentation it was read from (docs/model.md, "Frameworks").
// The op graph (saved tensors, loss), the memory estimate (dtypes, gradient lifetime) and the
// step time (memory passes of non-GEMM ops) consult this table instead of testing the framework.
#pragma once

#include <cstdint>
#include <limits>

#include "specs.h"

namespace tp {

// How a framework's layer code keeps tensors for backward.
enum class LayerCode {
  fused,  // Megatron-Core + Transformer Engine: fused norm+GEMM, bias-GeLU, SwiGLU, vocab-parallel loss
  eager,  // PyTorch modules as written (Hugging Face transformers, torchtitan): every op saves its own inputs
};

struct FrameworkRules {
  Framework framework = Framework::megatron;
  const char* name = "";
  LayerCode layer_code = LayerCode::fused;
  // Gradients live in a buffer allocated once and kept across steps (Megatron's contiguous grad
  // buffer, DeepSpeed's partitioned gradients) instead of being freed by zero_grad(set_to_none=True).
  bool persistent_gradients = true;
  StatePrecision default_state_precision = StatePrecision::fp32;
  // Fused attention throughput relative to the profile's (cuDNN / Transformer Engine) attention:
  // PyTorch's SDPA runs FlashAttention-2 on Hopper.
  double attention_throughput = 1.0;
  const char* source = "";  // where the rules above were read
  // ZeRO-3 parameter gathers. 0: whole layers are gathered (FSDP units, `memory.zero3_prefetch_layers`
  // ahead). DeepSpeed gathers each submodule just before it runs and releases it after, fetching up to
  // `zero3_prefetch_parameters` elements ahead (deepspeed/runtime/zero/config.py: stage3_prefetch_bucket_size
  // default 5e7; partitioned_param_coordinator.py fetch_sub_module / release_sub_module).
  double zero3_prefetch_parameters = 0;
  // No ZeRO-3 prefetch is issued while this many parameters are gathered: DeepSpeed's
  // stage3_max_live_parameters (runtime/zero/config.py, default 1e9; partitioned_param_coordinator.py,
  // fetch_sub_module: the prefetch budget is min(max_available - available, prefetch_bucket_size),
  // nothing is prefetched when it is not positive). FSDP prefetches one unit ahead whatever its size.
  double zero3_live_parameters = std::numeric_limits<double>::infinity();
  // A gathered parameter used again before this many other parameters are fetched is kept rather than
  // released: DeepSpeed's stage3_max_reuse_distance (runtime/zero/config.py, default 1e9;
  // partitioned_param_coordinator.py, __params_to_release); 0 where every module is released after use.
  double zero3_reuse_distance = 0;
  // The gradients are reduce-scattered after every backward, not once per step: each rank keeps only
  // its partition of the accumulated gradient (DeepSpeed issue #2252, maintainer's answer; engine.py
  // allreduce_gradients: "ZeRO stage >= 2 communicates during non gradient accumulation boundaries as well").
  bool reduce_every_micro_batch = false;
  // Full recompute runs the forward hooks again, so the recompute forward gathers every module anew
  // (DeepSpeed's per-submodule fetch; FSDP's recompute reuses the backward's gather of the unit).
  bool recompute_regathers = false;
  // Tensors of at most this many elements are persistent under ZeRO-3: held whole on every rank and never
  // gathered (DeepSpeed's stage3_param_persistence_threshold, runtime/zero/config.py, default 1e5;
  // partition_parameters.py sets ds_persist). 0 where every parameter of a unit is sharded (FSDP2's
  // fully_shard, Megatron's distributed optimizer). planner/zero3_modules.h.
  double zero3_persistence_threshold = 0;
  // The vocabulary is padded to a multiple of this x tp (0: kept as the model's config gives it): the
  // embedding and output layer hold, the logits GEMM and the loss compute the padded rows. Megatron-LM's
  // --make-vocab-size-divisible-by, default 128 (megatron/training/arguments.py; _vocab_size_with_padding in
  // megatron/training/tokenizer/tokenizer.py, core_r0.8.0); NeMo 24.07 (megatron_base_model.py,
  // make_vocab_size_divisible_by default 128) and Megatron-Bridge (gpt_provider.py with its performance
  // configs' should_pad_vocab = True) pad alike. Hugging Face models keep the config's vocabulary.
  int vocab_multiple = 0;
};

const FrameworkRules& framework_rules(Framework f);

// The vocabulary framework `f` runs a model of `vocab` tokens with at tensor parallelism `tp`: rounded up to
// a multiple of vocab_multiple x tp (Megatron: 128256 at tp 8 -> 129024), or `vocab` unchanged.
std::int64_t padded_vocab(std::int64_t vocab, Framework f, int tp);

// Bytes per element that the layer code keeps for backward, by op family, for one framework under
// the scenario's precision, autocast and compile settings. Counts distinct storages (a tensor two
// ops save is counted once).
struct SavedTensorRules {
  double residual = 2;       // dtype of the residual stream (fp32 under autocast: fp32 embeddings)
  double norm = 2;           // per element of a norm's input (input, plus the fp32/normalized copies eager code keeps)
  double gemm_input = 2;     // per element of the input of a GEMM after a norm, per reading module
  bool separate_qkv = false;  // q, k and v are separate Linear modules (each casts its input under autocast)
  bool separate_gate_up = false;  // SwiGLU gate and up are separate Linear modules
  double activation = 2;     // per element of an fc1-output-wide tensor, the activation's own saved tensors
                             // (multiplied by the activation's width, see op_graph.cpp)
  double fc2_input = 2;      // per element of the second MLP GEMM's input
  double attention_out_extra = 0;  // per element of the attention output: an FP8 copy the out-projection keeps
  double head_input = 2;     // per element of the output layer's input
  // Loss on the logits, per logit: saved, and extra working memory at the forward and backward peak.
  double loss_saved = 4, loss_forward_extra = 0, loss_backward_extra = 0;
  // HBM bytes per logit that the loss's forward and backward move when it is timed at the generic memory
  // efficiency (Megatron's vocab-parallel loss, counted from its torch ops in framework_rules.cpp); eager
  // code times its loss as the measured cross_entropy kernel class instead.
  double loss_forward_traffic = 12, loss_backward_traffic = 24;
  bool autocast_weight_copies = false;  // 16-bit copies of the GEMM weights cached until backward

  // Time of eager non-GEMM ops: each is timed by its kernel class's bandwidth (profile) over its
  // minimal traffic times the memory passes its eager torch ops make (counted from the code, below).
  bool eager_kernels = false;
  double norm_passes = 1, activation_passes = 1, residual_passes = 1, rotary_passes = 1;
  double norm_kernels = 1, activation_kernels = 1, rotary_kernels = 1;
  double casts_per_norm_output = 0;  // autocast casts of a norm's output (one per reading module)
  double casts_after_activation = 0;  // autocast cast of an fp32 activation output before fc2

  // FP8 training: the scaling recipe the quantization kernels follow (op_graph_kernels.h).
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
};

SavedTensorRules saved_tensor_rules(const TrainingSpec& t, const ModelSpec& m);

}  // namespace tp
