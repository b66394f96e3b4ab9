#include "gemm_cublaslt.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <limits>
#include <memory>

namespace tp::cuda {

namespace {

constexpr size_t kWorkspace = 32u << 20;
constexpr int kCandidates = 8;

void check_lt(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(std::string("out of memory in cuBLASLt: ") + what);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH) {
    throw Unsupported(std::string("cuBLASLt does not support this case: ") + what);
  }
  throw CudaError(std::string("cuBLASLt error ") + std::to_string(static_cast<int>(st)) + " in " + what);
}

struct Types {
  cudaDataType_t ab, cd, scale;
  cublasComputeType_t compute;
  int fill_kind;    // fill_random kind of A and B
  size_t ab_bytes;  // element sizes
  size_t cd_bytes;
};

Types types_of(Precision p) {
  switch (p) {
    case Precision::fp32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0, 4, 4};
    case Precision::tf32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 0, 4, 4};
    case Precision::fp16: return {CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1, 2, 2};
    case Precision::bf16: return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 2, 2};
    case Precision::fp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 3, 1, 2};
  }
  return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0, 4, 4};
}

// Descriptors of one problem: D (m x n, column-major view) = A^T (m x k) B (k x n), A stored k x m,
// B stored k x n, both column-major with leading dimension k ("TN").
struct Problem {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  ~Problem() {
    if (op) cublasLtMatmulDescDestroy(op);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
  }
};

std::unique_ptr<Problem> make_problem(const Types& t, std::int64_t m, std::int64_t n, std::int64_t k) {
  auto p = std::make_unique<Problem>();
  check_lt(cublasLtMatmulDescCreate(&p->op, t.compute, t.scale), "matmul descriptor");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  check_lt(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "transa");
  check_lt(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "transb");
  check_lt(cublasLtMatrixLayoutCreate(&p->a, t.ab, static_cast<uint64_t>(k), static_cast<uint64_t>(m), k), "layout A");
  check_lt(cublasLtMatrixLayoutCreate(&p->b, t.ab, static_cast<uint64_t>(k), static_cast<uint64_t>(n), k), "layout B");
  check_lt(cublasLtMatrixLayoutCreate(&p->c, t.cd, static_cast<uint64_t>(m), static_cast<uint64_t>(n), m), "layout C");
  return p;
}

}  // namespace

bool gemm_dtype_supported(Precision p, int cc) {
  switch (p) {
    case Precision::fp32: return true;
    case Precision::tf32:
    case Precision::bf16: return cc >= 80;
    case Precision::fp16: return cc >= 70;
    case Precision::fp8: return cc >= 89;
  }
  return false;
}

LtGemm::LtGemm() : workspace_(kWorkspace) {
  check_lt(cublasLtCreate(&handle_), "cublasLtCreate");
  TP_CUDA(cudaStreamCreate(&stream_));
}

LtGemm::~LtGemm() {
  if (stream_) cudaStreamDestroy(stream_);
  if (handle_) cublasLtDestroy(handle_);
}

GemmResult LtGemm::measure(const GemmShape& s, Precision p, const RepetitionPolicy& policy, L2Flusher* flush) {
  int dev = 0;
  TP_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  TP_CUDA(cudaGetDeviceProperties(&prop, dev));
  if (!gemm_dtype_supported(p, prop.major * 10 + prop.minor)) {
    throw Unsupported(std::string(to_string(p)) + " GEMMs need a newer GPU than compute capability " +
                      std::to_string(prop.major) + "." + std::to_string(prop.minor));
  }
  if (p == Precision::fp8 && (s.k % 16 != 0 || s.m % 16 != 0 || s.n % 16 != 0)) {
    throw Unsupported("fp8 GEMMs need dimensions divisible by 16");
  }
  const Types t = types_of(p);
  const size_t na = static_cast<size_t>(s.m * s.k), nb = static_cast<size_t>(s.k * s.n), nc = static_cast<size_t>(s.m * s.n);
  DeviceBuffer a(na * t.ab_bytes), b(nb * t.ab_bytes), c(nc * t.cd_bytes);
  fill_random(a.get(), na, t.fill_kind, 11, 1.0f, stream_);
  fill_random(b.get(), nb, t.fill_kind, 13, 1.0f, stream_);
  auto prob = make_problem(t, s.m, s.n, s.k);

  cublasLtMatmulPreference_t pref = nullptr;
  check_lt(cublasLtMatmulPreferenceCreate(&pref), "preference");
  const size_t ws = kWorkspace;
  check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws), "workspace");
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int found = 0;
  const cublasStatus_t hs =
      cublasLtMatmulAlgoGetHeuristic(handle_, prob->op, prob->a, prob->b, prob->c, prob->c, pref, kCandidates, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  check_lt(hs, "algorithm heuristic");
  if (found == 0) throw Unsupported("cuBLASLt found no algorithm for this shape and dtype");

  const float alpha = 1.0f, beta = 0.0f;
  auto run = [&](const cublasLtMatmulAlgo_t* algo) {
    check_lt(cublasLtMatmul(handle_, prob->op, &alpha, a.get(), prob->a, b.get(), prob->b, &beta, c.get(), prob->c, c.get(),
                            prob->c, algo, workspace_.get(), kWorkspace, stream_),
             "cublasLtMatmul");
  };
  // Time the top candidates briefly; keep the fastest.
  RepetitionPolicy quick;
  quick.warmup = 2;
  quick.min_reps = 3;
  quick.max_reps = 5;
  quick.max_seconds = 0.2;
  int best = 0;
  double best_t = std::numeric_limits<double>::infinity();
  for (int i = 0; i < found; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
    try {
      const TimeStats ts = time_runs(stream_, [&] { run(&results[i].algo); }, quick, nullptr);
      if (ts.median < best_t) {
        best_t = ts.median;
        best = i;
      }
    } catch (const Unsupported&) {
      continue;
    }
  }
  GemmResult r;
  r.time = time_runs(stream_, [&] { run(&results[best].algo); }, policy, flush);
  int algo_id = -1;
  size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&results[best].algo, CUBLASLT_ALGO_CONFIG_ID, &algo_id, sizeof algo_id, &written);
  r.algorithm = "cuBLASLt algo " + std::to_string(algo_id) + " (heuristic candidate " + std::to_string(best + 1) + " of " +
                std::to_string(found) + ")";
  return r;
}

