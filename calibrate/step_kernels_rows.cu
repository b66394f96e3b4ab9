// Row kernels of the step: RMSNorm and LayerNorm (forward, input gradient) and softmax cross-entropy
// over the vocabulary (forward, then the logits' gradient). One block per row; fp32 statistics.
// Formulas: docs/calibration.md ("Memory-bound kernel classes").
#include "step_kernels.cuh"
#include "step_kernels_device.cuh"

namespace tp::cuda {

namespace {

using step::bf16;
constexpr int kNormThreads = 256;
constexpr int kLossThreads = 512;
constexpr int kP = step::Pack<bf16>::n;

__device__ inline const bf16* row_of(const bf16* p, int cols) { return p + static_cast<size_t>(blockIdx.x) * static_cast<size_t>(cols); }
__device__ inline bf16* row_of(bf16* p, int cols) { return p + static_cast<size_t>(blockIdx.x) * static_cast<size_t>(cols); }

// RMSNorm (Zhang & Sennrich 2019, eq. 4): y = x r w, r = (mean(x^2) + eps)^-1/2.
__global__ void rmsnorm_fwd_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w, bf16* __restrict__ y, int cols) {
  const bf16* xr = row_of(x, cols);
  float ss = 0;
  for (int c = static_cast<int>(threadIdx.x) * kP; c < cols; c += static_cast<int>(blockDim.x) * kP) {
    float f[kP];
    step::load_pack(xr + c, f);
    for (int i = 0; i < kP; ++i) ss += f[i] * f[i];
  }
  const float r = rsqrtf(step::block_sum(ss) / static_cast<float>(cols) + kNormEps);
  bf16* yr = row_of(y, cols);
  for (int c = static_cast<int>(threadIdx.x) * kP; c < cols; c += static_cast<int>(blockDim.x) * kP) {
    float f[kP], g[kP];
    step::load_pack(xr + c, f);
    step::load_pack(w + c, g);
    for (int i = 0; i < kP; ++i) f[i] = f[i] * r * g[i];
    step::store_pack(yr + c, f);
  }
}

// dx_i = r w_i dy_i - x_i r^3 mean_j(w_j dy_j x_j)  (the derivative of y = x r w with respect to x).
__global__ void rmsnorm_bwd_kernel(const bf16* __restrict__ x, const bf16* __restrict__ dy, const bf16* __restrict__ w,
                                   bf16* __restrict__ dx, int cols) {
  const bf16* xr = row_of(x, cols);
  const bf16* dr = row_of(dy, cols);
  float ss = 0, sd = 0;
  for (int c = static_cast<int>(threadIdx.x) * kP; c < cols; c += static_cast<int>(blockDim.x) * kP) {
    float f[kP], d[kP], g[kP];
    step::load_pack(xr + c, f);
    step::load_pack(dr + c, d);
    step::load_pack(w + c, g);
    for (int i = 0; i < kP; ++i) {
      ss += f[i] * f[i];
      sd += g[i] * d[i] * f[i];
    }
  }
  const float n = static_cast<float>(cols);
  const float r = rsqrtf(step::block_sum(ss) / n + kNormEps);
  const float k = r * r * r * step::block_sum(sd) / n;
  bf16* out = row_of(dx, cols);
  for (int c = static_cast<int>(threadIdx.x) * kP; c < cols; c += static_cast<int>(blockDim.x) * kP) {
    float f[kP], d[kP], g[kP];
    step::load_pack(xr + c, f);
    step::load_pack(dr + c, d);
    step::load_pack(w + c, g);
    for (int i = 0; i < kP; ++i) f[i] = r * g[i] * d[i] - f[i] * k;
    step::store_pack(out + c, f);
  }
}

// LayerNorm (Ba et al. 2016, eq. 4): y = (x - mu) r w + b, r = (var(x) + eps)^-1/2.
__global__ void layernorm_fwd_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w, const bf16* __restrict__ b,
                                     bf16* __restrict__ y, int cols) {
  const bf16* xr = row_of(x, cols);
  float s = 0, ss = 0;
  for (int c = static_cast<int>(threadIdx.x) * kP; c < cols; c += static_cast<int>(blockDim.x) * kP) {
    float f[kP];
    step::load_pack(xr + c, f);
    for (int i = 0; i < kP; ++i) {
      s += f[i];
      ss += f[i] * f[i];
    }
  }
  const float n = static_cast<float>(cols);
  const float mu = step::block_sum(s) / n;
  const float r = rsqrtf(fmaxf(step::block_sum(ss) / n - mu * mu, 0.0f) + kNormEps);
  bf16* yr = row_of(y, cols);
  for (int c = static_cast<int>(threadIdx.x) * kP; c < cols; c += static_cast<int>(blockDim.x) * kP) {
    float f[kP], g[kP], h[kP];
    step::load_pack(xr + c, f);
    step::load_pack(w + c, g);
    step::load_pack(b + c, h);
    for (int i = 0; i < kP; ++i) f[i] = (f[i] - mu) * r * g[i] + h[i];
    step::store_pack(yr + c, f);
  }
}

