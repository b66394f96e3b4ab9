// Which fused-attention kernel a run uses and how fast it runs against another: the kernel each
// framework picks on each GPU, their measured and published speed ratios, the head-dim tiles they
// compute (docs/model.md §20, "Attention kernels").
#pragma once

#include "specs.h"

namespace tp {

// The fused-attention kernel a framework runs on this GPU (docs/model.md §20, "Attention kernels").
AttentionKernel attention_kernel_of(Framework f, const GpuSpec& gpu);
// The kernel a scenario's step uses: training.attention_kernel where given, else its framework's.
AttentionKernel attention_kernel_of(const TrainingSpec& t, const GpuSpec& gpu);
// Throughput of one fused-attention kernel relative to another's, per pass.
struct AttentionSpeed {
  double forward = 1.0;
  double backward = 1.0;
  bool same() const { return forward == 1.0 && backward == 1.0; }
};
// Throughput of the kernel a run uses relative to the kernel a profile's attention curves describe.
AttentionSpeed attention_kernel_speed(AttentionKernel runs, AttentionKernel profiled);
// The head dim a fused-attention kernel computes for heads of `head_dim` (docs/model.md §20, "Head-dim
// tiles"): kernels are compiled for a few head-dim tiles and pad a head up to the next one, so a head of
// 112 costs the 128 tile.
double attention_tile_head_dim(AttentionKernel k, double head_dim);

}  // namespace tp
