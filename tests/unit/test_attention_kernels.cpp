// The fused-attention kernel a framework runs and the one a profile describes (docs/model.md §20,
// "Attention kernels"). Oracles: the frameworks' documented choices (Transformer Engine: cuDNN on Hopper
// and later, FlashAttention-2 before; PyTorch SDPA: FlashAttention-2), hand computation (a run on another
// kernel than its profile's takes the profile's attention compute time / the kernels' ratio), FlashAttention-2's
// published A100 and H100 benchmarks, and the FlashAttention-2 kernels measured in real H100 steps.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "attention_curves.h"
#include "attention_flops.h"
#include "attention_grid.h"
#include "attention_kernel_rules.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "op_times.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const char* kBase =
    "model: llama2-7b\n"
    "cluster: {preset: dgx-h100, nodes: 1, gpus_per_node: 1}\n"
    "training: {sequence_length: 4096, global_batch: 1, micro_batch: 1, precision: bf16}\n"
    "parallel: {tp: 1, pp: 1, zero: 0}\n";

TEST(AttentionKernels, TransformerEngineFollowsTheGenerationSdpaDoesNot) {
  const Scenario h = test::scenario(kBase);
  const Scenario a = test::scenario(kBase, {"cluster.preset=dgx-a100"});
  EXPECT_EQ(attention_kernel_of(Framework::megatron, h.cluster.gpu), AttentionKernel::cudnn);
  EXPECT_EQ(attention_kernel_of(Framework::megatron, a.cluster.gpu), AttentionKernel::flash);
  for (Framework f : {Framework::fsdp, Framework::deepspeed, Framework::pytorch}) {
    EXPECT_EQ(attention_kernel_of(f, h.cluster.gpu), AttentionKernel::flash) << to_string(f);
    EXPECT_EQ(attention_kernel_of(f, a.cluster.gpu), AttentionKernel::flash) << to_string(f);
  }
  for (AttentionKernel k : {AttentionKernel::cudnn, AttentionKernel::flash, AttentionKernel::triton}) {
    EXPECT_TRUE(attention_kernel_speed(k, k).same()) << to_string(k);
  }
  EXPECT_DOUBLE_EQ(attention_kernel_speed(AttentionKernel::flash, AttentionKernel::cudnn).forward *
                       attention_kernel_speed(AttentionKernel::cudnn, AttentionKernel::flash).forward,
                   1.0);
}

// The Triton FlashAttention against FlashAttention-2: FlashAttention-2 is 1.3-1.5x faster in the forward
// pass and 2x in the backward (Dao 2023, §4.1, A100); against a cuDNN profile the two ratios compose.
TEST(AttentionKernels, TritonKernelRatesFromFlashAttention2Paper) {
  const AttentionSpeed t = attention_kernel_speed(AttentionKernel::triton, AttentionKernel::flash);
  EXPECT_GE(1.0 / t.forward, 1.3);
  EXPECT_LE(1.0 / t.forward, 1.5);
  EXPECT_DOUBLE_EQ(1.0 / t.backward, 2.0);
  const AttentionSpeed c = attention_kernel_speed(AttentionKernel::triton, AttentionKernel::cudnn);
  EXPECT_NEAR(c.backward, 0.5 * 0.61, 1e-12);
  EXPECT_NEAR(c.forward, t.forward * 0.61, 1e-12);
}

// The benchmark's forward + backward TFLOP/s that a curve pair predicts on the benchmark's own grid
// (benchmarks/benchmark_flash_attention.py: batch 16k / s, 2048 / d heads; model/attention_grid.h). The
// benchmark counts the backward as 2.5x the forward's FLOPs; trainplan times it at kAttentionBackwardFactor x,
// so a curve pair predicts 3.5 forward FLOPs over the two passes' time.
double benchmark_tflops(const AttentionCurve& fwd, const AttentionCurve& bwd, double s, double d, const GpuSpec& gpu) {
  const double batch_heads = 16384.0 / s * 2048.0 / d, sms = static_cast<double>(gpu.sms);
  const double f = fwd.efficiency(s, d) * attention_grid_balance(batch_heads, s, sms, true, AttentionPass::forward);
  const double b = bwd.efficiency(s, d) * attention_grid_balance(batch_heads, s, sms, true, AttentionPass::backward);
  return gpu.peak_for(Precision::bf16).value / 1e12 * 3.5 / (1.0 / f + kAttentionBackwardFactor / b);
}

