// What the measurements file records about the device and the software stack.
#pragma once

#include "measurements.h"

namespace tp::cuda {

DeviceInfo query_device(int device);
SoftwareInfo query_software();
// Compute capability as major * 10 + minor (90 for H100).
int compute_capability(int device);

}  // namespace tp::cuda
