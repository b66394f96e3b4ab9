// Alpha-beta costs of collectives. The formulas are documented in collectives.h. Oracles: seed exercise
// 26.1 (../shared/reference/formulas-seed004-003-000-002.md §1.1, §2.4) and nccl-tests doc/PERFORMANCE.md (§4.2).
#include "collectives.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

namespace tp {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Seconds to push `bytes` through `rate`. A link with no usable rate can never finish the transfer.
double transfer(double bytes, double rate) { return rate > 0.0 ? bytes / rate : kInf; }

// ceil(log2 n) for n >= 1.
int ceil_log2(int n) { return n <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(n - 1))); }

// A GroupShape with consistent fields: n >= 1 ranks, 1 <= r <= n ranks per node, and m >= ceil(n / r) nodes.
struct Layout {
  int n = 1;
  int r = 1;
  int m = 1;
};

Layout normalize(const GroupShape& g) {
  Layout l;
  l.n = std::max(1, g.size);
  l.r = std::clamp(g.ranks_per_node, 1, l.n);
  l.m = std::max(g.nodes, (l.n + l.r - 1) / l.r);
  return l;
}

// The tier a flat algorithm (ring, tree) is limited by: intra when on one node; inter when every rank has
// its own node; otherwise the slower of the two, with the larger latency.
struct Tier {
  double alpha = 0.0;
  double beta = 0.0;
};

Tier flat_tier(const Layout& l, const Topology& t) {
  const Tier intra{t.intra.latency.value, intra_bandwidth(t).value};
  const Tier inter{t.inter.latency.value, inter_bandwidth(t).value};
  if (l.m <= 1) return intra;
  if (l.r <= 1) return inter;
  return {std::max(intra.alpha, inter.alpha), std::min(intra.beta, inter.beta)};
}

double ring(Collective c, double bytes, int n, const Tier& tier) {
  return ring_time(c, Bytes(bytes), n, Seconds(tier.alpha), ByteRate(tier.beta)).value;
}

double tree(Collective c, double bytes, int n, const Tier& tier) {
  return tree_time(c, Bytes(bytes), n, Seconds(tier.alpha), ByteRate(tier.beta)).value;
}

// A GPU's ranks on its own node and the nodes of its group: (r, m), or (n, 1) when the group is on one node.
std::pair<int, int> ranks_per_node_and_nodes(const Layout& l) {
  return l.m <= 1 ? std::pair{l.n, 1} : std::pair{l.r, l.m};
}

// Point-to-point traffic on both tiers at once: one message to each of `nvlink_peers` and `network_peers`, and
// the longer of the two transfers.
double both_tiers_at_once(int nvlink_peers, double nvlink_bytes, int network_peers, double network_bytes,
                          const Topology& t) {
  const double over_nvlink = nvlink_bytes > 0.0 ? transfer(nvlink_bytes, intra_bandwidth(t).value) : 0.0;
  const double over_nics = network_bytes > 0.0 ? transfer(network_bytes, inter_bandwidth(t).value) : 0.0;
  return nvlink_peers * t.intra.latency.value + network_peers * t.inter.latency.value + std::max(over_nvlink, over_nics);
}

// NCCL's all-to-all is one grouped send and receive per peer (NCCL user guide, "Point-to-point
// communication": all-to-all as ncclSend/ncclRecv to every peer inside ncclGroupStart/End), not a ring:
// each rank sends S/n to each of its r - 1 node mates over NVLink and to each of its n - r peers on other
// nodes through the NICs, both at once. The latency is one message per peer on its tier. On one node, or
// with one rank per node, this is the flat ring's cost, (n - 1) alpha + (n - 1)/n S / beta.
double pairwise_all_to_all(double bytes, const Layout& l, const Topology& t) {
  const int node_mates = ranks_per_node_and_nodes(l).first - 1;
  const int remote = l.n - 1 - node_mates;
  const double per_peer = bytes / l.n;
  return both_tiers_at_once(node_mates, node_mates * per_peer, remote, remote * per_peer, t);
}

// C(E - held, k) / C(E, k): the chance that none of `held` given experts is among a token's k of E.
double chance_none_held(int experts, int top_k, double held) {
  double q = 1.0;
  for (int i = 0; i < top_k; ++i) q *= std::max(0.0, (experts - held - i) / static_cast<double>(experts - i));
  return q;
}

}  // namespace

