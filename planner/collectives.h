// Cost model of NCCL-style collectives (alpha-beta model, Thakur, Rabenseifner & Gropp 2005).
// Pure functions: no I/O, no exceptions, no heap allocation. The sweep calls them millions of times.
//
// Conventions:
// - A LinkTier's bandwidth is per GPU, per direction. Its effective rate is bandwidth x efficiency.
//   The inter-node tier is also divided by Topology::oversubscription.
// - Message sizes follow nccl-tests (doc/PERFORMANCE.md). all_reduce and broadcast take the per-rank
//   buffer. all_gather and reduce_scatter take the TOTAL gathered array S. all_to_all takes the per-rank
//   send buffer, and send_recv the message.
// - A tier with zero (or negative) effective bandwidth that a collective must cross gives +infinity
//   seconds; for example, a multi-node group on a preset with no inter-node fabric.
#pragma once

#include "specs.h"
#include "units.h"

namespace tp {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv, broadcast };
inline constexpr int kCollectiveCount = 6;
enum class CollectiveAlgorithm { ring, tree, hierarchical };
inline constexpr int kCollectiveAlgorithmCount = 3;

const char* to_string(Collective c);
const char* to_string(CollectiveAlgorithm a);

// nccl-tests bus-bandwidth factor (doc/PERFORMANCE.md): all_reduce 2(n-1)/n; all_gather, reduce_scatter,
// all_to_all (n-1)/n; broadcast, send_recv 1. n = ranks. n <= 1 gives 0, except broadcast and send_recv,
// which are always 1. busbw = algbw x bus_factor, with algbw = S / t.
double bus_factor(Collective c, int n);

// One level of the network as seen by one GPU: the per-direction bandwidth available to one GPU, and
// the per-message latency (alpha). `efficiency` scales the bandwidth to what NCCL achieves.
struct LinkTier {
  ByteRate bandwidth;
  Seconds latency;
  double efficiency = 1.0;
};

// A cluster as the collectives see it. The intra-node tier is NVLink/NVSwitch, or PCIe, per GPU per
// direction. The inter-node tier is each GPU's share of the node's NICs, before oversubscription.
struct Topology {
  int gpus_per_node = 8;
  LinkTier intra;
  LinkTier inter;                 // per-GPU share of the node's NICs: NIC bandwidth x nics_per_node / gpus_per_node
  double oversubscription = 1.0;  // >= 1, divides the inter bandwidth (applied by inter_bandwidth(), not stored in `inter`)
  // A ring over several nodes: the least one of its steps inside a node costs, NCCL's network post overhead
  // x 3 for the Simple protocol (nccl_ring_step_floor).
  Seconds ring_step_floor;
};

// NCCL's cost model (src/graph/tuning.cc, ncclTopoTuneModel; src/tuning/ring.cc in later trees): "Inter-node
// rings still have to launch nsteps * net overhead", so a ring's intra-node step costs max(hwLat, 3 x
// netOverhead) under the Simple protocol once the ring spans nodes, with getNetOverhead 2 us on AMD x86 hosts
// and 1 us on Intel and others: 6 us or 3 us.
Seconds nccl_ring_step_floor(HostCpu cpu);

// Intra tier: ClusterSpec::intra_node, falling back to the GPU's NVLink, then its PCIe link, when that is 0.
// Inter tier: inter_node.bandwidth (per NIC) x nics_per_node / gpus_per_node. Values below 1 for
// `oversubscription` are raised to 1.
Topology make_topology(const ClusterSpec& c, double intra_efficiency = 1.0, double inter_efficiency = 1.0,
                       double oversubscription = 1.0);

// Effective per-GPU, per-direction rates: bandwidth x efficiency, and for the inter tier also / oversubscription.
ByteRate effective_bandwidth(const LinkTier& tier);
ByteRate intra_bandwidth(const Topology& t);
ByteRate inter_bandwidth(const Topology& t);

// How a process group of `size` ranks is laid out on the nodes. `ranks_per_node` of its ranks share a node
// (1 = every rank on its own node), and `nodes` = size / ranks_per_node.
struct GroupShape {
  int size = 1;
  int ranks_per_node = 1;
  int nodes = 1;
};

