// Host offload (`parallel.offload`): the PCIe transfers and the CPU optimizer step of ZeRO-Offload
// (DeepSpeed) and FSDP CPUOffload, per GPU and step (docs/model.md §15, "Offload").
#pragma once

#include "hardware_profile.h"
#include "op_graph.h"
#include "specs.h"

namespace tp {

// Host memory bandwidth of one node, per GPU generation: the host of that generation's DGX system,
// all memory channels of both sockets at the datasheet rate times a STREAM-like efficiency.
double host_memory_bandwidth(const GpuSpec& gpu);

// Seconds the CPU optimizer takes for `shard` parameters on each of the node's GPUs (all ranks of a
// node step at once and share the host's memory bandwidth).
double cpu_optimizer_seconds(const Scenario& s, double shard);

struct OffloadTimes {
  double gather_h2d = 0;     // seconds per gather pass: the host-resident parameter shard copied to the GPU
  double grads_d2h = 0;      // seconds per step: gradient shards copied to the host (overlaps the backward)
  double params_h2d = 0;     // seconds per step after the CPU step: updated 16-bit parameters to the GPU
  double cpu_step = 0;       // seconds per step: the optimizer on the host
};

// The offload transfers and CPU step of one GPU holding `shard` parameters, with `micro_batches`
// backward passes per step.
OffloadTimes offload_times(const Scenario& s, const HardwareProfile& hw, double shard, double micro_batches);

// Bytes per second one GPU moves to or from the host: its PCIe link per direction (catalog) at the
// profile's pcie_efficiency.
double host_link_rate(const Scenario& s, const HardwareProfile& hw);

// Activation offload (`parallel.offload.activations: cpu`, DeepSpeed cpu_checkpointing): seconds per layer
// and micro-batch to copy the layer's checkpointed input to the host in the forward pass, and the same
// again to bring it back before its recompute. The copies are synchronous on the compute stream (DeepSpeed
// runtime/activation_checkpointing/checkpointing.py: CheckpointFunction.forward copies the inputs with
// .cpu() / copy_to_device(cpu), backward with move_to_device(cuda) before running the forward again), so
// they are exposed in full. 0 without activation offload.
double activation_offload_seconds(const Scenario& s, const HardwareProfile& hw, const OpGraph& g);

}  // namespace tp
