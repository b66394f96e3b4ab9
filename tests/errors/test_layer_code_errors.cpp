// training.layer_code (docs/scenario-reference.md): `fused` or `eager`, absent = the framework's. Unknown
// values and settings the fused layer code cannot run (torch.autocast, torch.compile and torch.utils.checkpoint's
// early stop: eager PyTorch settings; fused_loss in fp16: Transformer Engine's cross-entropy takes bf16 or fp32
// logits) are InputErrors at the key, naming the other field. The base scenario is error_test_support.h's
// (megatron, bf16).
#include <gtest/gtest.h>

#include <string>

#include "error_test_support.h"
#include "scenario.h"

namespace tp {
namespace {

using errtest::fails_at;
using errtest::load_error;
using errtest::Yaml;

const std::string kTraining = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, ";

TEST(LayerCodeErrors, UnknownValueNamesTheChoices) {
  Yaml y;
  y.training = kTraining + "framework: deepspeed, layer_code: fusde}";
  EXPECT_TRUE(fails_at(y.str(), "fusde", 0, "training.layer_code", {"did you mean 'fused'"}));
  // The same through --set, at the override.
  auto g = load_error(Yaml().str(), {"training.layer_code=jit"});
  ASSERT_TRUE(g.thrown);
  EXPECT_EQ(g.field, "training.layer_code");
}

TEST(LayerCodeErrors, BothValuesLoadWithEveryFramework) {
  for (const char* fw : {"megatron", "deepspeed", "fsdp", "pytorch"}) {
    for (const char* code : {"fused", "eager"}) {
      Yaml y;
      y.training = kTraining + "framework: " + fw + ", layer_code: " + code + "}";
      EXPECT_FALSE(load_error(y.str()).thrown) << fw << " " << code << ": " << load_error(y.str()).what;
    }
  }
}

TEST(LayerCodeErrors, CompileIsRefusedWithFusedCode) {
  Yaml y;
  y.training = kTraining + "framework: fsdp, compile: true, layer_code: fused}";
  EXPECT_TRUE(fails_at(y.str(), "fused}", 0, "training.layer_code", {"training.compile"}));
  y.training = kTraining + "framework: fsdp, compile: true, layer_code: eager}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

// torch.utils.checkpoint's early stop is a setting of eager code: Megatron's own checkpoint function (fused
// code) reruns the whole region. A value that is not a bool is an error at the key too.
TEST(LayerCodeErrors, CheckpointEarlyStopIsRefusedWithFusedCode) {
  Yaml y;
  y.training = kTraining + "framework: fsdp, layer_code: fused, checkpoint_early_stop: true}";
  EXPECT_TRUE(fails_at(y.str(), "true}", 0, "training.checkpoint_early_stop", {"Megatron's own function"}));
  y.training = kTraining + "framework: fsdp, checkpoint_early_stop: sometimes}";
  EXPECT_TRUE(fails_at(y.str(), "sometimes}", 0, "training.checkpoint_early_stop", {}));
  y.training = kTraining + "framework: megatron, layer_code: eager, checkpoint_early_stop: true}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

TEST(LayerCodeErrors, AutocastIsRefusedWithFusedCode) {
  Yaml y;
  y.training = kTraining + "framework: pytorch, autocast: true, layer_code: fused}";
  EXPECT_TRUE(fails_at(y.str(), "fused}", 0, "training.layer_code", {"training.autocast"}));
}

// The fp16 refusal of Transformer Engine's fused cross-entropy follows the layer code: DeepSpeed with fused
// code is refused, DeepSpeed with its eager default (flash-attn's Triton loss takes fp16) loads, and Megatron
// with eager code loads.
TEST(LayerCodeErrors, FusedLossInFp16FollowsTheLayerCode) {
  Yaml y;
  y.training = kTraining + "precision: fp16, framework: deepspeed, layer_code: fused, fused_loss: true}";
  EXPECT_TRUE(fails_at(y.str(), "true}", 0, "training.fused_loss", {"bf16 or fp32 logits"}));
  y.training = kTraining + "precision: fp16, framework: deepspeed, fused_loss: true}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
  y.training = kTraining + "precision: fp16, layer_code: eager, fused_loss: true}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
}

}  // namespace
}  // namespace tp
