#include "fsdp_copies.h"

#include <algorithm>
#include <cstdint>

#include "framework_rules.h"
#include "kernel_class_time.h"

namespace tp {

FsdpCopies fsdp_copies(const Scenario& s, const Zero3Layer& zero3, const HardwareProfile& hw, int sharding_ranks) {
  const ParallelSpec& p = s.parallel;
  const TrainingSpec& t = s.training;
  // FSDP1 on one rank switches to NO_SHARD (fully_sharded_data_parallel.py: "switching to use NO_SHARD
  // instead ... since the world size is 1"); FSDP2 gathers and reduces through its buffers whatever the
  // world size (measured at world size 1: h100-framework-steps.json, chunk_cat and split copies).
  const bool fsdp1 = s.memory.fsdp_version == FsdpVersion::fsdp1;
  const FrameworkRules& fw = framework_rules(t.framework);
  if (t.framework != Framework::fsdp || !gathers_per_unit(fw, p) || sharding_ranks < (fsdp1 ? 2 : 1)) return {};
  const Zero3Settings& z = zero3.settings;
  const Zero3Modules& modules = zero3.modules;
  const double units = zero3.units_per_layer();
  if (modules.gathered <= 0 || units <= 0) return {};
  const double e = parameter_bytes(t);  // the gather's element bytes (planner/comm_time.cpp, CommBytes::weights)
  const double copy = 2.0 * modules.gathered * e;  // one layer's parameters (or gradients) read and written once
  // One layer's `bytes` in one kernel per unit.
  const auto seconds = [&](double bytes) {
    return kernel_class_calls_seconds(hw, s.cluster.gpu, KernelClass::residual_add, bytes, units).value;
  };
  if (fsdp1) return {0.0, seconds(copy)};
  // SHARD_GRAD_OP (zero 2) keeps the forward's gathered units for the backward: no copy-out there.
  const double backward_gathers = !gathers_in_backward(p) ? 0.0 : zero3_recompute_pass(z, p.recompute.mode) ? 2.0 : 1.0;
  // The copy-in runs in each reducing backward: every micro-batch's, or the last one's only (a share of 1/m
  // per micro-batch) when the loop turns the sync off for the others (training.gradient_sync).
  const double reduce_copy_in = modules.gathered * (e + element_bytes(t.grad_precision));
  const double once_per_step = 1.0 / static_cast<double>(std::max<std::int64_t>(1, s.micro_batches()));
  const double reducing_share = reduces_every_micro_batch(fw, t, p) ? 1.0 : once_per_step;
  // SHARD_GRAD_OP's forward gathers again only after a backward that synced (gathers_every_micro_batch).
  const double forward_share = gathers_every_micro_batch(fw, t, p) ? 1.0 : once_per_step;
  return {forward_share * seconds(copy), backward_gathers * seconds(copy) + reducing_share * seconds(reduce_copy_in)};
}

}  // namespace tp
