// Fused attention through cuDNN's scaled-dot-product-attention graphs, built with the backend API
// (cudnn_graph.h). The graphs follow the flash-attention patterns cuDNN's runtime-fusion engines match,
// as documented in the cuDNN developer guide ("Fused Flash Attention fprop/bprop") and as the
// cudnn-frontend SDPA nodes (v1.x, include/cudnn_frontend/node/scaled_dot_product_flash_attention.h) lay
// them out; docs/calibration.md ("Fused attention") lists the nodes.
//   forward:  S = Q K^T; S *= scale; [causal: S = row >= col ? S : lowest]; softmax with stats
//             (M = max S, E = exp(S - M), Z = sum E, stats = M + log Z, P = E / Z, P in the I/O type); O = P V
//   backward: D = rowsum(dO * O); recompute P = exp(scale Q K^T [masked] - stats); dV = P^T dO;
//             dS = P (dO V^T - D) scale; dK = dS^T Q; dQ = dS K; GQA: dK, dV summed over the query heads
//             of each KV head (a reduction of the per-query-head products).
#include <algorithm>
#include <cmath>
#include <limits>

#include "attention.cuh"
#include "cudnn_graph.h"

namespace tp::cuda {

namespace {

enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kScale, kNegInf, kDO, kDQ, kDK, kDV, kOne };

struct Sizes {
  std::int64_t b, h, hk, s, skv, d;
  explicit Sizes(const AttentionShape& a)
      : b(a.batch), h(a.heads), hk(a.kv_heads), s(a.seq_q), skv(a.seq_kv), d(a.head_dim) {}
  Dims q() const { return {b, h, s, d}; }
  Dims kv() const { return {b, hk, skv, d}; }
  Dims kv_transposed() const { return {b, hk, d, skv}; }
  Dims kv_transposed_strides() const { return {hk * skv * d, skv * d, 1, d}; }
  Dims scores() const { return {b, h, s, skv}; }
  Dims scores_transposed() const { return {b, h, skv, s}; }
  Dims scores_transposed_strides() const { return {h * s * skv, s * skv, 1, skv}; }
  Dims row() const { return {b, h, s, 1}; }
};

// S * scale, then (causal) the upper triangle set to the lowest float: the score nodes both graphs share.
// `scale` is the graph's one by-value scale tensor (each uid is described once per graph).
cudnnBackendDescriptor_t scaled_scores(CudnnGraph& g, const Sizes& z, cudnnBackendDescriptor_t q, cudnnBackendDescriptor_t kt,
                                       cudnnBackendDescriptor_t scale, bool causal) {
  const cudnnDataType_t f = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t s = g.virtual_tensor(f, z.scores());
  g.matmul(q, kt, s);
  cudnnBackendDescriptor_t scaled = g.virtual_tensor(f, z.scores());
  g.pointwise(CUDNN_POINTWISE_MUL, s, scale, nullptr, scaled);
  if (!causal) return scaled;
  cudnnBackendDescriptor_t row = g.virtual_tensor(f, z.scores()), col = g.virtual_tensor(f, z.scores());
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scaled, nullptr, nullptr, row, f, 2);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scaled, nullptr, nullptr, col, f, 3);
  cudnnBackendDescriptor_t keep = g.virtual_tensor(CUDNN_DATA_BOOLEAN, z.scores());
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, nullptr, keep, CUDNN_DATA_BOOLEAN);
  cudnnBackendDescriptor_t masked = g.virtual_tensor(f, z.scores());
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, scaled, g.scalar(kNegInf), keep, masked);
  return masked;
}

void build_forward(CudnnGraph& g, const Sizes& z, cudnnDataType_t io, bool causal) {
  const cudnnDataType_t f = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t q = g.tensor(kQ, io, z.q(), packed_strides(z.q()));
  cudnnBackendDescriptor_t kt = g.tensor(kK, io, z.kv_transposed(), z.kv_transposed_strides());
  cudnnBackendDescriptor_t v = g.tensor(kV, io, z.kv(), packed_strides(z.kv()));
  cudnnBackendDescriptor_t o = g.tensor(kO, io, z.q(), packed_strides(z.q()));
  cudnnBackendDescriptor_t stats = g.tensor(kStats, f, z.row(), packed_strides(z.row()));
  cudnnBackendDescriptor_t s = scaled_scores(g, z, q, kt, g.scalar(kScale), causal);
  cudnnBackendDescriptor_t mx = g.virtual_tensor(f, z.row()), sub = g.virtual_tensor(f, z.scores());
  cudnnBackendDescriptor_t e = g.virtual_tensor(f, z.scores()), sum = g.virtual_tensor(f, z.row()), lg = g.virtual_tensor(f, z.row());
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, s, mx);
  g.pointwise(CUDNN_POINTWISE_SUB, s, mx, nullptr, sub);
  g.pointwise(CUDNN_POINTWISE_EXP, sub, nullptr, nullptr, e);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, nullptr, lg);
  g.pointwise(CUDNN_POINTWISE_ADD, mx, lg, nullptr, stats);
  cudnnBackendDescriptor_t p = g.virtual_tensor(io, z.scores());  // the second matmul takes P in the I/O type
  g.pointwise(CUDNN_POINTWISE_DIV, e, sum, nullptr, p);
  g.matmul(p, v, o);
}

