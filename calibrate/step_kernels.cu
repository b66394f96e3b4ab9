// The step kernels' tensors (which class needs which, in which type), timing, and the host entry point of
// the numerics tests. The kernels: step_kernels_rows.cu, step_kernels_elementwise.cu.
#include "step_kernels.cuh"

#include <random>

#include "attention.cuh"
#include "kernel_traffic.h"

namespace tp::cuda {

namespace {

using std::int64_t;
using K = KernelClass;

// Elements and element type of one tensor slot (0 elements: unused).
struct Slot {
  int64_t elems = 0;
  bool fp32 = false;  // else bf16 (adamw: the state dtype)
  size_t bytes() const { return static_cast<size_t>(elems) * (fp32 ? 4u : 2u); }
};
struct Layout {
  Slot a, b, c, d, out;
};

Layout layout_of(K k, Precision dtype, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  Layout l;
  switch (k) {
    case K::rmsnorm_fwd: l = {{n}, {}, {cols}, {}, {n}}; break;
    case K::rmsnorm_bwd:
    case K::layernorm_bwd: l = {{n}, {n}, {cols}, {}, {n}}; break;
    case K::layernorm_fwd: l = {{n}, {}, {cols}, {cols}, {n}}; break;
    case K::gelu_fwd:
    case K::rotary_fwd:
    case K::rotary_bwd: l = {{n}, {}, {}, {}, {n}}; break;
    case K::gelu_bwd:
    case K::residual_add: l = {{n}, {n}, {}, {}, {n}}; break;
    case K::swiglu_fwd: l = {{2 * n}, {}, {}, {}, {n}}; break;
    case K::swiglu_bwd: l = {{2 * n}, {n}, {}, {}, {2 * n}}; break;
    case K::cast_to_fp32: l = {{n}, {}, {}, {}, {n, true}}; break;
    case K::cast_to_16bit: l = {{n, true}, {}, {}, {}, {n}}; break;
    case K::cross_entropy: l = {{n}, {}, {}, {}, {n}}; break;
    case K::adamw: {
      const bool f = dtype == Precision::fp32;
      l = {{n, f}, {n, f}, {n, f}, {n, f}, {}};
      break;
    }
  }
  return l;
}

StepTensors allocate(K k, Precision dtype, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) throw Unsupported("empty tensor");
  if (k == K::adamw ? (dtype != Precision::fp32 && dtype != Precision::bf16) : dtype != Precision::bf16) {
    throw Unsupported(std::string("the ") + to_string(k) + " kernel is not built for " + to_string(dtype));
  }
  const Layout l = layout_of(k, dtype, rows, cols);
  StepTensors t;
  t.rows = rows;
  t.cols = cols;
  t.dtype = dtype;
  DeviceBuffer* slots[] = {&t.a, &t.b, &t.c, &t.d, &t.out};
  const Slot* specs[] = {&l.a, &l.b, &l.c, &l.d, &l.out};
  for (int i = 0; i < 5; ++i) {
    if (specs[i]->elems > 0) *slots[i] = DeviceBuffer(specs[i]->bytes());
  }
  if (k == K::cross_entropy) {
    t.target = DeviceBuffer(static_cast<size_t>(rows) * sizeof(int));
    t.row_stats = DeviceBuffer(static_cast<size_t>(rows) * 2 * sizeof(float));
  }
  return t;
}

void launch(K k, const StepTensors& t, cudaStream_t s) {
  switch (k) {
    case K::rmsnorm_fwd: return launch_rmsnorm(t, false, s);
    case K::rmsnorm_bwd: return launch_rmsnorm(t, true, s);
    case K::layernorm_fwd: return launch_layernorm(t, false, s);
    case K::layernorm_bwd: return launch_layernorm(t, true, s);
    case K::gelu_fwd: return launch_gelu(t, false, s);
    case K::gelu_bwd: return launch_gelu(t, true, s);
    case K::swiglu_fwd: return launch_swiglu(t, false, s);
    case K::swiglu_bwd: return launch_swiglu(t, true, s);
    case K::residual_add: return launch_residual_add(t, s);
    case K::rotary_fwd: return launch_rotary(t, false, s);
    case K::rotary_bwd: return launch_rotary(t, true, s);
    case K::cast_to_fp32: return launch_cast(t, true, s);
    case K::cast_to_16bit: return launch_cast(t, false, s);
    case K::cross_entropy: return launch_cross_entropy(t, s);
    case K::adamw: return launch_adamw(t, s);
  }
}

void upload_targets(const StepTensors& t, const std::vector<int>& target, cudaStream_t s) {
  TP_CUDA(cudaMemcpyAsync(t.target.get(), target.data(), target.size() * sizeof(int), cudaMemcpyHostToDevice, s));
  TP_CUDA(cudaStreamSynchronize(s));
}

}  // namespace

