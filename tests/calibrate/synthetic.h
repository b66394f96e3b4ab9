// Synthetic measurements made from known profile constants (with multiplicative noise): the oracle of
// the fitter tests. Each family follows the model the fitter assumes, written out here independently:
//   GEMM        t = latency + (c^4 + w^4)^(1/4), c = 2 M N K / (peak x eff x K / (K + k_half)),
//               w = ((M K + K N) x in bytes + M N x out bytes) / (bw_eff x HBM bandwidth)
//   attention   t = FLOPs / (peak16 x eff x balance), FLOPs = 4 b h s^2 d (fused causal: half; backward: x2),
//               balance: the fused grid's on the GPU's SMs, model/attention_grid.h (checked against a
//               simulated block schedule in tests/unit/test_attention_grid.cpp); 1 unfused
//   memory      t = t0 + bytes / (eff x datasheet bandwidth)
//   collectives t = alpha + S x bus_factor / B   (nccl-tests S and bus factors)
//   power       idle and GEMM-phase watts
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include "attention_grid.h"
#include "catalog.h"
#include "collectives.h"
#include "measurements.h"
#include "scenario.h"

namespace tp::test {

struct SyntheticTruth {
  struct Curve {
    Precision p;
    double max, k_half, latency, bw_eff;
  };
  std::vector<Curve> gemm{{Precision::bf16, 0.74, 40, 5.5e-6, 0.72}, {Precision::fp16, 0.72, 60, 5e-6, 0.75},
                          {Precision::tf32, 0.68, 80, 7e-6, 0.78},   {Precision::fp32, 0.88, 20, 12e-6, 0.5},
                          {Precision::fp8, 0.55, 160, 6e-6, 0.68}};
  double attention_forward = 0.52, attention_backward = 0.38, attention_unfused = 0.27;
  double memory_efficiency = 0.91;
  double memory_t0 = 6e-6;
  double launch = 2.7e-6;
  struct Coll {
    Collective c;
    int ranks, nodes;
    double alpha, busbw;
  };
  // The two-node all_gather and reduce_scatter are NCCL's one ring over 16 ranks: 14 NVLink hops and one
  // network hop, so their alpha is above 14 of the single-node per-hop latencies (~3.6 us; planner/collectives.h).
  std::vector<Coll> collectives{
      {Collective::all_reduce, 8, 1, 22e-6, 360e9},     {Collective::all_gather, 8, 1, 15e-6, 370e9},
      {Collective::reduce_scatter, 8, 1, 16e-6, 365e9}, {Collective::all_to_all, 8, 1, 25e-6, 330e9},
      {Collective::send_recv, 8, 1, 9e-6, 350e9},       {Collective::all_reduce, 16, 2, 60e-6, 150e9},
      {Collective::all_gather, 16, 2, 65e-6, 140e9},    {Collective::reduce_scatter, 16, 2, 67e-6, 145e9}};
  double idle_watts = 92, gemm_watts = 655, memory_watts = 420;
  double sustained_gemm_flops = 7.0e14;  // the gemm phase's back-to-back bf16 rate (FLOP/s)
  double sm_clock_mhz = 1950;            // the highest SM clock sampled while busy (the bursts' clock)
};

inline ClusterSpec dgx_h100() {
  return Catalog::builtin().cluster("dgx-h100", {"test", 0, 0}, "cluster");
}

inline double noisy(double v, double noise, std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, noise);
  return v * (1.0 + n(rng));
}

inline TimeStats stats_of(double t) {
  TimeStats s;
  s.median = s.mean = s.min = s.max = s.p10 = s.p90 = t;
  s.reps = 10;
  s.stable = true;
  return s;
}

