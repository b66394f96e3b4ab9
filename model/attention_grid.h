// How evenly a fused attention kernel's thread blocks fill the GPU (docs/model.md §15, "The attention
// grid's tail"). One rule for the step time (planner/op_times.cpp), the calibration fit and its checks.
//
// FlashAttention-2 launches one thread block per 128-row tile of one sequence and head: the forward a
// grid (m-blocks, batch, heads) whose causal block i does i + 1 units of work (the key tiles left of the
// diagonal), the backward a grid (n-blocks, batch, heads) whose block j does nm - j (the query tiles
// below it) (flash-attention csrc/flash_attn/src/flash_fwd_launch_template.h, flash_bwd_launch_template.h;
// MPT's Triton kernel the same grids with BLOCK 128, llmfoundry/models/layers/flash_attn_triton.py). The
// hardware hands blocks to SMs in launch order as SMs free up: a greedy list schedule. A large grid keeps
// every SM busy to the end; a small one (few sequences x heads per GPU: micro-batch 1 under tensor
// parallelism) ends in a tail where most SMs idle while the last long blocks finish.
//
// balance = work / (SMs x makespan): 1 = no tail. One block per SM: the measured FlashAttention-2 kernels of
// a Llama-8B step on one H100 (b 1, 32 heads, s 2,048, h100-pytorch-kernel-time.json) ran 24 % below the
// curve measured on wide grids; the schedule gives 0.77 with 132 slots and 0.61 with two per SM.
#pragma once

namespace tp {

// Rows (and key columns) of one thread block's tile.
inline constexpr double kAttentionBlockRows = 128;

// The block order of a pass's grid: ascending causal work (the forward's m-blocks) or descending (the
// backward's n-blocks).
enum class AttentionPass { forward, backward };

// The balance of one kernel launch over `batch_heads` sequences x heads (per GPU) of `seq` query tokens on
// `sms` streaming multiprocessors; causal or full scores. 1 when `sms` is unknown (0) or the inputs are
// not positive. Closed form of the greedy list schedule (model/attention_grid.cpp), within 0.01 of it on
// average over the grids of tests/unit/test_attention_grid.cpp.
double attention_grid_balance(double batch_heads, double seq, double sms, bool causal, AttentionPass pass);

}  // namespace tp
