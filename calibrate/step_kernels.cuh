// The memory-bound kernels of a training step (model/kernel_class.h), one straightforward fused
// implementation each, as a framework would launch: bf16 tensors, fp32 arithmetic, 16-byte vector
// loads. Bytes moved per class: kernel_traffic.h. Formulas and sources: docs/calibration.md.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernel_class.h"
#include "measurements.h"
#include "timing.cuh"

namespace tp::cuda {

// Device tensors of one kernel case; which are used depends on the class (step_kernels.cu).
struct StepTensors {
  std::int64_t rows = 0, cols = 0;
  Precision dtype = Precision::bf16;
  DeviceBuffer a, b, c, d;  // inputs
  DeviceBuffer out, out2;   // outputs
  DeviceBuffer target;      // cross_entropy: int32 class per row
  DeviceBuffer row_stats;   // cross_entropy: fp32 log-sum-exp and loss per row
};

// Launchers (enqueue on `s`, no synchronisation). Norms and cross-entropy: step_kernels_rows.cu.
void launch_rmsnorm(const StepTensors& t, bool backward, cudaStream_t s);
void launch_layernorm(const StepTensors& t, bool backward, cudaStream_t s);
void launch_cross_entropy(const StepTensors& t, cudaStream_t s);  // forward, then backward
// Element-wise classes: step_kernels_elementwise.cu.
void launch_gelu(const StepTensors& t, bool backward, cudaStream_t s);
void launch_swiglu(const StepTensors& t, bool backward, cudaStream_t s);
void launch_residual_add(const StepTensors& t, cudaStream_t s);
void launch_rotary(const StepTensors& t, bool backward, cudaStream_t s);
void launch_cast(const StepTensors& t, bool to_fp32, cudaStream_t s);
void launch_adamw(const StepTensors& t, cudaStream_t s);

// Constants shared by the kernels and the CPU references of the tests.
inline constexpr float kNormEps = 1e-5f;
inline constexpr float kRotaryBase = 10000.0f;
inline constexpr std::int64_t kRotarySeq = 4096;  // position of row r: r mod kRotarySeq
struct AdamWHyper {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.01f;
  int step = 1;
};

// Times one kernel class on rows x cols (kernel_traffic.h) on fresh random tensors.
TimeStats measure_step_kernel(KernelClass k, Precision dtype, std::int64_t rows, std::int64_t cols,
                              const RepetitionPolicy& policy, L2Flusher* flush, cudaStream_t s);

// Runs one kernel once on host data (for the numerics tests). Inputs a, b, c, d and the output per class:
//   rmsnorm_fwd: x, w -> y          rmsnorm_bwd: x, dy, w -> dx
//   layernorm_fwd: x, w, bias -> y  layernorm_bwd: x, dy, w -> dx
//   gelu_fwd: x -> y                gelu_bwd: x, dy -> dx
//   swiglu_fwd: [gate | up] rows x 2 cols -> y      swiglu_bwd: [gate | up], dy -> [d gate | d up]
//   residual_add: a, b -> a + b     rotary_fwd / rotary_bwd: x -> y (heads of kRotaryHeadDim)
//   cast_to_fp32: x -> x (bf16-rounded, as fp32)    cast_to_16bit: x -> x rounded to bf16
//   cross_entropy: logits, target (as floats) -> d logits (mean over rows) then the loss per row
//   adamw (rows = parameters, cols = 1): p, g, m, v -> p', m', v' (AdamWHyper{})
// 16-bit inputs are rounded to bf16 on upload.
std::vector<float> run_step_kernel(KernelClass k, Precision dtype, std::int64_t rows, std::int64_t cols,
                                   const std::vector<std::vector<float>>& inputs);

}  // namespace tp::cuda
