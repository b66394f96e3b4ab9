// Activation memory.
// Oracles:
//  - Korthikanti et al. 2022 (arXiv:2205.05198) Table 2, per layer, 16-bit, with dropout:
//      no parallelism sbh(34 + 5as/h); TP sbh(10 + 24/t + 5as/(ht)); TP+SP sbh(34/t + 5as/(ht));
//      TP + selective sbh(10 + 24/t); TP+SP + selective 34 sbh/t; full recompute 2 sbh.
//  - Seed 001 (reference formulas-seed001.md WE-14, WE-11): GPT-2 XL b=8 s=1024 fp16 -> 71.72 GB
//    over 48 layers; 7B (h 4096, 32 heads, 32 layers) s=2048 b=1 -> 30.6 GB.
//  - Ultra-Scale Playbook memory widget (reference formulas-seed004... section 5.3):
//    the S002 state -> 2,298,583,449,600 B of activations; the "Llama 3 8B" preset ->
//    65,592,426,496 B of activations and 170,716,102,656 B in all.
#include <gtest/gtest.h>

#include <cmath>

#include "estimate.h"
#include "plan.h"
#include "hardware_profile.h"
#include "step_time.h"
#include "tests/op_lookup.h"
#include "tests/test_support.h"

namespace tp {
namespace {

// Megatron 22B shape (Korthikanti Table 3): h 6144, 64 heads, GELU 4h, dropout.
const char* kGpt22b =
    "model: megatron-22b\n"
    "cluster: {preset: dgx-a100, nodes: 1}\n"
    "training: {sequence_length: 2048, global_batch: 8, micro_batch: 1, precision: fp16, flash_attention: false}\n";

double layer_bytes(int tp, bool sp, const std::string& recompute) {
  Scenario s = test::scenario(kGpt22b, {"parallel.tp=" + std::to_string(tp), "parallel.pp=1",
                                        "parallel.sequence_parallel=" + std::string(sp ? "true" : "false"),
                                        "parallel.recompute=" + recompute});
  OpGraph g = build_op_graph(s.model, s.training.sequence_length, s.training.precision, s.training.flash_attention);
  return layer_activation_bytes(s, g).value;
}

TEST(KorthikantiTable2, EveryRowForSeveralTensorParallelDegrees) {
  const double s = 2048, b = 1, h = 6144, a = 64;
  const double sbh = s * b * h;
  for (int t : {1, 2, 4, 8}) {
    SCOPED_TRACE("t = " + std::to_string(t));
    if (t == 1) {
      EXPECT_DOUBLE_EQ(layer_bytes(1, false, "none"), sbh * (34 + 5 * a * s / h));
    }
    EXPECT_DOUBLE_EQ(layer_bytes(t, false, "none"), sbh * (10 + 24.0 / t + 5 * a * s / (h * t)));
    EXPECT_DOUBLE_EQ(layer_bytes(t, true, "none"), sbh * (34.0 / t + 5 * a * s / (h * t)));
    EXPECT_DOUBLE_EQ(layer_bytes(t, false, "selective"), sbh * (10 + 24.0 / t));
    EXPECT_DOUBLE_EQ(layer_bytes(t, true, "selective"), sbh * 34.0 / t);
    EXPECT_DOUBLE_EQ(layer_bytes(t, false, "full"), sbh * 2);
  }
}

double layers_total(const std::string& model, int layers, int seq, int batch) {
  Scenario s = test::scenario("model: " + model +
                              "\ncluster: {preset: dgx-a100, nodes: 1, gpus_per_node: 1}\n"
                              "training: {sequence_length: " + std::to_string(seq) + ", global_batch: " +
                              std::to_string(batch) + ", micro_batch: " + std::to_string(batch) +
                              ", precision: fp16, flash_attention: false}\nparallel: {tp: 1, pp: 1}\n");
  OpGraph g = build_op_graph(s.model, s.training.sequence_length, s.training.precision, s.training.flash_attention);
  return layers * layer_activation_bytes(s, g).value;
}

TEST(SeedActivationFigures, Gpt2XlBatch8And4) {
  // 48 x 1024*8*1600*(34 + 5*25*1024/1600) = 71.72 GB (WE-14); batch 4 halves it (35.86 GB, WE-15).
  EXPECT_NEAR(layers_total("gpt2-1.5b", 48, 1024, 8) / 1e9, 71.72, 0.005);
  EXPECT_NEAR(layers_total("gpt2-1.5b", 48, 1024, 4) / 1e9, 35.86, 0.005);
}

TEST(SeedActivationFigures, SevenBillionAtTwoThousandTokens) {
  // Napkin 1.4: "activation factor 57" x 2 bytes = 34 + 5*32*2048/4096 = 114 B per (s b h): 30.6 GB.
  const std::string model = "{layers: 32, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000, "
                            "activation: gelu, dropout: true}";
  EXPECT_NEAR(layers_total(model, 32, 2048, 1) / 1e9, 30.6, 0.05);
}

// The widget's extra SwiGLU tensor, L x s x b x h_ff x bytes per value (hand computation).
constexpr double kWidgetSwigluExtra(double layers, double seq, double batch, double ffn, double bytes) {
  return layers * seq * batch * ffn * bytes;
}

// The widget's model: GPT-style layers with a SwiGLU MLP of width h_ff, dropout, no FlashAttention.
std::string widget_scenario(int heads, int batch, int hidden, int ffn, int layers, int seq, int vocab,
                            const std::string& precision) {
  return "model: {layers: " + std::to_string(layers) + ", hidden: " + std::to_string(hidden) +
         ", heads: " + std::to_string(heads) + ", ffn_hidden: " + std::to_string(ffn) +
         ", vocab: " + std::to_string(vocab) +
         ", activation: swiglu, norm: layernorm, dropout: true, bias: true}\n"
         "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
         "training: {sequence_length: " + std::to_string(seq) + ", global_batch: " + std::to_string(batch) +
         ", micro_batch: " + std::to_string(batch) + ", precision: " + precision +
         ", flash_attention: false}\n"
         "parallel: {tp: 1, pp: 1, zero: 1}\n";
}

TEST(PlaybookWidget, SlideStateActivations) {
  // a=32, b=100, h=4096, h_ff=16384, L=32, s=1024, v=32000, mixed precision off (4-byte values).
  Estimate e = estimate(test::scenario(widget_scenario(32, 100, 4096, 16384, 32, 1024, 32000, "fp32")));
  // The widget keeps three h_ff tensors for SwiGLU (gate, up and silu(gate): the eager chain); Megatron's
  // fused SwiGLU keeps its input only, gate and up (fused_bias_swiglu.py), and fc2 keeps the output. So
  // one h_ff tensor less per layer: L s b h_ff x 4 B = 32 x 1024 x 100 x 16384 x 4 = 214,748,364,800 B.
  EXPECT_DOUBLE_EQ(e.memory.activations.value, 2298583449600.0 - kWidgetSwigluExtra(32, 1024, 100, 16384, 4));
}

TEST(PlaybookWidget, Llama3EightBillionPreset) {
  // a=32, b=32, h=4096, h_ff=16384, L=32, s=256, v=30522, mixed precision on, ZeRO-1 on one GPU.
  Estimate acts = estimate(test::scenario(widget_scenario(32, 32, 4096, 16384, 32, 256, 30522, "bf16")));
  // The widget's 65,592,426,496 B is for the vocabulary as given; Megatron pads 30,522 to 30,592 (239 x 128),
  // whose fp32 logits keep s b (30592 - 30522) x 4 B = 256 x 32 x 70 x 4 = 2,293,760 B more.
  // Less the widget's third SwiGLU tensor (see above): 32 x 256 x 32 x 16384 x 2 B = 8,589,934,592 B.
  const double swiglu_extra = kWidgetSwigluExtra(32, 256, 32, 16384, 2);
  EXPECT_DOUBLE_EQ(acts.memory.activations.value, 65592426496.0 + 256.0 * 32 * 70 * 4 - swiglu_extra);
  // The widget counts parameters GPT-2 style, h(v + s) + L(12h^2 + 13h) + 2h with tied embeddings and
  // learned positions, whatever the MLP; we count that model exactly and add its 16 B/param states.
  Scenario gpt2_style = test::scenario(
      "model: {layers: 32, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 30522, activation: gelu, "
      "norm: layernorm, position: learned, max_positions: 256, tied_embeddings: true, bias: true}\n"
      "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
      "training: {sequence_length: 256, global_batch: 32, micro_batch: 32, precision: bf16, grad_precision: same}\n"
      "parallel: {tp: 1, pp: 1, zero: 1}\n");  // the widget's mixed precision: 16-bit gradients
  Estimate states = estimate(gpt2_style);
  // Megatron's 70 padded vocabulary rows add 70 x 4096 = 286,720 tied parameters at 16 B each.
  EXPECT_DOUBLE_EQ(states.parameters_total, 6570229760.0 + 70.0 * 4096);
  const MemoryBreakdown& m = states.memory;
  const double total = acts.memory.activations.value + (m.weights + m.gradients + m.master_weights + m.optimizer).value;
  EXPECT_DOUBLE_EQ(total, 170716102656.0 + 256.0 * 32 * 70 * 4 + 16.0 * 70 * 4096 - swiglu_extra);
}

TEST(Activations, FlashAttentionDropsTheQuadraticTerm) {
  Scenario s = test::scenario(kGpt22b, {"parallel.tp=1", "parallel.pp=1"});
  OpGraph plain = build_op_graph(s.model, 2048, Precision::fp16, false);
  OpGraph flash = build_op_graph(s.model, 2048, Precision::fp16, true);
  const double sbh = 2048.0 * 6144.0;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, plain).value - layer_activation_bytes(s, flash).value,
                   5.0 * 64 * 2048.0 * 2048.0 - 4.0 * 64 * 2048.0);  // scores out, fp32 log-sum-exp in
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s, flash).value, 34.0 * sbh + 4.0 * 64 * 2048.0);
}

