// Memory-bound kernels (STREAM-style copy, scale, triad; a norm-like row reduction) and an empty kernel
// for the launch overhead.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "measurements.h"
#include "timing.cuh"

namespace tp::cuda {

// Bytes moved by one run of `op` on arrays of `array_bytes` bytes (copy/scale 2x, triad 3x, reduce 1x).
double memory_bytes_moved(MeasuredOp op, double array_bytes);

// Times `op` on fp32 arrays of `array_bytes` bytes each (reduce: rows of kReduceRow floats).
TimeStats measure_memory(MeasuredOp op, double array_bytes, const RepetitionPolicy& policy, L2Flusher* flush, cudaStream_t s);

// Time per launch of an empty kernel, launched back to back (1000 per timed run).
TimeStats measure_launch(const RepetitionPolicy& policy, cudaStream_t s);

inline constexpr int kReduceRow = 4096;

// Runs `op` once on host data (for the numerics tests): copy -> a; scale -> k a; triad -> a + k b;
// reduce -> the sum of squares of each row of `row` floats of a.
std::vector<float> run_memory_op(MeasuredOp op, const std::vector<float>& a, const std::vector<float>& b, float k, int row);

}  // namespace tp::cuda
