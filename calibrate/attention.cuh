// Attention kernels: the unfused path (cuBLAS strided-batched GEMMs + our softmax kernels) and the
// fused one (cuDNN scaled-dot-product attention through the graph API, when built with cuDNN).
// Layout: Q, O, dQ, dO [b][h][s_q][d] with the heads ordered KV-group-major (h = g x ratio + r), and
// K, V, dK, dV [b][kv_heads][s_kv][d]; 16-bit (bf16 or fp16), fp32 accumulation; scale 1/sqrt(d).
#pragma once

#include <vector>

#include "measurements.h"
#include "timing.cuh"

namespace tp::cuda {

struct AttentionOutputs {
  std::vector<float> o, dq, dk, dv;  // dq/dk/dv empty when only the forward ran
};

// Times the forward (backward = false) or the backward pass (after one untimed forward).
TimeStats measure_attention_unfused(const AttentionShape& a, Precision p, bool backward, const RepetitionPolicy& policy,
                                    L2Flusher* flush);
// Runs forward (and backward with `d_o` non-empty) on host data, for the numerics tests.
AttentionOutputs attention_unfused(const AttentionShape& a, Precision p, const std::vector<float>& q, const std::vector<float>& k,
                                   const std::vector<float>& v, const std::vector<float>& d_o);

// cuDNN fused SDPA. Throws Unsupported when this build has no cuDNN or cuDNN has no engine for the case.
TimeStats measure_attention_fused(const AttentionShape& a, Precision p, bool backward, const RepetitionPolicy& policy,
                                  L2Flusher* flush, std::string* engine);
AttentionOutputs attention_fused(const AttentionShape& a, Precision p, const std::vector<float>& q, const std::vector<float>& k,
                                 const std::vector<float>& v, const std::vector<float>& d_o);

// Converts between host fp32 and device 16-bit (bf16 = true, else fp16).
void upload_16bit(const std::vector<float>& host, void* device, bool bf16, cudaStream_t s);
std::vector<float> download_16bit(const void* device, size_t n, bool bf16, cudaStream_t s);

}  // namespace tp::cuda
