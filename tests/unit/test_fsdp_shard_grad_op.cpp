// FSDP's SHARD_GRAD_OP (zero 2 with framework fsdp; planner/framework_rules.h, zero2_gathers_per_unit):
// the parameters are gathered unit by unit in the forward and kept for the backward, which reduce-scatters
// each unit's gradients (torch/distributed/fsdp/api.py ShardingStrategy.SHARD_GRAD_OP; _runtime_utils.py
// _should_free_in_backward). Oracles: hand computation, written in each test.
#include <gtest/gtest.h>

#include "estimate.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "overlap_contention.h"
#include "sharded_time.h"
#include "step_time.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// One layer = one unit (FSDP's default wrapping), m = 1: forward f and backward b per layer, a gather
// of g and a reduce-scatter of r per layer.
Zero3Inputs whole_layers(double layers, double f, double b, double g, double r) {
  Zero3Inputs in;
  in.layers = layers;
  in.forward = layers * f;
  in.backward = layers * b;
  in.gather_pass = layers * g;
  in.reduce = layers * r;
  in.whole_layers = true;
  in.gathers_in_backward = false;
  return in;
}

TEST(ShardGradOp, TheBackwardGathersNothing) {
  // 4 layers, f = 1, b = 2, g = 0.5, r = 0.25 (s). Exposed: the first gather, with nothing before it
  // (0.5), and the last reduce-scatter, with nothing after it (0.25): 0.75 s, as at ZeRO-3 where every
  // gather fits behind a layer. The traffic: one gather pass and the reduce-scatters, 4 x 0.5 + 4 x 0.25
  // = 3 s, where ZeRO-3's backward gathers again: 5 s. (The simulator's graph of the same step:
  // tests/simulator/test_zero3.cpp, ShardGradOpGathersInTheForwardOnly.)
  Zero3Inputs in = whole_layers(4, 1, 2, 0.5, 0.25);
  const Zero3Communication kept = zero3_communication(in, {});
  EXPECT_DOUBLE_EQ(kept.exposed, 0.75);
  EXPECT_DOUBLE_EQ(kept.traffic, 3.0);
  in.gathers_in_backward = true;
  const Zero3Communication regathered = zero3_communication(in, {});
  EXPECT_DOUBLE_EQ(regathered.exposed, 0.75);
  EXPECT_DOUBLE_EQ(regathered.traffic, 5.0);
}

TEST(ShardGradOp, ReduceScattersLongerThanTheBackwardAreExposedBeyondIt) {
  // r = 3 > b = 2: the first reduce-scatter is issued when the first layer's backward ends, so the four
  // (12 s) run against the other three layers' backward (6 s): 6 s past the backward's end. With the
  // first gather: 0.5 + 6 = 6.5 s exposed (the simulator: step 19.5 = 6.5 + 4 f + 4 b + o).
  EXPECT_DOUBLE_EQ(zero3_communication(whole_layers(4, 1, 2, 0.5, 3), {}).exposed, 6.5);
  // Two micro-batches, each backward reduce-scattering (FSDP syncs every micro-batch): the first one's
  // 6 s delay the second forward's gathers on the same stream, the second's end the step: 0.5 + 2 x 6.
  Zero3Inputs two = whole_layers(4, 1, 2, 0.5, 3);
  two.micro_batches = 2;
  two.reduce_every_micro_batch = true;
  two.reduce = 2 * 4 * 3;
  EXPECT_DOUBLE_EQ(zero3_communication(two, {}).exposed, 12.5);
}

TEST(ShardGradOp, WithoutTheSyncOnlyTheFirstMicroBatchGathers) {
  // 3 micro-batches, the gradients synced on the last only (training.gradient_sync: last_micro_batch): FSDP
  // frees the units only after a backward that syncs, so micro-batches 1 and 2 find them gathered. Gathers
  // longer than a layer's forward (g = 1.5, f = 1): the first is exposed for f = 1 (the rest of it counts as
  // the first layer's excess), each layer's 0.5 beyond the layer before, once: 1 + 4 x 0.5; then the last
  // reduce-scatter, 0.25: 3.25 s. Gathering in every micro-batch: 1 + 3 x 4 x 0.5 + 0.25 = 7.25 s. Traffic:
  // one gather pass (6 s) against three (18 s), and one reduce pass (1 s). The simulator's step:
  // 36 s of compute + 3.25 (tests/simulator/test_zero3.cpp).
  Zero3Inputs in = whole_layers(4, 1, 2, 1.5, 0.25);
  in.micro_batches = 3;
  in.gathers_every_micro_batch = false;
  const Zero3Communication once = zero3_communication(in, {});
  EXPECT_DOUBLE_EQ(once.exposed, 3.25);
  EXPECT_DOUBLE_EQ(once.traffic, 6.0 + 1.0);
  in.gathers_every_micro_batch = true;
  const Zero3Communication every = zero3_communication(in, {});
  EXPECT_DOUBLE_EQ(every.exposed, 7.25);
  EXPECT_DOUBLE_EQ(every.traffic, 18.0 + 1.0);
}

// fmsfsdp-llama2-7b-96xh100's model and cluster (tests/unit/test_zero3_exposed.cpp): 96 H100 on 12 nodes.
Scenario llama7b_96(const char* framework, int zero) {
  return test::scenario(
      std::string("model: {layers: 32, hidden: 4096, heads: 32, kv_heads: 32, ffn_hidden: 11008, vocab: 32000, "
                  "activation: swiglu, norm: rmsnorm, position: rope, tied_embeddings: false, bias: false}\n"
                  "cluster: {preset: dgx-h100, nodes: 12, inter_node: {bandwidth: 100 Gbit/s, nics_per_node: 8}}\n"
                  "training: {framework: ") + framework +
      ", precision: bf16, sequence_length: 4096, global_batch: 192, micro_batch: 2, optimizer: adamw, "
      "flash_attention: true}\n"
      "parallel: {tp: 1, pp: 1, cp: 1, dp: 96, recompute: none, zero: " + std::to_string(zero) + "}\n");
}

StepTime step_of(const Scenario& s) {
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  return step_time(s, g, estimate(s, g), profile_for(s));
}

TEST(ShardGradOp, EachLayerIsAGatherOfItsOwn) {
  // The same bytes as DeepSpeed's ZeRO-2 gather after the optimizer, which is one collective: FSDP's 32
  // units pay 31 more latencies of NCCL's ring over 96 ranks, 11 network hops x 14 us + 84 NVLink hops
  // x 3.4 us = 439.6 us each (docs/model.md §14): 13.63 ms.
  const StepTime fsdp = step_of(llama7b_96("fsdp", 2));
  const StepTime deepspeed = step_of(llama7b_96("deepspeed", 2));
  EXPECT_NEAR(fsdp.dp_gather.value - deepspeed.dp_gather.value, 31 * (11 * 14e-6 + 84 * 3.4e-6), 1e-9);
  // Against ZeRO-3 the exposed part is the same (the ends of the step: the compute hides every layer's
  // gather), but one gather pass less is hidden, so the compute loses that pass's contention less.
  const StepTime zero3 = step_of(llama7b_96("fsdp", 3));
  EXPECT_NEAR(fsdp.exposed.dp.value, zero3.exposed.dp.value, 1e-9);
  EXPECT_NEAR(zero3.overlap_contention.value - fsdp.overlap_contention.value,
              overlap_contention_seconds(fsdp.dp_gather.value), 1e-9);
}

}  // namespace
}  // namespace tp
