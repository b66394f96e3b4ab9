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

TEST(Zero3Exposed, FsdpExposesTheFirstLayerGatherAndTheLastLayerReduceScatter) {
  // fmsfsdp-llama2-7b-96xh100 (IBM fms-fsdp README: FSDP, 96 H100, 12 nodes of 8 x 100 Gb/s NICs, bf16
  // mixed precision: bf16 gathers and reduce-scatters). Per step the compute (0.63 s) hides every
  // transfer except at the ends: the first layer's gather has nothing before it and the last layer's
  // reduce-scatter nothing after it. By hand, S = 6,738,415,616 parameters x 2 B; NCCL's hierarchical
  // all-gather (docs/model.md §14): inter-node over 12 nodes of S/8 at 8 x 100 Gb/s / 8 GPUs x 0.9,
  // then intra-node of S at 450 GB/s x 0.8 (efficiencies: scenarios/profiles/h100-sxm.yaml). FSDP gathers
  // one layer (unit) at a time, so each of the 32 layers is a collective of S / 32 that pays its own
  // latency, NCCL's ring over the 96 ranks: 11 hops between nodes x 14 us and 84 over NVLink x 3.4 us;
  // 5.75 ms per layer. The reduce-scatter is the mirror image, the same time: 2 x 5.75 = 11.5 ms exposed
  // (the planner charged one 25 MB gradient bucket's share before, 0.3 ms; one latency per pass, 10.6 ms,
  // before each unit paid its own; 11.0 ms while the latency was the two phases' 11 + 7 hops).
  const Scenario s = test::scenario(
      "model: {layers: 32, hidden: 4096, heads: 32, kv_heads: 32, ffn_hidden: 11008, vocab: 32000, activation: swiglu, "
      "norm: rmsnorm, position: rope, tied_embeddings: false, bias: false}\n"
      "cluster: {preset: dgx-h100, nodes: 12, inter_node: {bandwidth: 100 Gbit/s, nics_per_node: 8}}\n"
      "training: {framework: fsdp, precision: bf16, sequence_length: 4096, global_batch: 192, micro_batch: 2, "
      "optimizer: adamw, flash_attention: true, compile: true, grad_precision: bf16}\n"  // fms-fsdp's bfSixteen
      "parallel: {tp: 1, pp: 1, cp: 1, dp: 96, recompute: none, zero: 3}\n");
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Estimate e = estimate(s, g);
  const StepTime t = step_time(s, g, e, profile_for(s));
  const double bytes = 6738415616.0 * 2;
  const double inter = 100e9 / 8 * 0.9, intra = 450e9 * 0.8;
  const double layer = bytes / 32;
  const double per_layer = 11.0 / 12 * layer / 8 / inter + 11 * 14e-6 + 7.0 / 8 * layer / intra + 84 * 3.4e-6;
  EXPECT_NEAR(per_layer, 5.75e-3, 0.01e-3);
  EXPECT_NEAR(t.exposed.dp.value, 2 * per_layer, 0.005 * 2 * per_layer);
}

// Each unit's gather is a collective of its own and pays its own latency (NCCL launches one per
// all_gather call): a pass over L layers gathered a layer at a time pays L latencies, not one. By hand,
// the pass with the network's per-step latency at 14 us minus the same pass at 0: 32 layers x 11 network
// steps (12 nodes: the hierarchical all-gather's inter-node ring, docs/model.md §14) x 14 us = 4.93 ms.
TEST(Zero3Exposed, EachUnitsGatherPaysItsOwnLatency) {
  const auto gather_pass = [](const char* latency) {
    const Scenario s = test::scenario(
        "model: {layers: 32, hidden: 4096, heads: 32, kv_heads: 32, ffn_hidden: 11008, vocab: 32000, activation: swiglu, "
        "norm: rmsnorm, position: rope, tied_embeddings: false, bias: false}\n"
        "cluster: {preset: dgx-h100, nodes: 12, inter_node: {bandwidth: 100 Gbit/s, nics_per_node: 8, latency: " +
        std::string(latency) + "}}\n"
        "training: {framework: fsdp, precision: bf16, sequence_length: 4096, global_batch: 192, micro_batch: 2}\n"
        "parallel: {tp: 1, pp: 1, cp: 1, dp: 96, recompute: none, zero: 3}\n");
    const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
    return step_time(s, g, estimate(s, g), profile_for(s)).dp_gather.value;
  };
  EXPECT_NEAR(gather_pass("14 us") - gather_pass("0 us"), 32 * 11 * 14e-6, 1e-9);
}

}  // namespace
}  // namespace tp
