// Contradictory settings (DESIGN.md, "Conventions", "Strict input"): tp not dividing heads, GPUs not
// divisible by tp·pp·cp, micro-batch not dividing the batch ... are InputErrors that name both fields
// and point at the field in the file. Each test breaks one rule of a valid base scenario
// (llama3.1-8b: 32 layers, 32 heads, 8 KV heads; one DGX H100 = 8 GPUs; tp 2, pp 2 -> dp 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "error_test_support.h"
#include "scenario.h"

namespace tp {
namespace {

using errtest::Failure;
using errtest::fails_at;
using errtest::fails_with;
using errtest::load_error;
using errtest::raised;
using errtest::Yaml;
using ::testing::HasSubstr;

TEST(LayoutErrors, TpMustDivideHeads) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpus_per_node: 6}";
  y.parallel = "{tp: 3, pp: 2}";
  EXPECT_TRUE(fails_at(y.str(), "tp: 3", 4, "parallel.tp", {"must divide heads (32)", "model.heads"}));
}

// An inline model with 24 heads and 6 KV heads: tp = 4 divides the heads but not the KV heads.
TEST(LayoutErrors, TpMustDivideKvHeads) {
  Yaml y;
  y.model = "{layers: 4, hidden: 1536, heads: 24, kv_heads: 6, ffn_hidden: 4096, vocab: 32000}";
  y.parallel = "{tp: 4, pp: 2}";
  EXPECT_TRUE(fails_at(y.str(), "tp: 4", 4, "parallel.tp", {"must divide kv_heads (6)", "model.kv_heads"}));
}

// No framework replicates KV heads over TP ranks (Megatron-Core's divide(num_query_groups, world_size)):
// tp = 4 above kv_heads = 2, a multiple of it, is refused as well, and the same model loads at tp = 2.
TEST(LayoutErrors, TpAboveKvHeadsIsRefused) {
  Yaml y;
  y.model = "{layers: 4, hidden: 1536, heads: 24, kv_heads: 2, ffn_hidden: 4096, vocab: 32000}";
  y.parallel = "{tp: 4, pp: 2}";
  EXPECT_TRUE(fails_at(y.str(), "tp: 4", 4, "parallel.tp",
                       {"must divide kv_heads (2)", "whole KV heads", "model.kv_heads"}));
  y.parallel = "{tp: 2, pp: 2}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

// DeepSpeed's pipeline engine runs its TrainSchedule (1F1B) only and asserts "ZeRO-2 and ZeRO-3 are
// incompatible with pipeline parallelism" (deepspeed/runtime/pipe/schedule.py, pipe/engine.py). Megatron
// takes both, and DeepSpeed takes ZeRO-2 without a pipeline.
TEST(LayoutErrors, DeepSpeedPipelinesRun1F1BBelowZero2) {
  Yaml y;
  y.training = "{framework: deepspeed, sequence_length: 4096, global_batch: 64, micro_batch: 1}";
  y.parallel = "{tp: 2, pp: 2, schedule: interleaved, vpp: 2}";
  EXPECT_TRUE(fails_at(y.str(), "schedule: interleaved", 10, "parallel.schedule", {"1F1B only", "training.framework"}));
  y.parallel = "{tp: 2, pp: 2, zero: 2}";
  EXPECT_TRUE(fails_at(y.str(), "zero: 2", 6, "parallel.zero", {"refuses ZeRO-2 with pp = 2", "training.framework"}));
  for (const char* accepted : {"{tp: 2, pp: 2, zero: 1}", "{tp: 2, pp: 1, zero: 2}"}) {
    y.parallel = accepted;
    EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
  }
  y.training = "{framework: megatron, sequence_length: 4096, global_batch: 64, micro_batch: 1}";
  y.parallel = "{tp: 2, pp: 2, schedule: interleaved, vpp: 2, zero: 2}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, KvHeadsMustDivideHeads) {
  Yaml y;
  y.model = "{preset: llama3.1-8b, kv_heads: 6}";
  EXPECT_TRUE(fails_at(y.str(), "kv_heads: 6", 10, "model.kv_heads", {"must divide heads (32)"}));
}

TEST(LayoutErrors, GpusNotDivisibleByTpPpCp) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 3}";
  EXPECT_TRUE(
      fails_at(y.str(), "tp: 2", 4, "parallel.tp", {"= 6 does not divide the cluster's 8 GPUs", "cluster.nodes"}));
}

