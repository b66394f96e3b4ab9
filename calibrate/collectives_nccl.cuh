// NCCL collectives with nccl-tests semantics (sizes, algbw, busbw: measurements.h). One process drives
// every local GPU (ncclCommInitAll), or, under MPI, each rank drives the GPU of its local rank and the
// communicator is bootstrapped through MPI_Bcast of the unique id, as nccl-tests does.
#pragma once

#include <memory>
#include <vector>

#include "collectives.h"
#include "cuda_runner.h"
#include "timing_stats.h"

namespace tp::cuda {

class NcclGroup {
 public:
  virtual ~NcclGroup() = default;
  virtual int ranks() const = 0;  // all ranks of the communicator
  virtual int nodes() const = 0;
  // Time of one collective of `bytes` (nccl-tests size, already rounded with nccl_test_bytes), fp32 sum:
  // nccl-tests style, a batch of back-to-back operations per sample, synchronised, divided by the batch.
  virtual TimeStats measure(Collective c, double bytes, const RepetitionPolicy& policy) = 0;
  // All-reduce (sum) of `count` floats where local rank r contributes (rank + 1) at every element;
  // returns what each local device holds afterwards (for the numerics tests).
  virtual std::vector<std::vector<float>> all_reduce_values(size_t count) = 0;
};

// Throws Unsupported when this build has no NCCL.
std::unique_ptr<NcclGroup> make_nccl_group(const RankInfo& ranks);

}  // namespace tp::cuda