TEST(Activations, InFlightMicroBatchesPerSchedule) {
  // 8 stages, 32 micro-batches: 1F1B holds p - i on stage i, GPipe m, interleaved stage 0
  // L(1 + (p-1)/(p v)) layers' worth (Korthikanti sec. 4.2.3).
  const std::string base = std::string(kGpt22b);
  auto stage_acts = [&](const std::vector<std::string>& sets, int stage) {
    Scenario s = test::scenario(base, sets);
    return estimate(s).stages[static_cast<size_t>(stage)];
  };
  std::vector<std::string> common = {"parallel.tp=1", "parallel.pp=8", "training.global_batch=32",
                                     "parallel.sequence_parallel=false", "parallel.zero=1"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), common.begin(), common.end());
    return extra;
  };
  EXPECT_DOUBLE_EQ(stage_acts(with({"parallel.schedule=1f1b"}), 0).in_flight, 8);
  EXPECT_DOUBLE_EQ(stage_acts(with({"parallel.schedule=1f1b"}), 5).in_flight, 3);
  EXPECT_DOUBLE_EQ(stage_acts(with({"parallel.schedule=gpipe"}), 3).in_flight, 32);
  EXPECT_DOUBLE_EQ(stage_acts(with({"parallel.schedule=interleaved", "parallel.vpp=3"}), 0).in_flight,
                   8.0 * (1.0 + 7.0 / 24.0));
}

