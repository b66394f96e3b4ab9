// Transformer Engine's TP-communication overlap (planner/tp_overlap.h), by hand computation.
// Oracles: TE 1.x transformer_engine/pytorch/module/base.py initialize_ub / get_default_config
// (ring_exchange: num_splits = tp, copy engines; pipeline: num_splits 4, num_sm 16; bulk: num_sm 16),
// the SM counts of the NVIDIA datasheets (H100 SXM 132, A100 108), and the GEMM model of
// model/gemm_time.h evaluated by hand on a profile written in the test.
#include <gtest/gtest.h>

#include <cmath>

#include "gemm_time.h"
#include "hardware_profile.h"
#include "tp_overlap.h"

namespace tp {
namespace {

GpuSpec gpu(const char* key, const char* generation, double bf16_peak) {
  GpuSpec g;
  g.key = key;
  g.generation = generation;
  g.memory_bandwidth = ByteRate(3.35e12);
  g.peak[static_cast<int>(Precision::bf16)] = FlopRate(bf16_peak);
  return g;
}

TEST(TpOverlap, ChunkingFollowsTeDefaultMethods) {
  // Column-parallel (qkv, fc1): fprop ring_exchange in tp chunks, dgrad bulk (whole GEMM).
  const TpOverlapGemmPlan col = tp_overlap_gemm_plan(false, 8);
  EXPECT_EQ(col.forward_splits, 8);
  EXPECT_EQ(col.dgrad_splits, 1);
  // Row-parallel (attention_out, fc2): fprop pipeline in 4 chunks, dgrad ring_exchange in tp chunks.
  const TpOverlapGemmPlan row = tp_overlap_gemm_plan(true, 8);
  EXPECT_EQ(row.forward_splits, 4);
  EXPECT_EQ(row.dgrad_splits, 8);
  // No tensor parallelism: nothing is split.
  const TpOverlapGemmPlan one = tp_overlap_gemm_plan(true, 1);
  EXPECT_EQ(one.forward_splits, 1);
  EXPECT_EQ(one.dgrad_splits, 1);
}

TEST(TpOverlap, SmCostIsCommTimeTimesSharedSms) {
  const GpuSpec h100 = gpu("h100-sxm-80gb", "hopper", 989.4e12);
  const GpuSpec a100 = gpu("a100-sxm4-80gb", "ampere", 312e12);
  // 1 ms of collective beside 5 ms of GEMMs: the GEMMs lose 16 of 132 SMs for 1 ms = 121.2 us.
  EXPECT_NEAR(ub_sm_cost(1e-3, 5e-3, h100), 1e-3 * 16.0 / 132.0, 1e-12);
  // A100: 16 of 108 SMs = 148.1 us.
  EXPECT_NEAR(ub_sm_cost(1e-3, 5e-3, a100), 1e-3 * 16.0 / 108.0, 1e-12);
  // The collective outlasts the GEMMs: only the GEMMs' 0.5 ms is slowed (the rest is exposed comm).
  EXPECT_NEAR(ub_sm_cost(2e-3, 0.5e-3, h100), 0.5e-3 * 16.0 / 132.0, 1e-12);
  // Unknown SM count or nothing overlapped: no cost.
  EXPECT_EQ(ub_sm_cost(1e-3, 5e-3, gpu("mi300x-192gb", "cdna3", 1307e12)), 0.0);
  EXPECT_EQ(ub_sm_cost(0.0, 5e-3, h100), 0.0);
}

TEST(TpOverlap, ChunkedGemmPaysEachChunksLatencyAndRoofline) {
  const GpuSpec h100 = gpu("h100-sxm-80gb", "hopper", 1000e12);
  HardwareProfile hw;
  GemmModel& bf16 = hw.gemm[static_cast<size_t>(Precision::bf16)];
  bf16.efficiency = 0.8;
  bf16.k_half = 0;  // no pipeline-fill term: compute time = 2mnk / (peak x 0.8)
  bf16.latency = Seconds(5e-6);
  bf16.bandwidth_efficiency = 1.0;
  // 4096 tokens x 1024 x 8192 (an fc1 shard at tp 8) as 8 chunks of 512 tokens.
  const GemmDims d{4096, 1024, 8192};
  const double launch = 4e-6;
  // By hand, one chunk: compute 2*512*1024*8192 / 8e14 = 10.737 us; bytes (512*8192 + 8192*1024)*2 +
  // 512*1024*2 = 26.2 MB at 3.35 TB/s = 7.824 us; roofline (c^4 + m^4)^(1/4) = 11.74 us; + 5 us latency.
  const double c = 2.0 * 512 * 1024 * 8192 / 8e14;
  const double m = ((512.0 * 8192 + 8192.0 * 1024) * 2 + 512.0 * 1024 * 2) / 3.35e12;
  const double chunk = 5e-6 + std::pow(std::pow(c, 4) + std::pow(m, 4), 0.25);
  const double expected = (8 * chunk - launch) / d.flops();
  EXPECT_NEAR(chunked_gemm_seconds_per_flop(hw, h100, Precision::bf16, d, 8, launch), expected, expected * 1e-9);
  // Unsplit, the same GEMM is faster per FLOP (one latency, the weight read once).
  EXPECT_LT(chunked_gemm_seconds_per_flop(hw, h100, Precision::bf16, d, 1, launch), expected);
}

}  // namespace
}  // namespace tp
