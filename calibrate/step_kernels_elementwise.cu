// Element-wise kernels of the step: tanh-GELU and SwiGLU (forward, input gradient), residual add,
// rotary embedding, bf16 <-> fp32 casts and the fused AdamW update. Grid-stride loops over 16-byte
// vectors; fp32 arithmetic. Formulas: docs/calibration.md ("Memory-bound kernel classes").
#include <cmath>

#include "kernel_traffic.h"
#include "step_kernels.cuh"
#include "step_kernels_device.cuh"

namespace tp::cuda {

namespace {

using step::bf16;
using std::int64_t;
constexpr int kThreads = 256;
constexpr int kP = step::Pack<bf16>::n;

__device__ inline int64_t first_item() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline int64_t item_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// GELU, tanh approximation (Hendrycks & Gimpel 2016, sec. 2): 0.5 x (1 + tanh(k (x + 0.044715 x^3))),
// k = sqrt(2 / pi); its derivative 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 0.044715 x^2).
__device__ inline float gelu(float x, float* derivative) {
  constexpr float k = 0.7978845608028654f, c = 0.044715f;
  const float t = tanhf(k * (x + c * x * x * x));
  *derivative = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 3.0f * c * x * x);
  return 0.5f * x * (1.0f + t);
}

__global__ void gelu_kernel(const bf16* __restrict__ x, const bf16* __restrict__ dy, bf16* __restrict__ out, int64_t packs, bool backward) {
  for (int64_t p = first_item(); p < packs; p += item_stride()) {
    float f[kP], d[kP], g[kP];
    step::load_pack(x + p * kP, f);
    if (backward) step::load_pack(dy + p * kP, d);
    for (int i = 0; i < kP; ++i) {
      const float y = gelu(f[i], &g[i]);
      f[i] = backward ? d[i] * g[i] : y;
    }
    step::store_pack(out + p * kP, f);
  }
}

// SwiGLU (Shazeer 2020, eq. 5): y = silu(gate) up, silu(u) = u sigmoid(u); gate and up are the two
// halves of each input row ([gate | up], as a fused gate-up projection writes them). Backward:
// d gate = dy up s (1 + u (1 - s)), d up = dy silu(u), s = sigmoid(u).
__global__ void swiglu_kernel(const bf16* __restrict__ in, const bf16* __restrict__ dy, bf16* __restrict__ out, int64_t cols,
                              int64_t packs, bool backward) {
  const int64_t per_row = cols / kP;
  for (int64_t p = first_item(); p < packs; p += item_stride()) {
    const int64_t row = p / per_row, c = (p % per_row) * kP;
    const bf16* gate = in + row * 2 * cols + c;
    float u[kP], v[kP], d[kP];
    step::load_pack(gate, u);
    step::load_pack(gate + cols, v);
    if (backward) step::load_pack(dy + row * cols + c, d);
    float y[kP], du[kP], dv[kP];
    for (int i = 0; i < kP; ++i) {
      const float s = 1.0f / (1.0f + __expf(-u[i]));
      const float silu = u[i] * s;
      y[i] = silu * v[i];
      du[i] = backward ? d[i] * v[i] * s * (1.0f + u[i] * (1.0f - s)) : 0.0f;
      dv[i] = backward ? d[i] * silu : 0.0f;
    }
    if (backward) {
      step::store_pack(out + row * 2 * cols + c, du);
      step::store_pack(out + row * 2 * cols + cols + c, dv);
    } else {
      step::store_pack(out + row * cols + c, y);
    }
  }
}

__global__ void add_kernel(const bf16* __restrict__ a, const bf16* __restrict__ b, bf16* __restrict__ out, int64_t packs) {
  for (int64_t p = first_item(); p < packs; p += item_stride()) {
    float f[kP], g[kP];
    step::load_pack(a + p * kP, f);
    step::load_pack(b + p * kP, g);
    for (int i = 0; i < kP; ++i) f[i] += g[i];
    step::store_pack(out + p * kP, f);
  }
}

// Rotary embedding, rotate-half form (Su et al. 2021, eq. 34; as Llama): within each head of d, element
// i < d/2 pairs with i + d/2 and both turn by theta_i = pos base^(-2i/d); pos = row mod kRotarySeq.
// The backward turns by -theta (the rotation's transpose).
__global__ void rotary_kernel(const bf16* __restrict__ x, bf16* __restrict__ out, int64_t cols, int64_t items, float sign) {
  constexpr int64_t d = kRotaryHeadDim, half = d / 2, per_head = half / kP;
  const int64_t per_row = cols / d * per_head;
  for (int64_t p = first_item(); p < items; p += item_stride()) {
    const int64_t row = p / per_row, rest = p % per_row;
    const int64_t head = rest / per_head, i0 = (rest % per_head) * kP;
    const int64_t base = row * cols + head * d + i0;
    const float pos = static_cast<float>(row % kRotarySeq);
    float x1[kP], x2[kP], y1[kP], y2[kP];
    step::load_pack(x + base, x1);
    step::load_pack(x + base + half, x2);
    for (int i = 0; i < kP; ++i) {
      const float inv_freq = exp2f(-static_cast<float>(2 * (i0 + i)) / static_cast<float>(d) * log2f(kRotaryBase));
      float sn, cs;
      sincosf(pos * inv_freq, &sn, &cs);
      sn *= sign;
      y1[i] = x1[i] * cs - x2[i] * sn;
      y2[i] = x2[i] * cs + x1[i] * sn;
    }
    step::store_pack(out + base, y1);
    step::store_pack(out + base + half, y2);
  }
}

__global__ void to_fp32_kernel(const bf16* __restrict__ x, float* __restrict__ out, int64_t packs) {
  for (int64_t p = first_item(); p < packs; p += item_stride()) {
    float f[kP];
    step::load_pack(x + p * kP, f);
    step::store_pack(out + p * kP, f);
    step::store_pack(out + p * kP + 4, f + 4);
  }
}

__global__ void to_bf16_kernel(const float* __restrict__ x, bf16* __restrict__ out, int64_t packs) {
  for (int64_t p = first_item(); p < packs; p += item_stride()) {
    float f[kP];
    step::load_pack(x + p * kP, f);
    step::load_pack(x + p * kP + 4, f + 4);
    step::store_pack(out + p * kP, f);
  }
}

// AdamW (Loshchilov & Hutter 2019, alg. 2; PyTorch's torch.optim.AdamW): p <- p (1 - lr wd);
// m <- b1 m + (1 - b1) g; v <- b2 v + (1 - b2) g^2; p <- p - lr (m / bc1) / (sqrt(v / bc2) + eps).
template <class T>
__global__ void adamw_kernel(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ m, T* __restrict__ v, int64_t packs,
                             AdamWHyper h, float bc1, float bc2) {
  constexpr int n = step::Pack<T>::n;
  for (int64_t k = first_item(); k < packs; k += item_stride()) {
    float pf[n], gf[n], mf[n], vf[n];
    step::load_pack(p + k * n, pf);
    step::load_pack(g + k * n, gf);
    step::load_pack(m + k * n, mf);
    step::load_pack(v + k * n, vf);
    for (int i = 0; i < n; ++i) {
      mf[i] = h.beta1 * mf[i] + (1.0f - h.beta1) * gf[i];
      vf[i] = h.beta2 * vf[i] + (1.0f - h.beta2) * gf[i] * gf[i];
      pf[i] = pf[i] * (1.0f - h.lr * h.weight_decay) - h.lr * (mf[i] / bc1) / (sqrtf(vf[i] / bc2) + h.eps);
    }
    step::store_pack(p + k * n, pf);
    step::store_pack(m + k * n, mf);
    step::store_pack(v + k * n, vf);
  }
}

int64_t packs_of(const StepTensors& t, int per_pack) {
  const int64_t n = t.rows * t.cols;
  if (n % per_pack != 0) throw Unsupported("the tensor size must be a multiple of " + std::to_string(per_pack));
  return n / per_pack;
}

}  // namespace

