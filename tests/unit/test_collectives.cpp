// Collective-communication cost model (planner/collectives.h).
// Oracles:
//   [F]   ../shared/reference/formulas-seed004-003-000-002.md
//         §1.1: ring all-reduce, T_ring = 2(N-1) alpha + 2 (N-1)/N M / beta; each GPU sends 2(N-1)M/N
//               bytes in 2(N-1) message steps [S004:L66-L76, S003:L7].
//         §2.4: exercise 26.1 (b) N = 8, beta = 50 GB/s, alpha = 10 us, M = 100 MB -> 0.14 + 3.50 = 3.64 ms;
//               (c) N = 64, beta = 12.5 GB/s -> 1.26 + 15.75 = 17.01 ms.
//         §4.2 and erratum E16: nccl-tests doc/PERFORMANCE.md bus-bandwidth factors; 1 GiB all-reduce on
//               8 ranks in 15.2 ms -> algbw 70.64 GB/s, busbw 123.6 GB/s (not the seed's 141).
//   [DGX] scenarios/catalog/clusters.yaml dgx-h100 (DGX H100 datasheet): NVLink4 450 GB/s per GPU per
//         direction, 8 x 400 Gbit/s ConnectX-7 per node; latencies from NCCL tuning.cc hwLat (3.4 / 14 us).
//   Hand computations below spell out each alpha-beta term, so that the expected values do not come
//   from the code under test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "catalog.h"
#include "collectives.h"
#include "tests/unit/dgx_h100_topology.h"