// The synthetic GEMMs: squares, skinny M, short K and a few layer-like shapes per truth dtype.
inline void add_synthetic_gemms(Measurements& m, const SyntheticTruth& truth, const GpuSpec& gpu, double noise,
                                std::mt19937& rng) {
  std::vector<GemmShape> shapes;
  for (std::int64_t d = 128; d <= 16384; d *= 2) shapes.push_back({d, d, d, 1});
  for (std::int64_t mm : {16, 64, 256, 1024, 4096}) shapes.push_back({mm, 8192, 8192, 1});
  for (std::int64_t k : {32, 128, 512, 2048}) shapes.push_back({8192, 8192, k, 1});
  shapes.push_back({8192, 768, 4096, 1});
  shapes.push_back({8192, 4096, 512, 1});
  shapes.push_back({4096, 3584, 8192, 1});
  for (const auto& c : truth.gemm) {
    const double peak = gpu.peak_for(c.p).value;
    for (const auto& s : shapes) {
      const double M = static_cast<double>(s.m), N = static_cast<double>(s.n), K = static_cast<double>(s.k);
      const double in = c.p == Precision::fp8 ? 1 : (c.p == Precision::bf16 || c.p == Precision::fp16) ? 2 : 4;
      const double out = c.p == Precision::fp8 ? 2 : in;
      const double compute = s.flops() / (peak * c.max * K / (K + c.k_half));
      const double memory = ((M * K + K * N) * in + M * N * out) / (c.bw_eff * gpu.memory_bandwidth.value);
      const double t = c.latency + std::pow(std::pow(compute, 4) + std::pow(memory, 4), 0.25);
      Measurement x;
      x.op = MeasuredOp::gemm;
      x.dtype = c.p;
      x.gemm = s;
      x.label = "grid";
      x.time = stats_of(noisy(t, noise, rng));
      x.rate = s.flops() / x.time.median;
      m.items.push_back(x);
    }
  }
}

// Fused and unfused attention, forward and backward, over head dims, GQA ratios, masks and sequences.
inline void add_synthetic_attention(Measurements& m, const SyntheticTruth& truth, const GpuSpec& gpu, double noise,
                                    std::mt19937& rng) {
  const double peak16 = gpu.peak_for(Precision::bf16).value;
  for (std::int64_t d : {64, 128}) {
    for (int ratio : {1, 8}) {
      for (bool causal : {true, false}) {
        for (std::int64_t s : {1024, 4096, 8192}) {
          AttentionShape a;
          a.batch = 16384 / s;
          a.heads = 32;
          a.kv_heads = 32 / ratio;
          a.seq_q = a.seq_kv = s;
          a.head_dim = d;
          a.causal = causal;
          const double full = 4.0 * a.batch * a.heads * static_cast<double>(s) * s * d;
          for (int impl = 0; impl < 2; ++impl) {
            for (int bwd = 0; bwd < 2; ++bwd) {
              Measurement x;
              x.op = bwd ? MeasuredOp::attention_backward : MeasuredOp::attention_forward;
              x.impl = impl == 0 ? AttentionImpl::fused : AttentionImpl::unfused;
              x.dtype = Precision::bf16;
              x.attention = a;
              double flops = full * (impl == 0 && causal ? 0.5 : 1.0) * (bwd ? 2.0 : 1.0);
              const double eff = impl == 1 ? truth.attention_unfused : (bwd ? truth.attention_backward : truth.attention_forward);
              const double balance =
                  impl == 1 ? 1.0
                            : attention_grid_balance(static_cast<double>(a.batch * a.heads), static_cast<double>(s),
                                                     gpu.sms, causal, bwd ? AttentionPass::backward : AttentionPass::forward);
              x.time = stats_of(noisy(flops / (peak16 * eff * balance), noise, rng));
              x.rate = flops / x.time.median;
              m.items.push_back(x);
            }
          }
        }
      }
    }
  }
}