TEST(LayoutErrors, ExplicitDpMustAgree) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, dp: 3}";
  EXPECT_TRUE(fails_at(y.str(), "dp: 3", 4, "parallel.dp", {"= 12 but the cluster has 8 GPUs", "dp: auto"}));
  // The agreeing explicit value loads.
  y.parallel = "{tp: 2, pp: 2, dp: 2}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, GlobalBatchNotDivisibleByMicroBatchTimesDp) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 65, micro_batch: 1}";
  EXPECT_TRUE(fails_at(y.str(), "global_batch: 65", 14, "training.global_batch",
                       {"training.micro_batch", "micro_batch × dp = 1 × 2 = 2",
                        "(dp: auto, the cluster's 8 GPUs / (tp × pp × cp))"}));
}

// An explicit dp is the user's own number: the message does not explain where it came from.
TEST(LayoutErrors, GlobalBatchAgainstAnExplicitDpSaysNothingOfAuto) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 65, micro_batch: 1}";
  y.parallel = "{tp: 2, pp: 2, dp: 2}";
  const Failure failure = load_error(y.str());
  ASSERT_TRUE(failure.thrown);
  EXPECT_THAT(failure.what, HasSubstr("micro_batch × dp = 1 × 2 = 2"));
  EXPECT_THAT(failure.what, ::testing::Not(HasSubstr("dp: auto")));
}

TEST(LayoutErrors, MicroBatchTooLargeForTheBatch) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 3}";
  EXPECT_TRUE(fails_with(y.str(), {"training.global_batch: ", "training.micro_batch"}));
}

TEST(LayoutErrors, SequenceNotDivisibleByTwiceCp) {
  Yaml y;
  y.training = "{sequence_length: 4098, global_batch: 64, micro_batch: 1}";
  y.parallel = "{tp: 2, pp: 2, cp: 2}";
  EXPECT_TRUE(fails_at(y.str(), "cp: 2", 4, "parallel.cp", {"must be divisible by 4", "training.sequence_length"}));
}

TEST(LayoutErrors, SequenceParallelNeedsSequenceDivisibleByTp) {
  Yaml y;
  y.training = "{sequence_length: 4097, global_batch: 64, micro_batch: 1}";
  EXPECT_TRUE(
      fails_with(y.str(), {"parallel.sequence_parallel: ", "(4097) divisible by tp (2)", "training.sequence_length"}));
  // Without sequence parallelism the odd length is fine.
  y.parallel = "{tp: 2, pp: 2, sequence_parallel: false}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, InterleavedWithoutVpp) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, schedule: interleaved}";
  EXPECT_TRUE(fails_at(y.str(), "interleaved", 0, "parallel.schedule", {"interleaved needs vpp", "parallel.vpp"}));
}

TEST(LayoutErrors, VppWithoutInterleaved) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, vpp: 2}";
  EXPECT_TRUE(fails_at(y.str(), "vpp: 2", 5, "parallel.vpp", {"needs schedule: interleaved", "parallel.schedule"}));
  // With the schedule it loads.
  y.parallel = "{tp: 2, pp: 2, vpp: 2, schedule: interleaved}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, InterleavedNeedsMicroBatchesAMultipleOfPp) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 6, micro_batch: 1}";
  y.parallel = "{tp: 2, pp: 4, vpp: 2, schedule: interleaved}";  // dp = 1: 6 micro-batches, pp = 4
  EXPECT_TRUE(fails_at(y.str(), "interleaved", 0, "parallel.schedule",
                       {"(6) to be a multiple of pp (4)", "training.global_batch"}));
}

TEST(LayoutErrors, LayersPerStageWrongLength) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, layers_per_stage: [32]}";
  EXPECT_TRUE(fails_at(y.str(), "[32]", 0, "parallel.layers_per_stage", {"has 1 entries but pp = 2", "parallel.pp"}));
}

TEST(LayoutErrors, LayersPerStageWrongSum) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, layers_per_stage: [16, 15]}";
  EXPECT_TRUE(fails_at(y.str(), "[16, 15]", 0, "parallel.layers_per_stage",
                       {"adds up to 31 layers but the model has 32", "model.layers"}));
  // An uneven split that adds up loads.
  y.parallel = "{tp: 2, pp: 2, layers_per_stage: [15, 17]}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, LayersPerStageWrongType) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, layers_per_stage: [16, many]}";
  EXPECT_TRUE(fails_at(y.str(), "many", 0, "parallel.layers_per_stage", {"expected an integer"}));
}

TEST(LayoutErrors, MorePipelineStagesThanLayers) {
  Yaml y;
  y.model = "{preset: llama3.1-8b, layers: 2}";
  y.parallel = "{tp: 2, pp: 4}";
  EXPECT_TRUE(fails_with(y.str(), {"parallel.pp: ", "only 2 layers", "model.layers"}));
}