// FlashAttention-2's A100 benchmark (Dao 2023, Figure 4 (c) and (d): causal, forward + backward TFLOP/s on
// one A100 80GB SXM4, read from the flash-attention repository's assets/flash2_a100_fwd_bwd_benchmark.png) at
// sequences 512 to 16k and head dims 64 and 128: the published oracle of the A100 defaults' attention curves
// (model/flash_attention_fits.h), read on the benchmark's grids.
TEST(AttentionKernels, TheA100DefaultsReproduceFlashAttention2sBenchmark) {
  constexpr double seqs[] = {512, 1024, 2048, 4096, 8192, 16384};
  constexpr double bars[2][6] = {{88, 119, 140, 156, 165, 171}, {99, 133, 155, 173, 182, 189}};
  const Scenario a100 = test::scenario(kBase, {"cluster.preset=dgx-a100"});
  const HardwareProfile hw = profile_for(a100);
  ASSERT_EQ(hw.attention_kernel, AttentionKernel::flash);
  for (int i = 0; i < 2; ++i) {
    const double d = i == 0 ? 64 : 128;
    for (int j = 0; j < 6; ++j) {
      const double tflops = benchmark_tflops(hw.attention_forward, hw.attention_backward, seqs[j], d, a100.cluster.gpu);
      EXPECT_NEAR(tflops / bars[i][j], 1.0, 0.025) << "d " << d << ", s " << seqs[j];
    }
  }
  // The split between the passes is the earlier flat defaults' 0.55 / 0.40.
  EXPECT_NEAR(hw.attention_forward.max_efficiency / hw.attention_backward.max_efficiency, 0.55 / 0.40, 1e-12);
}

// Times of the layer's fused attention core alone, one GPU, micro-batches of `b` sequences.
OpTimes attention_core_times(const Scenario& s, const HardwareProfile& hw, double b) {
  const OpGraph g = build_op_graph(s.model, s.training, 1);
  std::vector<Op> core;
  for (const Op& op : g.layer) {
    if (op.kind == OpKind::attention_core) core.push_back(op);
  }
  EXPECT_EQ(core.size(), 1u);
  const OpTimeContext c{s, hw, 1, 1, false, b, s.cluster.gpu.peak_for(Precision::bf16).value,
                        attention_peak(s.cluster.gpu, Precision::bf16).value,
                        s.cluster.gpu.memory_bandwidth.value * hw.memory_efficiency};
  return time_ops(core, c);
}

// Forward time of the layer's fused attention core alone, one sequence, less its one launch.
double attention_compute(const Scenario& s, const HardwareProfile& hw) {
  return attention_core_times(s, hw, 1.0).attention - hw.kernel_launch.value;
}

// The attention core runs at its grid's balance (model/attention_grid.h). By hand, Llama 2 7B at micro-batch
// 1 and s = 4,096: 32 sequence-heads x 32 causal tiles = 1,024 blocks of 16,896 tile units. On the H100's
// 132 SMs the schedule ends at 16,896 / 132 + 0.62 x 32 = 147.84 units: balance 16,896 / (132 x 147.84) =
// 0.8658. On 2,000 SMs every block starts at once and the longest, 32 units, ends it: 16,896 / (2,000 x 32)
// = 0.264. The forward's compute time scales by the inverse.
TEST(AttentionKernels, TheCoreRunsAtItsGridsBalance) {
  const Scenario h100 = test::scenario(kBase);
  const Scenario wide = test::scenario(kBase, {"cluster.gpu.sms=2000"});
  const HardwareProfile hw = profile_for(h100);
  const double at132 = 16896.0 / (132 * (16896.0 / 132 + 0.62 * 32)), at2000 = 16896.0 / (2000 * 32.0);
  EXPECT_NEAR(attention_compute(wide, hw) / attention_compute(h100, hw), at132 / at2000, 1e-9);
}

TEST(AttentionKernels, SdpaOnACudnnProfileIsSlowerByTheMeasuredRatio) {
  // A profile of cuDNN curves on a generation without a published FlashAttention-2 curve (B200's defaults):
  // the SDPA run takes the cuDNN run's time / 0.61.
  const Scenario mega = test::scenario(kBase, {"cluster.gpu=b200"});
  const Scenario fsdp = test::scenario(kBase, {"cluster.gpu=b200", "training.framework=fsdp"});
  const HardwareProfile hw = profile_for(mega);
  ASSERT_EQ(hw.attention_kernel, AttentionKernel::cudnn);
  EXPECT_NEAR(attention_compute(fsdp, hw), attention_compute(mega, hw) / 0.61, 1e-12);
}