// out = A B, or for GQA the per-query-head product summed over each KV head's query heads.
void matmul_into_kv_heads(CudnnGraph& g, const Sizes& z, cudnnDataType_t io, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                          cudnnBackendDescriptor_t out) {
  if (z.h == z.hk) return g.matmul(a, b, out);
  cudnnBackendDescriptor_t full = g.virtual_tensor(io, {z.b, z.h, z.skv, z.d});
  g.matmul(a, b, full);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, full, out);
}

void build_backward(CudnnGraph& g, const Sizes& z, cudnnDataType_t io, bool causal) {
  const cudnnDataType_t f = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t q = g.tensor(kQ, io, z.q(), packed_strides(z.q()));
  cudnnBackendDescriptor_t kt = g.tensor(kK, io, z.kv_transposed(), z.kv_transposed_strides());
  cudnnBackendDescriptor_t vt = g.tensor(kV, io, z.kv_transposed(), z.kv_transposed_strides());
  cudnnBackendDescriptor_t o = g.tensor(kO, io, z.q(), packed_strides(z.q()));
  cudnnBackendDescriptor_t d_o = g.tensor(kDO, io, z.q(), packed_strides(z.q()));
  cudnnBackendDescriptor_t stats = g.tensor(kStats, f, z.row(), packed_strides(z.row()));
  cudnnBackendDescriptor_t dq = g.tensor(kDQ, io, z.q(), packed_strides(z.q()));
  cudnnBackendDescriptor_t dk = g.tensor(kDK, io, z.kv(), packed_strides(z.kv()));
  cudnnBackendDescriptor_t dv = g.tensor(kDV, io, z.kv(), packed_strides(z.kv()));
  cudnnBackendDescriptor_t scale = g.scalar(kScale);
  // D = rowsum(dO * O) (x 1: the dropout-scale slot of the pattern).
  cudnnBackendDescriptor_t prod = g.virtual_tensor(f, z.q()), rowsum = g.virtual_tensor(f, z.row()), d_sum = g.virtual_tensor(f, z.row());
  g.pointwise(CUDNN_POINTWISE_MUL, d_o, o, nullptr, prod);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, prod, rowsum);
  g.pointwise(CUDNN_POINTWISE_MUL, rowsum, g.scalar(kOne), nullptr, d_sum);
  // P recomputed from the stats.
  cudnnBackendDescriptor_t s = scaled_scores(g, z, q, kt, scale, causal);
  cudnnBackendDescriptor_t centred = g.virtual_tensor(f, z.scores()), p = g.virtual_tensor(f, z.scores());
  g.pointwise(CUDNN_POINTWISE_SUB, s, stats, nullptr, centred);
  g.pointwise(CUDNN_POINTWISE_EXP, centred, nullptr, nullptr, p);
  // dV = P^T dO.
  cudnnBackendDescriptor_t pt = g.virtual_tensor(io, z.scores_transposed(), z.scores_transposed_strides());
  g.reshape(p, pt);
  matmul_into_kv_heads(g, z, io, pt, d_o, dv);
  // dS = P (dO V^T - D) scale.
  cudnnBackendDescriptor_t dp = g.virtual_tensor(f, z.scores()), diff = g.virtual_tensor(f, z.scores());
  cudnnBackendDescriptor_t ds_unscaled = g.virtual_tensor(f, z.scores()), ds = g.virtual_tensor(f, z.scores());
  g.matmul(d_o, vt, dp);
  g.pointwise(CUDNN_POINTWISE_SUB, dp, d_sum, nullptr, diff);
  g.pointwise(CUDNN_POINTWISE_MUL, diff, p, nullptr, ds_unscaled);
  g.pointwise(CUDNN_POINTWISE_MUL, ds_unscaled, scale, nullptr, ds);
  // dK = dS^T Q; dQ = dS K.
  cudnnBackendDescriptor_t dst = g.virtual_tensor(io, z.scores_transposed(), z.scores_transposed_strides());
  g.reshape(ds, dst);
  matmul_into_kv_heads(g, z, io, dst, q, dk);
  cudnnBackendDescriptor_t k = g.virtual_tensor(io, z.kv(), {z.hk * z.skv * z.d, z.skv * z.d, z.d, 1});
  g.reshape(kt, k);
  g.matmul(ds, k, dq);
}

// A cuDNN handle on its own stream, released even when a graph fails to build.
struct HandleOnStream {
  cudnnHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  HandleOnStream() {
    TP_CUDA(cudaStreamCreate(&stream));
    const cudnnStatus_t s = cudnnCreate(&handle);
    if (s != CUDNN_STATUS_SUCCESS) {
      cudaStreamDestroy(stream);
      check_cudnn(s, "create handle");
    }
    check_cudnn(cudnnSetStream(handle, stream), "set stream");
  }
  ~HandleOnStream() {
    cudnnDestroy(handle);
    cudaStreamDestroy(stream);
  }
  HandleOnStream(const HandleOnStream&) = delete;
  HandleOnStream& operator=(const HandleOnStream&) = delete;
};

