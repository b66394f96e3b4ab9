// ZeRO-3 gathers per module (planner/sharded_time.h), by hand computation.
// Oracle: DeepSpeed's prefetch rule (deepspeed/runtime/zero/partitioned_param_coordinator.py,
// fetch_sub_module): after a module's weights are gathered, the next ones are prefetched only while
// fewer than stage3_max_live_parameters (1e9, runtime/zero/config.py) are gathered; a GPT layer's
// Linear weights are 3h^2 (qkv), h^2 (proj), 4h^2 (fc1), 4h^2 (fc2) (Narayanan et al. 2021, eq. 2).
#include <gtest/gtest.h>

#include <limits>

#include "estimate.h"
#include "framework_rules.h"
#include "hardware_profile.h"
#include "sharded_time.h"
#include "step_time.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// Dense layers: a module's share of the gather bytes and of the compute are both its share of 12 h^2.
std::vector<Zero3Module> gpt_layer(double h) {
  const double h2 = h * h;
  return {{3 * h2, 3.0 / 12, 3.0 / 12}, {h2, 1.0 / 12, 1.0 / 12}, {4 * h2, 4.0 / 12, 4.0 / 12}, {4 * h2, 4.0 / 12, 4.0 / 12}};
}

// One pass of `pass` over a layer with gather G, compute C, a live-parameter limit, a reuse distance and
// a layer's reduce-scatter R.
PassExposure pass_over(std::span<const Zero3Module> modules, GatherPass pass, double limit, double G, double C,
                       double reuse = 0, double R = 0) {
  GatherPassInputs in{pass, limit, G, C};
  in.reuse_limit = reuse;
  in.layer_reduce = R;
  return gather_pass_exposure(modules, in);
}
// The same over whole-layer units (FSDP units of one layer: no live limit, one unit per layer).
PassExposure whole_layer_pass(GatherPass pass, double G, double C, double R = 0) {
  GatherPassInputs in{pass, std::numeric_limits<double>::infinity(), G, C};
  in.layer_reduce = R;
  in.whole_layers = true;
  return gather_pass_exposure(gpt_layer(12288), in);
}
constexpr GatherPass kForward = GatherPass::forward, kBackward = GatherPass::backward;

TEST(ShardedTime, GptLayerModulesFromTheOpGraph) {
  // GPT-3 175B shape: one layer's GEMM weights are 12 h^2 = 1.81e9, qkv a quarter of them.
  const Scenario s = test::scenario(
      "model: {layers: 96, hidden: 12288, heads: 96, ffn_hidden: 49152, vocab: 50304, bias: false}\n"
      "cluster: {preset: dgx-a100, nodes: 1}\n"
      "training: {sequence_length: 2048, global_batch: 8, micro_batch: 1}\n");
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Zero3Modules all = zero3_modules(g.layer, 1, 1, framework_rules(Framework::deepspeed).zero3_persistence_threshold);
  const std::span<const Zero3Module> mods = all.view();
  double params = 0, share = 0;
  for (const Zero3Module& m : mods) {
    params += m.parameters;
    share += m.gather_share;
  }
  EXPECT_NEAR(params, 12.0 * 12288 * 12288, 1e-6 * params);
  EXPECT_NEAR(share, 1.0, 1e-12);
  EXPECT_NEAR(mods.front().parameters, 3.0 * 12288 * 12288, 1e3);
}

TEST(ShardedTime, Gpt2TLayerWaitsForEveryGather) {
  // h = 32768: the smallest module (proj) holds 1.07e9 >= 1e9 parameters, so nothing is ever prefetched:
  // the whole layer's gather (12 s here) waits in both passes, none is overlapped.
  for (GatherPass pass : {kForward, kBackward}) {
    const PassExposure e = pass_over(gpt_layer(32768), pass, 1e9, 12.0, 6.0);
    EXPECT_DOUBLE_EQ(e.blocked, 12.0);
    EXPECT_DOUBLE_EQ(e.prefetched, 0.0);
    EXPECT_DOUBLE_EQ(e.excess, 0.0);
  }
}

