#include "timing.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <vector>

namespace tp::cuda {

void throw_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  (void)cudaGetLastError();  // clear a sticky-free error so the next case can run
  const std::string msg = std::string(cudaGetErrorString(e)) + " (" + expr + " at " + file + ":" + std::to_string(line) + ")";
  if (e == cudaErrorMemoryAllocation) throw OutOfMemory("out of memory: " + msg);
  throw CudaError(msg);
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  TP_CUDA(cudaMalloc(&p_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (p_ != nullptr) cudaFree(p_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_ != nullptr) cudaFree(p_);
    p_ = o.p_;
    bytes_ = o.bytes_;
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

L2Flusher::L2Flusher(size_t l2_bytes) : buf_(std::max<size_t>(2 * l2_bytes, 1 << 20)) {}

void L2Flusher::flush(cudaStream_t s) {
  value_ = (value_ + 1) & 0xff;
  TP_CUDA(cudaMemsetAsync(buf_.get(), value_, buf_.bytes(), s));
}

namespace {

__device__ inline float hash_uniform(size_t i, unsigned seed) {
  unsigned x = static_cast<unsigned>(i) * 2654435761u ^ (static_cast<unsigned>(i >> 32) * 40503u) ^ (seed * 97u + 12345u);
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return static_cast<float>(x) * (2.0f / 4294967296.0f) - 1.0f;  // [-1, 1)
}

__global__ void fill_kernel(void* p, size_t n, int kind, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float v = hash_uniform(i, seed) * scale;
    switch (kind) {
      case 0: static_cast<float*>(p)[i] = v; break;
      case 1: static_cast<__half*>(p)[i] = __float2half(v); break;
      case 2: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(v); break;
      default: static_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3(v); break;
    }
  }
}

}  // namespace

void fill_random(void* p, size_t n, int kind, unsigned seed, float scale, cudaStream_t s) {
  if (n == 0) return;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<size_t>((n + threads - 1) / threads, 65535));
  fill_kernel<<<blocks, threads, 0, s>>>(p, n, kind, seed, scale);
  TP_CUDA(cudaGetLastError());
}

TimeStats time_runs(cudaStream_t s, const std::function<void()>& launch, const RepetitionPolicy& policy, L2Flusher* flush) {
  cudaEvent_t start = nullptr, stop = nullptr;
  TP_CUDA(cudaEventCreate(&start));
  TP_CUDA(cudaEventCreate(&stop));
  struct Events {
    cudaEvent_t a, b;
    ~Events() {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  } guard{start, stop};
  for (int i = 0; i < policy.warmup; ++i) launch();
  TP_CUDA(cudaStreamSynchronize(s));
  std::vector<double> samples;
  do {
    if (flush != nullptr) flush->flush(s);
    TP_CUDA(cudaEventRecord(start, s));
    launch();
    TP_CUDA(cudaEventRecord(stop, s));
    TP_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    TP_CUDA(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(static_cast<double>(ms) * 1e-3);
  } while (!enough_repetitions(samples, policy));
  TimeStats t = summarize(samples);
  t.stable = t.relative_spread() <= policy.target_spread;
  return t;
}

}  // namespace tp::cuda
