// ZeRO-3 exposed data-parallel communication, by hand computation and as a property.
// Oracle: ZeRO-3 gathers the 16-bit weights twice per micro-batch and reduce-scatters the gradients
// once per step (Rajbhandari et al. 2020, sec. 7.2.2: 1.5x the DP volume, gathers repeated per
// micro-batch). Every node must receive, per gather, the shards of all other nodes, (n - 8)/n x 2P
// bytes, and send as much per reduce-scatter, through its 8 NICs; this does not shrink as GPUs are
// added. A collective overlapped with compute hides at most that compute, so
// exposed >= node traffic / (8 x NIC bandwidth) - compute, with the NICs at their datasheet bandwidth.
#include <gtest/gtest.h>

#include "estimate.h"
#include "hardware_profile.h"
#include "step_time.h"
#include "tests/test_support.h"

namespace tp {
namespace {

struct Zero3Step {
  double exposed, compute, lower_bound;
};

// llama2-70b, ZeRO-3 over `gpus` GPUs in nodes of 8 x 200 Gb/s NICs, fixed global batch of 1536
// sequences of 2048 tokens.
Zero3Step zero3_step(int gpus) {
  const Scenario s = test::scenario(
      "model: llama2-70b\n"
      "cluster: {preset: dgx-h100, nodes: " + std::to_string(gpus / 8) + ", inter_node: {bandwidth: 200 Gbit/s, latency: 14 us, nics_per_node: 8}}\n"
      "training: {framework: deepspeed, sequence_length: 2048, global_batch: 1536, micro_batch: 1, precision: bf16, grad_precision: bf16}\n"
      "parallel: {tp: 1, pp: 1, zero: 3, recompute: none}\n");
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Estimate e = estimate(s, g);
  const StepTime t = step_time(s, g, e, profile_for(s));
  const double n = gpus, p = e.parameters_total;
  const double m = static_cast<double>(e.micro_batches);
  // Hand computation: bytes each node receives (gathers) and sends (reduce-scatter) per step;
  // 8 NICs x 200 Gb/s = 200 GB/s per node.
  const double traffic = (n - 8) / n * p * (2.0 * 2.0 * m + 2.0);
  const double link = 8 * 200e9 / 8.0;
  const double compute = (t.compute + t.recompute).value;
  return {t.exposed.dp.value, compute, traffic / link - compute};
}

TEST(Zero3Exposed, HandComputed1536Gpus) {
  const Zero3Step z = zero3_step(1536);
  // 1536 GPUs, 1536 sequences: m = 1; 6.9e10 parameters: node traffic 6.9e10 x 6 B = 414 GB -> 2.07 s
  // at 200 GB/s, against 6 x 6.9e10 x 2048 tokens = 8.5e14 FLOP (~1.5 s at ~550 TFLOP/s) of compute:
  // about 0.5 s must be exposed.
  EXPECT_GE(z.exposed, z.lower_bound);
  EXPECT_GT(z.lower_bound, 0.2);
  EXPECT_LT(z.compute, 2.0);
}

TEST(Zero3Exposed, AddingGpusNeverHidesMoreThanTheComputeAllows) {
  for (int gpus : {192, 384, 768, 1536}) {
    const Zero3Step z = zero3_step(gpus);
    EXPECT_GE(z.exposed, z.lower_bound) << gpus << " GPUs";
  }
}

}  // namespace
}  // namespace tp
