// CUDA timing helpers: error checks that throw, an L2 flusher, and the timed-repetition loop (CUDA events
// around each run, warm-up first, the stop rule of timing_stats.h).
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "timing_stats.h"

namespace tp::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// cudaErrorMemoryAllocation and friends: the case is skipped as "out of memory".
class OutOfMemory : public CudaError {
 public:
  using CudaError::CudaError;
};
// A dtype, shape or algorithm the library does not support here: skipped with the reason.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda(cudaError_t e, const char* expr, const char* file, int line);

#define TP_CUDA(expr)                                                             \
  do {                                                                            \
    cudaError_t tp_cuda_err_ = (expr);                                            \
    if (tp_cuda_err_ != cudaSuccess) ::tp::cuda::throw_cuda(tp_cuda_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// Device memory that frees itself.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  void* get() const { return p_; }
  template <class T>
  T* as() const { return static_cast<T*>(p_); }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

// Writes a buffer twice the size of the L2 cache so that the next timed run starts cold.
class L2Flusher {
 public:
  explicit L2Flusher(size_t l2_bytes);
  void flush(cudaStream_t s);

 private:
  DeviceBuffer buf_;
  int value_ = 0;
};

// Fills `n` elements at p with deterministic pseudo-random values in [-scale, scale] of the dtype
// named by `kind`: 0 fp32, 1 fp16, 2 bf16, 3 fp8 e4m3.
void fill_random(void* p, size_t n, int kind, unsigned seed, float scale, cudaStream_t s);

// Times `launch` (which enqueues the work on `s`): policy.warmup untimed runs, then timed runs with
// CUDA events until the stop rule holds; the L2 cache is flushed before each timed run when `flush`
// is given. Returns the statistics of the per-run times (seconds).
TimeStats time_runs(cudaStream_t s, const std::function<void()>& launch, const RepetitionPolicy& policy, L2Flusher* flush);

}  // namespace tp::cuda