TEST(ShardedTime, Gpt530BLayerPrefetchesOnlyBehindProj) {
  // h = 20480: qkv 1.26e9, proj 0.42e9, fc1 and fc2 1.68e9. Layer gather G = 12 s, compute C = 6 s.
  // Forward qkv, proj, fc1, fc2: only fc1 follows a module under 1e9 (proj): blocked 3 + 1 + 4 = 8 s;
  // fc1 (4 s) is prefetched behind proj's 1/12 of C = 0.5 s: 3.5 s beyond it.
  const PassExposure f = pass_over(gpt_layer(20480), kForward, 1e9, 12.0, 6.0);
  EXPECT_DOUBLE_EQ(f.blocked, 8.0);
  EXPECT_DOUBLE_EQ(f.prefetched, 4.0);
  EXPECT_DOUBLE_EQ(f.excess, 3.5);
  // Backward fc2, fc1, proj, qkv (fc2 follows the next layer's qkv): only qkv follows proj: blocked
  // 4 + 4 + 1 = 9 s; qkv (3 s) prefetched behind 0.5 s: 2.5 s beyond it.
  const PassExposure b = pass_over(gpt_layer(20480), kBackward, 1e9, 12.0, 6.0);
  EXPECT_DOUBLE_EQ(b.blocked, 9.0);
  EXPECT_DOUBLE_EQ(b.prefetched, 3.0);
  EXPECT_DOUBLE_EQ(b.excess, 2.5);
}

TEST(ShardedTime, BackwardAfterRecomputeRegathersOnlyReleasedModules) {
  // DeepSpeed with full recompute: the recompute forward fetched qkv, proj, fc1, fc2; the backward then
  // fetches fc2, fc1, proj, qkv. A module is kept when the parameters its trace entries fetch between
  // its two uses stay within the reuse distance (partitioned_param_coordinator.py __params_to_release:
  // the walk over __submodule_order counts every entry, so a later module counts twice, for its
  // recompute and for its backward). fc2 comes right back (nothing fetched: kept); fc1 after fc2's
  // two entries, 2 x 4h^2; proj after 2 x 8h^2; qkv after 2 x 9h^2.
  // h = 20480, G = 12 s, C = 6 s: fc1 (2 x 1.68e9 > 1e9) gathered again; fc1 and proj wait (4 + 1 s,
  // after fc2 and fc1, each of 1.68e9 >= the live limit 1e9), qkv (3 s) is prefetched behind proj's
  // 0.5 s: 2.5 s beyond it.
  const PassExposure b = pass_over(gpt_layer(20480), kBackward, 1e9, 12.0, 6.0, 1e9);
  EXPECT_DOUBLE_EQ(b.blocked, 5.0);
  EXPECT_DOUBLE_EQ(b.prefetched, 3.0);
  EXPECT_DOUBLE_EQ(b.excess, 2.5);
  // h = 12288: fc2 kept; fc1 after 2 x 0.604e9 = 1.21e9 > 1e9 fetched: gathered again, as are proj and
  // qkv, all prefetched (the module before each holds under 1e9): 8/12 of G.
  const PassExposure s = pass_over(gpt_layer(12288), kBackward, 1e9, 12.0, 6.0, 1e9);
  EXPECT_DOUBLE_EQ(s.blocked, 0.0);
  EXPECT_DOUBLE_EQ(s.prefetched, 8.0);
  // With the Azure recipes' 3e9 (Megatron-DeepSpeed examples/azure/run-175b.sh): fc1 (1.21e9), proj
  // (2 x 0.755e9 = 1.51e9) and qkv (2 x 0.906e9 = 1.81e9) are all kept; nothing is gathered again.
  EXPECT_DOUBLE_EQ(pass_over(gpt_layer(12288), kBackward, 1e9, 12.0, 6.0, 3e9).prefetched, 0.0);
  EXPECT_DOUBLE_EQ(framework_rules(Framework::deepspeed).zero3_reuse_distance, 1e9);
  EXPECT_DOUBLE_EQ(framework_rules(Framework::fsdp).zero3_reuse_distance, 0.0);
}

