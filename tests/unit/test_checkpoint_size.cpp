// The checkpoint the failure model writes holds every parameter once, in the dtypes the memory keeps
// it in (planner/plan.cpp; docs/model.md §10). Oracle: hand computation per parameter, written here.
#include <gtest/gtest.h>

#include <string>

#include "hardware_profile.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

const std::string kModel = "model: llama3-8b\ncluster: {preset: dgx-h100, nodes: 1}\n";
const std::string kLayout = "parallel: {tp: 1, pp: 1, dp: 8}\n";

// Bytes per parameter of the plan's checkpoint.
double checkpoint_bytes_per_param(const std::string& training, const std::string& layout = kLayout) {
  const Scenario s = test::scenario(kModel + training + layout);
  const Plan p = make_plan(s, default_profile(s.cluster.gpu));
  return p.checkpoint_bytes.value / static_cast<double>(p.estimate.parameters_total);
}

TEST(CheckpointSize, MixedPrecisionAdamIsFourteenBytesPerParameter) {
  // Megatron bf16: 2 B weights + 4 B fp32 master + 8 B fp32 Adam moments.
  EXPECT_DOUBLE_EQ(checkpoint_bytes_per_param("training: {precision: bf16, optimizer: adamw}\n"), 2.0 + 4.0 + 8.0);
}

TEST(CheckpointSize, AutocastKeepsFp32ParametersAndNoMasterCopy) {
  // torch.autocast: the parameters themselves are fp32 (4 B), there is no separate master copy, and
  // AdamW's moments are fp32 (8 B): 12 B, not the 16-bit weight's 2 + 8.
  EXPECT_DOUBLE_EQ(checkpoint_bytes_per_param("training: {framework: pytorch, precision: bf16, autocast: true, "
                                              "optimizer: adamw}\n"),
                   4.0 + 8.0);
}

TEST(CheckpointSize, StatesInTheParameterDtypeHalveAdamsMoments) {
  // A bf16 model whose AdamW keeps its moments in the parameter dtype (optimizer_state_precision: same):
  // 2 B weights + 2 x 2 B moments, no master copy.
  EXPECT_DOUBLE_EQ(checkpoint_bytes_per_param("training: {framework: pytorch, precision: bf16, master_weights: none, "
                                              "optimizer: adamw, optimizer_state_precision: same}\n"),
                   2.0 + 4.0);
}

TEST(CheckpointSize, FsdpShardsItsMasterCopyAndNoSixteenBitWeights) {
  // FSDP under ZeRO-3: the sharded parameter is the fp32 master (framework_rules.h,
  // sharded_parameter_is_master), so 4 B + 8 B Adam moments; DeepSpeed's ZeRO-3 keeps a 16-bit partition
  // beside its fp32 one: 2 + 4 + 8 B.
  const std::string zero3 = "parallel: {tp: 1, pp: 1, dp: 8, zero: 3}\n";
  EXPECT_DOUBLE_EQ(checkpoint_bytes_per_param("training: {framework: fsdp, precision: bf16, optimizer: adamw}\n", zero3),
                   4.0 + 8.0);
  EXPECT_DOUBLE_EQ(
      checkpoint_bytes_per_param("training: {framework: deepspeed, precision: bf16, optimizer: adamw}\n", zero3),
      2.0 + 4.0 + 8.0);
}

}  // namespace
}  // namespace tp
