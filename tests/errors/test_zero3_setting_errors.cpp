// memory.zero3_prefetch_bucket, zero3_max_live_parameters, zero3_max_reuse_distance, zero3_persistence_threshold,
// zero3_reduce_bucket (docs/scenario-reference.md §memory): DeepSpeed's ds_config stage3_* settings and its
// reduce_bucket_size, parameter counts. Only
// framework: deepspeed has them (an error naming the framework otherwise); counts take the project's count
// syntax ("3e9", "3 G"); out of range values are InputErrors at the key. memory.fsdp_unit (layer |
// submodule) is FSDP's: other frameworks are refused by name, an unknown value at the key.
#include <gtest/gtest.h>

#include <string>

#include "error_test_support.h"
#include "scenario.h"
#include "tests/test_support.h"

namespace tp {
namespace {

using errtest::fails_at;
using errtest::load_error;
using errtest::Yaml;

const std::string kDeepSpeed = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, framework: deepspeed}";

TEST(Zero3SettingErrors, CountsParseInEitherSyntax) {
  const Scenario s = test::scenario(
      "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 1}\ntraining: " + kDeepSpeed +
      "\nparallel: {zero: 3}\nmemory: {zero3_prefetch_bucket: 5e8, zero3_max_live_parameters: 3 G, "
      "zero3_max_reuse_distance: 3e9, zero3_persistence_threshold: 0, zero3_reduce_bucket: 90 M}\n");
  EXPECT_DOUBLE_EQ(s.memory.zero3_prefetch_bucket.value_or(-1), 5e8);
  EXPECT_DOUBLE_EQ(s.memory.zero3_max_live_parameters.value_or(-1), 3e9);
  EXPECT_DOUBLE_EQ(s.memory.zero3_max_reuse_distance.value_or(-1), 3e9);
  EXPECT_DOUBLE_EQ(s.memory.zero3_persistence_threshold.value_or(-1), 0.0);
  EXPECT_DOUBLE_EQ(s.memory.zero3_reduce_bucket.value_or(-1), 9e7);
}

TEST(Zero3SettingErrors, AbsentKeysStayUnset) {
  const Scenario s = test::scenario("model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 1}\ntraining: " +
                                    kDeepSpeed + "\nparallel: {zero: 3}\n");
  EXPECT_FALSE(s.memory.zero3_prefetch_bucket.has_value());
  EXPECT_FALSE(s.memory.zero3_max_live_parameters.has_value());
  EXPECT_FALSE(s.memory.zero3_max_reuse_distance.has_value());
  EXPECT_FALSE(s.memory.zero3_persistence_threshold.has_value());
  EXPECT_FALSE(s.memory.zero3_reduce_bucket.has_value());
}

TEST(Zero3SettingErrors, OtherFrameworksAreRefusedByName) {
  for (const char* fw : {"megatron", "fsdp", "pytorch"}) {
    Yaml y;
    y.training = std::string("{sequence_length: 4096, global_batch: 64, micro_batch: 1, framework: ") + fw + "}";
    y.extra = "memory: {zero3_max_live_parameters: 3e9}\n";
    EXPECT_TRUE(fails_at(y.str(), "3e9", 0, "memory.zero3_max_live_parameters",
                         {"stage3_max_live_parameters", std::string("framework ") + fw}))
        << fw;
    y.extra = "memory: {zero3_reduce_bucket: 9e7}\n";
    EXPECT_TRUE(fails_at(y.str(), "9e7", 0, "memory.zero3_reduce_bucket",
                         {"reduce_bucket_size", std::string("framework ") + fw}))
        << fw;
  }
}

TEST(Zero3SettingErrors, OutOfRangeValuesAreRefusedAtTheKey) {
  struct Case {
    const char* line;
    const char* field;
  } cases[] = {{"memory: {zero3_prefetch_bucket: 0}\n", "memory.zero3_prefetch_bucket"},
               {"memory: {zero3_max_live_parameters: -1}\n", "memory.zero3_max_live_parameters"},
               {"memory: {zero3_max_reuse_distance: 1e30}\n", "memory.zero3_max_reuse_distance"},
               {"memory: {zero3_persistence_threshold: many}\n", "memory.zero3_persistence_threshold"},
               {"memory: {zero3_reduce_bucket: 0}\n", "memory.zero3_reduce_bucket"}};
  for (const Case& c : cases) {
    Yaml y;
    y.training = kDeepSpeed;
    y.extra = c.line;
    auto f = load_error(y.str());
    ASSERT_TRUE(f.thrown) << c.line;
    EXPECT_EQ(f.field, c.field) << f.what;
    EXPECT_EQ(f.where.line, 6) << f.what;  // the memory: line
  }
}

const std::string kFsdpTraining = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, framework: fsdp}";
const std::string kFsdpBase = "model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 1}\ntraining: " +
                              kFsdpTraining + "\nparallel: {zero: 3}\n";