TEST(ShardedTime, ReuseDistanceCountsTheRecomputeAndTheBackwardFetches) {
  // fc1 of a GPT layer is kept exactly while fc2's two fetches (recompute, backward), 2 x 4h^2, stay
  // within the distance (DeepSpeed breaks its walk only once the count exceeds it).
  const std::vector<Zero3Module> layer = gpt_layer(10000);  // fc2: 4e8 parameters
  EXPECT_TRUE(zero3_kept_for_backward(layer, 2, 8e8));
  EXPECT_FALSE(zero3_kept_for_backward(layer, 2, 7.99e8));
  EXPECT_TRUE(zero3_kept_for_backward(layer, 3, 1.0));   // the last module: nothing between its uses
  EXPECT_FALSE(zero3_kept_for_backward(layer, 3, 0.0));  // 0: every module released (FSDP)
}

TEST(ShardedTime, ExpertParallelGathersOnlyTheLocalExpertsSoTheirModulesStayUnderTheLimit) {
  // Mixtral 8x22B shape (HF mistralai/Mixtral-8x22B-v0.1 config.json: h 6144, 48 heads, 8 KV heads of
  // 128, 8 experts of 16384, top 2), tp 1, DeepSpeed. Per GPU: qkv 6144 x 8192 = 50,331,648; proj
  // 6144^2 = 37,748,736; expert fc1 8/ep x 6144 x 32768, fc2 8/ep x 16384 x 6144.
  // ep 1: fc1 holds 1.61e9 >= 1e9, so fc2's gather (805,306,368 of 2,503,999,488 gathered) waits in the
  // forward. ep 8: fc1 holds 0.20e9, nothing waits.
  const Scenario s = test::scenario(
      "model: {layers: 2, hidden: 6144, heads: 48, kv_heads: 8, ffn_hidden: 16384, vocab: 32768, "
      "activation: swiglu, norm: rmsnorm, moe: {experts: 8, top_k: 2}}\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 4096, global_batch: 8, micro_batch: 1}\n");
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const double threshold = framework_rules(Framework::deepspeed).zero3_persistence_threshold;
  const Zero3Modules one = zero3_modules(g.layer, 1, 1, threshold);
  const PassExposure f1 = pass_over(one.view(), kForward, 1e9, 12.0, 6.0);
  EXPECT_NEAR(f1.blocked, 12.0 * 805306368.0 / 2503999488.0, 1e-9);
  const Zero3Modules eight = zero3_modules(g.layer, 1, 8, threshold);
  EXPECT_DOUBLE_EQ(eight.largest, 6144.0 * 32768.0);
  EXPECT_DOUBLE_EQ(pass_over(eight.view(), kForward, 1e9, 12.0, 6.0).blocked, 0.0);
}

TEST(ShardedTime, BlockedGatherWaitsBehindTheReduceScatterBeforeIt) {
  // h = 32768, backward: every gather is blocked and waits behind the reduce-scatter of the module
  // before it, so the whole layer's reduce-scatter (here 6 s) waits; forward passes have none.
  const PassExposure b = pass_over(gpt_layer(32768), kBackward, 1e9, 12.0, 6.0, 0.0, 6.0);
  EXPECT_DOUBLE_EQ(b.reduce_waited, 6.0);
  const PassExposure f = pass_over(gpt_layer(32768), kForward, 1e9, 12.0, 6.0);
  EXPECT_DOUBLE_EQ(f.reduce_waited, 0.0);
}

TEST(ShardedTime, Gpt175BLayerPrefetchesEverything) {
  // h = 12288: the largest module (fc1, 0.60e9) is under 1e9: every gather is prefetched.
  const PassExposure f = pass_over(gpt_layer(12288), kForward, 1e9, 1.2, 12.0);
  EXPECT_DOUBLE_EQ(f.blocked, 0.0);
  EXPECT_DOUBLE_EQ(f.prefetched, 1.2);
  // Each gather (G x share) is below the module before it (C x share): 0.1 x 4 = 0.4 s against
  // proj's 1.0 s for fc1, etc.
  EXPECT_DOUBLE_EQ(f.excess, 0.0);
}

