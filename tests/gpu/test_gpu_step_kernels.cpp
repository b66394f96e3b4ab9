// The memory-bound kernel classes of a step (calibrate/step_kernels.*) against CPU references written
// here in double precision from the formulas cited in docs/calibration.md ("Memory-bound kernel
// classes"), on bf16-rounded inputs; and the kernels suite written as memory_kernel records.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <random>

#include "cuda_runner.h"
#include "kernel_traffic.h"
#include "step_kernels.cuh"
#include "suite_plan.h"

namespace tp {
namespace {

using K = KernelClass;
using Vec = std::vector<float>;

#define REQUIRE_DEVICE()                                                        \
  do {                                                                          \
    int n_ = 0;                                                                 \
    if (cudaGetDeviceCount(&n_) != cudaSuccess || n_ == 0) {                     \
      (void)cudaGetLastError();                                                 \
      GTEST_SKIP() << "no CUDA device";                                         \
    }                                                                           \
  } while (0)

// bf16 = the top 16 bits of an fp32, rounded to nearest even (IEEE 754 binary32 layout).
float round_bf16(float x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  float y = 0;
  std::memcpy(&y, &u, 4);
  return y;
}

Vec random_bf16(size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  Vec v(n);
  for (auto& x : v) x = round_bf16(u(rng));
  return v;
}

// |got - ref| <= abs + rel |ref| everywhere (bf16 output: 2^-8 relative rounding).
void expect_close(const Vec& got, const std::vector<double>& ref, double abs, double rel, const char* what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!(std::fabs(got[i] - ref[i]) <= abs + rel * std::fabs(ref[i]))) {
      if (++bad <= 5) ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << ", want " << ref[i];
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

constexpr double kRel = 1.0 / 128;  // two bf16 roundings

TEST(GpuStepKernels, NormsMatchTheirDefinitions) {
  REQUIRE_DEVICE();
  const int rows = 3, cols = 4096;
  const Vec x = random_bf16(size_t(rows) * cols, 1), dy = random_bf16(size_t(rows) * cols, 2);
  const Vec w = random_bf16(cols, 3, 0.5f, 1.5f), bias = random_bf16(cols, 4);
  std::vector<double> rms_y, rms_dx, ln_y, ln_dx;
  for (int r = 0; r < rows; ++r) {
    const float* xr = &x[size_t(r) * cols];
    const float* dr = &dy[size_t(r) * cols];
    double ss = 0, s = 0, swdx = 0;
    for (int i = 0; i < cols; ++i) ss += double(xr[i]) * xr[i], s += xr[i], swdx += double(w[i]) * dr[i] * xr[i];
    const double rr = 1.0 / std::sqrt(ss / cols + 1e-5);
    const double mu = s / cols, var = ss / cols - mu * mu, rl = 1.0 / std::sqrt(var + 1e-5);
    double sg = 0, sgx = 0;
    for (int i = 0; i < cols; ++i) sg += double(w[i]) * dr[i], sgx += double(w[i]) * dr[i] * (xr[i] - mu) * rl;
    for (int i = 0; i < cols; ++i) {
      rms_y.push_back(xr[i] * rr * w[i]);
      rms_dx.push_back(rr * w[i] * dr[i] - xr[i] * rr * rr * rr * swdx / cols);
      ln_y.push_back((xr[i] - mu) * rl * w[i] + bias[i]);
      ln_dx.push_back(rl * (double(w[i]) * dr[i] - sg / cols - (xr[i] - mu) * rl * sgx / cols));
    }
  }
  expect_close(cuda::run_step_kernel(K::rmsnorm_fwd, Precision::bf16, rows, cols, {x, {}, w}), rms_y, 1e-2, kRel, "rmsnorm_fwd");
  expect_close(cuda::run_step_kernel(K::rmsnorm_bwd, Precision::bf16, rows, cols, {x, dy, w}), rms_dx, 2e-2, kRel, "rmsnorm_bwd");
  expect_close(cuda::run_step_kernel(K::layernorm_fwd, Precision::bf16, rows, cols, {x, {}, w, bias}), ln_y, 1e-2, kRel, "layernorm_fwd");
  expect_close(cuda::run_step_kernel(K::layernorm_bwd, Precision::bf16, rows, cols, {x, dy, w}), ln_dx, 2e-2, kRel, "layernorm_bwd");
}

TEST(GpuStepKernels, ActivationsAddAndCastsMatchTheirDefinitions) {
  REQUIRE_DEVICE();
  const int rows = 4, cols = 2048;
  const size_t n = size_t(rows) * cols;
  const Vec x = random_bf16(n, 5, -4.0f, 4.0f), dy = random_bf16(n, 6), gate_up = random_bf16(2 * n, 7, -4.0f, 4.0f);
  std::vector<double> gelu_y, gelu_dx, add, sw_y, sw_d(2 * n), cast32;
  const double k = std::sqrt(2.0 / std::numbers::pi), c = 0.044715;
  for (size_t i = 0; i < n; ++i) {
    const double v = x[i], t = std::tanh(k * (v + c * v * v * v));
    gelu_y.push_back(0.5 * v * (1 + t));
    gelu_dx.push_back(dy[i] * (0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k * (1 + 3 * c * v * v)));
    add.push_back(double(x[i]) + dy[i]);
    cast32.push_back(x[i]);  // already bf16: exact
    const size_t r = i / cols, j = i % cols;
    const double u = gate_up[r * 2 * cols + j], up = gate_up[r * 2 * cols + cols + j], sg = 1 / (1 + std::exp(-u));
    sw_y.push_back(u * sg * up);
    sw_d[r * 2 * cols + j] = dy[i] * up * sg * (1 + u * (1 - sg));
    sw_d[r * 2 * cols + cols + j] = dy[i] * u * sg;
  }
  expect_close(cuda::run_step_kernel(K::gelu_fwd, Precision::bf16, rows, cols, {x}), gelu_y, 1e-2, kRel, "gelu_fwd");
  expect_close(cuda::run_step_kernel(K::gelu_bwd, Precision::bf16, rows, cols, {x, dy}), gelu_dx, 1e-2, kRel, "gelu_bwd");
  expect_close(cuda::run_step_kernel(K::swiglu_fwd, Precision::bf16, rows, cols, {gate_up}), sw_y, 1e-2, kRel, "swiglu_fwd");
  expect_close(cuda::run_step_kernel(K::swiglu_bwd, Precision::bf16, rows, cols, {gate_up, dy}), sw_d, 1e-2, kRel, "swiglu_bwd");
  expect_close(cuda::run_step_kernel(K::residual_add, Precision::bf16, rows, cols, {x, dy}), add, 0, 1.0 / 256, "residual_add");
  expect_close(cuda::run_step_kernel(K::cast_to_fp32, Precision::bf16, rows, cols, {x}), cast32, 0, 0, "cast_to_fp32");
  // fp32 -> bf16 rounds to nearest even, as round_bf16.
  std::mt19937 rng(8);
  std::normal_distribution<float> g(0.0f, 3.0f);
  Vec wide(n);
  std::vector<double> narrow;
  for (auto& v : wide) narrow.push_back(round_bf16(v = g(rng)));
  expect_close(cuda::run_step_kernel(K::cast_to_16bit, Precision::bf16, rows, cols, {wide}), narrow, 0, 0, "cast_to_16bit");
}

TEST(GpuStepKernels, RotaryTurnsPairsAndBackwardUndoesIt) {
  REQUIRE_DEVICE();
  const int64_t heads = 2, d = kRotaryHeadDim, rows = cuda::kRotarySeq + 3, cols = heads * d;  // positions wrap at kRotarySeq
  const Vec x = random_bf16(size_t(rows * cols), 9);
  std::vector<double> fwd(x.size()), bwd(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < d / 2; ++i) {
        const double theta = double(r % cuda::kRotarySeq) * std::pow(10000.0, -2.0 * double(i) / double(d));
        const size_t a = size_t(r * cols + h * d + i), b = a + size_t(d / 2);
        fwd[a] = x[a] * std::cos(theta) - x[b] * std::sin(theta);
        fwd[b] = x[b] * std::cos(theta) + x[a] * std::sin(theta);
        bwd[a] = x[a] * std::cos(theta) + x[b] * std::sin(theta);
        bwd[b] = x[b] * std::cos(theta) - x[a] * std::sin(theta);
      }
  // Angles up to ~4096 rad in fp32: 2^-12 absolute error on top of the bf16 rounding.
  expect_close(cuda::run_step_kernel(K::rotary_fwd, Precision::bf16, rows, cols, {x}), fwd, 1e-2, kRel, "rotary_fwd");
  expect_close(cuda::run_step_kernel(K::rotary_bwd, Precision::bf16, rows, cols, {x}), bwd, 1e-2, kRel, "rotary_bwd");
}

TEST(GpuStepKernels, CrossEntropyLossAndGradient) {
  REQUIRE_DEVICE();
  const int rows = 4, vocab = 1001;  // odd: not a multiple of the 16-byte vector
  const Vec logits = random_bf16(size_t(rows) * vocab, 10, -8.0f, 8.0f);
  const Vec target{0, 1000, 17, 500};
  std::vector<double> ref(size_t(rows) * vocab), loss;
  for (int r = 0; r < rows; ++r) {
    double mx = -1e300, sum = 0;
    for (int j = 0; j < vocab; ++j) mx = std::max(mx, double(logits[size_t(r) * vocab + j]));
    for (int j = 0; j < vocab; ++j) sum += std::exp(logits[size_t(r) * vocab + j] - mx);
    const double lse = mx + std::log(sum);
    const int t = int(target[size_t(r)]);
    loss.push_back(lse - logits[size_t(r) * vocab + t]);
    for (int j = 0; j < vocab; ++j) ref[size_t(r) * vocab + j] = (std::exp(logits[size_t(r) * vocab + j] - lse) - (j == t)) / rows;
  }
  ref.insert(ref.end(), loss.begin(), loss.end());
  expect_close(cuda::run_step_kernel(K::cross_entropy, Precision::bf16, rows, vocab, {logits, target}), ref, 1e-4, 1e-2, "cross_entropy");
}

TEST(GpuStepKernels, AdamWOneStepInFp32AndBf16) {
  REQUIRE_DEVICE();
  const size_t n = 4096;
  const Vec p = random_bf16(n, 11), g = random_bf16(n, 12), m = random_bf16(n, 13, -0.1f, 0.1f), v = random_bf16(n, 14, 0.0f, 0.01f);
  const cuda::AdamWHyper h;
  std::vector<double> ref(3 * n);
  for (size_t i = 0; i < n; ++i) {
    const double mi = h.beta1 * m[i] + (1 - h.beta1) * g[i], vi = h.beta2 * v[i] + (1 - h.beta2) * double(g[i]) * g[i];
    const double bc1 = 1 - std::pow(double(h.beta1), h.step), bc2 = 1 - std::pow(double(h.beta2), h.step);
    ref[i] = p[i] * (1 - double(h.lr) * h.weight_decay) - h.lr * (mi / bc1) / (std::sqrt(vi / bc2) + h.eps);
    ref[n + i] = mi;
    ref[2 * n + i] = vi;
  }
  expect_close(cuda::run_step_kernel(K::adamw, Precision::fp32, int64_t(n), 1, {p, g, m, v}), ref, 1e-6, 1e-4, "adamw fp32");
  expect_close(cuda::run_step_kernel(K::adamw, Precision::bf16, int64_t(n), 1, {p, g, m, v}), ref, 1e-6, kRel, "adamw bf16");
}

TEST(GpuStepKernels, KernelsSuiteWritesMemoryKernelRecords) {
  REQUIRE_DEVICE();
  SuiteOptions so;
  so.suites = {Suite::kernels};
  so.quick = true;
  CudaRunOptions ro;
  ro.policy.max_reps = 5;
  ro.policy.max_seconds = 0.2;
  const Measurements m = run_calibration(plan_suite(so, nullptr), ro, RankInfo{});
  EXPECT_TRUE(m.skipped.empty()) << (m.skipped.empty() ? "" : m.skipped.front().reason);
  ASSERT_EQ(m.items.size(), kernel_cases(true).size());
  for (const auto& x : m.items) {
    EXPECT_EQ(x.op, MeasuredOp::memory_kernel);
    EXPECT_DOUBLE_EQ(x.bytes, kernel_bytes_moved(x.kernel, x.dtype, x.rows, x.cols)) << to_string(x.kernel);
    // Achieved bandwidth: positive and below 10 TB/s (more than any HBM3e GPU's datasheet).
    EXPECT_GT(x.rate, 1e9) << to_string(x.kernel);
    EXPECT_LT(x.rate, 10e12) << to_string(x.kernel);
  }
}

}  // namespace
}  // namespace tp