// An FSDP-only memory key: refused by name with any other framework, and an unknown value refused at the
// key (on the memory: line) with FSDP.
void expect_fsdp_only(const std::string& key, const std::string& value, const std::string& unknown) {
  for (const char* fw : {"megatron", "deepspeed", "pytorch"}) {
    Yaml y;
    y.training = std::string("{sequence_length: 4096, global_batch: 64, micro_batch: 1, framework: ") + fw + "}";
    y.extra = "memory: {" + key + ": " + value + "}\n";
    const std::string needle = key + ": " + value;  // the value where the key gives it
    EXPECT_TRUE(fails_at(y.str(), needle, key.size() + 2, "memory." + key, {std::string("framework ") + fw}))
        << key << " " << fw;
  }
  Yaml y;
  y.training = kFsdpTraining;
  y.extra = "memory: {" + key + ": " + unknown + "}\n";
  auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown) << key;
  EXPECT_EQ(f.field, "memory." + key) << f.what;
  EXPECT_EQ(f.where.line, 6) << f.what;
}

TEST(Zero3SettingErrors, FsdpUnitIsReadForFsdpAndRefusedElsewhere) {
  EXPECT_EQ(test::scenario(kFsdpBase).memory.fsdp_unit, FsdpUnit::layer);  // the default
  EXPECT_EQ(test::scenario(kFsdpBase + "memory: {fsdp_unit: submodule}\n").memory.fsdp_unit, FsdpUnit::submodule);
  expect_fsdp_only("fsdp_unit", "submodule", "block");
}

TEST(Zero3SettingErrors, FsdpBackwardPrefetchIsReadForFsdpAndRefusedElsewhere) {
  const auto read = [](const std::string& memory) { return test::scenario(kFsdpBase + memory).memory.fsdp_backward_prefetch; };
  EXPECT_EQ(read(""), BackwardPrefetch::pre);  // the default
  EXPECT_EQ(read("memory: {fsdp_version: 1, fsdp_backward_prefetch: none}\n"), BackwardPrefetch::none);
  EXPECT_EQ(read("memory: {fsdp_version: 1, fsdp_backward_prefetch: post}\n"), BackwardPrefetch::post);
  EXPECT_EQ(read("memory: {fsdp_backward_prefetch: pre}\n"), BackwardPrefetch::pre);  // FSDP2's own way
  expect_fsdp_only("fsdp_backward_prefetch", "none", "always");
}

// FSDP2 has no backward_prefetch argument: it always prefetches before the backward (pre). Asking FSDP2
// (the default version) for another is refused at the key, saying how to ask for FSDP1.
TEST(Zero3SettingErrors, FsdpBackwardPrefetchOtherThanPreNeedsFsdp1) {
  for (const char* mode : {"post", "none"}) {
    Yaml y;
    y.training = kFsdpTraining;
    y.extra = std::string("memory: {fsdp_backward_prefetch: ") + mode + "}\n";
    const std::string needle = std::string("fsdp_backward_prefetch: ") + mode;
    EXPECT_TRUE(fails_at(y.str(), needle, needle.size() - std::string(mode).size(), "memory.fsdp_backward_prefetch",
                         {"FSDP2", "fsdp_version: 1"}))
        << mode;
  }
}

TEST(Zero3SettingErrors, FsdpVersionIsReadForFsdpAndRefusedElsewhere) {
  EXPECT_EQ(test::scenario(kFsdpBase).memory.fsdp_version, FsdpVersion::fsdp2);  // the default
  EXPECT_EQ(test::scenario(kFsdpBase + "memory: {fsdp_version: 1}\n").memory.fsdp_version, FsdpVersion::fsdp1);
  EXPECT_EQ(test::scenario(kFsdpBase + "memory: {fsdp_version: 2}\n").memory.fsdp_version, FsdpVersion::fsdp2);
  expect_fsdp_only("fsdp_version", "1", "3");
}

// memory.ddp_gradient_as_bucket_view is torch DDP's: plain PyTorch only, refused by name elsewhere; a value
// that is not a boolean is refused at the key.
TEST(Zero3SettingErrors, DdpBucketViewIsPlainPytorchsOnly) {
  const std::string pytorch = "{sequence_length: 4096, global_batch: 64, micro_batch: 1, framework: pytorch}";
  EXPECT_TRUE(test::scenario("model: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 1}\ntraining: " + pytorch +
                             "\nmemory: {ddp_gradient_as_bucket_view: true}\n")
                  .memory.ddp_gradient_as_bucket_view);
  for (const char* fw : {"megatron", "deepspeed", "fsdp"}) {
    Yaml y;
    y.training = std::string("{sequence_length: 4096, global_batch: 64, micro_batch: 1, framework: ") + fw + "}";
    y.extra = "memory: {ddp_gradient_as_bucket_view: true}\n";
    const std::string needle = "ddp_gradient_as_bucket_view: true";
    EXPECT_TRUE(fails_at(y.str(), needle, std::string("ddp_gradient_as_bucket_view: ").size(),
                         "memory.ddp_gradient_as_bucket_view", {std::string("framework ") + fw, "DistributedDataParallel"}))
        << fw;
  }
  Yaml y;
  y.training = pytorch;
  y.extra = "memory: {ddp_gradient_as_bucket_view: sometimes}\n";
  auto f = load_error(y.str());
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.field, "memory.ddp_gradient_as_bucket_view") << f.what;
  EXPECT_EQ(f.where.line, 6) << f.what;
}

}  // namespace
}  // namespace tp