TEST(ShardedTime, FsdpPrefetchesWholeLayersWithoutLimit) {
  // FSDP: no live-parameter limit; the next layer's gather overlaps the whole layer: exposed beyond it
  // only when G > C (here 12 - 6 = 6 s).
  const double none = std::numeric_limits<double>::infinity();
  const PassExposure e = whole_layer_pass(kForward, 12.0, 6.0);
  EXPECT_DOUBLE_EQ(e.blocked, 0.0);
  EXPECT_DOUBLE_EQ(e.excess, 6.0);
  EXPECT_TRUE(framework_rules(Framework::fsdp).zero3_whole_layers);
  EXPECT_DOUBLE_EQ(framework_rules(Framework::fsdp).zero3_live_parameters, none);
  EXPECT_FALSE(framework_rules(Framework::deepspeed).zero3_whole_layers);
  EXPECT_DOUBLE_EQ(framework_rules(Framework::deepspeed).zero3_live_parameters, 1e9);
}

TEST(ShardedTime, ScenarioMaxLiveParametersAboveTheModuleLetsItsPrefetchProceed) {
  // h = 20480: qkv 3h^2 = 1.26e9, fc1 and fc2 4h^2 = 1.68e9 each hold >= 1e9 (DeepSpeed's default
  // stage3_max_live_parameters), so the gathers after them wait. memory.zero3_max_live_parameters: 2e9
  // (above every module) lets every gather be prefetched. By hand, forward pass, G = 12 s, C = 6 s:
  // each gather G x share overlaps the module before it, C x share (the layer's first follows the last):
  // proj 1 s behind qkv 1.5 s: 0; fc1 4 s behind proj 0.5 s: 3.5; fc2 4 s behind fc1 2 s: 2;
  // qkv 3 s behind fc2 2 s: 1. Excess 6.5 s, nothing blocked, all 12 s prefetched.
  const std::string base =
      "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 4096, global_batch: 64, micro_batch: 1, framework: deepspeed}\n"
      "parallel: {zero: 3}\n";
  const FrameworkRules& ds = framework_rules(Framework::deepspeed);
  const Zero3Settings raised = zero3_settings_of(ds, test::scenario(base + "memory: {zero3_max_live_parameters: 2e9}\n").memory);
  EXPECT_DOUBLE_EQ(raised.live_parameters, 2e9);
  const PassExposure f = pass_over(gpt_layer(20480), kForward, raised.live_parameters, 12.0, 6.0);
  EXPECT_DOUBLE_EQ(f.blocked, 0.0);
  EXPECT_DOUBLE_EQ(f.prefetched, 12.0);
  EXPECT_NEAR(f.excess, 6.5, 1e-12);
  // Absent keys: DeepSpeed's defaults, today's values (runtime/zero/config.py).
  const Zero3Settings fallback = zero3_settings_of(ds, test::scenario(base).memory);
  EXPECT_DOUBLE_EQ(fallback.live_parameters, 1e9);
  EXPECT_DOUBLE_EQ(fallback.reuse_distance, 1e9);
  EXPECT_DOUBLE_EQ(fallback.prefetch_parameters, 5e7);
  EXPECT_DOUBLE_EQ(fallback.persistence_threshold, 1e5);
  // With the default the gathers after qkv, fc1 and fc2 wait: proj, fc2 and the next qkv,
  // (1 + 4 + 3)/12 of G = 8 s blocked.
  EXPECT_NEAR(pass_over(gpt_layer(20480), kForward, fallback.live_parameters, 12.0, 6.0).blocked, 8.0, 1e-12);
}