// FlashAttention-2's H100 benchmark (Dao 2023; the flash-attention repository's
// assets/flash2_h100_fwd_bwd_benchmark.png, (c) and (d): causal, forward + backward TFLOP/s on one H100 80GB
// SXM5) at sequences 512 to 16k and head dims 64 and 128: the published oracle of the curve an SDPA run on
// the committed (cuDNN) H100 profile reads (planner/attention_curves.h, model/flash_attention_fits.h).
TEST(AttentionKernels, SdpaOnTheH100ProfileReproducesFlashAttention2sH100Benchmark) {
  constexpr double seqs[] = {512, 1024, 2048, 4096, 8192, 16384};
  constexpr double bars[2][6] = {{141, 192, 232, 257, 273, 284}, {163, 221, 265, 294, 308, 328}};
  const Scenario fsdp = test::scenario(kBase, {"training.framework=fsdp"});
  const HardwareProfile hw = profile_for(fsdp);
  ASSERT_EQ(hw.attention_kernel, AttentionKernel::cudnn);
  const FusedAttentionCurves c = fused_attention_curves(fsdp.training, fsdp.cluster.gpu, hw);
  ASSERT_TRUE(c.published);
  EXPECT_TRUE(c.speed.same());
  for (int i = 0; i < 2; ++i) {
    const double d = i == 0 ? 64 : 128;
    for (int j = 0; j < 6; ++j) {
      const double tflops = benchmark_tflops(c.forward, c.backward, seqs[j], d, fsdp.cluster.gpu);
      EXPECT_NEAR(tflops / bars[i][j], 1.0, 0.02) << "d " << d << ", s " << seqs[j];
    }
  }
  // MPT's Triton kernel reads the same curve at its rate against FlashAttention-2; Transformer Engine's cuDNN
  // reads the profile's own curves.
  const Scenario triton = test::scenario(kBase, {"training.framework=fsdp", "training.attention_kernel=triton"});
  const FusedAttentionCurves t = fused_attention_curves(triton.training, triton.cluster.gpu, hw);
  EXPECT_TRUE(t.published);
  EXPECT_NEAR(t.speed.forward, 1.0 / 1.4, 1e-12);
  EXPECT_NEAR(t.speed.backward, 0.5, 1e-12);
  const Scenario mega = test::scenario(kBase);
  const FusedAttentionCurves m = fused_attention_curves(mega.training, mega.cluster.gpu, hw);
  EXPECT_FALSE(m.published);
  EXPECT_TRUE(m.speed.same());
  EXPECT_DOUBLE_EQ(m.backward.seq_half, hw.attention_backward.seq_half);
}

