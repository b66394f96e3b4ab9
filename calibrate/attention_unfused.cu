#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "attention.cuh"

namespace tp::cuda {

namespace {

void check_blas(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(std::string("out of memory in cuBLAS: ") + what);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH) throw Unsupported(std::string("cuBLAS: ") + what);
  throw CudaError(std::string("cuBLAS error ") + std::to_string(static_cast<int>(st)) + " in " + what);
}

// Row-major strided-batched C[M x N] = op(A) op(B) (see the column-major identity C^T = op(B)^T op(A)^T).
void gemm_rm(cublasHandle_t h, cudaDataType_t t, bool trans_a, bool trans_b, int M, int N, int K, const void* A, int lda,
             long long sa, const void* B, int ldb, long long sb, void* C, int ldc, long long sc, int batch) {
  const float alpha = 1.0f, beta = 0.0f;
  check_blas(cublasGemmStridedBatchedEx(h, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                                        &alpha, B, t, ldb, sb, A, t, lda, sa, &beta, C, t, ldc, sc, batch, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT),
             "cublasGemmStridedBatchedEx");
}

template <class T>
__device__ float to_f(T v);
template <>
__device__ float to_f<__half>(__half v) { return __half2float(v); }
template <>
__device__ float to_f<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ T from_f(float v);
template <>
__device__ __half from_f<__half>(float v) { return __float2half(v); }
template <>
__device__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

__device__ float block_reduce(float v, bool is_max) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o /= 2) {
    const float w = __shfl_down_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  if ((threadIdx.x & 31) == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : (is_max ? -INFINITY : 0.0f);
    for (int o = 16; o > 0; o /= 2) {
      const float w = __shfl_down_sync(0xffffffffu, v, o);
      v = is_max ? fmaxf(v, w) : v + w;
    }
    if (threadIdx.x == 0) part[0] = v;
  }
  __syncthreads();
  const float r = part[0];
  __syncthreads();
  return r;
}

// P = softmax(scale S) per row, in place; causal rows see keys j <= i + (s_kv - s_q).
template <class T>
__global__ void softmax_kernel(T* s, int s_q, int s_kv, float scale, bool causal) {
  T* row = s + static_cast<size_t>(blockIdx.x) * s_kv;
  const int i = static_cast<int>(blockIdx.x % static_cast<unsigned>(s_q));
  const int limit = causal ? min(s_kv, i + (s_kv - s_q) + 1) : s_kv;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < limit; j += blockDim.x) mx = fmaxf(mx, scale * to_f(row[j]));
  mx = block_reduce(mx, true);
  float sum = 0;
  for (int j = threadIdx.x; j < limit; j += blockDim.x) sum += __expf(scale * to_f(row[j]) - mx);
  sum = block_reduce(sum, false);
  const float inv = sum > 0 ? 1.0f / sum : 0.0f;
  for (int j = threadIdx.x; j < s_kv; j += blockDim.x) row[j] = from_f<T>(j < limit ? __expf(scale * to_f(row[j]) - mx) * inv : 0.0f);
}

// dS = scale P (dP - sum_j dP P), written over dP.
template <class T>
__global__ void softmax_backward_kernel(const T* p, T* dp, int s_kv, float scale) {
  const T* pr = p + static_cast<size_t>(blockIdx.x) * s_kv;
  T* dr = dp + static_cast<size_t>(blockIdx.x) * s_kv;
  float dot = 0;
  for (int j = threadIdx.x; j < s_kv; j += blockDim.x) dot += to_f(pr[j]) * to_f(dr[j]);
  dot = block_reduce(dot, false);
  for (int j = threadIdx.x; j < s_kv; j += blockDim.x) dr[j] = from_f<T>(scale * to_f(pr[j]) * (to_f(dr[j]) - dot));
}

__global__ void f32_to_16(const float* in, void* out, size_t n, bool bf16) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    if (bf16) static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16(in[i]);
    else static_cast<__half*>(out)[i] = __float2half(in[i]);
  }
}

__global__ void f16_to_32(const void* in, float* out, size_t n, bool bf16) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    out[i] = bf16 ? __bfloat162float(static_cast<const __nv_bfloat16*>(in)[i]) : __half2float(static_cast<const __half*>(in)[i]);
  }
}

