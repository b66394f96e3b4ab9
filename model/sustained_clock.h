// The SM clock a training step's tensor-core kernels run at, and how much longer they take than the
// profile's rates say (docs/model.md §15, "Sustained clock").
//
// Under tensor-core load a GPU draws its power cap and its SM clock settles below the boost clock. A
// calibration times bursts of GEMMs on one GPU (the profile's `clock`); the GPUs of a busy multi-GPU
// server hold the catalog's `sustained_clock`. Compute-bound kernel time scales with 1 / clock.
#pragma once

#include <string>

#include "hardware_profile.h"
#include "specs.h"

namespace tp {

// The clock the profile's GEMM and fused-attention rates stand for (Hz): the calibration's clock, or, for
// generation defaults set from training runs, the GPU's sustained clock; 0 = unknown.
double profile_rates_clock_hz(const HardwareProfile& hw, const GpuSpec& gpu);

// The clock the cluster's GPUs hold under tensor-core load (Hz): `cluster.sustained_clock`, else the
// profile's measured `power.sustained_clock`, else the catalog's `sustained_clock` when a node holds more
// than one GPU; 0 = the profile's own clock (one GPU alone, as calibrated).
double cluster_sustained_clock_hz(const ClusterSpec& c, const HardwareProfile& hw);

// Why a sustained clock cannot be the GPU's: above its maximum boost (with 5 % for datasheet rounding);
// "" when it can, or when the catalog has no boost clock.
std::string sustained_clock_problem(double sustained_clock_hz, const GpuSpec& gpu);

// Factor on the compute-bound time of GEMMs and fused attention: rates clock / sustained clock, 1 when
// either is unknown.
double tensor_time_scale(const ClusterSpec& c, const HardwareProfile& hw);

}  // namespace tp
