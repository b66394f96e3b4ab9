// Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by (128) x tp
// (megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding, core_r0.8.0): the padded rows are
// parameters, states, logits-GEMM and loss work; model FLOPs (MFU) keep the model's vocabulary.
// Oracles by hand: 128256 / (128 x 8) = 125.25 -> 126 x 1024 = 129024; at tp 4, 128256 / 512 = 250.5 ->
// 251 x 512 = 128512; at tp 1, 128256 = 1002 x 128 (no padding); GPT-2's 50257 / 128 = 392.6 -> 393 x 128
// = 50304, / 256 = 196.3 -> 197 x 256 = 50432. Hugging Face, torchtitan and DeepSpeed models keep the
// config's vocabulary. Llama 3.1 8B's published parameter count, 8,030,261,248 (HF safetensors metadata,
// scenarios/catalog/models.yaml), is at the real vocabulary.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "estimate.h"
#include "framework_rules.h"
#include "layer_code_rules.h"
#include "op_graph.h"
#include "tests/test_support.h"

namespace tp {
namespace {

Scenario llama8b(int tp, const char* framework = "megatron") {
  return test::scenario(
      "model: llama3-8b\n"
      "cluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {sequence_length: 2048, global_batch: 8, micro_batch: 1, precision: bf16}\n"
      "parallel: {pp: 1, zero: 0, recompute: none}\n",
      {"parallel.tp=" + std::to_string(tp), std::string("training.framework=") + framework});
}

TEST(VocabPadding, MegatronRoundsUpToAMultipleOf128TimesTp) {
  EXPECT_EQ(padded_vocab(128256, LayerCode::fused, 8), 129024);
  EXPECT_EQ(padded_vocab(128256, LayerCode::fused, 4), 128512);
  EXPECT_EQ(padded_vocab(128256, LayerCode::fused, 1), 128256);
  EXPECT_EQ(padded_vocab(50257, LayerCode::fused, 1), 50304);
  EXPECT_EQ(padded_vocab(50257, LayerCode::fused, 2), 50432);
}

TEST(VocabPadding, HuggingFaceModelsKeepTheConfigVocabulary) {
  EXPECT_EQ(padded_vocab(50257, LayerCode::eager, 1), 50257);
  EXPECT_EQ(padded_vocab(128256, LayerCode::eager, 8), 128256);
  // llm-foundry's MPT vocabulary is a multiple of 64 already: 50368 = 787 x 64.
  EXPECT_EQ(padded_vocab(50368, LayerCode::eager, 1), 50368);
}

// The padding is the layer code's (Megatron's model code pads, Megatron-DeepSpeed's megatron/arguments.py
// --make-vocab-size-divisible-by 128 as well): DeepSpeed with its default eager layers keeps 128256 at tp 8,
// DeepSpeed with layer_code: fused pads to 129024 like Megatron.
TEST(VocabPadding, FollowsTheLayerCodeNotTheFramework) {
  const auto vocab = [](const std::vector<std::string>& sets) {
    const Scenario s = test::scenario(
        "model: llama3-8b\n"
        "cluster: {preset: dgx-h100, nodes: 1}\n"
        "training: {sequence_length: 2048, global_batch: 8, micro_batch: 1, precision: bf16}\n"
        "parallel: {tp: 8, pp: 1, zero: 0, recompute: none}\n",
        sets);
    return build_op_graph(s.model, s.training, s.parallel.tp).vocab;
  };
  EXPECT_EQ(vocab({"training.framework=deepspeed"}), 128256);
  EXPECT_EQ(vocab({"training.framework=deepspeed", "training.layer_code=fused"}), 129024);
  EXPECT_EQ(vocab({"training.layer_code=eager"}), 128256);
}

TEST(VocabPadding, GraphCarriesThePaddedVocabulary) {
  const Scenario s = llama8b(8);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  EXPECT_EQ(g.vocab, 129024);
  EXPECT_DOUBLE_EQ(g.embedding.front().params_split, 129024.0 * 4096);
  // The catalog's count is the model's own: the unpadded graph.
  EXPECT_EQ(build_op_graph(s.model, 2048, Precision::bf16, true).vocab, 128256);
}

TEST(VocabPadding, PaddedRowsAreParameters) {
  // Untied: embedding and output layer each gain (129024 - 128256) x 4096 = 3,145,728 parameters.
  const double published = 8030261248.0;
  EXPECT_DOUBLE_EQ(estimate(llama8b(1)).parameters_total, published);
  EXPECT_DOUBLE_EQ(estimate(llama8b(1, "pytorch")).parameters_total, published);
  const Estimate e = estimate(llama8b(8));
  const double total = published + 2.0 * 768 * 4096;
  EXPECT_DOUBLE_EQ(e.parameters_total, total);
  // Per GPU: everything but the norms (2 x 4096 per layer x 32 layers + the final 4096) is split by 8.
  const double norms = 2.0 * 4096 * 32 + 4096;
  EXPECT_DOUBLE_EQ(e.parameters_per_gpu, (total - norms) / 8 + norms);
}

TEST(VocabPadding, ModelFlopsKeepTheModelVocabulary) {
  // The published formulas (Narayanan et al. 2021 eq. 3, PaLM App. B) count the output layer over the
  // model's vocabulary whatever tp is; the padded columns are executed: hardware - model = B x 3 x 2 s h
  // (V_padded - V) = 8 x 6 x 2048 x 4096 x 768 without recompute.
  const Estimate tp1 = estimate(llama8b(1));
  const Estimate tp8 = estimate(llama8b(8));
  EXPECT_DOUBLE_EQ(tp8.flops.model_per_step.value, tp1.flops.model_per_step.value);
  EXPECT_DOUBLE_EQ(tp1.flops.hardware_per_step.value, tp1.flops.model_per_step.value);
  EXPECT_NEAR(tp8.flops.hardware_per_step.value - tp8.flops.model_per_step.value, 8.0 * 6 * 2048 * 4096 * 768,
              1e-9 * tp8.flops.hardware_per_step.value);
}

}  // namespace
}  // namespace tp