TEST(ShardedTime, ScenarioZero3SettingsReachTheStepTime) {
  // The h = 20480 layers of DeepSpeedStepWaitsAtLeastForItsBlockedGathers below: with the default limit
  // (1e9) (8 + 9)/12 of each layer's gathers wait; memory.zero3_max_live_parameters: 2e9 lets every
  // gather prefetch behind compute, so the step's exposed data-parallel time must fall.
  const std::string base =
      "model: {layers: 4, hidden: 20480, heads: 128, ffn_hidden: 81920, vocab: 50304, bias: false}\n"
      "cluster: {preset: dgx-a100, nodes: 8}\n"
      "training: {framework: deepspeed, precision: fp16, sequence_length: 1024, global_batch: 128, micro_batch: 1}\n"
      "parallel: {tp: 1, pp: 1, zero: 3, recompute: none}\n";
  const auto exposed_dp = [](const Scenario& s) {
    const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
    const Estimate e = estimate(s, g);
    return step_time(s, g, e, profile_for(s)).exposed.dp.value;
  };
  const double defaults = exposed_dp(test::scenario(base));
  const double raised = exposed_dp(test::scenario(base + "memory: {zero3_max_live_parameters: 2e9}\n"));
  EXPECT_LT(raised, defaults);
  // Given explicitly at DeepSpeed's default value, the output is today's.
  EXPECT_DOUBLE_EQ(exposed_dp(test::scenario(base + "memory: {zero3_max_live_parameters: 1e9}\n")), defaults);
}

TEST(ShardedTime, StepExposureAddsWaitedGathersToTheBoundedOverlap) {
  // 2 micro-batches, 10 layers, gather pass 24 s (2.4 s per layer), reduce-scatter 12 s, forward 60 s
  // and backward 120 s per micro-batch. h = 20480 under DeepSpeed: per layer and micro-batch the
  // blocked gathers are 8/12 + 9/12 of 2.4 s = 3.4 s -> 2 x 10 x 3.4 = 68 s waited; the prefetched
  // ones (7/12 x 2.4 = 1.4 s per layer, 28 s) and the reduce-scatter (12 s) fit in 360 s of compute, but
  // fc1's gather (4/12 x 2.4 = 0.8 s) overlaps only proj's 1/12 of the 6 s layer forward (0.5 s): 0.3 s
  // beyond it per layer and micro-batch, 6 s in all (qkv's 0.6 s in backward hides behind proj's 1.0 s).
  Zero3Inputs in;
  in.micro_batches = 2;
  in.layers = 10;
  in.gather_pass = 24;
  in.reduce = 12;
  in.forward = 60;
  in.backward = 120;
  in.live_limit = 1e9;
  // In the backward the blocked gathers of fc2, fc1 and proj also wait behind the reduce-scatter of the
  // module before each (qkv of the next layer, fc2, fc1: 3 + 4 + 4 = 11/12 of a layer's 1.2 s), once
  // per step: 10 x 1.1 = 11 s. Of these, the first layer's qkv reduce-scatter (0.3 s) has no layer
  // after it: it is the step's last reduce-scatter, exposed at the end instead of waited, already
  // counted once. The step's first gather (qkv, after fc2's 1.68e9: blocked) is among the waited ones.
  EXPECT_NEAR(zero3_exposed(in, gpt_layer(20480)), 68.0 + 11.0 + 6.0, 1e-9);
  // Traffic, hidden or not: 2 micro-batches x 2 passes x 24 s of gathers + 12 s of reduce-scatter.
  EXPECT_NEAR(zero3_communication(in, gpt_layer(20480)).traffic, 2 * 2 * 24.0 + 12.0, 1e-9);
  // The same under FSDP (no limit): everything overlaps 360 s of compute except at the ends of the
  // step: the first layer's gather (2.4 s) has nothing before it to overlap and the last layer's
  // reduce-scatter (1.2 s, whole-layer units) nothing after it.
  in.whole_layers = true;
  in.live_limit = std::numeric_limits<double>::infinity();
  EXPECT_NEAR(zero3_exposed(in, gpt_layer(20480)), 2.4 + 1.2, 1e-9);
  // DeepSpeed reduce-scatters after both backwards: 24 s of reduce-scatter given, 12 s per backward,
  // so the blocked gathers wait behind 2 x 11 = 22 s of it (FSDP back to the once-per-step case below).
  in.whole_layers = false;
  in.live_limit = 1e9;
  in.reduce = 24;
  in.reduce_every_micro_batch = true;
  EXPECT_NEAR(zero3_exposed(in, gpt_layer(20480)), 68.0 + 22.0 + 6.0, 1e-9);
  in.reduce = 12;
  in.reduce_every_micro_batch = false;
  in.whole_layers = true;
  in.live_limit = std::numeric_limits<double>::infinity();
  // Not overlapped at all: the 2 x 2 x 24 s of gathers wait, each backward one behind the reduce-scatter the
  // layer after it issued on the same stream (9 x 1.2 s, hidden until 2026-12-01), and the last layer's 1.2 s.
  in.overlap_gather = false;
  EXPECT_NEAR(zero3_exposed(in, gpt_layer(20480)), 96.0 + 9 * 1.2 + 1.2, 1e-9);
}