// The FlashAttention-2 kernels PyTorch's SDPA ran in three of the real single-H100 training steps
// (shared/validation/h100-pytorch-kernel-time.json, measured with torch.profiler: pytorch_flash::flash_fwd_kernel
// and flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel, kernel time per step), against the planner's time of the
// same layers' attention (the scenarios of scenarios/validation/h100-pytorch/; Llama 8B at the profiled
// micro-batch 1, its checkpointed layers running the forward twice). None was fitted on. The grids differ:
// Llama 8B's 32 sequences x heads make 512 blocks of unequal causal work on 132 SMs, 24 % slower than the
// benchmark-sized grids the curve comes from, which the grid's balance predicts (model/attention_grid.h:
// -24 % before, -7 % with it); GPT-2 1.5B's 100 x 8 blocks are predicted 12 % slow (-5 % before).
TEST(AttentionKernels, SdpaAttentionMatchesTheMeasuredH100Kernels) {
  std::ifstream in(test::source_path("scenarios/validation/h100-pytorch/h100-pytorch-kernel-time.json"));
  ASSERT_TRUE(in.good());
  const nlohmann::json measured = nlohmann::json::parse(in);
  const struct {
    const char* kernel_case;
    const char* scenario;
    std::vector<std::string> sets;
    double forwards;  // forward passes per layer and micro-batch (2 under full recompute)
  } cases[] = {{"gpt2-1.5b-s1024-mb4", "gpt2-1.5b-s1024-mb4.yaml", {}, 1},
               {"llama1b-s4096-mb2", "llama1b-s4096-mb2.yaml", {}, 1},
               {"llama8b-s2048-mb1-bf16ckpt", "llama8b-s2048-mb2-bf16ckpt.yaml",
                {"training.micro_batch=1", "training.global_batch=1"}, 2}};
  double sum = 0;
  for (const auto& k : cases) {
    double fwd = 0, bwd = 0;
    for (const auto& c : measured["cases"]) {
      if (c["name"] != k.kernel_case) continue;
      for (const auto& [name, seconds] : c["top_kernels_s"].items()) {
        if (name.find("pytorch_flash::flash_fwd_kernel") != std::string::npos) fwd += seconds.get<double>();
        if (name.find("pytorch_flash::flash_bwd") != std::string::npos) bwd += seconds.get<double>();
      }
    }
    ASSERT_GT(fwd, 0) << k.kernel_case;
    ASSERT_GT(bwd, 0) << k.kernel_case;
    const Scenario s =
        load_scenario_file(test::source_path(std::string("scenarios/validation/h100-pytorch/") + k.scenario), k.sets);
    const OpTimes t = attention_core_times(s, profile_for(s), static_cast<double>(s.training.micro_batch));
    const double micro_batches = static_cast<double>(s.training.global_batch / s.training.micro_batch);
    const double layers = static_cast<double>(s.model.layers) * micro_batches;
    const double predicted = layers * (k.forwards * t.fwd + t.bwd), both = fwd + bwd;
    const double error = predicted / both - 1;
    std::printf("%-28s measured %7.2f ms  predicted %7.2f ms  %+5.1f %%\n", k.kernel_case, 1e3 * both, 1e3 * predicted,
                100 * error);
    EXPECT_LT(std::abs(error), 0.13) << k.kernel_case;
    sum += std::abs(error);
  }
  EXPECT_LT(sum / 3, 0.08);
}

TEST(AttentionKernels, OnAFlashProfileTransformerEngineIsTheFasterOne) {
  // A Hopper profile fitted from FlashAttention-2 rows (PyTorch SDPA's): Megatron's cuDNN attention runs
  // at 1/0.61 of its curve, an FSDP run at the curve itself.
  const Scenario mega = test::scenario(kBase);
  const Scenario fsdp = test::scenario(kBase, {"training.framework=fsdp"});
  HardwareProfile hw = profile_for(mega);
  hw.attention_kernel = AttentionKernel::flash;
  EXPECT_NEAR(attention_compute(mega, hw), attention_compute(fsdp, hw) * 0.61, 1e-12);
}

TEST(AttentionKernels, BeforeHopperEveryFrameworkRunsTheDefaultsKernel) {
  // A100 defaults describe FlashAttention-2 (Dao 2023), which Transformer Engine and SDPA both run there:
  // no framework is rescaled.
  const Scenario mega = test::scenario(kBase, {"cluster.preset=dgx-a100"});
  const HardwareProfile hw = profile_for(mega);
  ASSERT_EQ(hw.attention_kernel, AttentionKernel::flash);
  for (const char* f : {"fsdp", "deepspeed", "pytorch"}) {
    const Scenario other = test::scenario(kBase, {"cluster.preset=dgx-a100", std::string("training.framework=") + f});
    EXPECT_DOUBLE_EQ(attention_compute(other, hw), attention_compute(mega, hw)) << f;
  }
}

TEST(AttentionKernels, TritonOnAnA100FlashProfileTakesThePapersForwardRatio) {
  // The A100 defaults describe FlashAttention-2; the Triton kernel's forward is 1.4x longer (Dao 2023, §4.1).
  const Scenario flash = test::scenario(kBase, {"cluster.preset=dgx-a100", "training.framework=fsdp"});
  const Scenario triton =
      test::scenario(kBase, {"cluster.preset=dgx-a100", "training.framework=fsdp", "training.attention_kernel=triton"});
  const HardwareProfile hw = profile_for(flash);
  EXPECT_NEAR(attention_compute(triton, hw), 1.4 * attention_compute(flash, hw), 1e-12);
}