TEST(LayoutErrors, Zero3WithPipelineParallelismIsExplained) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, zero: 3}";
  EXPECT_TRUE(fails_at(y.str(), "zero: 3", 6, "parallel.zero",
                       {"ZeRO-3",
                        "gather",              // why: per-micro-batch gathers
                        "pp: 1 with zero: 3",  // the way out
                        "parallel.pp"}));
  // ZeRO-3 without pipeline parallelism loads.
  y.parallel = "{tp: 2, pp: 1, zero: 3}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

// Under FSDP the combination exists (torchtitan's FSDP + PP); the error names the layout it is.
TEST(LayoutErrors, FsdpWithPipelineParallelismNamesTorchtitansLayout) {
  Yaml y;
  y.training = "{framework: fsdp, sequence_length: 4096, micro_batch: 1, global_batch: 8}";
  y.parallel = "{tp: 2, pp: 2, zero: 3}";
  EXPECT_TRUE(fails_at(y.str(), "zero: 3", 6, "parallel.zero",
                       {"zero: 2 with training.gradient_sync: last_micro_batch", "grad_reduce: false",
                        "parallel.pp"}));
  // What it names loads.
  y.training = "{framework: fsdp, sequence_length: 4096, micro_batch: 1, global_batch: 8, gradient_sync: last_micro_batch}";
  y.parallel = "{tp: 2, pp: 2, zero: 2, overlap: {grad_reduce: false}}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, ParamsOffloadNeedsZero3) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, offload: {params: cpu}}";
  EXPECT_TRUE(fails_at(y.str(), "params: cpu", 8, "parallel.offload.params", {"needs zero: 3", "parallel.zero"}));
}

TEST(LayoutErrors, ExpertParallelismWithoutMoe) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, ep: 2}";
  EXPECT_TRUE(fails_at(y.str(), "ep: 2", 4, "parallel.ep", {"mixture-of-experts", "model.moe"}));
}

// training.moe_dispatcher deepep routes tokens to experts: on a dense model it is an error at the key naming
// model.moe; an unknown dispatcher names the choices; on an MoE model both dispatchers load.
TEST(LayoutErrors, DeepEpDispatcherNeedsMoe) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, moe_dispatcher: deepep}";
  EXPECT_TRUE(fails_at(y.str(), "deepep}", 0, "training.moe_dispatcher", {"mixture-of-experts", "model.moe"}));
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, moe_dispatcher: nccl}";
  EXPECT_TRUE(fails_at(y.str(), "nccl}", 0, "training.moe_dispatcher", {"all_to_all", "deepep"}));
  y.model = "mixtral-8x7b";
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, moe_dispatcher: deepep}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, moe_dispatcher: all_to_all}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, ExpertParallelismMustDivideExperts) {
  Yaml y;
  y.model = "mixtral-8x7b";
  y.parallel = "{tp: 2, pp: 2, ep: 3}";
  EXPECT_TRUE(
      fails_at(y.str(), "ep: 3", 4, "parallel.ep", {"must divide the number of experts (8)", "model.moe.experts"}));
  // ep = 2 divides both the experts and dp × cp = 2.
  y.parallel = "{tp: 2, pp: 2, ep: 2}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, ExpertParallelismMustDivideDpTimesCp) {
  Yaml y;
  y.model = "mixtral-8x7b";
  y.parallel = "{tp: 2, pp: 2, ep: 4}";  // dp = 2
  EXPECT_TRUE(fails_at(y.str(), "ep: 4", 4, "parallel.ep", {"must divide dp × cp = 2", "parallel.dp"}));
}

TEST(LayoutErrors, PrecisionUnsupportedByTheGpu) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: v100-sxm2-32gb}";
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: bf16}";
  EXPECT_TRUE(
      fails_at(y.str(), "precision: bf16", 11, "training.precision", {"has no bf16 support", "V100", "cluster.gpu"}));
  // fp16 is supported on Volta.
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: fp16}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, DefaultPrecisionUnsupportedPointsAtTheTrainingBlock) {
  // precision is not written: bf16 by default; the message still names the field.
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: v100}";
  auto f = load_error(y.str());
  EXPECT_TRUE(raised(f, "", {"training.precision: ", "bf16"}));
  EXPECT_EQ(f.where.line, 4);  // the training mapping, closest enclosing node
}

}  // namespace
}  // namespace tp