// Buffers and the GEMM sequence of one attention problem.
class Unfused {
 public:
  Unfused(const AttentionShape& a, Precision p) : a_(a), bf16_(p != Precision::fp16) {
    if (p != Precision::bf16 && p != Precision::fp16) throw Unsupported("unfused attention runs in bf16 or fp16");
    if (a.heads % a.kv_heads != 0) throw Unsupported("kv_heads must divide heads");
    ratio_ = static_cast<int>(a.heads / a.kv_heads);
    groups_ = static_cast<int>(a.batch * a.kv_heads);
    rows_ = ratio_ * static_cast<int>(a.seq_q);
    const size_t q = static_cast<size_t>(a.batch * a.heads * a.seq_q * a.head_dim);
    const size_t kv = static_cast<size_t>(a.batch * a.kv_heads * a.seq_kv * a.head_dim);
    const size_t sc = static_cast<size_t>(groups_) * rows_ * static_cast<size_t>(a.seq_kv);
    q_ = DeviceBuffer(q * 2);
    k_ = DeviceBuffer(kv * 2);
    v_ = DeviceBuffer(kv * 2);
    o_ = DeviceBuffer(q * 2);
    p_ = DeviceBuffer(sc * 2);
    nq_ = q;
    nkv_ = kv;
    check_blas(cublasCreate(&h_), "cublasCreate");
    TP_CUDA(cudaStreamCreate(&s_));
    check_blas(cublasSetStream(h_, s_), "cublasSetStream");
    const int kind = bf16_ ? 2 : 1;
    fill_random(q_.get(), q, kind, 21, 1.0f, s_);
    fill_random(k_.get(), kv, kind, 22, 1.0f, s_);
    fill_random(v_.get(), kv, kind, 23, 1.0f, s_);
  }
  ~Unfused() {
    if (h_) cublasDestroy(h_);
    if (s_) cudaStreamDestroy(s_);
  }
  void alloc_backward() {
    do_ = DeviceBuffer(nq_ * 2);
    dq_ = DeviceBuffer(nq_ * 2);
    dk_ = DeviceBuffer(nkv_ * 2);
    dv_ = DeviceBuffer(nkv_ * 2);
    dp_ = DeviceBuffer(p_.bytes());
    fill_random(do_.get(), nq_, bf16_ ? 2 : 1, 24, 1.0f, s_);
  }
  cudaDataType_t type() const { return bf16_ ? CUDA_R_16BF : CUDA_R_16F; }
  int sq() const { return static_cast<int>(a_.seq_q); }
  int skv() const { return static_cast<int>(a_.seq_kv); }
  int d() const { return static_cast<int>(a_.head_dim); }
  float scale() const { return 1.0f / std::sqrt(static_cast<float>(a_.head_dim)); }

  void forward() {
    const long long sq_stride = static_cast<long long>(rows_) * d(), kv_stride = static_cast<long long>(skv()) * d();
    const long long s_stride = static_cast<long long>(rows_) * skv();
    gemm_rm(h_, type(), false, true, rows_, skv(), d(), q_.get(), d(), sq_stride, k_.get(), d(), kv_stride, p_.get(), skv(), s_stride,
            groups_);
    const unsigned nrows = static_cast<unsigned>(groups_) * static_cast<unsigned>(rows_);
    if (bf16_) softmax_kernel<<<nrows, 256, 0, s_>>>(p_.as<__nv_bfloat16>(), sq(), skv(), scale(), a_.causal);
    else softmax_kernel<<<nrows, 256, 0, s_>>>(p_.as<__half>(), sq(), skv(), scale(), a_.causal);
    TP_CUDA(cudaGetLastError());
    gemm_rm(h_, type(), false, false, rows_, d(), skv(), p_.get(), skv(), s_stride, v_.get(), d(), kv_stride, o_.get(), d(), sq_stride,
            groups_);
  }

