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

using errtest::at;
using errtest::load_error;
using errtest::Yaml;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(LayoutErrors, TpMustDivideHeads) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpus_per_node: 6}";
  y.parallel = "{tp: 3, pp: 2}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "tp: 3", 4) + ": parallel.tp: "));
  EXPECT_THAT(f.what, HasSubstr("must divide heads (32)"));
  EXPECT_THAT(f.what, HasSubstr("model.heads"));
}

// An inline model with 24 heads and 6 KV heads: tp = 4 divides the heads but not the KV heads.
TEST(LayoutErrors, TpMustDivideKvHeads) {
  Yaml y;
  y.model = "{layers: 4, hidden: 1536, heads: 24, kv_heads: 6, ffn_hidden: 4096, vocab: 32000}";
  y.parallel = "{tp: 4, pp: 2}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "tp: 4", 4) + ": parallel.tp: "));
  EXPECT_THAT(f.what, HasSubstr("must divide kv_heads (6)"));
  EXPECT_THAT(f.what, HasSubstr("model.kv_heads"));
}

// tp above kv_heads replicates KV heads, which needs tp to be a multiple of kv_heads.
TEST(LayoutErrors, TpAboveKvHeadsMustBeAMultiple) {
  Yaml y;
  y.model = "{layers: 4, hidden: 1536, heads: 24, kv_heads: 3, ffn_hidden: 4096, vocab: 32000}";
  y.parallel = "{tp: 4, pp: 2}";
  auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, HasSubstr("parallel.tp: "));
  EXPECT_THAT(f.what, HasSubstr("multiple"));
  EXPECT_THAT(f.what, HasSubstr("model.kv_heads"));
}

TEST(LayoutErrors, KvHeadsMustDivideHeads) {
  Yaml y;
  y.model = "{preset: llama3.1-8b, kv_heads: 6}";
  auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(y.str(), "kv_heads: 6", 10) + ": model.kv_heads: "));
  EXPECT_THAT(f.what, HasSubstr("must divide heads (32)"));
}

TEST(LayoutErrors, GpusNotDivisibleByTpPpCp) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 3}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "tp: 2", 4) + ": parallel.tp: "));
  EXPECT_THAT(f.what, HasSubstr("= 6 does not divide the cluster's 8 GPUs"));
  EXPECT_THAT(f.what, HasSubstr("cluster.nodes"));
}

TEST(LayoutErrors, ExplicitDpMustAgree) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, dp: 3}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "dp: 3", 4) + ": parallel.dp: "));
  EXPECT_THAT(f.what, HasSubstr("= 12 but the cluster has 8 GPUs"));
  EXPECT_THAT(f.what, HasSubstr("dp: auto"));
  // The agreeing explicit value loads.
  y.parallel = "{tp: 2, pp: 2, dp: 2}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, GlobalBatchNotDivisibleByMicroBatchTimesDp) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 65, micro_batch: 1}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "global_batch: 65", 14) + ": training.global_batch: "));
  EXPECT_THAT(f.what, HasSubstr("training.micro_batch"));
  EXPECT_THAT(f.what, HasSubstr("micro_batch × dp = 1 × 2 = 2"));
}

TEST(LayoutErrors, MicroBatchTooLargeForTheBatch) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 3}";
  auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, HasSubstr("training.global_batch: "));
  EXPECT_THAT(f.what, HasSubstr("training.micro_batch"));
}

TEST(LayoutErrors, SequenceNotDivisibleByTwiceCp) {
  Yaml y;
  y.training = "{sequence_length: 4098, global_batch: 64, micro_batch: 1}";
  y.parallel = "{tp: 2, pp: 2, cp: 2}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "cp: 2", 4) + ": parallel.cp: "));
  EXPECT_THAT(f.what, HasSubstr("must be divisible by 4"));
  EXPECT_THAT(f.what, HasSubstr("training.sequence_length"));
}

TEST(LayoutErrors, SequenceParallelNeedsSequenceDivisibleByTp) {
  Yaml y;
  y.training = "{sequence_length: 4097, global_batch: 64, micro_batch: 1}";
  auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, HasSubstr("parallel.sequence_parallel: "));
  EXPECT_THAT(f.what, HasSubstr("(4097) divisible by tp (2)"));
  EXPECT_THAT(f.what, HasSubstr("training.sequence_length"));
  // Without sequence parallelism the odd length is fine.
  y.parallel = "{tp: 2, pp: 2, sequence_parallel: false}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, InterleavedWithoutVpp) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, schedule: interleaved}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "interleaved") + ": parallel.schedule: "));
  EXPECT_THAT(f.what, HasSubstr("interleaved needs vpp"));
  EXPECT_THAT(f.what, HasSubstr("parallel.vpp"));
}