namespace {

__global__ void to_dtype(const float* in, void* out, size_t n, int kind) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    switch (kind) {
      case 0: static_cast<float*>(out)[i] = in[i]; break;
      case 1: static_cast<__half*>(out)[i] = __float2half(in[i]); break;
      case 2: static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16(in[i]); break;
      default: static_cast<__nv_fp8_e4m3*>(out)[i] = __nv_fp8_e4m3(in[i]); break;
    }
  }
}

__global__ void to_float(const void* in, float* out, size_t n, int kind) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    switch (kind) {
      case 0: out[i] = static_cast<const float*>(in)[i]; break;
      case 1: out[i] = __half2float(static_cast<const __half*>(in)[i]); break;
      default: out[i] = __bfloat162float(static_cast<const __nv_bfloat16*>(in)[i]); break;
    }
  }
}

}  // namespace

std::vector<float> LtGemm::multiply(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k, Precision p) {
  const Types t = types_of(p);
  // A row-major m x k is A stored column-major k x m (lda k): used as is with op T.
  // B row-major k x n must be stored column-major k x n: that is B^T row-major.
  std::vector<float> bt(static_cast<size_t>(k) * n);
  for (int r = 0; r < k; ++r) {
    for (int c = 0; c < n; ++c) bt[static_cast<size_t>(c) * k + r] = b[static_cast<size_t>(r) * n + c];
  }
  const size_t na = a.size(), nb = bt.size(), nc = static_cast<size_t>(m) * n;
  DeviceBuffer fa(na * 4), fb(nb * 4), fc(nc * 4);
  DeviceBuffer da(na * t.ab_bytes), db(nb * t.ab_bytes), dc(nc * t.cd_bytes);
  TP_CUDA(cudaMemcpyAsync(fa.get(), a.data(), na * 4, cudaMemcpyHostToDevice, stream_));
  TP_CUDA(cudaMemcpyAsync(fb.get(), bt.data(), nb * 4, cudaMemcpyHostToDevice, stream_));
  to_dtype<<<64, 256, 0, stream_>>>(fa.as<float>(), da.get(), na, t.fill_kind);
  to_dtype<<<64, 256, 0, stream_>>>(fb.as<float>(), db.get(), nb, t.fill_kind);
  TP_CUDA(cudaGetLastError());
  auto prob = make_problem(t, m, n, k);
  const float alpha = 1.0f, beta = 0.0f;
  check_lt(cublasLtMatmul(handle_, prob->op, &alpha, da.get(), prob->a, db.get(), prob->b, &beta, dc.get(), prob->c, dc.get(),
                          prob->c, nullptr, workspace_.get(), kWorkspace, stream_),
           "cublasLtMatmul");
  const int out_kind = t.cd == CUDA_R_32F ? 0 : (t.cd == CUDA_R_16F ? 1 : 2);
  to_float<<<64, 256, 0, stream_>>>(dc.get(), fc.as<float>(), nc, out_kind);
  TP_CUDA(cudaGetLastError());
  std::vector<float> d(nc);
  TP_CUDA(cudaMemcpyAsync(d.data(), fc.get(), nc * 4, cudaMemcpyDeviceToHost, stream_));
  TP_CUDA(cudaStreamSynchronize(stream_));
  // D is column-major m x n: D[i + j m] = C[i][j]. Return C row-major.
  std::vector<float> c(nc);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) c[static_cast<size_t>(i) * n + j] = d[static_cast<size_t>(j) * m + i];
  }
  return c;
}

}  // namespace tp::cuda
