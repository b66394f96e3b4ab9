// Classes of memory-bound kernels that a training step spends its non-GEMM time in. `trainplan
// calibrate` times each class on realistic sizes and fits its achieved HBM bandwidth; the planner times
// its non-GEMM ops by class (bytes moved / the class's bandwidth). See docs/calibration.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tp {

enum class KernelClass {
  rmsnorm_fwd,
  rmsnorm_bwd,
  layernorm_fwd,
  layernorm_bwd,
  gelu_fwd,       // tanh-approximated GELU
  gelu_bwd,
  swiglu_fwd,     // silu(gate) * up
  swiglu_bwd,
  residual_add,
  rotary_fwd,     // rotary position embedding applied to q and k
  rotary_bwd,
  cast_to_fp32,   // bf16/fp16 -> fp32
  cast_to_16bit,  // fp32 -> bf16/fp16
  cross_entropy,  // softmax cross-entropy over the vocabulary, forward + backward
  adamw,          // one fused AdamW pass over parameters, gradients and both states
};
inline constexpr int kKernelClassCount = 15;

const char* to_string(KernelClass k);
std::optional<KernelClass> kernel_class_from_string(std::string_view s);
// "rmsnorm_fwd, rmsnorm_bwd, ..." for messages.
std::string kernel_class_names();

}  // namespace tp