TEST(Activations, CheckpointEveryKLayers) {
  // Segment checkpointing: ceil(L/k) stored layer inputs per micro-batch plus k layers recomputed.
  Scenario s = test::scenario(kGpt22b, {"parallel.tp=1", "parallel.pp=1", "parallel.recompute={every: 4}"});
  OpGraph g = build_op_graph(s.model, 2048, Precision::fp16, false);
  const double sbh = 2048.0 * 6144.0;
  const double full_layer = sbh * (34 + 5 * 64 * 2048.0 / 6144.0);
  Estimate e = estimate(s, g);
  // Embedding dropout mask (1 B), final norm input, output-layer input (2 B each), fp32 logits.
  const double head_and_embedding = sbh * (1 + 2 + 2) + 2048.0 * 51200.0 * 4.0;
  // 48 layers / 4 = 12 checkpoints of 2sbh are stored; 4 layers are rebuilt at once (buffers).
  EXPECT_DOUBLE_EQ(e.memory.activations.value, 12 * 2 * sbh + head_and_embedding);
  EXPECT_DOUBLE_EQ(e.memory.buffers.value, 4 * full_layer);
}

TEST(Activations, SwigluKeepsGateAndUpUnderMegatronAndThreeTensorsEager) {
  // Oracle: the frameworks' code. Megatron-Core's fused SwiGLUFunction saves its input, the fc1 output of
  // width 2f (fusions/fused_bias_swiglu.py); eager F.silu(gate) * up keeps gate (silu), silu(gate) and up
  // (mul): 3f. Either way fc2 keeps the f-wide output itself. bf16, s = 1024, f = 11008.
  const std::string model = "{layers: 2, hidden: 4096, heads: 32, ffn_hidden: 11008, vocab: 32000, "
                            "activation: swiglu, norm: rmsnorm, position: rope}";
  auto activation_saved = [&](const std::string& framework) {
    Scenario s = test::scenario("model: " + model + "\ncluster: {preset: dgx-h100, nodes: 1}\n"
                                "training: {sequence_length: 1024, global_batch: 8, micro_batch: 1, framework: " +
                                framework + "}\nparallel: {tp: 1, pp: 1}\n");
    const OpGraph g = build_op_graph(s.model, s.training, 1);
    const Op* swiglu = test::find_layer_op(g, "swiglu");
    return swiglu != nullptr ? swiglu->saved_bytes : -1.0;
  };
  EXPECT_DOUBLE_EQ(activation_saved("megatron"), 1024.0 * 2 * 11008 * 2);
  EXPECT_DOUBLE_EQ(activation_saved("pytorch"), 1024.0 * 3 * 11008 * 2);
}