// Memory: copy/scale 2 arrays, triad 3, reduce 1 (bytes moved); and the launch latency.
inline void add_synthetic_memory(Measurements& m, const SyntheticTruth& truth, const GpuSpec& gpu, double noise,
                                 std::mt19937& rng) {
  const double bw = truth.memory_efficiency * gpu.memory_bandwidth.value;
  const std::pair<MeasuredOp, double> kinds[] = {
      {MeasuredOp::memory_copy, 2}, {MeasuredOp::memory_scale, 2}, {MeasuredOp::memory_triad, 3}, {MeasuredOp::memory_reduce, 1}};
  for (const auto& [op, arrays] : kinds) {
    for (double b = 1 << 20; b <= 4.0 * (1 << 30); b *= 4) {
      Measurement x;
      x.op = op;
      x.dtype = Precision::fp32;
      x.bytes = arrays * b;
      x.time = stats_of(noisy(truth.memory_t0 + x.bytes / bw, noise, rng));
      x.rate = x.bytes / x.time.median;
      m.items.push_back(x);
    }
  }
  for (int i = 0; i < 5; ++i) {
    Measurement x;
    x.op = MeasuredOp::kernel_launch;
    x.time = stats_of(noisy(truth.launch, noise, rng));
    m.items.push_back(x);
  }
}

// Collectives: nccl-tests sizes 8 B .. 1 GiB.
inline void add_synthetic_collectives(Measurements& m, const SyntheticTruth& truth, double noise, std::mt19937& rng) {
  for (const auto& c : truth.collectives) {
    for (double s = 8; s <= 1024.0 * 1024 * 1024; s *= 2) {
      Measurement x;
      x.op = measured_op_of(c.c);
      x.dtype = Precision::fp32;
      x.bytes = s;
      x.ranks = c.ranks;
      x.nodes = c.nodes;
      const double bf = bus_factor(c.c, c.ranks);
      x.time = stats_of(noisy(c.alpha + s * bf / c.busbw, noise, rng));
      x.algbw = s / x.time.median;
      x.busbw = x.algbw * bf;
      x.rate = x.busbw;
      m.items.push_back(x);
    }
  }
}

// Power. The gemm phase's sustained rate draws its noise from its own generator, so the watts keep the
// draws they had before the rate was recorded.
inline void add_synthetic_power(Measurements& m, const SyntheticTruth& truth, double noise, std::mt19937& rng,
                                unsigned seed) {
  std::mt19937 rate_rng(seed + 1);
  for (int i = 0; i < 3; ++i) {
    for (const auto& [phase, w] : {std::pair<const char*, double>{"idle", truth.idle_watts}, {"gemm", truth.gemm_watts},
                                   {"memory", truth.memory_watts}}) {
      Measurement x;
      x.op = MeasuredOp::power;
      x.phase = phase;
      x.watts = noisy(w, noise, rng);
      if (std::string(phase) == "gemm") x.rate = noisy(truth.sustained_gemm_flops, noise, rate_rng);
      x.samples = 100;
      x.time = stats_of(2.0);
      m.items.push_back(x);
    }
  }
}

inline Measurements synthetic_measurements(const SyntheticTruth& truth, double noise, unsigned seed = 12345) {
  std::mt19937 rng(seed);
  const ClusterSpec cl = dgx_h100();
  const GpuSpec& gpu = cl.gpu;
  Measurements m;
  m.created = "2025-01-01T00:00:00Z";
  m.device.name = "NVIDIA H100 80GB HBM3";
  m.device.gpu_key = gpu.key;
  m.device.count = 8;
  m.clocks.sm_mhz_max = truth.sm_clock_mhz;
  m.settings.suites = {"gemm", "attention", "memory", "collectives", "power"};
  add_synthetic_gemms(m, truth, gpu, noise, rng);
  add_synthetic_attention(m, truth, gpu, noise, rng);
  add_synthetic_memory(m, truth, gpu, noise, rng);
  add_synthetic_collectives(m, truth, noise, rng);
  add_synthetic_power(m, truth, noise, rng, seed);
  return m;
}

}  // namespace tp::test
