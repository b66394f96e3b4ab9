// Compute slowed by the data-parallel collectives it hides (docs/model.md §15, "Overlap contention").
// An NCCL collective running beside compute takes SMs (one CTA per channel) and HBM bandwidth from the
// kernels it overlaps, so a collective that is hidden still costs time: Lee et al. 2025 ("Characterizing
// Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning: Performance and Power
// Implications", arXiv 2507.03114) measure compute overlapped with communication 18.9 % slower on
// average (maximum 40 %) than alone, over GPT and Llama training on A100, H100, MI250 and MI210.
#pragma once

namespace tp {

// The measured mean slowdown of compute while a collective runs beside it (Lee et al. 2025, abstract).
inline constexpr double kOverlapComputeSlowdown = 0.189;

// Seconds the compute loses while `hidden` seconds of collective traffic run beside it: during that
// window the compute runs 1 / (1 + k) as fast, so the step grows by k / (1 + k) x hidden. Zero for
// hidden <= 0.
double overlap_contention_seconds(double hidden);

}  // namespace tp