// One-in-k layer recompute (`parallel.recompute: {one_in: k}`): torchtitan's selective layer activation
// checkpointing, which wraps every k-th transformer block in a full checkpoint and leaves the others alone
// (torchtitan/parallelisms/parallelize_llama.py, checkpoint_wrapper: `_count % every_x_layer == 0`).
// Oracle: hand computation from the per-layer quantities of Korthikanti Table 2 (above).
Scenario with_recompute(const std::string& recompute) {
  return test::scenario(kGpt22b, {"parallel.tp=1", "parallel.pp=1", "parallel.recompute=" + recompute});
}

TEST(OneInRecompute, KeepsEveryKthLayerInputAndTheOthersWhole) {
  const Scenario s = with_recompute("{one_in: 4}");
  const OpGraph g = build_op_graph(s.model, 2048, Precision::fp16, false);
  const double sbh = 2048.0 * 6144.0;
  const double full_layer = sbh * (34 + 5 * 64 * 2048.0 / 6144.0);  // Korthikanti Table 2, no parallelism
  // Embedding dropout mask (1 B), final norm input, output-layer input (2 B each), fp32 logits.
  const double head_and_embedding = sbh * (1 + 2 + 2) + 2048.0 * 51200.0 * 4.0;
  const Estimate e = estimate(s, g);
  // 48 layers: 12 checkpointed (2sbh each), 36 keep everything; one layer is rebuilt at a time.
  EXPECT_DOUBLE_EQ(e.memory.activations.value, 12 * 2 * sbh + 36 * full_layer + head_and_embedding);
  EXPECT_DOUBLE_EQ(e.memory.buffers.value, full_layer);
}