// training.attention_kernel names the kernel whatever the framework: an FSDP model built from Transformer
// Engine layers runs TE's cuDNN attention (the framework's curve, not SDPA's), a Megatron run can be told it
// uses FlashAttention-2.
TEST(AttentionKernels, TheScenarioCanNameItsKernel) {
  const Scenario mega = test::scenario(kBase);
  const HardwareProfile hw = profile_for(mega);
  const Scenario fsdp_te = test::scenario(kBase, {"training.framework=fsdp", "training.attention_kernel=cudnn"});
  EXPECT_EQ(attention_kernel_of(fsdp_te.training, fsdp_te.cluster.gpu), AttentionKernel::cudnn);
  EXPECT_DOUBLE_EQ(attention_compute(fsdp_te, hw), attention_compute(mega, hw));
  // A Megatron run told it uses FlashAttention-2 takes an SDPA run's time (on this H100 profile, FlashAttention-2's
  // published curve: planner/attention_curves.h).
  const Scenario mega_flash = test::scenario(kBase, {"training.attention_kernel=flash"});
  const Scenario fsdp = test::scenario(kBase, {"training.framework=fsdp"});
  EXPECT_DOUBLE_EQ(attention_compute(mega_flash, hw), attention_compute(fsdp, hw));
  EXPECT_GT(attention_compute(mega_flash, hw), attention_compute(mega, hw));
  // Absent, the framework's.
  EXPECT_EQ(attention_kernel_of(mega.training, mega.cluster.gpu), AttentionKernel::cudnn);
}

// Kernels are compiled for a few head-dim tiles and pad a head up to the next (framework_rules.h,
// attention_tile_head_dim). Oracle, by hand: a padded head computes the whole tile, so on the same heads
// and sequence a head of 112 under FlashAttention-2 (tiles of 32) takes exactly the time of a head of 128,
// and a head of 80 under the Triton kernel (powers of two) the time of 128. cuDNN is taken as exact: its
// time follows the curve, FLOPs x 112/128 at efficiency x (112 / (112 + d_half)) / (128 / (128 + d_half)).
TEST(AttentionKernels, APaddedHeadCostsItsKernelsTile) {
  const std::string heads = "model.heads=32";  // llama2-7b: 32 heads of 128
  const auto with_hidden = [&](const char* hidden, const char* framework, const char* kernel) {
    return test::scenario(kBase, {heads, std::string("model.hidden=") + hidden, std::string("training.framework=") + framework,
                                  std::string("training.attention_kernel=") + kernel});
  };
  const HardwareProfile hw = profile_for(test::scenario(kBase));
  EXPECT_EQ(attention_tile_head_dim(AttentionKernel::flash, 112), 128);
  EXPECT_EQ(attention_tile_head_dim(AttentionKernel::flash, 160), 160);
  EXPECT_EQ(attention_tile_head_dim(AttentionKernel::flash, 80), 96);
  EXPECT_EQ(attention_tile_head_dim(AttentionKernel::triton, 80), 128);
  EXPECT_EQ(attention_tile_head_dim(AttentionKernel::triton, 8), 16);
  EXPECT_EQ(attention_tile_head_dim(AttentionKernel::cudnn, 112), 112);
  EXPECT_NEAR(attention_compute(with_hidden("3584", "fsdp", "flash"), hw) / attention_compute(with_hidden("4096", "fsdp", "flash"), hw),
              1.0, 1e-12);
  EXPECT_NEAR(attention_compute(with_hidden("2560", "fsdp", "triton"), hw) /
                  attention_compute(with_hidden("4096", "fsdp", "triton"), hw),
              1.0, 1e-12);
  const double half = hw.attention_forward.head_dim_half;
  ASSERT_GT(half, 0);
  EXPECT_NEAR(attention_compute(with_hidden("3584", "megatron", "cudnn"), hw) /
                  attention_compute(with_hidden("4096", "megatron", "cudnn"), hw),
              (112 + half) / (128 + half), 1e-12);
}

// Runs trainplan with `args` and expects `text` in what it prints.
void expect_printed(const std::string& args, const std::string& text) {
  const test::RunResult r = test::run_trainplan(args);
  ASSERT_EQ(r.exit_code, 0) << args << ": " << r.output;
  EXPECT_NE(r.output.find(text), std::string::npos) << args << ": " << r.output;
}