namespace tp {
namespace {

constexpr Collective kAll[] = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                               Collective::all_to_all, Collective::send_recv,  Collective::broadcast};

// A topology where both tiers are the same link: one level, as exercise 26.1 assumes.
Topology single_tier(double bandwidth, double latency) {
  Topology t;
  t.intra = LinkTier{ByteRate(bandwidth), Seconds(latency)};
  t.inter = t.intra;
  return t;
}

// N DGX H100 nodes [DGX]: 450 GB/s NVLink per GPU; 8 x 400 Gbit/s = 8 x 50 GB/s NICs per 8 GPUs.
Topology dgx_h100() { return test::dgx_h100_topology(); }

// ---------------------------------------------------------------- seed exercise 26.1 ([F] §2.4)

TEST(CollectiveSeed, Exercise26_1bRingAllReduceEightGpus) {
  // alpha = 10 us, beta = 50 GB/s, N = 8, M = 100 MB: 2*7*10us = 0.14 ms; 2*(7/8)*1e8/50e9 = 3.50 ms.
  const Seconds helper = ring_time(Collective::all_reduce, Bytes(1e8), 8, Seconds(10e-6), ByteRate(50e9));
  EXPECT_NEAR(helper.value, 3.64e-3, 1e-9);
  // The same through the topology: 8 ranks on one node, ring forced.
  const Topology t = single_tier(50e9, 10e-6);
  const GroupShape g{8, 8, 1};
  EXPECT_NEAR(algorithm_time(Collective::all_reduce, CollectiveAlgorithm::ring, Bytes(1e8), g, t).value, 3.64e-3, 1e-9);
  // Latency and bandwidth terms separately: no bytes-free latency, bandwidth alone with alpha = 0.
  EXPECT_NEAR(ring_time(Collective::all_reduce, Bytes(1e8), 8, Seconds(0), ByteRate(50e9)).value, 3.50e-3, 1e-9);
  EXPECT_NEAR(ring_time(Collective::all_reduce, Bytes(1e8), 8, Seconds(10e-6), ByteRate(1e30)).value, 0.14e-3, 1e-9);
}

TEST(CollectiveSeed, Exercise26_1cRingAllReduceSixtyFourGpus) {
  // alpha = 10 us, beta = 12.5 GB/s, N = 64: 2*63*10us = 1.26 ms; 2*(63/64)*1e8/12.5e9 = 15.75 ms.
  const Seconds helper = ring_time(Collective::all_reduce, Bytes(1e8), 64, Seconds(10e-6), ByteRate(12.5e9));
  EXPECT_NEAR(helper.value, 17.01e-3, 1e-9);
  // Through the topology: 64 ranks, one per node, so the ring runs on the inter tier only.
  Topology t = single_tier(1e12, 1e-6);
  t.inter = LinkTier{ByteRate(12.5e9), Seconds(10e-6)};
  const GroupShape g = group_shape(64, 8, 8);
  ASSERT_EQ(g.nodes, 64);
  EXPECT_NEAR(algorithm_time(Collective::all_reduce, CollectiveAlgorithm::ring, Bytes(1e8), g, t).value, 17.01e-3,
              1e-9);
  // 4.67x the 8-GPU case ([F] §2.4 (c)).
  EXPECT_NEAR(helper.value / 3.64e-3, 4.673, 1e-3);
}

TEST(CollectiveRing, AllReduceBytesAndStepsPerGpu) {
  // [F] §1.1: N = 8, 1 GB -> 2(N-1)/N = 1.75 GB sent per GPU in 2(N-1) = 14 message steps.
  EXPECT_NEAR(ring_bytes_sent(Collective::all_reduce, Bytes(1e9), 8).value, 1.75e9, 1e-3);
  EXPECT_EQ(ring_steps(Collective::all_reduce, 8), 14);
  // Reduce-scatter and all-gather alone are half of it: (N-1) steps, (N-1)/N of the array ([F] §1.1 last row).
  EXPECT_NEAR(ring_bytes_sent(Collective::reduce_scatter, Bytes(1e9), 8).value, 0.875e9, 1e-3);
  EXPECT_NEAR(ring_bytes_sent(Collective::all_gather, Bytes(1e9), 8).value, 0.875e9, 1e-3);
  EXPECT_EQ(ring_steps(Collective::reduce_scatter, 8), 7);
  EXPECT_EQ(ring_steps(Collective::all_gather, 8), 7);
  // The rest of the flat-ring table in collectives.h.
  EXPECT_EQ(ring_steps(Collective::all_to_all, 8), 7);
  EXPECT_EQ(ring_steps(Collective::broadcast, 8), 7);
  EXPECT_EQ(ring_steps(Collective::send_recv, 2), 1);
  EXPECT_EQ(ring_steps(Collective::all_reduce, 1), 0);
  // Broadcast (pipelined ring): (n-1) alpha + bytes/beta = 7 * 1 us + 1e9 / 100e9 = 10.007 ms.
  EXPECT_NEAR(ring_time(Collective::broadcast, Bytes(1e9), 8, Seconds(1e-6), ByteRate(100e9)).value, 10.007e-3, 1e-12);
  // send_recv: alpha + bytes/beta, whatever the group size (a CP ring calls it on the whole CP group).
  EXPECT_NEAR(ring_time(Collective::send_recv, Bytes(1e9), 2, Seconds(1e-6), ByteRate(100e9)).value, 10.001e-3, 1e-12);
  EXPECT_NEAR(ring_time(Collective::send_recv, Bytes(1e9), 8, Seconds(1e-6), ByteRate(100e9)).value, 10.001e-3, 1e-12);
  EXPECT_EQ(ring_steps(Collective::send_recv, 8), 1);
  // all_to_all: (n-1) alpha + (n-1)/n bytes/beta = 7 us + 8.75 ms.
  EXPECT_NEAR(ring_time(Collective::all_to_all, Bytes(1e9), 8, Seconds(1e-6), ByteRate(100e9)).value, 8.757e-3, 1e-12);
}

// ---------------------------------------------------------------- nccl-tests bus bandwidth ([F] §4.2)

TEST(NcclBusBandwidth, FactorsForEveryCollective) {
  struct Row {
    Collective c;
    double n2, n8, n64;
  };
  const Row rows[] = {
      {Collective::all_reduce, 1.0, 1.75, 1.96875},            // 2(n-1)/n
      {Collective::all_gather, 0.5, 0.875, 0.984375},          // (n-1)/n
      {Collective::reduce_scatter, 0.5, 0.875, 0.984375},      // (n-1)/n
      {Collective::all_to_all, 0.5, 0.875, 0.984375},          // (n-1)/n
      {Collective::broadcast, 1.0, 1.0, 1.0},                  // 1
      {Collective::send_recv, 1.0, 1.0, 1.0},                  // 1
  };
  for (const Row& r : rows) {
    EXPECT_DOUBLE_EQ(bus_factor(r.c, 2), r.n2) << to_string(r.c);
    EXPECT_DOUBLE_EQ(bus_factor(r.c, 8), r.n8) << to_string(r.c);
    EXPECT_DOUBLE_EQ(bus_factor(r.c, 64), r.n64) << to_string(r.c);
  }
}

TEST(NcclBusBandwidth, SeedErratumE16) {
  // nccl-tests all_reduce_perf, 8 ranks, S = 1 GiB, t = 15.2 ms: algbw = S/t = 70.64 GB/s;
  // busbw = algbw x 2(n-1)/n = 123.6 GB/s. The seed's 141 GB/s is 2 x algbw, the n -> infinity factor.
  const double s = 1024.0 * 1024.0 * 1024.0;
  const double algbw = s / 15.2e-3;
  EXPECT_NEAR(algbw / 1e9, 70.64, 0.005);
  const double busbw = algbw * bus_factor(Collective::all_reduce, 8);
  EXPECT_NEAR(busbw / 1e9, 123.6, 0.05);
  EXPECT_GT(std::abs(busbw / 1e9 - 141.0), 10.0);
}

TEST(NcclBusBandwidth, RingBusBandwidthEqualsLinkBandwidth) {
  // PERFORMANCE.md: busbw is defined so that it equals the link (bottleneck) bandwidth, whatever n.
  // With alpha = 0 the modeled ring must therefore give busbw = beta for every collective and size.
  const double beta = 37e9;
  for (Collective c : kAll) {
    for (int n : {2, 3, 8, 64, 1000}) {
      if (c == Collective::send_recv && n != 2) continue;
      const double s = 3e8;
      const double t = ring_time(c, Bytes(s), n, Seconds(0), ByteRate(beta)).value;
      EXPECT_NEAR(s / t * bus_factor(c, n), beta, beta * 1e-12) << to_string(c) << " n=" << n;
    }
  }
}

// ---------------------------------------------------------------- algorithm choice

TEST(CollectiveChoice, HierarchicalBeatsFlatRingAcrossDgxNodes) {
  // 64 GPUs on 8 DGX H100 nodes [DGX], all_reduce of 1 GiB (TP = 1: all 8 GPUs of a node in the group).
  const Topology t = dgx_h100();
  const GroupShape g = group_shape(64, 1, 8);
  ASSERT_EQ(g.ranks_per_node, 8);
  ASSERT_EQ(g.nodes, 8);
  const double s = 1024.0 * 1024.0 * 1024.0;
  // Flat ring on the inter tier: 2*63*14us + 2*(63/64)*S/50e9.
  const double ring = 2 * 63 * 14e-6 + 2.0 * 63 / 64 * s / 50e9;
  // Hierarchical: intra reduce-scatter 7*3.4us + (7/8) S/450e9; inter ring all-reduce of S/8 among 8 nodes
  // 2*7*14us + 2*(7/8)*(S/8)/50e9; intra all-gather like the reduce-scatter.
  const double hier = 2 * (7 * 3.4e-6 + 7.0 / 8 * s / 450e9) + 2 * 7 * 14e-6 + 2.0 * 7 / 8 * (s / 8) / 50e9;
  EXPECT_NEAR(algorithm_time(Collective::all_reduce, CollectiveAlgorithm::ring, Bytes(s), g, t).value, ring, 1e-12);
  EXPECT_NEAR(algorithm_time(Collective::all_reduce, CollectiveAlgorithm::hierarchical, Bytes(s), g, t).value, hier,
              1e-12);
  const CollectiveCost best = collective_time(Collective::all_reduce, Bytes(s), g, t);
  EXPECT_EQ(best.algorithm, CollectiveAlgorithm::hierarchical) << to_string(best.algorithm);
  EXPECT_NEAR(best.time.value, hier, 1e-12);
  EXPECT_LT(best.time.value, ring / 4);  // ~9.2 ms against ~44 ms
  // The same for all_gather / reduce_scatter of a 1 GiB total array: flat 63*14us + (63/64) S/50e9;
  // hierarchical, the bytes in two phases, (7/8)(S/8)/50e9 between the nodes and (7/8) S/450e9 inside them,
  // and the latency of NCCL's one ring over the 64 ranks: 63 hops, 7 of them between nodes, 56 over NVLink.
  const double ag_hier = 7 * 14e-6 + 56 * 3.4e-6 + 7.0 / 8 * (s / 8) / 50e9 + 7.0 / 8 * s / 450e9;
  for (Collective c : {Collective::all_gather, Collective::reduce_scatter}) {
    const CollectiveCost cost = collective_time(c, Bytes(s), g, t);
    EXPECT_EQ(cost.algorithm, CollectiveAlgorithm::hierarchical) << to_string(c);
    EXPECT_NEAR(cost.time.value, ag_hier, 1e-12) << to_string(c);
  }
}

TEST(CollectiveChoice, AllGatherAcrossNodesPaysTheRingsHops) {
  // NCCL runs all-gather and reduce-scatter across nodes as one ring over all n ranks (src/graph/tuning.cc),
  // so a one-byte gather pays n - 1 hops: at 1,024 GPUs on 128 DGX H100 nodes, 127 network hops x 14 us and
  // 896 NVLink hops x 3.4 us = 4.824 ms (the two phases alone: 127 x 14 + 7 x 3.4 us = 1.802 ms). The
  // latency grows with the GPU count at a fixed per-node share: 16 nodes give 15 x 14 + 112 x 3.4 us.
  const Topology t = dgx_h100();
  for (Collective c : {Collective::all_gather, Collective::reduce_scatter}) {
    const double big = collective_time(c, Bytes(1.0), group_shape(1024, 1, 8), t).time.value;
    EXPECT_NEAR(big, 127 * 14e-6 + 896 * 3.4e-6, 1e-9) << to_string(c);
    const double small = collective_time(c, Bytes(1.0), group_shape(128, 1, 8), t).time.value;
    EXPECT_NEAR(small, 15 * 14e-6 + 112 * 3.4e-6, 1e-9) << to_string(c);
  }
}

TEST(CollectiveChoice, RingStepsInsideANodePayTheHostsNetworkPostOverhead) {
  // NCCL's cost model (src/graph/tuning.cc, ncclTopoTuneModel: "Inter-node rings still have to launch nsteps *
  // net overhead"): once a ring spans nodes each of its intra-node steps costs at least 3 x getNetOverhead
  // under the Simple protocol, getNetOverhead 2 us on AMD x86 hosts and 1 us on Intel. The presets' hosts:
  // DGX A100 AMD Rome 7742, DGX H100 Intel Xeon Platinum 8480C (datasheets). A one-byte all-gather over 2
  // nodes of 8: 14 NVLink steps and 1 network step, AMD 14 x max(3.4, 6) + 14 = 98 us, Intel 14 x max(3.4,
  // 3) + 14 = 61.6 us; inside one node the floor does not apply: 7 x 3.4 us on either.
  const SourceLocation at{"test", 0, 0};
  const ClusterSpec& a100 = Catalog::builtin().cluster("dgx-a100", at, "cluster");
  const ClusterSpec& h100 = Catalog::builtin().cluster("dgx-h100", at, "cluster");
  EXPECT_EQ(a100.host_cpu, HostCpu::amd);
  EXPECT_EQ(h100.host_cpu, HostCpu::intel);
  EXPECT_DOUBLE_EQ(nccl_ring_step_floor(HostCpu::amd).value, 6e-6);
  EXPECT_DOUBLE_EQ(nccl_ring_step_floor(HostCpu::intel).value, 3e-6);
  EXPECT_DOUBLE_EQ(nccl_ring_step_floor(HostCpu::other).value, 3e-6);
  const auto gather = [](const ClusterSpec& c, int n) {
    return collective_time(Collective::all_gather, Bytes(1.0), group_shape(n, 1, 8), make_topology(c)).time.value;
  };
  EXPECT_NEAR(gather(a100, 16), 14 * 6e-6 + 14e-6, 1e-9);
  EXPECT_NEAR(gather(h100, 16), 14 * 3.4e-6 + 14e-6, 1e-9);
  EXPECT_NEAR(gather(a100, 8), 7 * 3.4e-6, 1e-9);
  EXPECT_NEAR(gather(h100, 8), 7 * 3.4e-6, 1e-9);
}

TEST(CollectiveChoice, SingleNodeUsesRingOrTree) {
  const Topology t = dgx_h100();
  const GroupShape g = group_shape(8, 1, 8);
  ASSERT_EQ(g.nodes, 1);
  for (double s : {8e3, 1e6, 1e9}) {
    for (Collective c : kAll) {
      EXPECT_FALSE(applicable(c, CollectiveAlgorithm::hierarchical, g));
      EXPECT_NE(collective_time(c, Bytes(s), g, t).algorithm, CollectiveAlgorithm::hierarchical) << to_string(c);
    }
  }
  // 1 GiB all_reduce on one node: the ring on NVLink, 14*3.4us + 1.75 S/450e9.
  const double s = 1024.0 * 1024.0 * 1024.0;
  const CollectiveCost big = collective_time(Collective::all_reduce, Bytes(s), g, t);
  EXPECT_EQ(big.algorithm, CollectiveAlgorithm::ring);
  EXPECT_NEAR(big.time.value, 14 * 3.4e-6 + 1.75 * s / 450e9, 1e-12);
}

TEST(CollectiveChoice, TreeWinsSmallMessagesAtScale) {
  // 512 ranks, one per node (DP with TP = 8 inside the node), all_reduce of 8 KB [DGX].
  const Topology t = dgx_h100();
  const GroupShape g = group_shape(512, 8, 8);
  ASSERT_EQ(g.ranks_per_node, 1);
  ASSERT_EQ(g.nodes, 512);
  // ring: 2*511*14us + 2*(511/512)*8e3/50e9 = 14.3 ms; tree: 2*9*14us + 2*8e3/50e9 = 0.252 ms.
  const CollectiveCost small = collective_time(Collective::all_reduce, Bytes(8e3), g, t);
  EXPECT_EQ(small.algorithm, CollectiveAlgorithm::tree) << to_string(small.algorithm);
  EXPECT_NEAR(small.time.value, 2 * 9 * 14e-6 + 2 * 8e3 / 50e9, 1e-12);
  EXPECT_NEAR(algorithm_time(Collective::all_reduce, CollectiveAlgorithm::ring, Bytes(8e3), g, t).value,
              2 * 511 * 14e-6 + 2.0 * 511 / 512 * 8e3 / 50e9, 1e-12);
  // With few ranks and a large message the ring's bandwidth term (2(n-1)/n < 2) wins: 16 nodes, 1 GB:
  // ring 2*15*14us + 1.875e9/50e9 = 37.92 ms; tree 2*4*14us + 2e9/50e9 = 40.11 ms.
  const GroupShape few = group_shape(16, 8, 8);
  const CollectiveCost big = collective_time(Collective::all_reduce, Bytes(1e9), few, t);
  EXPECT_EQ(big.algorithm, CollectiveAlgorithm::ring);
  EXPECT_NEAR(big.time.value, 2 * 15 * 14e-6 + 1.875e9 / 50e9, 1e-12);
}

TEST(CollectiveChoice, ApplicabilityAndTrivialCases) {
  const Topology t = dgx_h100();
  const GroupShape across = group_shape(64, 1, 8);
  EXPECT_FALSE(applicable(Collective::all_to_all, CollectiveAlgorithm::tree, across));
  EXPECT_FALSE(applicable(Collective::all_to_all, CollectiveAlgorithm::hierarchical, across));
  EXPECT_FALSE(applicable(Collective::all_gather, CollectiveAlgorithm::tree, across));
  EXPECT_TRUE(applicable(Collective::broadcast, CollectiveAlgorithm::tree, across));
  EXPECT_TRUE(std::isinf(algorithm_time(Collective::send_recv, CollectiveAlgorithm::tree, Bytes(1e6), across, t).value));
  // Hierarchical needs several ranks on each of several nodes.
  EXPECT_FALSE(applicable(Collective::all_reduce, CollectiveAlgorithm::hierarchical, group_shape(16, 8, 8)));
  // A hand-built shape with ranks_per_node = 1 means one rank per node, whatever `nodes` says: the ring
  // runs on the inter tier (2*63*14us + 2*(63/64)*1e9/50e9), not on NVLink.
  const GroupShape hand{64, 1, 1};
  EXPECT_NEAR(algorithm_time(Collective::all_reduce, CollectiveAlgorithm::ring, Bytes(1e9), hand, t).value,
              2 * 63 * 14e-6 + 2.0 * 63 / 64 * 1e9 / 50e9, 1e-12);
  EXPECT_FALSE(applicable(Collective::all_reduce, CollectiveAlgorithm::hierarchical, hand));
  // ranks_per_node above the size is clamped: 4 ranks on one node, ring on NVLink: 6*3.4us + 1.5e9/450e9.
  EXPECT_NEAR(algorithm_time(Collective::all_reduce, CollectiveAlgorithm::ring, Bytes(1e9), GroupShape{4, 8, 1}, t).value,
              6 * 3.4e-6 + 1.5e9 / 450e9, 1e-12);
  // n == 1 and empty messages cost nothing.
  for (Collective c : kAll) {
    EXPECT_EQ(collective_time(c, Bytes(1e9), group_shape(1, 1, 8), t).time.value, 0.0) << to_string(c);
    EXPECT_EQ(collective_time(c, Bytes(0), across, t).time.value, 0.0) << to_string(c);
  }
  // A multi-node group on a fabric with no inter-node bandwidth can never finish.
  Topology no_fabric = t;
  no_fabric.inter.bandwidth = ByteRate(0);
  EXPECT_TRUE(std::isinf(collective_time(Collective::all_reduce, Bytes(1e6), across, no_fabric).time.value));
  EXPECT_STREQ(to_string(Collective::reduce_scatter), "reduce_scatter");
  EXPECT_STREQ(to_string(CollectiveAlgorithm::hierarchical), "hierarchical");
}

// ---------------------------------------------------------------- monotonic properties

TEST(CollectiveProperties, FasterLinksNeverIncreaseTime) {
  const GroupShape shapes[] = {group_shape(8, 1, 8), group_shape(64, 1, 8), group_shape(16, 8, 8),
                               group_shape(32, 2, 8), group_shape(512, 8, 8), group_shape(2, 32, 8)};
  const double sizes[] = {1.0, 8e3, 1e6, 25e6, 1e9, 1e11};
  Topology base = dgx_h100();
  base.intra.efficiency = 0.8;
  base.inter.efficiency = 0.9;
  for (const GroupShape& g : shapes) {
    for (double s : sizes) {
      for (Collective c : kAll) {
        const double t0 = collective_time(c, Bytes(s), g, base).time.value;
        Topology faster[5] = {base, base, base, base, base};
        faster[0].intra.bandwidth = base.intra.bandwidth * 2.0;
        faster[1].inter.bandwidth = base.inter.bandwidth * 2.0;
        faster[2].intra.latency = base.intra.latency * 0.5;
        faster[3].inter.latency = base.inter.latency * 0.5;
        faster[4].inter.efficiency = 1.0;
        faster[4].intra.efficiency = 1.0;
        for (int i = 0; i < 5; ++i) {
          EXPECT_LE(collective_time(c, Bytes(s), g, faster[i]).time.value, t0)
              << to_string(c) << " size " << g.size << "/" << g.ranks_per_node << " bytes " << s << " case " << i;
        }
        // Lower efficiency and more oversubscription are slower links.
        Topology slower = base;
        slower.intra.efficiency = 0.7;
        slower.inter.efficiency = 0.7;
        slower.oversubscription = 3.0;
        EXPECT_GE(collective_time(c, Bytes(s), g, slower).time.value, t0) << to_string(c);
      }
    }
  }
}

TEST(CollectiveProperties, MoreBytesNeverDecreaseTime) {
  const GroupShape shapes[] = {group_shape(8, 1, 8), group_shape(64, 1, 8), group_shape(512, 8, 8),
                               group_shape(32, 2, 8), group_shape(2, 8, 8)};
  const Topology t = dgx_h100();
  for (const GroupShape& g : shapes) {
    for (Collective c : kAll) {
      double previous = 0.0;
      for (double s = 0.0; s < 1e11; s = s * 1.7 + 1000.0) {
        const double time = collective_time(c, Bytes(s), g, t).time.value;
        EXPECT_GE(time, previous) << to_string(c) << " bytes " << s << " group " << g.size;
        previous = time;
      }
      EXPECT_GT(previous, 0.0) << to_string(c);
    }
  }
}

TEST(CollectiveProperties, ChosenIsTheMinimumOfApplicableAlgorithms) {
  const Topology t = dgx_h100();
  const GroupShape shapes[] = {group_shape(8, 1, 8), group_shape(64, 1, 8), group_shape(512, 8, 8)};
  for (const GroupShape& g : shapes) {
    for (Collective c : kAll) {
      for (double s : {1e3, 1e6, 1e9}) {
        const CollectiveCost best = collective_time(c, Bytes(s), g, t);
        EXPECT_TRUE(applicable(c, best.algorithm, g));
        EXPECT_EQ(best.time.value, algorithm_time(c, best.algorithm, Bytes(s), g, t).value);
        for (CollectiveAlgorithm a :
             {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree, CollectiveAlgorithm::hierarchical}) {
          EXPECT_LE(best.time.value, algorithm_time(c, a, Bytes(s), g, t).value) << to_string(c) << " " << to_string(a);
        }
      }
    }
  }
}

}  // namespace
}  // namespace tp
