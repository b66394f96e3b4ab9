// Which fused-attention kernel a fitted profile describes (`attention.kernel`), judged on the real H100
// file tests/data/h100-sxm/torch-attention-and-kernels.json: it times cuDNN's fused attention and
// PyTorch SDPA's FlashAttention-2 on the same shapes. Oracle: the measured times themselves, and the
// planner's FlashAttention-2 / cuDNN ratio (planner/attention_kernel_rules.cpp, 0.61, the mean of four
// measured ratios at s = 4,096) against the two curves fitted from that file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "errors.h"
#include "attention_kernel_rules.h"
#include "h100_data.h"
#include "hardware_profile.h"

namespace tp {
namespace {

bool is_fused_attention(const Measurement& it, const char* algorithm) {
  const bool attention = it.op == MeasuredOp::attention_forward || it.op == MeasuredOp::attention_backward;
  return attention && it.impl == AttentionImpl::fused && it.algorithm == algorithm;
}

TEST(AttentionKernelFit, CudnnRecordsMakeACudnnProfile) {
  const FitResult r = test::fit_all(test::torch_reference_file());
  EXPECT_EQ(r.profile.attention_kernel, AttentionKernel::cudnn);
  EXPECT_NE(profile_yaml(r.profile).find("kernel: cudnn"), std::string::npos);
}

TEST(AttentionKernelFit, FlashOnlyRecordsMakeAFlashProfileAtTheMeasuredRatio) {
  Measurements flash = test::torch_reference_file();
  const size_t before = flash.items.size();
  std::erase_if(flash.items, [](const Measurement& it) { return is_fused_attention(it, "cudnn"); });
  ASSERT_LT(flash.items.size(), before);
  ASSERT_TRUE(std::any_of(flash.items.begin(), flash.items.end(), [](const Measurement& it) { return is_fused_attention(it, "flash"); }));
  const FitResult f = test::fit_all(flash);
  EXPECT_EQ(f.profile.attention_kernel, AttentionKernel::flash);
  // The curves fitted from each kernel's own rows, at s = 4,096, causal, head dims 64 and 128, forward
  // and backward: their mean ratio is the constant the planner uses between the two kernels, within
  // the spread of the four measured ratios (0.56-0.69).
  const FitResult c = test::fit_all(test::torch_reference_file());
  double sum = 0;
  for (double d : {64.0, 128.0}) {
    sum += f.profile.attention_forward.efficiency(4096, d) / c.profile.attention_forward.efficiency(4096, d);
    sum += f.profile.attention_backward.efficiency(4096, d) / c.profile.attention_backward.efficiency(4096, d);
  }
  std::printf("fitted FlashAttention-2 / cuDNN at s = 4096: %.3f\n", sum / 4);
  EXPECT_NEAR(sum / 4, attention_kernel_speed(AttentionKernel::flash, AttentionKernel::cudnn).forward, 0.05);
  EXPECT_NEAR(sum / 4, attention_kernel_speed(AttentionKernel::flash, AttentionKernel::cudnn).backward, 0.05);
  // And a run on the kernel the profile describes is not rescaled.
  EXPECT_TRUE(attention_kernel_speed(AttentionKernel::flash, f.profile.attention_kernel).same());
}

TEST(AttentionKernelFit, ProfileFileNamesItsKernel) {
  const GpuSpec gpu = test::h100_cluster().gpu;
  const HardwareProfile p = load_profile_text("gpu: h100-sxm-80gb\nattention: {kernel: flash}\n", "p.yaml", gpu);
  EXPECT_EQ(p.attention_kernel, AttentionKernel::flash);
  EXPECT_EQ(load_profile_text(profile_yaml(p), "again.yaml", gpu).attention_kernel, AttentionKernel::flash);
  const HardwareProfile t = load_profile_text("gpu: h100-sxm-80gb\nattention: {kernel: triton}\n", "t.yaml", gpu);
  EXPECT_EQ(load_profile_text(profile_yaml(t), "again.yaml", gpu).attention_kernel, AttentionKernel::triton);
  // Without the key, the generation's default: Hopper's defaults describe cuDNN / Transformer Engine.
  EXPECT_EQ(load_profile_text("gpu: h100-sxm-80gb\n", "p.yaml", gpu).attention_kernel, AttentionKernel::cudnn);
  try {
    load_profile_text("gpu: h100-sxm-80gb\nattention:\n  kernel: xformers\n", "p.yaml", gpu);
    FAIL() << "an unknown kernel must be an error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("p.yaml:3"), std::string::npos) << what;
    EXPECT_NE(what.find("attention.kernel"), std::string::npos) << what;
    EXPECT_NE(what.find("cudnn | flash | triton"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tp