// The device tensors and both graphs of one attention case (the graphs are declared after the handle,
// so they are destroyed before it).
struct Sdpa {
  Sizes z;
  cudnnDataType_t io;
  bool causal;
  HandleOnStream hs;
  cudnnHandle_t handle = hs.handle;
  cudaStream_t stream = hs.stream;
  DeviceBuffer q, k, v, o, stats, d_o, dq, dk, dv, workspace;
  CudnnGraph fwd, bwd;
  std::string engine;
  float scale, neg_inf = std::numeric_limits<float>::lowest(), one = 1.0f;

  Sdpa(const AttentionShape& a, Precision p, bool backward) : z(a), causal(a.causal) {
    if (p != Precision::bf16 && p != Precision::fp16) throw Unsupported("fused attention runs in bf16 or fp16");
    if (a.heads % a.kv_heads != 0) throw Unsupported("query heads must be a multiple of the KV heads");
    io = p == Precision::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
    scale = 1.0f / std::sqrt(static_cast<float>(a.head_dim));
    const size_t nq = static_cast<size_t>(z.b * z.h * z.s * z.d) * 2, nkv = static_cast<size_t>(z.b * z.hk * z.skv * z.d) * 2;
    q = DeviceBuffer(nq), k = DeviceBuffer(nkv), v = DeviceBuffer(nkv), o = DeviceBuffer(nq);
    stats = DeviceBuffer(static_cast<size_t>(z.b * z.h * z.s) * 4);
    build_forward(fwd, z, io, causal);
    engine = fwd.build(handle);
    std::int64_t ws = fwd.workspace_bytes();
    if (backward) {
      d_o = DeviceBuffer(nq), dq = DeviceBuffer(nq), dk = DeviceBuffer(nkv), dv = DeviceBuffer(nkv);
      build_backward(bwd, z, io, causal);
      engine = bwd.build(handle);
      ws = std::max(ws, bwd.workspace_bytes());
    }
    workspace = DeviceBuffer(static_cast<size_t>(std::max<std::int64_t>(ws, 16)));
  }

  void forward() {
    std::vector<std::int64_t> ids{kQ, kK, kV, kO, kStats, kScale};
    std::vector<void*> ptrs{q.get(), k.get(), v.get(), o.get(), stats.get(), &scale};
    if (causal) ids.push_back(kNegInf), ptrs.push_back(&neg_inf);
    fwd.execute(handle, ids, ptrs, workspace.get());
  }
  void backward() {
    std::vector<std::int64_t> ids{kQ, kK, kV, kO, kDO, kStats, kDQ, kDK, kDV, kScale, kOne};
    std::vector<void*> ptrs{q.get(), k.get(), v.get(), o.get(), d_o.get(), stats.get(), dq.get(), dk.get(), dv.get(), &scale, &one};
    if (causal) ids.push_back(kNegInf), ptrs.push_back(&neg_inf);
    bwd.execute(handle, ids, ptrs, workspace.get());
  }
};

}  // namespace

TimeStats measure_attention_fused(const AttentionShape& a, Precision p, bool backward, const RepetitionPolicy& policy, L2Flusher* flush,
                                  std::string* engine) {
  Sdpa x(a, p, backward);
  const int kind = p == Precision::bf16 ? 2 : 1;
  fill_random(x.q.get(), x.q.bytes() / 2, kind, 1, 1.0f, x.stream);
  fill_random(x.k.get(), x.k.bytes() / 2, kind, 2, 1.0f, x.stream);
  fill_random(x.v.get(), x.v.bytes() / 2, kind, 3, 1.0f, x.stream);
  if (engine != nullptr) *engine = x.engine;
  if (!backward) return time_runs(x.stream, [&] { x.forward(); }, policy, flush);
  fill_random(x.d_o.get(), x.d_o.bytes() / 2, kind, 4, 1.0f, x.stream);
  x.forward();  // O and the stats the backward reads
  return time_runs(x.stream, [&] { x.backward(); }, policy, flush);
}

AttentionOutputs attention_fused(const AttentionShape& a, Precision p, const std::vector<float>& q, const std::vector<float>& k,
                                 const std::vector<float>& v, const std::vector<float>& d_o) {
  Sdpa x(a, p, !d_o.empty());
  const bool bf16 = p == Precision::bf16;
  upload_16bit(q, x.q.get(), bf16, x.stream);
  upload_16bit(k, x.k.get(), bf16, x.stream);
  upload_16bit(v, x.v.get(), bf16, x.stream);
  x.forward();
  AttentionOutputs out;
  out.o = download_16bit(x.o.get(), q.size(), bf16, x.stream);
  if (!d_o.empty()) {
    upload_16bit(d_o, x.d_o.get(), bf16, x.stream);
    x.backward();
    out.dq = download_16bit(x.dq.get(), q.size(), bf16, x.stream);
    out.dk = download_16bit(x.dk.get(), k.size(), bf16, x.stream);
    out.dv = download_16bit(x.dv.get(), v.size(), bf16, x.stream);
  }
  return out;
}

}  // namespace tp::cuda