TEST(LayoutErrors, VppWithoutInterleaved) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, vpp: 2}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "vpp: 2", 5) + ": parallel.vpp: "));
  EXPECT_THAT(f.what, HasSubstr("needs schedule: interleaved"));
  EXPECT_THAT(f.what, HasSubstr("parallel.schedule"));
  // With the schedule it loads.
  y.parallel = "{tp: 2, pp: 2, vpp: 2, schedule: interleaved}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, InterleavedNeedsMicroBatchesAMultipleOfPp) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 6, micro_batch: 1}";
  y.parallel = "{tp: 2, pp: 4, vpp: 2, schedule: interleaved}";  // dp = 1: 6 micro-batches, pp = 4
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "interleaved") + ": parallel.schedule: "));
  EXPECT_THAT(f.what, HasSubstr("(6) to be a multiple of pp (4)"));
  EXPECT_THAT(f.what, HasSubstr("training.global_batch"));
}

TEST(LayoutErrors, LayersPerStageWrongLength) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, layers_per_stage: [32]}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "[32]") + ": parallel.layers_per_stage: "));
  EXPECT_THAT(f.what, HasSubstr("has 1 entries but pp = 2"));
  EXPECT_THAT(f.what, HasSubstr("parallel.pp"));
}

TEST(LayoutErrors, LayersPerStageWrongSum) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, layers_per_stage: [16, 15]}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "[16, 15]") + ": parallel.layers_per_stage: "));
  EXPECT_THAT(f.what, HasSubstr("adds up to 31 layers but the model has 32"));
  EXPECT_THAT(f.what, HasSubstr("model.layers"));
  // An uneven split that adds up loads.
  y.parallel = "{tp: 2, pp: 2, layers_per_stage: [15, 17]}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, LayersPerStageWrongType) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, layers_per_stage: [16, many]}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "many") + ": parallel.layers_per_stage: "));
  EXPECT_THAT(f.what, HasSubstr("expected an integer"));
}

TEST(LayoutErrors, MorePipelineStagesThanLayers) {
  Yaml y;
  y.model = "{preset: llama3.1-8b, layers: 2}";
  y.parallel = "{tp: 2, pp: 4}";
  auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, HasSubstr("parallel.pp: "));
  EXPECT_THAT(f.what, HasSubstr("only 2 layers"));
  EXPECT_THAT(f.what, HasSubstr("model.layers"));
}

TEST(LayoutErrors, Zero3WithPipelineParallelismIsExplained) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, zero: 3}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "zero: 3", 6) + ": parallel.zero: "));
  EXPECT_THAT(f.what, HasSubstr("ZeRO-3"));
  EXPECT_THAT(f.what, HasSubstr("gather"));          // why: per-micro-batch gathers
  EXPECT_THAT(f.what, HasSubstr("pp: 1 with zero: 3"));  // the way out
  EXPECT_THAT(f.what, HasSubstr("parallel.pp"));
  // ZeRO-3 without pipeline parallelism loads.
  y.parallel = "{tp: 2, pp: 1, zero: 3}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, ParamsOffloadNeedsZero3) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, offload: {params: cpu}}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "params: cpu", 8) + ": parallel.offload.params: "));
  EXPECT_THAT(f.what, HasSubstr("needs zero: 3"));
  EXPECT_THAT(f.what, HasSubstr("parallel.zero"));
}

TEST(LayoutErrors, ExpertParallelismWithoutMoe) {
  Yaml y;
  y.parallel = "{tp: 2, pp: 2, ep: 2}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "ep: 2", 4) + ": parallel.ep: "));
  EXPECT_THAT(f.what, HasSubstr("mixture-of-experts"));
  EXPECT_THAT(f.what, HasSubstr("model.moe"));
}

