// How long one GEMM takes on a hardware profile: the one function the planner, the fitter's checks and
// `trainplan calibrate check` ask. C[m x n] = A[m x k] B[k x n] in `precision`, launch included.
#pragma once

#include "hardware_profile.h"
#include "specs.h"
#include "units.h"

namespace tp {

struct GemmDims {
  // Which extent counts a layer's tokens, if any (planner/gemm_shapes.h): the rows of the row-major
  // activations and their gradients, an extent and never a leading dimension, so its size does not decide
  // the kernel's alignment (gemm_aligned).
  enum class Tokens { none, m, k };
  double m = 0, n = 0, k = 0;
  Tokens tokens = Tokens::none;
  double flops() const { return 2.0 * m * n * k; }
};

// Bytes per element of the operands (A, B) and of the output (C) as the measurement suite runs them.
double gemm_input_bytes(Precision p);
double gemm_output_bytes(Precision p);
// Minimal HBM traffic of one GEMM: A and B read once, C written once.
double gemm_traffic_bytes(Precision p, const GemmDims& d);

// The fitted model alone (hardware_profile.h, GemmModel), launch and latency floor included.
Seconds gemm_model_seconds(const GemmModel& model, const GpuSpec& gpu, Precision precision, const GemmDims& d);

// cuBLAS's fallback for a GEMM whose leading dimensions are not multiples of 16 bytes: Hopper's TMA-based
// kernels need 16-byte aligned strides (CUDA C++ Programming Guide, "Tensor Memory Access"; cuBLAS
// documentation, "Tensor Core Usage"), so cuBLAS runs CUTLASS sm75 `align1` kernels that load one element
// at a time. Measured on H100 (h100-pytorch-kernel-time.json, gpt2-1.5b-s1024-mb4, GPT-2's vocabulary of
// 50,257 unpadded under Hugging Face: cutlass_75_tensorop_bf16_s1688gemm_bf16_*_align1, tn + nn + nt,
// 16.44 ms for 3 x 2 x 4096 x 1600 x 50257 FLOP = 120 TFLOP/s): 0.12 of the 989 TFLOP/s dense bf16 peak.
// H100 is the only generation measured; the share of peak is used for the others (docs/model.md §15).
inline constexpr double kUnalignedGemmShareOfPeak = 0.12;

// Whether the GEMM's leading dimensions are multiples of 16 bytes of its operand type. A layer's weight
// GEMMs (planner/gemm_shapes.h) read row-major activations [tokens x features] and weights [out x in]
// (PyTorch's F.linear and Megatron's linear layers call cuBLAS with lda = ldb = in, ldc = out; the weight
// gradient with the features as lda and ldb and the tokens as K): the feature extents are strides, the
// tokens never. A shape without its tokens named (a measured GEMM of unknown layout) has all three checked.
bool gemm_aligned(Precision precision, const GemmDims& d);

// Kernel time of one GEMM of shape `d` on `gpu` described by `hw` (seconds, > 0 for a non-empty GEMM):
// the profile's measured time when exactly this (dtype, m, n, k) was measured (measured beats modelled,
// aligned or not), else the fitted model, and for an unaligned shape at least the align1 kernels' time
// (the model's latency + FLOPs / (kUnalignedGemmShareOfPeak x peak)).
Seconds gemm_seconds(const HardwareProfile& hw, const GpuSpec& gpu, Precision precision, const GemmDims& d);

}  // namespace tp
