// How Transformer Engine runs the tensor-parallel GEMMs whose communication it overlaps (Megatron-Core
// `--tp-comm-overlap`, `parallel.overlap.tp_comm` with framework megatron): the userbuffers
// ("ub") overlap of TE 1.x, transformer_engine/pytorch/module/base.py `initialize_ub`,
// `get_default_config` (the defaults Megatron-Core uses when no --tp-comm-overlap-cfg is given).
// docs/model.md §15, "TP-communication overlap as Transformer Engine runs it".
#pragma once

#include "gemm_time.h"
#include "hardware_profile.h"
#include "specs.h"

namespace tp {

// TE's overlap methods, by GEMM (initialize_ub, `methods`):
// - ring_exchange: qkv_fprop, fc1_fprop (all-gather of the input), proj_dgrad, fc2_dgrad: the GEMM is run
//   as `num_splits = tp` chunks of tokens/tp rows, each on the chunk that just arrived; the transfers go
//   through the copy engines (`use_ce`, num_sm 1), so no SMs are taken from the GEMM.
// - pipeline: proj_fprop, fc2_fprop (reduce-scatter of the output): `num_splits = 4` chunks of tokens/4
//   rows; the reduce-scatter kernel of each chunk runs on `num_sm = 16` SMs beside the next chunk.
// - bulk: qkv_dgrad, fc1_dgrad (all-gather of the norm output for the weight gradient), qkv_wgrad,
//   fc1_wgrad (reduce-scatter of the input gradient): the whole collective on 16 SMs beside the GEMM.
struct TpOverlapGemmPlan {
  double forward_splits = 1;  // chunks the forward GEMM runs as (rows = tokens / splits)
  double dgrad_splits = 1;    // chunks the input-gradient GEMM runs as
};

// The chunking of one layer GEMM under TE's overlap: column-parallel (qkv, fc1) or row-parallel
// (attention_out, fc2), at tensor-parallel degree `tp`.
TpOverlapGemmPlan tp_overlap_gemm_plan(bool row_parallel, int tp);

// SMs TE's pipeline and bulk communication kernels occupy (get_default_config: num_sm 16).
inline constexpr double kTeUbCommSms = 16;
// TE's pipeline method splits (get_default_config: num_splits 4).
inline constexpr double kTePipelineSplits = 4;

// Time per FLOP of the (m x n x k) GEMM `d` run as `splits` chunks of m/splits rows, each its own kernel
// (gemm_seconds per chunk), less one `launch` that the caller adds back (as for an unsplit GEMM).
double chunked_gemm_seconds_per_flop(const HardwareProfile& hw, const GpuSpec& gpu, Precision p, const GemmDims& d,
                                      double splits, double launch);

// Streaming multiprocessors of the GPU (NVIDIA datasheets / whitepapers: A100 108, H100 SXM 132,
// H100 PCIe 114, H200 132, B200 148, V100 80); 0 when not known (no SM cost is charged).
int streaming_multiprocessors(const GpuSpec& gpu);

// Compute time lost to the communication kernels that share the SMs with the GEMMs: while a pipeline
// or bulk collective of duration `comm` runs, kTeUbCommSms of the GPU's SMs do no GEMM work, so the
// GEMMs finish comm x kTeUbCommSms / SMs later (at most the whole overlapped GEMM time `gemm`).
double ub_sm_cost(double comm, double gemm, const GpuSpec& gpu);

}  // namespace tp
