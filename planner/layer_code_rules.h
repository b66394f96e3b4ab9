// What the layer code keeps for backward and how its non-GEMM ops run, by op family (SavedTensorRules), and
// the vocabulary padding of fused layer code: Transformer Engine and Megatron's fused kernels, eager PyTorch
// (Hugging Face transformers), torch.compile. The layer code is the scenario's training.layer_code, read
// through layer_code_of(); the framework's own rules (model states, sharding, collectives) are in
// framework_rules.h. Each rule cites the code it was counted from (docs/model.md, "Frameworks").
#pragma once

#include <cstdint>

#include "specs.h"

namespace tp {

// The vocabulary is padded to a multiple of this x tp by fused layer code (0 for eager: kept as the model's
// config gives it): the embedding and output layer hold, the logits GEMM and the loss compute the padded
// rows. Megatron-LM's --make-vocab-size-divisible-by, default 128 (megatron/training/arguments.py;
// _vocab_size_with_padding in megatron/training/tokenizer/tokenizer.py, core_r0.8.0), the same flag and
// default in Megatron-DeepSpeed (megatron/arguments.py, 2022); NeMo 24.07 (megatron_base_model.py,
// make_vocab_size_divisible_by default 128) and Megatron-Bridge (gpt_provider.py with its performance
// configs' should_pad_vocab = True) pad alike. Hugging Face models keep the config's vocabulary.
int vocab_multiple(LayerCode code);

// The vocabulary layer code `code` runs a model of `vocab` tokens with at tensor parallelism `tp`: rounded up
// to a multiple of vocab_multiple x tp (fused: 128256 at tp 8 -> 129024), or `vocab` unchanged.
std::int64_t padded_vocab(std::int64_t vocab, LayerCode code, int tp);

// Bytes per element that the layer code keeps for backward, by op family, for the scenario's layer code
// (layer_code_of) under its precision, autocast and compile settings. Counts distinct storages (a tensor two
// ops save is counted once).
struct SavedTensorRules {
  double residual = 2;       // dtype of the residual stream (fp32 under autocast: fp32 embeddings)
  double norm = 2;           // per element of a norm's input (input, plus the fp32/normalized copies eager code keeps)
  double head_norm = 2;      // the same for q_norm / k_norm, whose input is a 16-bit GEMM output in every mode
  double gemm_input = 2;     // per element of the input of a GEMM after a norm, per reading module
  // The eager model's modules: Llama-style code runs q_proj, k_proj and v_proj (rotary models) and gate_proj
  // and up_proj (SwiGLU) as separate Linear modules, GPT-2 one c_attn and one c_fc.
  bool separate_qkv_modules = false, separate_gate_up_modules = false;
  bool separate_qkv = false;  // q, k and v are separate modules that each cast their input (autocast)
  bool separate_gate_up = false;  // the same for SwiGLU's gate and up
  double activation = 2;     // per element of an fc1-output-wide tensor, the activation's own saved tensors
                             // (multiplied by the activation's width, see op_graph.cpp)
  double fc2_input = 2;      // per element of the second MLP GEMM's input
  double attention_out_extra = 0;  // per element of the attention output: an FP8 copy the out-projection keeps
  double head_input = 2;     // per element of the output layer's input
  // Loss on the logits, per logit: saved, and extra working memory at the forward and backward peak.
  double loss_saved = 4, loss_forward_extra = 0, loss_backward_extra = 0;
  // HBM bytes per logit that the loss's forward and backward move when it is timed at the generic memory
  // efficiency (Megatron's vocab-parallel loss and the fused kernels, counted from their code in
  // layer_code_rules.cpp); eager code's torch-op loss is timed as the measured cross_entropy kernel class
  // instead (loss_is_eager_class).
  double loss_forward_traffic = 12, loss_backward_traffic = 24;
  bool loss_is_eager_class = false;  // the logits.float() + cross_entropy torch ops the class measured
  bool autocast_weight_copies = false;  // 16-bit copies of the GEMM weights cached until backward

  // Time of eager non-GEMM ops: each is timed by its kernel class's bandwidth (profile) over its
  // minimal traffic times the memory passes its eager torch ops make (counted from the code, below).
  bool eager_kernels = false;
  double norm_passes = 1, activation_passes = 1, residual_passes = 1, rotary_passes = 1;
  double norm_kernels = 1, activation_kernels = 1, rotary_kernels = 1;
  double head_norm_passes = 1, head_norm_kernels = 1;  // q_norm / k_norm (model.qk_norm)
  double casts_per_norm_output = 0;  // autocast casts of a norm's output (one per reading module)
  double casts_after_activation = 0;  // autocast cast of an fp32 activation output before fc2

  bool attention_unpad = false;  // training.attention_unpad: the unpad/pad copies around the attention core
  bool repeat_kv = false;        // repeat_kv_of: K and V repeated to the query heads before the attention

  // FP8 training: the scaling recipe the quantization kernels follow (op_graph_kernels.h).
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
};

SavedTensorRules saved_tensor_rules(const TrainingSpec& t, const ModelSpec& m);

}  // namespace tp
