#include "attention_curves.h"

#include "flash_attention_fits.h"

namespace tp {
namespace {

bool runs_flash2_family(AttentionKernel k) { return k == AttentionKernel::flash || k == AttentionKernel::triton; }

}  // namespace

FusedAttentionCurves fused_attention_curves(const TrainingSpec& t, const GpuSpec& gpu, const HardwareProfile& hw) {
  FusedAttentionCurves c{hw.attention_forward, hw.attention_backward, {}, hw.attention_kernel, false};
  if (!t.flash_attention) return c;
  const AttentionKernel runs = attention_kernel_of(t, gpu);
  if (gpu.generation == "hopper" && hw.attention_kernel == AttentionKernel::cudnn && runs_flash2_family(runs)) {
    const Flash2Curves flash2 = flash2_curves(kFlash2H100);
    return {flash2.forward, flash2.backward, attention_kernel_speed(runs, AttentionKernel::flash), AttentionKernel::flash,
            true};
  }
  c.speed = attention_kernel_speed(runs, hw.attention_kernel);
  return c;
}

}  // namespace tp
