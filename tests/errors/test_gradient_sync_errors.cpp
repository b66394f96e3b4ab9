// training.gradient_sync (docs/scenario-reference.md): `every_micro_batch` or `last_micro_batch`, the training
// loop's choice under fsdp and pytorch; megatron and deepspeed decide it themselves (Megatron's schedules run
// the first micro-batches under no_sync; DeepSpeed's engine reduces by ZeRO stage and its no_sync refuses
// partitioned gradients), so the key is an InputError at its line there. The base scenario is
// error_test_support.h's (megatron, bf16).
#include <gtest/gtest.h>

#include <string>

#include "error_test_support.h"
#include "scenario.h"

namespace tp {
namespace {

// The base scenario with training.framework `fw` and gradient_sync `sync`.
std::string with_sync(const std::string& fw, const std::string& sync) {
  errtest::Yaml y;
  y.training = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, framework: " + fw + ", gradient_sync: " + sync + "}";
  return y.str();
}

TEST(GradientSyncErrors, UnknownValueNamesTheChoices) {
  EXPECT_TRUE(errtest::fails_at(with_sync("fsdp", "every_step"), "every_step", 0, "training.gradient_sync",
                                {"every_micro_batch", "last_micro_batch"}));
}

TEST(GradientSyncErrors, MegatronAndDeepspeedDecideItThemselves) {
  for (const char* fw : {"megatron", "deepspeed"}) {
    EXPECT_TRUE(errtest::fails_at(with_sync(fw, "last_micro_batch"), "last_micro_batch", 0, "training.gradient_sync",
                                  {fw, "fsdp or pytorch"}))
        << fw;
  }
}

TEST(GradientSyncErrors, BothValuesLoadUnderFsdpAndPytorch) {
  for (const char* fw : {"fsdp", "pytorch"}) {
    for (const char* sync : {"every_micro_batch", "last_micro_batch"}) {
      const auto e = errtest::load_error(with_sync(fw, sync));
      EXPECT_FALSE(e.thrown) << fw << " " << sync << ": " << e.what;
    }
  }
}

}  // namespace
}  // namespace tp