namespace tp {
namespace {

TEST(LayoutErrors, PlacementMustBeAPermutationOfTheMeshDimensions) {
  const std::string base =
      "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 4096, global_batch: 64}\nparallel: {tp: 2, pp: 2, placement: [tp, dp, dp, pp]}\n";
  EXPECT_TRUE(errtest::fails_with(base, {"test.yaml:4:", "parallel.placement", "'dp' is given twice"}));
}

// parallel.offload.activations (DeepSpeed cpu_checkpointing) keeps checkpointed layer inputs on the host:
// without layer recompute there is nothing to offload, and the value must be none or cpu. Both errors
// name the file, line, column and key.
TEST(LayoutErrors, ActivationOffloadNeedsLayerRecompute) {
  Yaml y;
  y.parallel = "{recompute: none, zero: 3, offload: {activations: cpu}}";
  EXPECT_TRUE(fails_at(y.str(), "cpu}", 0, "parallel.offload.activations", {"recompute: full or every"}));
}

// parallel.recompute as a mapping takes exactly one of every (segments of k layers) and one_in (one layer
// in k checkpointed), k at least 1; one_in keeps the other layers' activations on the GPU, so offloading
// them is refused like with no layer recompute.
TEST(LayoutErrors, RecomputeMappingTakesEveryOrOneIn) {
  Yaml y;
  y.parallel = "{recompute: {every: 2, one_in: 2}}";
  EXPECT_TRUE(fails_at(y.str(), "one_in: 2", 8, "parallel.recompute.one_in", {"either every or one_in"}));
  y.parallel = "{recompute: {one_in: 0}}";
  EXPECT_TRUE(fails_at(y.str(), "0}", 0, "parallel.recompute.one_in", {}));
  y.parallel = "{recompute: {once_in: 2}}";
  EXPECT_TRUE(errtest::fails_with(y.str(), {"test.yaml:5:", "parallel.recompute", "one_in"}));
  y.parallel = "{recompute: {}}";
  EXPECT_TRUE(errtest::fails_with(y.str(), {"test.yaml:5:", "parallel.recompute.every", "{one_in: k}"}));
  y.parallel = "{recompute: {one_in: 2}, zero: 3, offload: {activations: cpu}}";
  EXPECT_TRUE(fails_at(y.str(), "cpu}", 0, "parallel.offload.activations", {"recompute: full or every"}));
}

// parallel.recompute: selective_op is torchtitan's policy over the aten.mm calls of an eager dense block: the
// fused layer code (Megatron's default) and MoE layers are refused at the key, naming what to change; eager
// dense layers load.
TEST(LayoutErrors, SelectiveOpNeedsEagerDenseLayers) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, recompute: selective_op}";
  EXPECT_TRUE(fails_at(y.str(), "selective_op}", 0, "parallel.recompute", {"eager layer code", "training.layer_code"}));
  y.training = "{framework: fsdp, sequence_length: 4096, global_batch: 64, micro_batch: 1}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
  y.model = "mixtral-8x7b";
  EXPECT_TRUE(fails_at(y.str(), "selective_op}", 0, "parallel.recompute", {"dense layers only", "model.moe"}));
  y.parallel = "{tp: 2, pp: 2, recompute: selective_ops}";
  EXPECT_TRUE(fails_with(y.str(), {"parallel.recompute", "selective_op"}));
}

TEST(LayoutErrors, ActivationOffloadTargetIsNoneOrCpu) {
  Yaml y;
  y.parallel = "{recompute: full, zero: 3, offload: {activations: gpu}}";
  EXPECT_TRUE(fails_at(y.str(), "gpu}", 0, "parallel.offload.activations", {"did you mean 'cpu'?"}));
}

// training.fused_loss under Megatron is Transformer Engine's parallel_cross_entropy, written and tested for
// bf16 and fp32 logits only (transformer_engine/pytorch/cross_entropy.py docstring; TE 2.9
// tests/pytorch/test_parallel_cross_entropy.py tests float32 and bfloat16): fp16 training is refused at the
// key; bf16 loads.
TEST(LayoutErrors, FusedLossIsRefusedForMegatronInFp16) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: fp16, fused_loss: true}";
  EXPECT_TRUE(fails_at(y.str(), "true}", 0, "training.fused_loss", {"bf16 or fp32 logits"}));
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: bf16, fused_loss: true}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

// training.fp8_recipe is a Transformer Engine FP8 setting: with any other precision it is an error at the
// key that names the precision; with fp8 both recipes load.
TEST(LayoutErrors, Fp8RecipeNeedsFp8Precision) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, fp8_recipe: current}";
  EXPECT_TRUE(fails_at(y.str(), "current}", 0, "training.fp8_recipe", {"training.precision: fp8 (here bf16)"}));
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: fp16, fp8_recipe: delayed}";
  EXPECT_THAT(load_error(y.str()).what, HasSubstr("(here fp16)"));
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: fp8, fp8_recipe: current}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, Fp8RecipeUnknownValueIsNamed) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: fp8, fp8_recipe: currnet}";
  EXPECT_TRUE(fails_at(y.str(), "currnet}", 0, "training.fp8_recipe", {"did you mean 'current'?"}));
}

}  // namespace
}  // namespace tp