TEST(ShardedTime, RecomputeGatherWaitsBehindTheReduceScatterOfTheLayerBefore) {
  // DeepSpeed full recompute, h = 20480 (qkv 1.26e9, proj 0.42e9, fc1 and fc2 1.68e9), G = 12 s,
  // C = 6 s (recompute forward), R = 6 s (one layer's reduce-scatter). The recompute of a layer starts
  // right after the backward of the next layer's qkv, over the live-parameter limit: qkv's gather is
  // issued only then, behind that qkv's gradient reduce-scatter (3/12 of R = 1.5 s) on the same stream.
  // Blocked: qkv 3 (after qkv), proj 1 (after qkv), fc2 4 (after fc1) = 8 s; fc1 (4 s) prefetched
  // behind proj's 0.5 s: 3.5 s beyond it.
  GatherPassInputs in{GatherPass::recompute, 1e9, 12.0, 6.0};
  in.layer_reduce = 6.0;
  in.layer_backward = 12.0;
  const PassExposure r = gather_pass_exposure(gpt_layer(20480), in);
  EXPECT_DOUBLE_EQ(r.blocked, 8.0);
  EXPECT_DOUBLE_EQ(r.reduce_waited, 1.5);
  EXPECT_DOUBLE_EQ(r.boundary_reduce_waited, 1.5);
  EXPECT_DOUBLE_EQ(r.prefetched, 4.0);
  EXPECT_DOUBLE_EQ(r.excess, 3.5);
  // h = 12288 (175B): every module is under 1e9, so every gather is prefetched and none waits for a
  // reduce-scatter. qkv (3 s) overlaps the next layer's qkv backward (3/12 of the 12 s layer backward
  // = 3 s) together with the reduce-scatter of that layer's proj (issued just before it, 1/12 of R =
  // 0.5 s): 0.5 s beyond it; proj (1 s) overlaps qkv's recompute (1.5 s) with qkv's reduce-scatter
  // (1.5 s): 1 s beyond; fc1 4 s behind proj's 0.5 s: 3.5 s; fc2 4 s behind fc1's 2 s: 2 s.
  const PassExposure s = gather_pass_exposure(gpt_layer(12288), in);
  EXPECT_DOUBLE_EQ(s.blocked, 0.0);
  EXPECT_DOUBLE_EQ(s.reduce_waited, 0.0);
  EXPECT_DOUBLE_EQ(s.prefetched, 12.0);
  EXPECT_DOUBLE_EQ(s.excess, 0.5 + 1.0 + 3.5 + 2.0);
}

