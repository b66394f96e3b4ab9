#include "offload_time.h"

#include <algorithm>

#include "estimate.h"
#include "estimate_parts.h"
#include "framework_rules.h"

namespace tp {

double host_memory_bandwidth(const GpuSpec& gpu) {
  // Datasheet channel rates, both sockets; 0.8 of it is what STREAM-class kernels reach (McCalpin,
  // STREAM results for two-socket servers: 75-85 % of peak).
  // - ampere: DGX A100, 2 x AMD EPYC 7742, 8 channels DDR4-3200 each: 2 x 204.8 GB/s (NVIDIA DGX A100
  //   user guide; AMD EPYC 7742 datasheet). Azure NDm A100 v4 hosts (2 x EPYC 7V12) are the same platform.
  // - hopper / blackwell: DGX H100, 2 x Intel Xeon Platinum 8480C, 8 channels DDR5-4800 each:
  //   2 x 307.2 GB/s (NVIDIA DGX H100 user guide; Intel ARK 8480+).
  // - others: a two-socket DDR4-2666 host with 6 channels each (DGX-1 / DGX-2 class): 2 x 128 GB/s.
  constexpr double kStream = 0.8;
  if (gpu.generation == "ampere") return 2 * 204.8e9 * kStream;
  if (hopper_or_later(gpu)) return 2 * 307.2e9 * kStream;
  return 2 * 128e9 * kStream;
}

namespace {

// Host bytes per parameter of one optimizer step: read and write the parameter and each fp32 state, read
// the gradient. ZeRO-Offload steps its fp32 master with fp32 gradients and also writes the 16-bit copy it
// sends back to the GPU; FSDP steps the host shard in its own dtype with the gradient FSDP keeps
// (framework_rules.h: fp32 under mixed precision, 16-bit for a 16-bit model without a master).
double cpu_step_bytes_per_param(const Scenario& s) {
  const TrainingSpec& t = s.training;
  const double states = optimizer_bytes_per_param(t.optimizer);
  if (t.framework == Framework::deepspeed) return 2.0 * 4.0 + 2.0 * states + 4.0 + 2.0;
  return 2.0 * sharded_parameter_bytes(t) + 2.0 * states + kept_gradient_bytes(s);
}

// Slowdown of the framework's CPU optimizer relative to one streaming pass over those bytes.
// DeepSpeed's DeepSpeedCPUAdam (csrc/adam/cpu_adam.cpp, AVX512/AVX256 + OpenMP, one fused pass) is
// taken as streaming. torch.optim's Adam/AdamW on CPU run one op per term (mul_, add_, addcmul_,
// sqrt, div, add_, addcdiv_: ~6 passes); DeepSpeed's ZeRO-Offload tutorial measures DeepSpeedCPUAdam
// "5X-7X faster than the standard PyTorch implementation": 6. SGD is one add_ (or two with momentum).
double cpu_optimizer_slowdown(const TrainingSpec& t) {
  if (t.framework == Framework::deepspeed) return 1.0;
  switch (t.optimizer) {
    case Optimizer::adam:
    case Optimizer::adamw:
    case Optimizer::adam8bit:
    case Optimizer::lion: return 6.0;
    default: return 1.0;
  }
}

}  // namespace

double cpu_optimizer_seconds(const Scenario& s, double shard) {
  const double node_params = shard * s.cluster.gpus_per_node;
  return node_params * cpu_step_bytes_per_param(s) * cpu_optimizer_slowdown(s.training) /
         host_memory_bandwidth(s.cluster.gpu);
}

OffloadTimes offload_times(const Scenario& s, const HardwareProfile& hw, double shard, double micro_batches) {
  OffloadTimes r;
  const ParallelSpec& p = s.parallel;
  const TrainingSpec& t = s.training;
  const bool params_on_host = p.offload_params == OffloadTarget::cpu;
  const bool optimizer_on_host = p.offload_optimizer == OffloadTarget::cpu || params_on_host;
  if (!optimizer_on_host) return r;
  const double pcie = host_link_rate(s, hw);
  const double grad16 = element_bytes(t.grad_precision);
  if (params_on_host) {
    // FSDP CPUOffload(offload_params=True): the parameter shard (fp32 under mixed precision, else the
    // model's own dtype: sharded_parameter_bytes) lives on the host and FlatParamHandle.pre_unshard copies
    // it to the GPU before every all-gather, forward and backward
    // (torch/distributed/fsdp/_flat_param.py, _use_low_precision_shard / flat_param_to); DeepSpeed's
    // offload_param keeps the 16-bit partition on the host and copies it per fetch
    // (runtime/zero/partitioned_param_coordinator.py). Gradients go to the host after every backward,
    // FSDP's in the shard's dtype (kept_gradient_bytes).
    const bool deepspeed = t.framework == Framework::deepspeed;
    r.gather_h2d = shard * (deepspeed ? 2.0 : sharded_parameter_bytes(t)) / pcie;
    r.grads_d2h = micro_batches * shard * (deepspeed ? grad16 : kept_gradient_bytes(s)) / pcie;
  } else {
    // ZeRO-Offload (Ren et al. 2021, sec. 4.1): 16-bit gradients down as they are reduced, overlapping
    // the backward; after the CPU step the updated 16-bit parameters come back to the GPU.
    r.grads_d2h = shard * grad16 / pcie;
    r.params_h2d = shard * 2.0 / pcie;
  }
  r.cpu_step = cpu_optimizer_seconds(s, shard);
  return r;
}

double host_link_rate(const Scenario& s, const HardwareProfile& hw) {
  // A GPU without a PCIe rate in the catalog: PCIe 3.0 x16 per direction (16 GB/s). The GPUs behind one
  // PCIe switch share its uplink to the CPU (cluster.gpus_per_host_link): every GPU of a data-parallel
  // step copies at the same time, so each gets its share.
  const double link = s.cluster.gpu.pcie.value > 0 ? s.cluster.gpu.pcie.value * hw.pcie_efficiency : 16e9;
  return link / std::max(1, s.cluster.gpus_per_host_link);
}

double activation_offload_seconds(const Scenario& s, const HardwareProfile& hw, const OpGraph& g) {
  const ParallelSpec& p = s.parallel;
  if (p.offload_activations != OffloadTarget::cpu || !recomputes_layers(p)) return 0.0;
  // One checkpoint (the layer input) every k layers: its bytes spread over the k layers it covers.
  const double k = p.recompute.mode == RecomputeMode::every ? p.recompute.every : 1.0;
  return layer_activation_bytes(s, g).value / k / host_link_rate(s, hw);
}

}  // namespace tp