// Groups are laid out in Megatron order: TP innermost, then CP, EP (inside DP), DP, and PP outermost.
// `stride` is the product of the sizes of the dimensions inside this one. ranks_per_node =
// clamp(gpus_per_node / stride, 1, size) when stride < gpus_per_node, else 1. nodes = ceil(size / ranks_per_node).
GroupShape group_shape(int size, int stride, int gpus_per_node);


// --- Single-level building blocks (one tier: latency alpha, bandwidth beta) ---

// Sequential message steps of the flat ring: all_reduce 2(n-1); all_gather, reduce_scatter, all_to_all and
// broadcast (pipelined ring) n-1; send_recv 1. n <= 1 gives 0.
int ring_steps(Collective c, int n);
// Bytes each rank sends in the flat ring: bus_factor(c, n) x bytes (all_reduce: 2(n-1)/n x bytes).
Bytes ring_bytes_sent(Collective c, Bytes bytes, int n);
// Flat ring time: ring_steps x alpha + ring_bytes_sent / beta (broadcast: (n-1) alpha + bytes/beta).
Seconds ring_time(Collective c, Bytes bytes, int n, Seconds alpha, ByteRate beta);
// Double binary tree: all_reduce 2 ceil(log2 n) alpha + 2 bytes/beta; broadcast ceil(log2 n) alpha + bytes/beta.
// +infinity for the other collectives.
Seconds tree_time(Collective c, Bytes bytes, int n, Seconds alpha, ByteRate beta);

// --- Whole-topology costs ---

// Whether algorithm `a` can run collective `c` on group `g`. ring: always. tree: all_reduce and broadcast
// with n > 1. hierarchical: all_reduce, all_gather and reduce_scatter when the group spans more than one node
// and has more than one rank per node.
bool applicable(Collective c, CollectiveAlgorithm a, const GroupShape& g);

// Time of `c` with algorithm `a`, or +infinity when `a` does not apply. ring and tree use the slowest tier they
// cross (intra when the group is on one node; inter when each rank has its own node; otherwise the slower bandwidth
// and the larger latency of the two). all_to_all's "ring" is NCCL's grouped send/receive to every peer: (r - 1)
// alpha_intra + (n - r) alpha_inter + max((r - 1) S/n / beta_intra, (n - r) S/n / beta_inter) with r ranks per
// node, the flat ring's cost on one node or with one rank per node (docs/model.md §14). hierarchical runs an
// intra-node reduce-scatter, an inter-node all-reduce (the faster of ring and tree) of bytes/ranks_per_node among
// `nodes` ranks, and an intra-node all-gather. For all_gather it moves bytes/ranks_per_node among the nodes and
// then bytes within each node (reduce_scatter the mirror image), with the latency of NCCL's one ring over all n
// ranks: (n - nodes) intra-node hops and (nodes - 1) inter-node hops (docs/model.md §14).
Seconds algorithm_time(Collective c, CollectiveAlgorithm a, Bytes bytes, const GroupShape& g, const Topology& t);

// One MoE token dispatch (or combine) the DeepEP way (DeepSeek-V3, arXiv:2412.19437, §3.2.2; DeepEP's normal
// kernels, NVIDIA's Hybrid-EP): a token goes through the network once to each other node holding one of its
// top_k experts (to the GPU of the same local index there) and over NVLink once to each GPU holding one,
// directly on its own node and forwarded on the others. `token_bytes` = the GPU's tokens x hidden x bytes; the
// experts spread evenly over the group's n ranks, r per node on m nodes, and the tokens route uniformly (what
// forced load balancing does). With q(x) = C(E - x, k) / C(E, k), the chance that x given experts miss a token:
//   network bytes = token_bytes x (m - 1) x (1 - q(E r / n)),
//   NVLink bytes = token_bytes x m x (r - 1) x (1 - q(E / n)),
//   time = (r - 1) alpha_intra + (m - 1) alpha_inter + max(NVLink bytes / beta_intra, network bytes / beta_inter).
Seconds deduplicated_dispatch_time(Bytes token_bytes, int experts, int top_k, const GroupShape& g, const Topology& t);

struct CollectiveCost {
  Seconds time;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
};

// Time of one collective of `bytes` (see the conventions above) over group `g` on topology `t`, using the
// fastest applicable algorithm, as NCCL's tuner does. On a tie the order is ring, tree, hierarchical.
// n == 1 or bytes <= 0 costs 0 (ring).
CollectiveCost collective_time(Collective c, Bytes bytes, const GroupShape& g, const Topology& t);

}  // namespace tp
