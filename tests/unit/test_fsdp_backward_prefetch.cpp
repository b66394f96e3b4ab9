// memory.fsdp_backward_prefetch (docs/model.md §15, "FSDP's backward prefetch"): when FSDP1 issues a
// unit's gather in the backward. Oracles, by hand from the PyTorch FSDP documentation of BackwardPrefetch
// (torch/distributed/fsdp/api.py): BACKWARD_PRE issues the next gather before the current unit's gradient
// computation (overlapped), BACKWARD_POST after it (the gather waits in full; the current unit's
// reduce-scatter, issued after it, overlaps the next computation), None only when the next unit's own
// backward starts, behind the current unit's reduce-scatter on the same process group ("no overlap").
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "hardware_profile.h"
#include "plan.h"
#include "framework_rules.h"
#include "sharded_time.h"
#include "tests/test_support.h"

namespace tp {
namespace {

constexpr double kNoLimit = std::numeric_limits<double>::infinity();

GatherPassInputs backward_pass(BackwardPrefetch prefetch, double reduce, bool whole_layers) {
  // One layer: G = 12 s of gather, C = 18 s of backward compute, `reduce` s of reduce-scatter.
  GatherPassInputs in{GatherPass::backward, kNoLimit, 12.0, 18.0};
  in.layer_reduce = reduce;
  in.whole_layers = whole_layers;
  in.backward_prefetch = prefetch;
  return in;
}

TEST(FsdpBackwardPrefetch, WholeLayerGathersOverlapOnlyWhenPrefetchedBeforeTheComputation) {
  const std::vector<Zero3Module> whole_layer = {{0.0, 1.0, 1.0}};  // one unit: the layer (sharded_time.cpp)
  // pre: the gather (12 s) and the reduce-scatter before it (6 s) hide behind the 18 s of compute.
  PassExposure pre = gather_pass_exposure(whole_layer, backward_pass(BackwardPrefetch::pre, 6.0, true));
  EXPECT_DOUBLE_EQ(pre.prefetched, 12.0);
  EXPECT_DOUBLE_EQ(pre.blocked + pre.excess, 0.0);
  // post: the 12 s gather waits in full; the 6 s reduce-scatter runs behind the next computation.
  PassExposure post = gather_pass_exposure(whole_layer, backward_pass(BackwardPrefetch::post, 6.0, true));
  EXPECT_DOUBLE_EQ(post.blocked, 12.0);
  EXPECT_DOUBLE_EQ(post.reduce_waited + post.excess, 0.0);
  // ... unless it outlasts that computation: a 24 s reduce-scatter holds the next gather 24 - 18 = 6 s.
  EXPECT_DOUBLE_EQ(gather_pass_exposure(whole_layer, backward_pass(BackwardPrefetch::post, 24.0, true)).excess, 6.0);
  // none: the gather waits in full behind the 6 s reduce-scatter of the layer after it.
  PassExposure none = gather_pass_exposure(whole_layer, backward_pass(BackwardPrefetch::none, 6.0, true));
  EXPECT_DOUBLE_EQ(none.blocked, 12.0);
  EXPECT_DOUBLE_EQ(none.reduce_waited, 6.0);
}

TEST(FsdpBackwardPrefetch, SubmoduleUnitsWaitBehindTheUnitBefore) {
  // A GPT layer's units by parameters: qkv 3/12, proj 1/12, fc1 4/12, fc2 4/12 (Narayanan et al. 2021,
  // eq. 2). Backward order fc2, fc1, proj, qkv; each unit's gather follows the backward of the unit after
  // it (fc2's: the next layer's qkv).
  const std::vector<Zero3Module> layer = {{3, 0.25, 0.25}, {1, 1.0 / 12, 1.0 / 12}, {4, 1.0 / 3, 1.0 / 3}, {4, 1.0 / 3, 1.0 / 3}};
  // none: all 12 s of gathers wait, each behind the reduce-scatter of the unit before it: qkv's (next
  // layer) 1.5 + fc2's 2 + fc1's 2 + proj's 0.5 = 6 s of the 6 s layer reduce-scatter; qkv's 1.5 s is the
  // previous layer's, the boundary the step's last reduce-scatter is counted against.
  const PassExposure none = gather_pass_exposure(layer, backward_pass(BackwardPrefetch::none, 6.0, false));
  EXPECT_DOUBLE_EQ(none.blocked, 12.0);
  EXPECT_DOUBLE_EQ(none.prefetched, 0.0);
  EXPECT_DOUBLE_EQ(none.reduce_waited, 6.0);
  EXPECT_DOUBLE_EQ(none.boundary_reduce_waited, 1.5);
  // post with a 60 s layer reduce-scatter: each gather also waits for what is left of the reduce-scatter
  // of the unit two after it once the unit after it has computed: fc2 behind proj's 5 s past qkv's
  // 4.5 s: 0.5; fc1 behind qkv's 15 past fc2's 6: 9; proj behind fc2's 20 past fc1's 6: 14; qkv behind
  // fc1's 20 past proj's 1.5: 18.5. 42 s, and no reduce-scatter waited before a gather.
  const PassExposure post = gather_pass_exposure(layer, backward_pass(BackwardPrefetch::post, 60.0, false));
  EXPECT_DOUBLE_EQ(post.blocked, 12.0);
  EXPECT_DOUBLE_EQ(post.reduce_waited, 0.0);
  EXPECT_NEAR(post.excess, 42.0, 1e-12);
  // pre: every gather prefetched, hidden behind the unit before it with the reduce-scatter beside it.
  const PassExposure pre = gather_pass_exposure(layer, backward_pass(BackwardPrefetch::pre, 6.0, false));
  EXPECT_DOUBLE_EQ(pre.blocked, 0.0);
  EXPECT_DOUBLE_EQ(pre.prefetched, 12.0);
}

TEST(FsdpBackwardPrefetch, LessPrefetchNeverShortensTheStepAndLeavesMemoryAlone) {
  // Property on a communication-heavy FSDP step (16 A100 over 25 Gbit/s, whole-layer and submodule
  // units): none >= post >= pre in step time; the memory holds the forward's unit ahead in every mode.
  const std::string base =
      "model: {layers: 8, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000}\n"
      "cluster: {preset: dgx-a100, nodes: 2, inter_node: {bandwidth: 25 Gbit/s}}\n"
      "training: {framework: fsdp, sequence_length: 2048, global_batch: 32, micro_batch: 1}\n"
      "parallel: {dp: 16, zero: 3, recompute: full}\n";
  for (const char* unit : {"layer", "submodule"}) {
    double previous = 0, memory = -1;
    for (const char* prefetch : {"pre", "post", "none"}) {
      const Scenario s =
          test::scenario(base + "memory: {fsdp_version: 1, fsdp_unit: " + unit + ", fsdp_backward_prefetch: " + prefetch + "}\n");
      const Plan p = make_plan(s, default_profile(s.cluster.gpu));
      EXPECT_GE(p.time.step.value, previous) << unit << " " << prefetch;
      previous = p.time.step.value;
      if (memory >= 0) {
        EXPECT_DOUBLE_EQ(p.estimate.memory.total.value, memory) << unit << " " << prefetch;
      }
      memory = p.estimate.memory.total.value;
    }
  }
}

}  // namespace
}  // namespace tp
