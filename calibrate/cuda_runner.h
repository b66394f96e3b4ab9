// Runs a suite plan (suite_plan.h) on the local CUDA devices and returns the measurements. Only in
// builds with CUDA (target tp_calibrate_cuda, TRAINPLAN_HAS_CUDA). No CUDA types in this header.
//
// One process drives every visible GPU of its node: GEMM, attention, memory, launch and power run on
// device 0; the collectives run over all local devices (ncclCommInitAll). Under mpirun / srun in a
// build with MPI, each rank drives one GPU (local rank) and NCCL is bootstrapped through MPI, as
// nccl-tests does; rank 0 writes the file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "measurements.h"
#include "timing_stats.h"

namespace tp {

struct DeviceProbe {
  int count = 0;      // CUDA devices visible to this process
  std::string error;  // why none: "no CUDA-capable device is detected", ...
};
// Never throws; never aborts without a device or driver.
DeviceProbe probe_cuda_devices();

struct CudaRunOptions {
  RepetitionPolicy policy;
  bool l2_flush = true;
  std::vector<std::string> suites;  // recorded in the file
  std::string scenario;             // recorded in the file
  std::string gpu_key;              // catalog key to record ("" = guessed from the device name)
  // Called before each case (done = cases finished so far).
  std::function<void(size_t done, size_t total, const Measurement& next)> progress;
};

// Multi-process layout of this run (MPI when built with it, else one process).
struct RankInfo {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  int nodes = 1;
  bool mpi = false;
};
// Initialises MPI when built with it and launched under mpirun / srun (MPI_Init(nullptr, nullptr));
// else one process.
RankInfo init_ranks();
void finalize_ranks();

// Runs every case of `plan`. A case that fails (out of memory, unsupported dtype or shape, library
// missing) becomes a SkippedCase with the reason; it never aborts the run.
Measurements run_calibration(const std::vector<Measurement>& plan, const CudaRunOptions& options, const RankInfo& ranks);

}  // namespace tp