TimeStats measure_step_kernel(K k, Precision dtype, int64_t rows, int64_t cols, const RepetitionPolicy& policy, L2Flusher* flush,
                              cudaStream_t s) {
  const StepTensors t = allocate(k, dtype, rows, cols);
  const Layout l = layout_of(k, dtype, rows, cols);
  const DeviceBuffer* slots[] = {&t.a, &t.b, &t.c, &t.d};
  const Slot* specs[] = {&l.a, &l.b, &l.c, &l.d};
  for (int i = 0; i < 4; ++i) {
    if (specs[i]->elems > 0) fill_random(slots[i]->get(), static_cast<size_t>(specs[i]->elems), specs[i]->fp32 ? 0 : 2, 11u + i, 1.0f, s);
  }
  if (k == K::adamw) TP_CUDA(cudaMemsetAsync(t.d.get(), 0, l.d.bytes(), s));  // v >= 0: a fresh second moment
  if (k == K::cross_entropy) {
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> pick(0, static_cast<int>(cols) - 1);
    std::vector<int> target(static_cast<size_t>(rows));
    for (auto& x : target) x = pick(rng);
    upload_targets(t, target, s);
  }
  TP_CUDA(cudaStreamSynchronize(s));
  return time_runs(s, [&] { launch(k, t, s); }, policy, flush);
}

std::vector<float> run_step_kernel(K k, Precision dtype, int64_t rows, int64_t cols, const std::vector<std::vector<float>>& inputs) {
  cudaStream_t s = nullptr;
  TP_CUDA(cudaStreamCreate(&s));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{s};
  const StepTensors t = allocate(k, dtype, rows, cols);
  const Layout l = layout_of(k, dtype, rows, cols);
  const DeviceBuffer* slots[] = {&t.a, &t.b, &t.c, &t.d};
  const Slot* specs[] = {&l.a, &l.b, &l.c, &l.d};
  for (size_t i = 0; i < 4; ++i) {
    if (specs[i]->elems == 0) continue;
    if (i >= inputs.size() || inputs[i].size() != static_cast<size_t>(specs[i]->elems)) {
      throw Unsupported(std::string(to_string(k)) + ": input " + std::to_string(i) + " needs " + std::to_string(specs[i]->elems) + " values");
    }
    if (specs[i]->fp32) {
      TP_CUDA(cudaMemcpyAsync(slots[i]->get(), inputs[i].data(), specs[i]->bytes(), cudaMemcpyHostToDevice, s));
    } else {
      upload_16bit(inputs[i], slots[i]->get(), true, s);
    }
  }
  if (k == K::cross_entropy) {
    std::vector<int> target;
    for (float x : inputs.at(1)) target.push_back(static_cast<int>(x));
    if (target.size() != static_cast<size_t>(rows)) throw Unsupported("cross_entropy: one target per row");
    upload_targets(t, target, s);
  }
  launch(k, t, s);
  TP_CUDA(cudaStreamSynchronize(s));
  auto fetch = [&](const DeviceBuffer& b, const Slot& spec) {
    if (!spec.fp32) return download_16bit(b.get(), static_cast<size_t>(spec.elems), true, s);
    std::vector<float> v(static_cast<size_t>(spec.elems));
    TP_CUDA(cudaMemcpyAsync(v.data(), b.get(), spec.bytes(), cudaMemcpyDeviceToHost, s));
    TP_CUDA(cudaStreamSynchronize(s));
    return v;
  };
  std::vector<float> out;
  if (k == K::adamw) {
    for (const auto& [b, spec] : {std::pair{&t.a, l.a}, std::pair{&t.c, l.c}, std::pair{&t.d, l.d}}) {
      const auto v = fetch(*b, spec);
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  }
  out = fetch(t.out, l.out);
  if (k == K::cross_entropy) {
    std::vector<float> loss(static_cast<size_t>(rows));
    TP_CUDA(cudaMemcpyAsync(loss.data(), t.row_stats.as<float>() + rows, loss.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
    TP_CUDA(cudaStreamSynchronize(s));
    out.insert(out.end(), loss.begin(), loss.end());
  }
  return out;
}

}  // namespace tp::cuda