// The report gives the fused grid's balance (docs/json-output.md, `attention.grid_balance`), and the table a
// line when it is under 95 %. By hand, the built-in Llama 3.1 70B at tp 8, micro-batch 1, s = 8,192: 64 / 8 = 8
// sequence-heads x 64 tiles = 512 blocks of 8 x 64 x 65 / 2 = 16,640 units on 132 SMs. Forward: 16,640 / 132
// + 0.62 x 64 = 165.74 units, 16,640 / (132 x 165.74) = 0.7606; backward: the tail x (1 - (64/132)^2),
// 156.41 units, 0.8059.
TEST(AttentionKernels, ReportsTheGridBalance) {
  const test::RunResult json = test::run_trainplan("evaluate --format json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json g = nlohmann::json::parse(json.output).at("attention").at("grid_balance");
  EXPECT_NEAR(g.at("forward").get<double>(), 16640.0 / (132 * (16640.0 / 132 + 0.62 * 64)), 1e-9);
  const double crowding = 64.0 / 132;
  EXPECT_NEAR(g.at("backward").get<double>(),
              16640.0 / (132 * (16640.0 / 132 + 0.62 * 64 * (1 - crowding * crowding))), 1e-9);
  expect_printed("evaluate", "fused attention grid: 8 sequences x heads per GPU of 8192 tokens keep 76% (forward), "
                             "81% (backward) of the 132 SMs busy");
  // A wide grid (micro-batch 16: 128 sequence-heads) says nothing in the table.
  const test::RunResult wide = test::run_trainplan("evaluate --set training.micro_batch=16");
  ASSERT_EQ(wide.exit_code, 0) << wide.output;
  EXPECT_NE(wide.output.find("Step time"), std::string::npos);
  EXPECT_EQ(wide.output.find("fused attention grid"), std::string::npos);
}

// The report says which kernel the step ran and at what rate of the profile's curve (docs/json-output.md,
// `attention`); the table says so when the two kernels differ. The built-in scenario is Megatron on H100.
TEST(AttentionKernels, ReportsNameTheKernelAndItsRate) {
  const test::RunResult mega = test::run_trainplan("evaluate --format json");
  ASSERT_EQ(mega.exit_code, 0) << mega.output;
  const nlohmann::json a = nlohmann::json::parse(mega.output).at("attention");
  EXPECT_EQ(a.at("kernel"), "cudnn");
  EXPECT_EQ(a.at("profile_kernel"), "cudnn");
  EXPECT_DOUBLE_EQ(a.at("speed").at("forward").get<double>(), 1.0);
  const test::RunResult fsdp = test::run_trainplan("evaluate --format json --set training.framework=fsdp --set parallel.zero=2");
  ASSERT_EQ(fsdp.exit_code, 0) << fsdp.output;
  const nlohmann::json b = nlohmann::json::parse(fsdp.output).at("attention");
  EXPECT_EQ(b.at("kernel"), "flash");
  // On Hopper an SDPA run reads FlashAttention-2's published curve at its own rate (attention_curves.h).
  EXPECT_EQ(b.at("curve"), "flash2_published");
  EXPECT_EQ(a.at("curve"), "profile");
  EXPECT_DOUBLE_EQ(b.at("speed").at("forward").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(b.at("speed").at("backward").get<double>(), 1.0);
  // Explicit attention runs no fused kernel, whatever the framework's would be, at no curve's rate.
  const test::RunResult explicit_attention = test::run_trainplan("evaluate --format json --set training.flash_attention=false");
  ASSERT_EQ(explicit_attention.exit_code, 0) << explicit_attention.output;
  const nlohmann::json c = nlohmann::json::parse(explicit_attention.output).at("attention");
  EXPECT_EQ(c.at("fused"), false);
  EXPECT_EQ(c.at("kernel"), "unfused");
  EXPECT_DOUBLE_EQ(c.at("speed").at("forward").get<double>(), 1.0);
  expect_printed("evaluate --set training.framework=fsdp --set parallel.zero=2",
                 "fused attention: flash (fsdp's kernel) at FlashAttention-2's published hopper curve");
  expect_printed("evaluate --set training.framework=fsdp --set parallel.zero=2 --set training.attention_kernel=triton",
                 "fused attention: triton (training.attention_kernel) at x0.71 forward, x0.50 backward, "
                 "FlashAttention-2's published hopper curve");
  // Where no published curve applies (B200's cuDNN defaults), the profile's curve at the measured ratio.
  expect_printed("evaluate --set training.framework=fsdp --set parallel.zero=2 --set cluster.gpu=b200",
                 "fused attention: flash (fsdp's kernel) at x0.61 the profile's cudnn curve");
}

}  // namespace
}  // namespace tp