void launch_gelu(const StepTensors& t, bool backward, cudaStream_t s) {
  const int64_t packs = packs_of(t, kP);
  gelu_kernel<<<step::grid_for_items(packs, kThreads), kThreads, 0, s>>>(t.a.as<bf16>(), t.b.as<bf16>(), t.out.as<bf16>(), packs, backward);
  TP_CUDA(cudaGetLastError());
}

void launch_swiglu(const StepTensors& t, bool backward, cudaStream_t s) {
  if (t.cols % kP != 0) throw Unsupported("the ffn size must be a multiple of 8");
  const int64_t packs = t.rows * t.cols / kP;
  swiglu_kernel<<<step::grid_for_items(packs, kThreads), kThreads, 0, s>>>(t.a.as<bf16>(), t.b.as<bf16>(), t.out.as<bf16>(), t.cols,
                                                                          packs, backward);
  TP_CUDA(cudaGetLastError());
}

void launch_residual_add(const StepTensors& t, cudaStream_t s) {
  const int64_t packs = packs_of(t, kP);
  add_kernel<<<step::grid_for_items(packs, kThreads), kThreads, 0, s>>>(t.a.as<bf16>(), t.b.as<bf16>(), t.out.as<bf16>(), packs);
  TP_CUDA(cudaGetLastError());
}