// With xhat = (x - mu) r and g = w dy: dx = r (g - mean(g) - xhat mean(g xhat)).
__global__ void layernorm_bwd_kernel(const bf16* __restrict__ x, const bf16* __restrict__ dy, const bf16* __restrict__ w,
                                     bf16* __restrict__ dx, int cols) {
  const bf16* xr = row_of(x, cols);
  const bf16* dr = row_of(dy, cols);
  float s = 0, ss = 0, sg = 0, sgx = 0;
  for (int c = static_cast<int>(threadIdx.x) * kP; c < cols; c += static_cast<int>(blockDim.x) * kP) {
    float f[kP], d[kP], g[kP];
    step::load_pack(xr + c, f);
    step::load_pack(dr + c, d);
    step::load_pack(w + c, g);
    for (int i = 0; i < kP; ++i) {
      const float gi = g[i] * d[i];
      s += f[i];
      ss += f[i] * f[i];
      sg += gi;
      sgx += gi * f[i];
    }
  }
  const float n = static_cast<float>(cols);
  const float mu = step::block_sum(s) / n;
  const float r = rsqrtf(fmaxf(step::block_sum(ss) / n - mu * mu, 0.0f) + kNormEps);
  const float mean_g = step::block_sum(sg) / n;
  const float mean_gxhat = r * (step::block_sum(sgx) / n - mu * mean_g);
  bf16* out = row_of(dx, cols);
  for (int c = static_cast<int>(threadIdx.x) * kP; c < cols; c += static_cast<int>(blockDim.x) * kP) {
    float f[kP], d[kP], g[kP];
    step::load_pack(xr + c, f);
    step::load_pack(dr + c, d);
    step::load_pack(w + c, g);
    for (int i = 0; i < kP; ++i) f[i] = r * (g[i] * d[i] - mean_g - (f[i] - mu) * r * mean_gxhat);
    step::store_pack(out + c, f);
  }
}

// Cross-entropy forward: log-sum-exp of the row with an online max (Milakov & Gimelshein 2018, alg. 3),
// loss = lse - logit[target]. stats[row] = lse, stats[rows + row] = loss. Scalar loads: the vocabulary
// (50257) need not be a multiple of 8.
__global__ void cross_entropy_fwd_kernel(const bf16* __restrict__ logits, const int* __restrict__ target,
                                         float* __restrict__ stats, int vocab, int rows) {
  const bf16* xr = row_of(logits, vocab);
  float m = -INFINITY, s = 0;
  for (int j = static_cast<int>(threadIdx.x); j < vocab; j += static_cast<int>(blockDim.x)) {
    const float x = __bfloat162float(xr[j]);
    if (x > m) {
      s = s * __expf(m - x) + 1.0f;
      m = x;
    } else {
      s += __expf(x - m);
    }
  }
  const float big = step::block_max(m);
  const float total = step::block_sum(m == -INFINITY ? 0.0f : s * __expf(m - big));
  if (threadIdx.x == 0) {
    const float lse = big + __logf(total);
    stats[blockIdx.x] = lse;
    stats[rows + static_cast<int>(blockIdx.x)] = lse - __bfloat162float(xr[target[blockIdx.x]]);
  }
}

// Gradient of the mean loss: (softmax_j - [j == target]) / rows.
__global__ void cross_entropy_bwd_kernel(const bf16* __restrict__ logits, const int* __restrict__ target,
                                         const float* __restrict__ stats, bf16* __restrict__ grad, int vocab, int rows) {
  const bf16* xr = row_of(logits, vocab);
  bf16* gr = row_of(grad, vocab);
  const float lse = stats[blockIdx.x];
  const int t = target[blockIdx.x];
  const float inv_rows = 1.0f / static_cast<float>(rows);
  for (int j = static_cast<int>(threadIdx.x); j < vocab; j += static_cast<int>(blockDim.x)) {
    const float p = __expf(__bfloat162float(xr[j]) - lse);
    gr[j] = __float2bfloat16_rn((p - (j == t ? 1.0f : 0.0f)) * inv_rows);
  }
}

void require_packed(const StepTensors& t) {
  if (t.cols % kP != 0) throw Unsupported("the row length must be a multiple of " + std::to_string(kP));
}

}  // namespace

void launch_rmsnorm(const StepTensors& t, bool backward, cudaStream_t s) {
  require_packed(t);
  const auto rows = static_cast<unsigned>(t.rows);
  const int cols = static_cast<int>(t.cols);
  if (backward) rmsnorm_bwd_kernel<<<rows, kNormThreads, 0, s>>>(t.a.as<bf16>(), t.b.as<bf16>(), t.c.as<bf16>(), t.out.as<bf16>(), cols);
  else rmsnorm_fwd_kernel<<<rows, kNormThreads, 0, s>>>(t.a.as<bf16>(), t.c.as<bf16>(), t.out.as<bf16>(), cols);
  TP_CUDA(cudaGetLastError());
}

void launch_layernorm(const StepTensors& t, bool backward, cudaStream_t s) {
  require_packed(t);
  const auto rows = static_cast<unsigned>(t.rows);
  const int cols = static_cast<int>(t.cols);
  if (backward) layernorm_bwd_kernel<<<rows, kNormThreads, 0, s>>>(t.a.as<bf16>(), t.b.as<bf16>(), t.c.as<bf16>(), t.out.as<bf16>(), cols);
  else layernorm_fwd_kernel<<<rows, kNormThreads, 0, s>>>(t.a.as<bf16>(), t.c.as<bf16>(), t.d.as<bf16>(), t.out.as<bf16>(), cols);
  TP_CUDA(cudaGetLastError());
}

void launch_cross_entropy(const StepTensors& t, cudaStream_t s) {
  const auto rows = static_cast<unsigned>(t.rows);
  const int vocab = static_cast<int>(t.cols), n = static_cast<int>(t.rows);
  cross_entropy_fwd_kernel<<<rows, kLossThreads, 0, s>>>(t.a.as<bf16>(), t.target.as<int>(), t.row_stats.as<float>(), vocab, n);
  TP_CUDA(cudaGetLastError());
  cross_entropy_bwd_kernel<<<rows, kLossThreads, 0, s>>>(t.a.as<bf16>(), t.target.as<int>(), t.row_stats.as<float>(),
                                                         t.out.as<bf16>(), vocab, n);
  TP_CUDA(cudaGetLastError());
}

}  // namespace tp::cuda
