// Builds without NCCL: collectives are reported as skipped.
#include "collectives_nccl.cuh"
#include "timing.cuh"

namespace tp::cuda {
std::unique_ptr<NcclGroup> make_nccl_group(const RankInfo&) {
  throw Unsupported("this build has no NCCL: collectives not measured");
}
}  // namespace tp::cuda
