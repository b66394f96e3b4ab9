// training.attention_kernel (docs/scenario-reference.md): `cudnn`, `flash` or `triton`, absent = the framework's kernel
// on the scenario's GPU. An unknown value is an InputError at the key naming the choices; the key with
// explicit attention (flash_attention: false) is refused at the key, naming the other field.
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

TEST(AttentionKernelErrors, ReadWhenGivenAbsentOtherwise) {
  Yaml y;
  EXPECT_FALSE(test::scenario(y.str()).training.attention_kernel.has_value());
  y.training = kTraining + "framework: fsdp, attention_kernel: cudnn}";
  EXPECT_EQ(test::scenario(y.str()).training.attention_kernel, AttentionKernel::cudnn);
  EXPECT_EQ(test::scenario(Yaml().str(), {"training.attention_kernel=flash"}).training.attention_kernel, AttentionKernel::flash);
  EXPECT_EQ(test::scenario(Yaml().str(), {"training.attention_kernel=triton"}).training.attention_kernel, AttentionKernel::triton);
}

TEST(AttentionKernelErrors, UnknownValueNamesTheChoices) {
  Yaml y;
  y.training = kTraining + "attention_kernel: xformers}";
  EXPECT_TRUE(fails_at(y.str(), "xformers", 0, "training.attention_kernel", {"cudnn | flash | triton"}));
  auto g = load_error(Yaml().str(), {"training.attention_kernel=cudn"});
  ASSERT_TRUE(g.thrown);
  EXPECT_EQ(g.field, "training.attention_kernel");
  EXPECT_NE(g.what.find("did you mean 'cudnn'"), std::string::npos) << g.what;
}

TEST(AttentionKernelErrors, ExplicitAttentionHasNoFusedKernel) {
  Yaml y;
  y.training = kTraining + "flash_attention: false, attention_kernel: flash}";
  EXPECT_TRUE(fails_at(y.str(), "flash}", 0, "training.attention_kernel", {"flash_attention is false"}));
}

// training.attention_unpad wraps a fused kernel's variable-length entry point: refused at the key without one.
TEST(AttentionKernelErrors, UnpadNeedsAFusedKernel) {
  Yaml y;
  y.training = kTraining + "flash_attention: false, attention_unpad: true}";
  EXPECT_TRUE(fails_at(y.str(), "true}", 0, "training.attention_unpad", {"flash_attention is false"}));
  y.training = kTraining + "attention_unpad: true}";
  EXPECT_TRUE(test::scenario(y.str()).training.attention_unpad);
}

// training.repeat_kv is a setting of eager PyTorch model code: Megatron's and DeepSpeed's attention takes grouped
// K and V, so `true` is refused at the key naming the framework; `false` is what they do and loads.
TEST(AttentionKernelErrors, RepeatKvBelongsToEagerModelCode) {
  Yaml y;
  y.training = kTraining + "repeat_kv: true}";
  EXPECT_TRUE(fails_at(y.str(), "true}", 0, "training.repeat_kv", {"eager PyTorch model code", "megatron"}));
  y.training = kTraining + "framework: deepspeed, repeat_kv: true}";
  EXPECT_TRUE(fails_at(y.str(), "true}", 0, "training.repeat_kv", {"deepspeed"}));
  y.training = kTraining + "repeat_kv: false}";
  EXPECT_FALSE(load_error(y.str()).thrown) << load_error(y.str()).what;
  y.training = kTraining + "framework: pytorch, repeat_kv: maybe}";
  EXPECT_TRUE(fails_at(y.str(), "maybe}", 0, "training.repeat_kv", {"expected true or false"}));
}

}  // namespace
}  // namespace tp
