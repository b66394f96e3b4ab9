#include "memory_kernels.cuh"

#include <algorithm>

namespace tp::cuda {

namespace {

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ c, size_t n4) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    c[i] = a[i];
  }
}

__global__ void scale_kernel(const float4* __restrict__ a, float4* __restrict__ c, float k, size_t n4) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float4 v = a[i];
    c[i] = make_float4(k * v.x, k * v.y, k * v.z, k * v.w);
  }
}

__global__ void triad_kernel(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c, float k, size_t n4) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + k * y.x, x.y + k * y.y, x.z + k * y.z, x.w + k * y.w);
  }
}

// One block per row: the sum of squares (what an RMSNorm reads before it scales).
__global__ void row_sumsq_kernel(const float* __restrict__ a, float* __restrict__ out, int row) {
  __shared__ float partial[32];
  const float* r = a + static_cast<size_t>(blockIdx.x) * row;
  float s = 0;
  for (int i = threadIdx.x; i < row; i += blockDim.x) s += r[i] * r[i];
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
  }
}

__global__ void empty_kernel() {}

int grid_for(size_t n) {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  return static_cast<int>(std::min<size_t>((n + 255) / 256, static_cast<size_t>(std::max(1, sms)) * 8));
}

struct Arrays {
  DeviceBuffer a, b, c;
  size_t n = 0;  // floats per array
};

Arrays make_arrays(MeasuredOp op, size_t n, int row, cudaStream_t s) {
  Arrays x;
  x.n = n;
  x.a = DeviceBuffer(n * sizeof(float));
  fill_random(x.a.get(), n, 0, 1, 1.0f, s);
  if (op == MeasuredOp::memory_triad) {
    x.b = DeviceBuffer(n * sizeof(float));
    fill_random(x.b.get(), n, 0, 2, 1.0f, s);
  }
  const size_t out = op == MeasuredOp::memory_reduce ? n / static_cast<size_t>(row) : n;
  x.c = DeviceBuffer(std::max<size_t>(out, 1) * sizeof(float));
  return x;
}

void launch_op(MeasuredOp op, const Arrays& x, float k, int row, cudaStream_t s) {
  const size_t n4 = x.n / 4;
  switch (op) {
    case MeasuredOp::memory_copy:
      copy_kernel<<<grid_for(n4), 256, 0, s>>>(x.a.as<float4>(), x.c.as<float4>(), n4);
      break;
    case MeasuredOp::memory_scale:
      scale_kernel<<<grid_for(n4), 256, 0, s>>>(x.a.as<float4>(), x.c.as<float4>(), k, n4);
      break;
    case MeasuredOp::memory_triad:
      triad_kernel<<<grid_for(n4), 256, 0, s>>>(x.a.as<float4>(), x.b.as<float4>(), x.c.as<float4>(), k, n4);
      break;
    default:
      row_sumsq_kernel<<<static_cast<unsigned>(x.n / static_cast<size_t>(row)), 256, 0, s>>>(x.a.as<float>(), x.c.as<float>(), row);
      break;
  }
  TP_CUDA(cudaGetLastError());
}

}  // namespace

double memory_bytes_moved(MeasuredOp op, double array_bytes) {
  switch (op) {
    case MeasuredOp::memory_copy:
    case MeasuredOp::memory_scale: return 2.0 * array_bytes;
    case MeasuredOp::memory_triad: return 3.0 * array_bytes;
    default: return array_bytes;
  }
}

TimeStats measure_memory(MeasuredOp op, double array_bytes, const RepetitionPolicy& policy, L2Flusher* flush, cudaStream_t s) {
  size_t n = static_cast<size_t>(array_bytes / sizeof(float));
  n -= n % kReduceRow;  // whole rows, and a multiple of 4 for float4
  if (n == 0) throw Unsupported("array smaller than one row");
  const Arrays x = make_arrays(op, n, kReduceRow, s);
  TP_CUDA(cudaStreamSynchronize(s));
  return time_runs(s, [&] { launch_op(op, x, 1.5f, kReduceRow, s); }, policy, flush);
}

TimeStats measure_launch(const RepetitionPolicy& policy, cudaStream_t s) {
  constexpr int kPerRun = 1000;
  TimeStats t = time_runs(
      s,
      [&] {
        for (int i = 0; i < kPerRun; ++i) empty_kernel<<<1, 1, 0, s>>>();
      },
      policy, nullptr);
  for (double* v : {&t.median, &t.mean, &t.min, &t.max, &t.p10, &t.p90, &t.stddev}) *v /= kPerRun;
  TP_CUDA(cudaGetLastError());
  return t;
}

std::vector<float> run_memory_op(MeasuredOp op, const std::vector<float>& a, const std::vector<float>& b, float k, int row) {
  cudaStream_t s = nullptr;
  TP_CUDA(cudaStreamCreate(&s));
  Arrays x = make_arrays(op, a.size(), row, s);
  TP_CUDA(cudaMemcpyAsync(x.a.get(), a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice, s));
  if (op == MeasuredOp::memory_triad) {
    TP_CUDA(cudaMemcpyAsync(x.b.get(), b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice, s));
  }
  launch_op(op, x, k, row, s);
  const size_t out = op == MeasuredOp::memory_reduce ? a.size() / static_cast<size_t>(row) : a.size();
  std::vector<float> c(out);
  TP_CUDA(cudaMemcpyAsync(c.data(), x.c.get(), out * sizeof(float), cudaMemcpyDeviceToHost, s));
  TP_CUDA(cudaStreamSynchronize(s));
  TP_CUDA(cudaStreamDestroy(s));
  return c;
}

}  // namespace tp::cuda