void launch_rotary(const StepTensors& t, bool backward, cudaStream_t s) {
  if (t.cols % kRotaryHeadDim != 0) throw Unsupported("rotary: the row must be whole heads of " + std::to_string(kRotaryHeadDim));
  const int64_t items = t.rows * t.cols / 2 / kP;
  rotary_kernel<<<step::grid_for_items(items, kThreads), kThreads, 0, s>>>(t.a.as<bf16>(), t.out.as<bf16>(), t.cols, items,
                                                                          backward ? -1.0f : 1.0f);
  TP_CUDA(cudaGetLastError());
}

void launch_cast(const StepTensors& t, bool to_fp32, cudaStream_t s) {
  const int64_t packs = packs_of(t, kP);
  const unsigned grid = step::grid_for_items(packs, kThreads);
  if (to_fp32) to_fp32_kernel<<<grid, kThreads, 0, s>>>(t.a.as<bf16>(), t.out.as<float>(), packs);
  else to_bf16_kernel<<<grid, kThreads, 0, s>>>(t.a.as<float>(), t.out.as<bf16>(), packs);
  TP_CUDA(cudaGetLastError());
}

void launch_adamw(const StepTensors& t, cudaStream_t s) {
  const AdamWHyper h;
  const float bc1 = 1.0f - std::pow(h.beta1, static_cast<float>(h.step));
  const float bc2 = 1.0f - std::pow(h.beta2, static_cast<float>(h.step));
  if (t.dtype == Precision::fp32) {
    const int64_t packs = packs_of(t, step::Pack<float>::n);
    adamw_kernel<float><<<step::grid_for_items(packs, kThreads), kThreads, 0, s>>>(t.a.as<float>(), t.b.as<float>(), t.c.as<float>(),
                                                                                 t.d.as<float>(), packs, h, bc1, bc2);
  } else {
    const int64_t packs = packs_of(t, kP);
    adamw_kernel<bf16><<<step::grid_for_items(packs, kThreads), kThreads, 0, s>>>(t.a.as<bf16>(), t.b.as<bf16>(), t.c.as<bf16>(),
                                                                                t.d.as<bf16>(), packs, h, bc1, bc2);
  }
  TP_CUDA(cudaGetLastError());
}

}  // namespace tp::cuda
