// The DGX H100 links as the collective cost model sees them ([DGX] scenarios/catalog/clusters.yaml: NVLink 450
// GB/s and one 400 Gbit/s NIC per GPU; latencies from NCCL tuning.cc hwLat, 3.4 / 14 us), efficiencies 1.
#pragma once

#include "collectives.h"

namespace tp::test {

inline Topology dgx_h100_topology() {
  Topology t;
  t.gpus_per_node = 8;
  t.intra = LinkTier{ByteRate(450e9), Seconds(3.4e-6)};
  t.inter = LinkTier{ByteRate(50e9), Seconds(14e-6)};
  return t;
}

}  // namespace tp::test
