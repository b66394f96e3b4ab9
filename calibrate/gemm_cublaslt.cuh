// GEMMs through cuBLASLt: fp32, tf32, fp16, bf16 and fp8 (e4m3 inputs, bf16 output; compute
// capability 8.9 and up). The best algorithm per shape: the heuristic's top candidates, each timed
// briefly, the fastest kept. Row-major C[m x n] = A[m x k] B[k x n] in "TN" form (cuBLASLt's favoured
// layout, required for fp8).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "measurements.h"
#include "timing.cuh"

namespace tp::cuda {

struct GemmResult {
  TimeStats time;
  std::string algorithm;
};

// Whether cuBLASLt can run `p` on a device of compute capability `cc` (major * 10 + minor).
bool gemm_dtype_supported(Precision p, int cc);

class LtGemm {
 public:
  LtGemm();
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Allocates the operands (OutOfMemory when they do not fit), picks the algorithm and times it.
  GemmResult measure(const GemmShape& shape, Precision p, const RepetitionPolicy& policy, L2Flusher* flush);

  // C = A B on host data (row-major a: m x k, b: k x n), converted to `p` on the device; returns C as
  // float (the numerics tests compare it with a CPU product).
  std::vector<float> multiply(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k, Precision p);

 private:
  cublasLtHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer workspace_;
};

}  // namespace tp::cuda
