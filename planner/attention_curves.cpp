#include "attention_curves.h"

#include <algorithm>

#include "attention_grid.h"
#include "flash_attention_fits.h"

namespace tp {
namespace {

bool runs_flash2_family(AttentionKernel k) { return k == AttentionKernel::flash || k == AttentionKernel::triton; }

}  // namespace

FusedAttentionCurves fused_attention_curves(const TrainingSpec& t, const GpuSpec& gpu, const HardwareProfile& hw) {
  FusedAttentionCurves c{hw.attention_forward, hw.attention_backward, {}, hw.attention_kernel, false};
  if (!t.flash_attention) return c;
  AttentionKernel runs = attention_kernel_of(t, gpu);
  // cuDNN's fused attention is faster than FlashAttention-2 through Hopper's warpgroup MMA and TMA (the ratio
  // planner/attention_kernel_rules.cpp takes is measured on an H100); before Hopper both run Ampere's mma.sync
  // tiles, so it is taken at FlashAttention-2's rate there.
  if (runs == AttentionKernel::cudnn && !hopper_or_later(gpu)) runs = AttentionKernel::flash;
  if (gpu.generation == "hopper" && hw.attention_kernel == AttentionKernel::cudnn && runs_flash2_family(runs)) {
    const Flash2Curves flash2 = flash2_curves(kFlash2H100);
    return {flash2.forward, flash2.backward, attention_kernel_speed(runs, AttentionKernel::flash), AttentionKernel::flash,
            true};
  }
  c.speed = attention_kernel_speed(runs, hw.attention_kernel);
  return c;
}

FusedAttentionGrid fused_attention_grid(const Scenario& s, double micro_batch, int tp, int cp) {
  // The context-parallel ranks that split the heads (all-to-all) and the sequence (ring).
  int head_ranks = 1;
  if (cp > 1) {
    const CpComm exchange = cp_comm_of(s.parallel, s.training.framework);
    if (exchange == CpComm::a2a) head_ranks = cp;
    if (exchange == CpComm::a2a_p2p && cp == s.parallel.cp) head_ranks = s.parallel.cp_inner();
  }
  const int sequence_ranks = std::max(1, cp / head_ranks);
  FusedAttentionGrid g;
  g.batch_heads = micro_batch * static_cast<double>(s.model.heads) / std::max(1, tp) / head_ranks;
  g.seq = static_cast<double>(s.training.sequence_length) / sequence_ranks;
  if (!s.training.flash_attention) return g;
  const double sms = static_cast<double>(s.cluster.gpu.sms);
  g.forward = attention_grid_balance(g.batch_heads, g.seq, sms, true, AttentionPass::forward);
  g.backward = attention_grid_balance(g.batch_heads, g.seq, sms, true, AttentionPass::backward);
  return g;
}

}  // namespace tp