TEST(ShardedTime, PrefetchedBackwardGatherSharesItsWindowWithAReduceScatter) {
  // A prefetched backward gather is issued when the piece two before it ends, right after that
  // piece's reduce-scatter, and both run on the stream while the piece just before it computes.
  // FSDP (whole layers): G = 12 s, R = 6 s, layer backward 15 s: 12 + 6 - 15 = 3 s beyond it; in a
  // backward that does not reduce-scatter (FSDP's earlier micro-batches) 12 < 15: none.
  EXPECT_DOUBLE_EQ(whole_layer_pass(kBackward, 12.0, 15.0, 6.0).excess, 3.0);
  EXPECT_DOUBLE_EQ(whole_layer_pass(kBackward, 12.0, 15.0).excess, 0.0);
  // DeepSpeed, h = 12288 (all prefetched), G = 12 s, layer backward C = 12 s, R = 6 s. Backward order
  // fc2, fc1, proj, qkv; gather k shares the window of module k + 1 with the reduce-scatter of k + 2:
  //  fc2 (4) behind qkv (3 s, next layer) with proj's (next layer) 0.5 s: 1.5 s beyond;
  //  fc1 (4) behind fc2 (4 s) with qkv's (next layer) 1.5 s: 1.5 s; proj (1) behind fc1 (4 s) with
  //  fc2's 2 s: none; qkv (3) behind proj (1 s) with fc1's 2 s: 4 s. 7 s in all (without the
  //  reduce-scatters: 1 + 0 + 0 + 2 = 3 s).
  EXPECT_DOUBLE_EQ(pass_over(gpt_layer(12288), kBackward, 1e9, 12.0, 12.0, 0.0, 6.0).excess, 7.0);
  EXPECT_DOUBLE_EQ(pass_over(gpt_layer(12288), kBackward, 1e9, 12.0, 12.0).excess, 3.0);
  // h = 20480: qkv is prefetched behind proj, but proj's own gather was blocked behind fc1 (over the
  // limit), so fc1's reduce-scatter was waited before proj ran, not in qkv's window: 3 - 1 = 2 s.
  EXPECT_DOUBLE_EQ(pass_over(gpt_layer(20480), kBackward, 1e9, 12.0, 12.0, 0.0, 6.0).excess, 2.0);
}

TEST(ShardedTime, StepWithRegatheringRecomputeWaitsForEveryLayersQkvReduce) {
  // 10 layers, one micro-batch, gather pass 24 s (2.4 s per layer), reduce-scatter 12 s (1.2 s per
  // layer), forward 60 s, backward 180 s with the recompute (6 s, 12 s and 6 s per layer), h = 20480
  // under DeepSpeed with full recompute. Per layer, by hand (shares 3, 1, 4, 4 of 12):
  //  forward: blocked qkv, proj, fc2 = 1.6 s; fc1 0.8 s prefetched behind proj's 0.5 s: excess 0.3 s;
  //  recompute: blocked qkv (after the next layer's qkv backward), proj, fc2 = 1.6 s, waiting behind
  //   that qkv's reduce-scatter 0.3 s; fc1 prefetched, excess 0.3 s;
  //  backward: fc2 kept; fc1 (after fc2) and proj (after fc1) blocked, 1.0 s, waiting behind the
  //   reduce-scatters of fc2 and fc1 (0.4 + 0.4 s); qkv 0.6 s prefetched behind proj's 1.0 s.
  // Waited: 10 x (1.6 + 1.6 + 1.0) = 42 s of gathers and 10 x (0.3 + 0.8) = 11 s of reduce-scatter;
  // excess 10 x 0.6 = 6 s; hidden 10 x 2.2 + 12 - 11 = 23 s within 240 s of compute. The last qkv
  // reduce-scatter (0.3 s) is the tenth counted wait: nothing more at the end. 42 + 11 + 6 = 59 s,
  // against 56 s when the recompute's qkv gather is not seen waiting.
  Zero3Inputs in;
  in.layers = 10;
  in.gather_pass = 24;
  in.reduce = 12;
  in.forward = 60;
  in.backward = 180;
  in.live_limit = 1e9;
  in.recompute_pass = true;
  in.reuse_limit = 1e9;
  EXPECT_NEAR(zero3_exposed(in, gpt_layer(20480)), 42.0 + 11.0 + 6.0, 1e-9);
  // The traffic behind it (what the overlap contention charges), by hand: per layer the forward and the
  // recompute gather all 2.4 s, the backward only fc1, proj and qkv ((4 + 1 + 3)/12 x 2.4 = 1.6 s; fc2
  // is kept): 10 x 6.4 = 64 s, plus the 12 s reduce-scatter = 76 s, not 3 full passes (84 s).
  EXPECT_NEAR(zero3_communication(in, gpt_layer(20480)).traffic, 64.0 + 12.0, 1e-9);
}