TEST(OneInRecompute, RepeatsTheForwardOfOneLayerInK) {
  const Scenario full = with_recompute("full"), one_in = with_recompute("{one_in: 4}"), none = with_recompute("none");
  const Estimate ef = estimate(full), e4 = estimate(one_in), e0 = estimate(none);
  // FLOPs: 12 of the 48 layer forwards run again, a quarter of full recompute's; model FLOPs unchanged.
  EXPECT_DOUBLE_EQ(e4.flops.recompute_per_step.value, ef.flops.recompute_per_step.value * 12.0 / 48.0);
  EXPECT_DOUBLE_EQ(e4.flops.model_per_step.value, e0.flops.model_per_step.value);
  // Time: a quarter of full recompute's repeated forward; k = 1 is full recompute.
  const StepTime tf = step_time(full, build_op_graph(full.model, full.training, 1), ef, profile_for(full));
  const StepTime t4 = step_time(one_in, build_op_graph(one_in.model, one_in.training, 1), e4, profile_for(one_in));
  ASSERT_GT(tf.recompute.value, 0.0);
  EXPECT_NEAR(t4.recompute.value, tf.recompute.value / 4.0, 1e-12);
  const Scenario one = with_recompute("{one_in: 1}");
  EXPECT_DOUBLE_EQ(estimate(one).memory.activations.value, ef.memory.activations.value);
  // k above the layer count checkpoints nothing: the memory of no recompute.
  EXPECT_DOUBLE_EQ(estimate(with_recompute("{one_in: 64}")).memory.activations.value, e0.memory.activations.value);
}

// The frameworks count one-in-k within the layers a rank builds (torchtitan's counter runs over the blocks
// of the model chunks of one process), and so does the stage's activation memory: time and FLOPs take the
// same count. Hand computation: 48 layers on pp 4 are 12 per stage. k = 5: floor(12 / 5) = 2 of every 12
// layers recomputed, 1/6 of full recompute (before: floor(48 / 5) / 48 = 9/48, while the memory kept 2 per
// stage); k = 16: none, so no recompute time, no FLOPs, and no stranded loss block in the last stage's
// overhead (before: 3/48 of full recompute charged and 0.6 GiB of loss block added for nothing).
TEST(OneInRecompute, CountsTheLayersOfAStageForTimeAsForMemory) {
  auto staged = [](const std::string& recompute) {
    return test::scenario(kGpt22b, {"parallel.tp=1", "parallel.pp=4", "training.global_batch=16",
                                    "parallel.recompute=" + recompute});
  };
  auto plan_of = [](const Scenario& s) { return make_plan(s, profile_for(s)); };
  const Plan full = plan_of(staged("full")), five = plan_of(staged("{one_in: 5}")), none = plan_of(staged("none"));
  const Plan sixteen = plan_of(staged("{one_in: 16}"));
  ASSERT_GT(full.time.recompute.value, 0.0);
  EXPECT_NEAR(five.time.recompute.value, full.time.recompute.value / 6.0, 1e-9 * full.time.recompute.value);
  EXPECT_NEAR(five.estimate.flops.recompute_per_step.value, full.estimate.flops.recompute_per_step.value / 6.0,
              1e-9 * full.estimate.flops.recompute_per_step.value);
  EXPECT_EQ(sixteen.time.recompute.value, 0.0);
  EXPECT_EQ(sixteen.estimate.flops.recompute_per_step.value, 0.0);
  const MemoryBreakdown& last16 = sixteen.estimate.stages.back();
  const MemoryBreakdown& last0 = none.estimate.stages.back();
  EXPECT_DOUBLE_EQ(last16.activations.value, last0.activations.value);
  EXPECT_DOUBLE_EQ(last16.overhead.value, last0.overhead.value);
}

}  // namespace
}  // namespace tp