  void backward() {
    const long long sq_stride = static_cast<long long>(rows_) * d(), kv_stride = static_cast<long long>(skv()) * d();
    const long long s_stride = static_cast<long long>(rows_) * skv();
    // dV = P^T dO; dP = dO V^T; dS = softmax'(dP); dQ = dS K; dK = dS^T Q.
    gemm_rm(h_, type(), true, false, skv(), d(), rows_, p_.get(), skv(), s_stride, do_.get(), d(), sq_stride, dv_.get(), d(), kv_stride,
            groups_);
    gemm_rm(h_, type(), false, true, rows_, skv(), d(), do_.get(), d(), sq_stride, v_.get(), d(), kv_stride, dp_.get(), skv(), s_stride,
            groups_);
    const unsigned nrows = static_cast<unsigned>(groups_) * static_cast<unsigned>(rows_);
    if (bf16_) softmax_backward_kernel<<<nrows, 256, 0, s_>>>(p_.as<__nv_bfloat16>(), dp_.as<__nv_bfloat16>(), skv(), scale());
    else softmax_backward_kernel<<<nrows, 256, 0, s_>>>(p_.as<__half>(), dp_.as<__half>(), skv(), scale());
    TP_CUDA(cudaGetLastError());
    gemm_rm(h_, type(), false, false, rows_, d(), skv(), dp_.get(), skv(), s_stride, k_.get(), d(), kv_stride, dq_.get(), d(), sq_stride,
            groups_);
    gemm_rm(h_, type(), true, false, skv(), d(), rows_, dp_.get(), skv(), s_stride, q_.get(), d(), sq_stride, dk_.get(), d(), kv_stride,
            groups_);
  }

  AttentionShape a_;
  bool bf16_;
  int ratio_ = 1, groups_ = 1, rows_ = 1;
  size_t nq_ = 0, nkv_ = 0;
  DeviceBuffer q_, k_, v_, o_, p_, do_, dq_, dk_, dv_, dp_;
  cublasHandle_t h_ = nullptr;
  cudaStream_t s_ = nullptr;
};

}  // namespace

void upload_16bit(const std::vector<float>& host, void* device, bool bf16, cudaStream_t s) {
  DeviceBuffer tmp(host.size() * 4);
  TP_CUDA(cudaMemcpyAsync(tmp.get(), host.data(), host.size() * 4, cudaMemcpyHostToDevice, s));
  f32_to_16<<<64, 256, 0, s>>>(tmp.as<float>(), device, host.size(), bf16);
  TP_CUDA(cudaGetLastError());
  TP_CUDA(cudaStreamSynchronize(s));
}

std::vector<float> download_16bit(const void* device, size_t n, bool bf16, cudaStream_t s) {
  DeviceBuffer tmp(n * 4);
  f16_to_32<<<64, 256, 0, s>>>(device, tmp.as<float>(), n, bf16);
  TP_CUDA(cudaGetLastError());
  std::vector<float> out(n);
  TP_CUDA(cudaMemcpyAsync(out.data(), tmp.get(), n * 4, cudaMemcpyDeviceToHost, s));
  TP_CUDA(cudaStreamSynchronize(s));
  return out;
}

TimeStats measure_attention_unfused(const AttentionShape& a, Precision p, bool backward, const RepetitionPolicy& policy,
                                    L2Flusher* flush) {
  Unfused u(a, p);
  if (!backward) return time_runs(u.s_, [&] { u.forward(); }, policy, flush);
  u.alloc_backward();
  u.forward();
  return time_runs(u.s_, [&] { u.backward(); }, policy, flush);
}

AttentionOutputs attention_unfused(const AttentionShape& a, Precision p, const std::vector<float>& q, const std::vector<float>& k,
                                   const std::vector<float>& v, const std::vector<float>& d_o) {
  Unfused u(a, p);
  upload_16bit(q, u.q_.get(), u.bf16_, u.s_);
  upload_16bit(k, u.k_.get(), u.bf16_, u.s_);
  upload_16bit(v, u.v_.get(), u.bf16_, u.s_);
  u.forward();
  AttentionOutputs out;
  out.o = download_16bit(u.o_.get(), u.nq_, u.bf16_, u.s_);
  if (!d_o.empty()) {
    u.alloc_backward();
    upload_16bit(d_o, u.do_.get(), u.bf16_, u.s_);
    u.backward();
    out.dq = download_16bit(u.dq_.get(), u.nq_, u.bf16_, u.s_);
    out.dk = download_16bit(u.dk_.get(), u.nkv_, u.bf16_, u.s_);
    out.dv = download_16bit(u.dv_.get(), u.nkv_, u.bf16_, u.s_);
  }
  return out;
}

}  // namespace tp::cuda