TEST(ShardedTime, DeepSpeedStepWaitsAtLeastForItsBlockedGathers) {
  // GPT layers with h = 20480 on 64 GPUs under DeepSpeed ZeRO-3: per micro-batch, 8/12 of the layers'
  // gather waits in the forward pass and 9/12 in the backward pass (hand count above), so the step's
  // exposed DP time is at least (8 + 9)/12 x m x the layers' share of one gather pass.
  const Scenario s = test::scenario(
      "model: {layers: 4, hidden: 20480, heads: 128, ffn_hidden: 81920, vocab: 50304, bias: false}\n"
      "cluster: {preset: dgx-a100, nodes: 8}\n"
      "training: {framework: deepspeed, precision: fp16, sequence_length: 1024, global_batch: 128, micro_batch: 1}\n"
      "parallel: {tp: 1, pp: 1, zero: 3, recompute: none}\n");
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Estimate e = estimate(s, g);
  const StepTime t = step_time(s, g, e, profile_for(s));
  const double m = static_cast<double>(e.micro_batches);
  // The gather pass covers the embedding too; the blocked share applies to the layers' GEMMs only:
  // 4 layers x 12 h^2 of the stage's parameters.
  const double layer_share = 4 * 12.0 * 20480 * 20480 / e.parameters_total;
  const double gather_pass = t.dp_gather.value;
  EXPECT_GE(t.exposed.dp.value, (8.0 + 9.0) / 12.0 * m * gather_pass * layer_share * 0.999);
}

}  // namespace
}  // namespace tp

namespace tp {
namespace {

TEST(ShardedTime, AddingGpusKeepsDeepSpeedWaitedGathersAboveTheLinkBound) {
  // Issue 10's property with DeepSpeed's limit in play: GPT layers of h = 20480 (modules of >= 1e9
  // parameters), a fixed global batch of 512 sequences, 64 to 512 GPUs on nodes of 8 x 200 Gb/s NICs.
  // Each node receives (n - 8)/n x 2P bytes per gather pass (two passes per micro-batch) and sends as
  // much per reduce-scatter through 200 GB/s of NICs; exposed >= that / 200 GB/s - compute, and the
  // waited part alone >= (8 + 9)/12 of the layers' gather passes (hand count above), at every size.
  for (int gpus : {64, 128, 256, 512}) {
    const Scenario s = test::scenario(
        "model: {layers: 8, hidden: 20480, heads: 128, ffn_hidden: 81920, vocab: 50304, bias: false}\n"
        "cluster: {preset: dgx-a100, nodes: " + std::to_string(gpus / 8) +
        ", inter_node: {bandwidth: 200 Gbit/s, nics_per_node: 8}}\n"
        "training: {framework: deepspeed, precision: fp16, sequence_length: 1024, global_batch: 512, micro_batch: 1}\n"
        "parallel: {tp: 1, pp: 1, zero: 3, recompute: none}\n");
    const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
    const Estimate e = estimate(s, g);
    const StepTime t = step_time(s, g, e, profile_for(s));
    const double n = gpus, p = e.parameters_total, m = static_cast<double>(e.micro_batches);
    const double traffic = (n - 8) / n * p * (2.0 * 2.0 * m + 2.0);
    const double compute = (t.compute + t.recompute).value;
    EXPECT_GE(t.exposed.dp.value, traffic / 200e9 - compute) << gpus << " GPUs";
    const double layer_share = 8 * 12.0 * 20480 * 20480 / p;
    EXPECT_GE(t.exposed.dp.value, 17.0 / 12.0 * m * t.dp_gather.value * layer_share * 0.999) << gpus << " GPUs";
  }
}

}  // namespace
}  // namespace tp
