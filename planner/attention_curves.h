// The curves a scenario's fused attention is timed at: its profile's, or FlashAttention-2's published
// curve for the GPU's generation (docs/model.md §20, "Attention kernels"); and the grid it runs on
// (docs/model.md §15, "The attention grid's tail").
#pragma once

#include "attention_kernel_rules.h"
#include "hardware_profile.h"
#include "scenario.h"
#include "specs.h"

namespace tp {

struct FusedAttentionCurves {
  AttentionCurve forward, backward;          // read at the (local) sequence and the kernel's head-dim tile
  AttentionSpeed speed;                      // the run's kernel against the kernel the curves describe
  AttentionKernel described = AttentionKernel::cudnn;  // the kernel the curves describe
  bool published = false;                    // FlashAttention-2's published curve, not the profile's
};

// A profile's curves describe one kernel (HardwareProfile::attention_kernel). A run of another kernel reads
// them times that kernel's throughput against the profile's (attention_kernel_speed), except where the run's
// kernel is FlashAttention-2 or MPT's Triton kernel, the profile's curves are cuDNN's, and FlashAttention-2
// has a published curve for the GPU's generation (Hopper: kFlash2H100, model/flash_attention_fits.h). Then
// it reads that curve times the kernel's rate against FlashAttention-2: cuDNN's short-sequence fall-off is
// cuDNN's own (the H100 profile's backward halves at s = 489 and again, causal, at 653), and
// FlashAttention-2 keeps more of its rate there (the published H100 bars; the measured SDPA kernels of
// h100-pytorch-kernel-time.json). Explicit attention (flash_attention: false): the profile's, speed 1.
// The one rule the step time and the reports read.
FusedAttentionCurves fused_attention_curves(const TrainingSpec& t, const GpuSpec& gpu, const HardwareProfile& hw);

// The fused kernels' grid on one GPU and how busy it keeps the SMs (model/attention_grid.h): `micro_batch`
// sequences x heads / tp over the sequence one kernel attends, which context parallelism sets by its
// exchange: the ring exchanges (p2p, all_gather, ring_all_gather) attend the local s / cp tokens with every
// head; Ulysses (a2a) gathers the whole sequence and scatters the heads (DeepSpeed-Ulysses, Jacobs et al.
// 2023, §3.1; TE AttnFuncWithCPAndQKVOA2A), so a GPU attends all s tokens with heads / cp; a2a+p2p both:
// s / cp_outer tokens with heads / cp_inner. Balance 1 for explicit attention or a GPU whose SM count is
// unknown. The one rule the step time and the reports read.
struct FusedAttentionGrid {
  double batch_heads = 0, seq = 0;
  double forward = 1, backward = 1;  // balance per pass: work / (SMs x makespan)
};
FusedAttentionGrid fused_attention_grid(const Scenario& s, double micro_batch, int tp, int cp);

}  // namespace tp