const char* to_string(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_to_all: return "all_to_all";
    case Collective::send_recv: return "send_recv";
    case Collective::broadcast: return "broadcast";
  }
  return "unknown";
}

const char* to_string(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::ring: return "ring";
    case CollectiveAlgorithm::tree: return "tree";
    case CollectiveAlgorithm::hierarchical: return "hierarchical";
  }
  return "unknown";
}

double bus_factor(Collective c, int n) {
  switch (c) {
    case Collective::broadcast:
    case Collective::send_recv: return 1.0;
    case Collective::all_reduce: return n <= 1 ? 0.0 : 2.0 * (n - 1) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all: return n <= 1 ? 0.0 : static_cast<double>(n - 1) / n;
  }
  return 0.0;
}

ByteRate effective_bandwidth(const LinkTier& tier) { return tier.bandwidth * tier.efficiency; }

ByteRate intra_bandwidth(const Topology& t) { return effective_bandwidth(t.intra); }

ByteRate inter_bandwidth(const Topology& t) {
  return effective_bandwidth(t.inter) / std::max(1.0, t.oversubscription);
}

Topology make_topology(const ClusterSpec& c, double intra_efficiency, double inter_efficiency,
                       double oversubscription) {
  Topology t;
  t.gpus_per_node = std::max(1, c.gpus_per_node);
  ByteRate intra = c.intra_node.bandwidth;
  if (!(intra.value > 0.0)) intra = c.gpu.nvlink.value > 0.0 ? c.gpu.nvlink : c.gpu.pcie;
  t.intra = LinkTier{intra, c.intra_node.latency, intra_efficiency};
  const ByteRate per_gpu = c.inter_node.bandwidth * (static_cast<double>(std::max(0, c.nics_per_node)) / t.gpus_per_node);
  t.inter = LinkTier{per_gpu, c.inter_node.latency, inter_efficiency};
  t.oversubscription = std::max(1.0, oversubscription);
  t.ring_step_floor = nccl_ring_step_floor(c.host_cpu);
  return t;
}

Seconds nccl_ring_step_floor(HostCpu cpu) {
  constexpr double kSimpleProtocolFactor = 3.0;  // tuning.cc: `if (p == NCCL_PROTO_SIMPLE) netOverhead *= 3`
  const double net_overhead = cpu == HostCpu::amd ? 2e-6 : 1e-6;  // getNetOverhead, seconds
  return Seconds(kSimpleProtocolFactor * net_overhead);
}

GroupShape group_shape(int size, int stride, int gpus_per_node) {
  GroupShape g;
  g.size = std::max(1, size);
  stride = std::max(1, stride);
  gpus_per_node = std::max(1, gpus_per_node);
  g.ranks_per_node = stride < gpus_per_node ? std::clamp(gpus_per_node / stride, 1, g.size) : 1;
  g.nodes = (g.size + g.ranks_per_node - 1) / g.ranks_per_node;
  return g;
}

int ring_steps(Collective c, int n) {
  if (n <= 1) return 0;
  switch (c) {
    case Collective::all_reduce: return 2 * (n - 1);
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all:
    case Collective::broadcast: return n - 1;
    case Collective::send_recv: return 1;
  }
  return 0;
}

Bytes ring_bytes_sent(Collective c, Bytes bytes, int n) {
  if (n <= 1 || !(bytes.value > 0.0)) return Bytes(0.0);
  return bytes * bus_factor(c, n);
}

Seconds ring_time(Collective c, Bytes bytes, int n, Seconds alpha, ByteRate beta) {
  if (n <= 1 || !(bytes.value > 0.0)) return Seconds(0.0);
  return Seconds(ring_steps(c, n) * alpha.value + transfer(ring_bytes_sent(c, bytes, n).value, beta.value));
}

Seconds tree_time(Collective c, Bytes bytes, int n, Seconds alpha, ByteRate beta) {
  if (c != Collective::all_reduce && c != Collective::broadcast) return Seconds(kInf);
  if (n <= 1 || !(bytes.value > 0.0)) return Seconds(0.0);
  const double phases = c == Collective::all_reduce ? 2.0 : 1.0;  // reduce up + broadcast down, or broadcast only
  return Seconds(phases * (ceil_log2(n) * alpha.value + transfer(bytes.value, beta.value)));
}

