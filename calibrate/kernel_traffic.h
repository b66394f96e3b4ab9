// Minimal HBM traffic of one run of a memory-bound kernel class (model/kernel_class.h) on its main
// tensor of rows x cols elements: what a memory_kernel measurement records as `bytes`, and what its
// achieved bandwidth is computed from. Definitions as in ../shared/measurements/scripts/fused_ref.py
// (each kernel's `bytes_moved`), listed per class in docs/calibration.md ("Memory-bound kernel classes").
#pragma once

#include <cstdint>

#include "kernel_class.h"
#include "specs.h"

namespace tp {

// The main tensor of each class (rows x cols):
//   norms, residual_add, casts: tokens x hidden      gelu: tokens x ffn
//   swiglu: tokens x ffn (the output; the input is tokens x 2 ffn)
//   rotary: tokens x (q heads + kv heads) x head_dim  cross_entropy: tokens x vocab
//   adamw: parameters x 1
// `dtype` is the 16-bit activation type (bf16) for every class but adamw, where it is the type of the
// parameters, gradients and both states (fp32 or bf16).
double kernel_bytes_moved(KernelClass k, Precision dtype, std::int64_t rows, std::int64_t cols);

// Head dimension of the rotary-embedding kernel (cols must be a multiple of it).
inline constexpr std::int64_t kRotaryHeadDim = 128;

}  // namespace tp
