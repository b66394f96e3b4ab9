// The fused-attention kernels' rules (planner/attention_kernel_rules.h).
#include "attention_kernel_rules.h"

#include <algorithm>
#include <cmath>

#include "framework_rules.h"

namespace tp {
namespace {

// PyTorch SDPA's FlashAttention-2 kernels (pytorch_flash::flash_fwd_kernel in
// h100-pytorch-kernel-time.json) against cuDNN's on the same shapes (torch-attention-and-kernels.json,
// causal, s 4096, head dim 64 and 128): forward 268/391 and 322/579, backward 173/263 and 196/352;
// mean 0.61. Measured on the H100; used wherever a run's kernel and its profile's differ.
constexpr double kFlash2OverCudnn = 0.61;
// The Triton FlashAttention (flash-attn's flash_attn/flash_attn_triton.py at eff9fe6b, which llm-foundry
// copied as llmfoundry/models/layers/flash_attn_triton.py for MPT's attn_impl: triton): FlashAttention-2
// is "around 1.3-1.5x faster than FlashAttention in Triton in the forward pass and around 2x faster in
// the backward pass" (Dao 2023, FlashAttention-2, §4.1, A100; 1.4 taken). The paper's Triton baseline is
// Triton's own fused attention (benchmarks/benchmark_flash_attention.py: triton.ops.flash_attention), from
// which MPT's kernel was built; its docstring agrees (forward faster than the 2022 CUDA FlashAttention,
// backward slower, "overall slightly slower", and FlashAttention-2 is "around 2x faster than
// FlashAttention"). Not measured here;
// the same ratios are taken on the H100, where both kernels run Ampere's mma.sync instructions
// (FlashAttention-2 has no Hopper path; llm-foundry built pre-MLIR Triton for sm90, triton_pre_mlir_sm90).
constexpr AttentionSpeed kTritonOverFlash2{.forward = 1.0 / 1.4, .backward = 0.5};

// Each kernel's throughput relative to FlashAttention-2's on the same shapes (sources above).
AttentionSpeed rate_against_flash2(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::cudnn: return {1.0 / kFlash2OverCudnn, 1.0 / kFlash2OverCudnn};
    case AttentionKernel::flash: return {};
    case AttentionKernel::triton: return kTritonOverFlash2;
  }
  return {};
}

}  // namespace

// Transformer Engine picks cuDNN's fused attention on Hopper and later and FlashAttention-2 before, when
// both apply (NeMo docs, performance/memory_optimizations.rst, "Flash Attention": "prefers cuDNN flash
// attention on Hopper+ architectures, and Tri Dao flash attention on pre-Hopper architectures";
// transformer_engine/pytorch/attention/dot_product_attention/utils.py, get_attention_backend).
AttentionKernel attention_kernel_of(Framework f, const GpuSpec& gpu) {
  if (!framework_rules(f).transformer_engine_attention) return AttentionKernel::flash;
  return hopper_or_later(gpu) ? AttentionKernel::cudnn : AttentionKernel::flash;
}

AttentionKernel attention_kernel_of(const TrainingSpec& t, const GpuSpec& gpu) {
  return t.attention_kernel.value_or(attention_kernel_of(t.framework, gpu));
}

AttentionSpeed attention_kernel_speed(AttentionKernel runs, AttentionKernel profiled) {
  if (runs == profiled) return {};
  const AttentionSpeed r = rate_against_flash2(runs), p = rate_against_flash2(profiled);
  return {r.forward / p.forward, r.backward / p.backward};
}

double attention_tile_head_dim(AttentionKernel k, double head_dim) {
  if (!(head_dim > 0)) return head_dim;
  switch (k) {
    // FlashAttention-2 instantiates kernels for head dims 32, 64, ..., 256 in steps of 32 and runs a head
    // on the smallest at least as wide (csrc/flash_attn/src/static_switch.h HEADDIM_SWITCH; flash_api.cpp
    // pads the head to a multiple of 8 only); PyTorch's SDPA copy is the same (aten/src/ATen/native/
    // transformers/cuda/flash_attn/static_switch.h).
    case AttentionKernel::flash: return head_dim <= 256 ? std::ceil(head_dim / 32.0) * 32.0 : head_dim;
    // MPT's Triton kernel: BLOCK_HEADDIM = max(triton.next_power_of_2(d), 16), the padded columns masked
    // but computed (llmfoundry/models/layers/flash_attn_triton.py, _flash_attn_forward/_backward).
    case AttentionKernel::triton: return std::max(16.0, std::exp2(std::ceil(std::log2(head_dim))));
    // cuDNN builds its fused kernels for the head dim it is given (a multiple of 8): taken as exact.
    case AttentionKernel::cudnn: return head_dim;
  }
  return head_dim;
}

}  // namespace tp
