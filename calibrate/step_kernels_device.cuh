// Device helpers of the step kernels: 16-byte vector loads/stores to fp32 registers (8 bf16 or 4 fp32
// values) and a block-wide sum. Included by the step_kernels_*.cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tp::cuda::step {

using bf16 = __nv_bfloat16;

template <class T>
struct Pack {
  static constexpr int n = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte vector
};

__device__ inline void load_pack(const float* p, float* f) {
  const float4 v = *reinterpret_cast<const float4*>(p);
  f[0] = v.x;
  f[1] = v.y;
  f[2] = v.z;
  f[3] = v.w;
}
__device__ inline void store_pack(float* p, const float* f) { *reinterpret_cast<float4*>(p) = make_float4(f[0], f[1], f[2], f[3]); }

__device__ inline void load_pack(const bf16* p, float* f) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 v = __bfloat1622float2(h[i]);
    f[2 * i] = v.x;
    f[2 * i + 1] = v.y;
  }
}
__device__ inline void store_pack(bf16* p, const float* f) {
  uint4 u;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
  *reinterpret_cast<uint4*>(p) = u;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
__device__ inline float block_sum(float v) {
  __shared__ float partial[32];
  __shared__ float total;
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  __syncthreads();  // partial may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float s = lane < static_cast<int>(blockDim.x) / 32 ? partial[lane] : 0.0f;
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) total = s;
  }
  __syncthreads();
  return total;
}

// Maximum over the block; every thread gets the result.
__device__ inline float block_max(float v) {
  __shared__ float partial[32];
  __shared__ float total;
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float m = lane < static_cast<int>(blockDim.x) / 32 ? partial[lane] : -INFINITY;
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (lane == 0) total = m;
  }
  __syncthreads();
  return total;
}

// Grid for a grid-stride loop over n items: enough blocks to fill the GPU, no more than needed.
inline unsigned grid_for_items(std::int64_t n, int block) {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const std::int64_t want = (n + block - 1) / block;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(want, static_cast<std::int64_t>(std::max(1, sms)) * 16)));
}

}  // namespace tp::cuda::step