bool applicable(Collective c, CollectiveAlgorithm a, const GroupShape& g) {
  const Layout l = normalize(g);
  switch (a) {
    case CollectiveAlgorithm::ring: return true;
    case CollectiveAlgorithm::tree: return l.n > 1 && (c == Collective::all_reduce || c == Collective::broadcast);
    case CollectiveAlgorithm::hierarchical:
      return l.m > 1 && l.r > 1 &&
             (c == Collective::all_reduce || c == Collective::all_gather || c == Collective::reduce_scatter);
  }
  return false;
}

Seconds algorithm_time(Collective c, CollectiveAlgorithm a, Bytes bytes, const GroupShape& g, const Topology& t) {
  if (!applicable(c, a, g)) return Seconds(kInf);
  const Layout l = normalize(g);
  if (l.n <= 1 || !(bytes.value > 0.0)) return Seconds(0.0);
  const double s = bytes.value;
  switch (a) {
    case CollectiveAlgorithm::ring:
      if (c == Collective::all_to_all) return Seconds(pairwise_all_to_all(s, l, t));
      return Seconds(ring(c, s, l.n, flat_tier(l, t)));
    case CollectiveAlgorithm::tree: return Seconds(tree(c, s, l.n, flat_tier(l, t)));
    case CollectiveAlgorithm::hierarchical: {
      const Tier intra{t.intra.latency.value, intra_bandwidth(t).value};
      const Tier inter{t.inter.latency.value, inter_bandwidth(t).value};
      const double shard = s / l.r;  // what each GPU exchanges with its peers on the other nodes
      if (c == Collective::all_reduce) {
        const double across = std::min(ring(Collective::all_reduce, shard, l.m, inter),
                                       tree(Collective::all_reduce, shard, l.m, inter));
        return Seconds(ring(Collective::reduce_scatter, s, l.r, intra) + across +
                       ring(Collective::all_gather, s, l.r, intra));
      }
      // all_gather: the bytes cross the tiers in two phases, the node's share (S / r in total) among the
      // m nodes, then S among the node's r GPUs; reduce_scatter the same in reverse, at the same cost.
      // The latency is that of the one ring NCCL runs over all n ranks (no other algorithm for these
      // across nodes before PAT, NCCL 2.23, src/graph/tuning.cc): n - 1 hops, m - 1 of them between nodes,
      // each of the others at least the ring's step floor (the network post overhead, nccl_ring_step_floor).
      const double intra_hop = std::max(intra.alpha, t.ring_step_floor.value);
      const double hops = (l.n - l.m) * intra_hop + (l.m - 1) * inter.alpha;
      return Seconds(hops + transfer(ring_bytes_sent(c, Bytes(shard), l.m).value, inter.beta) +
                     transfer(ring_bytes_sent(c, Bytes(s), l.r).value, intra.beta));
    }
  }
  return Seconds(kInf);
}

Seconds deduplicated_dispatch_time(Bytes token_bytes, int experts, int top_k, const GroupShape& g, const Topology& t) {
  const Layout l = normalize(g);
  if (l.n <= 1 || experts < 1 || top_k < 1 || !(token_bytes.value > 0.0)) return Seconds(0.0);
  top_k = std::min(top_k, experts);
  const auto [per_node, nodes] = ranks_per_node_and_nodes(l);
  const double per_rank = static_cast<double>(experts) / l.n;
  const double network = token_bytes.value * (nodes - 1) * (1.0 - chance_none_held(experts, top_k, per_rank * per_node));
  const double nvlink = token_bytes.value * nodes * (per_node - 1) * (1.0 - chance_none_held(experts, top_k, per_rank));
  return Seconds(both_tiers_at_once(per_node - 1, nvlink, nodes - 1, network, t));
}

CollectiveCost collective_time(Collective c, Bytes bytes, const GroupShape& g, const Topology& t) {
  CollectiveCost best{Seconds(0.0), CollectiveAlgorithm::ring};
  if (normalize(g).n <= 1 || !(bytes.value > 0.0)) return best;
  best.time = algorithm_time(c, CollectiveAlgorithm::ring, bytes, g, t);
  for (CollectiveAlgorithm a : {CollectiveAlgorithm::tree, CollectiveAlgorithm::hierarchical}) {
    if (!applicable(c, a, g)) continue;
    const Seconds time = algorithm_time(c, a, bytes, g, t);
    if (time < best.time) best = {time, a};
  }
  return best;
}

}  // namespace tp