TEST(LayoutErrors, ExpertParallelismMustDivideExperts) {
  Yaml y;
  y.model = "mixtral-8x7b";
  y.parallel = "{tp: 2, pp: 2, ep: 3}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "ep: 3", 4) + ": parallel.ep: "));
  EXPECT_THAT(f.what, HasSubstr("must divide the number of experts (8)"));
  EXPECT_THAT(f.what, HasSubstr("model.moe.experts"));
  // ep = 2 divides both the experts and dp × cp = 2.
  y.parallel = "{tp: 2, pp: 2, ep: 2}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, ExpertParallelismMustDivideDpTimesCp) {
  Yaml y;
  y.model = "mixtral-8x7b";
  y.parallel = "{tp: 2, pp: 2, ep: 4}";  // dp = 2
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "ep: 4", 4) + ": parallel.ep: "));
  EXPECT_THAT(f.what, HasSubstr("must divide dp × cp = 2"));
  EXPECT_THAT(f.what, HasSubstr("parallel.dp"));
}

TEST(LayoutErrors, PrecisionUnsupportedByTheGpu) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: v100-sxm2-32gb}";
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: bf16}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "precision: bf16", 11) + ": training.precision: "));
  EXPECT_THAT(f.what, HasSubstr("has no bf16 support"));
  EXPECT_THAT(f.what, HasSubstr("V100"));
  EXPECT_THAT(f.what, HasSubstr("cluster.gpu"));
  // fp16 is supported on Volta.
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: fp16}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, DefaultPrecisionUnsupportedPointsAtTheTrainingBlock) {
  // precision is not written: bf16 by default; the message still names the field.
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: v100}";
  auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, HasSubstr("training.precision: "));
  EXPECT_THAT(f.what, HasSubstr("bf16"));
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
  try {
    load_scenario_text(base, "test.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("test.yaml:4:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("parallel.placement"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'dp' is given twice"), std::string::npos) << e.what();
  }
}

// parallel.offload.activations (DeepSpeed cpu_checkpointing) keeps checkpointed layer inputs on the host:
// without layer recompute there is nothing to offload, and the value must be none or cpu. Both errors
// name the file, line, column and key.
TEST(LayoutErrors, ActivationOffloadNeedsLayerRecompute) {
  Yaml y;
  y.parallel = "{recompute: none, zero: 3, offload: {activations: cpu}}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "cpu}") + ": parallel.offload.activations: "));
  EXPECT_THAT(f.what, HasSubstr("recompute: full or every"));
}

TEST(LayoutErrors, ActivationOffloadTargetIsNoneOrCpu) {
  Yaml y;
  y.parallel = "{recompute: full, zero: 3, offload: {activations: gpu}}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "gpu}") + ": parallel.offload.activations: "));
  EXPECT_THAT(f.what, HasSubstr("did you mean 'cpu'?"));
}

// training.fused_loss under Megatron is Transformer Engine's parallel_cross_entropy, written and tested for
// bf16 and fp32 logits only (transformer_engine/pytorch/cross_entropy.py docstring; TE 2.9
// tests/pytorch/test_parallel_cross_entropy.py tests float32 and bfloat16): fp16 training is refused at the
// key; bf16 loads.
TEST(LayoutErrors, FusedLossIsRefusedForMegatronInFp16) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: fp16, fused_loss: true}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "true}") + ": training.fused_loss: "));
  EXPECT_THAT(f.what, HasSubstr("bf16 or fp32 logits"));
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: bf16, fused_loss: true}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

// training.fp8_recipe is a Transformer Engine FP8 setting: with any other precision it is an error at the
// key that names the precision; with fp8 both recipes load.
TEST(LayoutErrors, Fp8RecipeNeedsFp8Precision) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, fp8_recipe: current}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "current}") + ": training.fp8_recipe: "));
  EXPECT_THAT(f.what, HasSubstr("training.precision: fp8 (here bf16)"));
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: fp16, fp8_recipe: delayed}";
  EXPECT_THAT(load_error(y.str()).what, HasSubstr("(here fp16)"));
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: fp8, fp8_recipe: current}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayoutErrors, Fp8RecipeUnknownValueIsNamed) {
  Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, precision: fp8, fp8_recipe: currnet}";
  const std::string yaml = y.str();
  auto f = load_error(yaml);
  ASSERT_TRUE(f.thrown);
  EXPECT_THAT(f.what, StartsWith(at(yaml, "currnet}") + ": training.fp8_recipe: "));
  EXPECT_THAT(f.what, HasSubstr("did you mean 'current'?"));
}

}  // namespace
}  // namespace tp
