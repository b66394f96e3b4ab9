#include "kernel_traffic.h"

namespace tp {

double kernel_bytes_moved(KernelClass k, Precision dtype, std::int64_t rows, std::int64_t cols) {
  const double n = static_cast<double>(rows) * static_cast<double>(cols);
  const double act = 2.0 * n;  // the main tensor in a 16-bit dtype
  switch (k) {
    case KernelClass::rmsnorm_fwd:
    case KernelClass::layernorm_fwd:
    case KernelClass::gelu_fwd:
    case KernelClass::rotary_fwd:
    case KernelClass::rotary_bwd: return 2.0 * act;  // read x, write y
    case KernelClass::rmsnorm_bwd:
    case KernelClass::layernorm_bwd:
    case KernelClass::gelu_bwd:
    case KernelClass::residual_add: return 3.0 * act;  // read x and dy (or a and b), write dx (or the sum)
    case KernelClass::swiglu_fwd: return 3.0 * act;   // read gate and up, write y
    case KernelClass::swiglu_bwd: return 5.0 * act;   // read gate, up and dy, write d gate and d up
    case KernelClass::cast_to_fp32:
    case KernelClass::cast_to_16bit: return 6.0 * n;  // 2 bytes one side, 4 the other
    case KernelClass::cross_entropy: return 3.0 * act;  // forward reads the logits, backward reads them and writes the gradient
    case KernelClass::adamw: return 7.0 * n * element_bytes(dtype);  // read p, g, m, v; write p, m, v
  }
  return 0;
}

}  // namespace tp
