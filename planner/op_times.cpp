#include "op_times.h"

#include <algorithm>
#include <cmath>

#include "attention_curves.h"
#include "attention_flops.h"
#include "attention_kernel_rules.h"
#include "gemm_shapes.h"
#include "gemm_time.h"
#include "kernel_class.h"
#include "kernel_class_time.h"
#include "tp_overlap.h"
#include "unfused_attention.h"

namespace tp {

namespace {

struct PassTimes {
  double fwd = 0, bwd = 0;
};

// A GEMM op: its forward at the forward shape's rate, its backward half at the input-gradient shape's and
// half at the weight-gradient shape's (planner/gemm_shapes.h: the shapes the calibration suite measures),
// each at least its memory time. Timed at the GEMM's own dtype (op_graph.h: FP8 training keeps the
// output layer in bf16).
PassTimes gemm_op_time(const Op& op, const OpTimeContext& c, double launch, double mem_time) {
  const double split = op.flops_split == TpSplit::none ? 1.0 : c.tp;
  const double flops = op.fwd_flops * c.b / c.cp / split;
  const double bwd_flops = op.bwd_flops * c.b / c.cp / split;
  const GemmPassShapes shapes = gemm_pass_shapes(op, c.tp, c.s.parallel.ep, c.b / c.cp);
  // TE's TP-communication overlap runs the forward and input-gradient GEMMs in token chunks
  // (tp_overlap.h); the weight gradient (half the backward FLOPs) stays whole.
  const bool chunked = c.te_tp_overlap && op.flops_split == TpSplit::tp && !op.expert;
  const TpOverlapGemmPlan ub = chunked ? tp_overlap_gemm_plan(op.row_parallel, c.tp) : TpOverlapGemmPlan{};
  // Seconds per FLOP of one shape (model/gemm_time.h: measured, fitted, or cuBLAS's align1 fallback), the
  // launch counted once per op below, at the cluster's sustained clock (model/sustained_clock.h).
  const GpuSpec& gpu = c.s.cluster.gpu;
  const auto per_flop = [&](const GemmDims& d, double splits) {
    if (d.flops() <= 0) return 0.0;
    const double t = splits > 1 ? chunked_gemm_seconds_per_flop(c.hw, gpu, op.compute_precision, d, splits, launch)
                                : (gemm_seconds(c.hw, gpu, op.compute_precision, d).value - launch) / d.flops();
    return t * c.tensor_time_scale;
  };
  const double fwd = std::max(flops * per_flop(shapes.forward, ub.forward_splits), mem_time) + launch;
  const double bwd = std::max(0.5 * bwd_flops * (per_flop(shapes.input_grad, ub.dgrad_splits) + per_flop(shapes.weight_grad, 1)),
                              2 * mem_time) +
                     2 * launch;
  return {fwd, bwd};
}

// The attention core (docs/model.md §15).
PassTimes attention_op_time(const Op& op, const OpTimeContext& c, double launch, double mem_time) {
  const bool fused = c.s.training.flash_attention;
  // Causal masking: fused kernels skip the masked half of the score blocks.
  const double causal = attention_executed_share(fused, true);
  const double flops = op.fwd_flops * c.b / c.cp / c.tp * causal;
  // Fused: the curve over the sequence one kernel attends (the context-parallel exchange's: grid.seq) and
  // the head dim, causal, at the throughput of the kernel the framework runs relative to the one the curve
  // describes (planner/attention_curves.h).
  const FusedAttentionGrid grid = fused_attention_grid(c.s, c.b, c.tp, c.cp);
  const double seq = grid.seq;
  const double hd = static_cast<double>(c.s.model.head_dim);
  const FusedAttentionCurves curves = fused_attention_curves(c.s.training, c.s.cluster.gpu, c.hw);
  // The kernel computes the head padded to its tile (framework_rules.h); the curves are measured on heads
  // of 64 and 128, which every kernel runs unpadded, so they are read at the tile and the padded columns
  // count as lost throughput.
  const double tile = attention_tile_head_dim(attention_kernel_of(c.s.training, c.s.cluster.gpu), hd);
  const double useful = tile > 0 ? hd / tile : 1.0;
  // No kernel outruns the tensor cores' peak: a curve read past its measured range, times another kernel's
  // speed, is held to it (an A100 at s 131,072 read 1.22 x the peak).
  const double eff_f = std::min(1.0, fused ? curves.forward.efficiency(seq, tile) * curves.speed.forward * useful : c.hw.attention_unfused);
  const double eff_b = std::min(1.0, fused ? curves.backward.efficiency(seq, tile) * curves.speed.backward * useful : c.hw.attention_unfused);
  // Fused kernels are compute-bound on the tensor cores: at the cluster's sustained clock, and only as
  // busy as their grid of this GPU's sequences x heads keeps the SMs (model/attention_grid.h).
  const double clock = fused ? c.tensor_time_scale : 1.0;
  double fwd = std::max(clock * flops / (c.peak_attn * eff_f * grid.forward), mem_time) + launch * (fused ? 1 : 3);
  double bwd = std::max(clock * kAttentionBackwardFactor * flops / (c.peak_attn * eff_b * grid.backward), 2 * mem_time) +
               launch * (fused ? 1 : 4);
  if (!fused && !c.hw.attention_unfused_measured) {
    // Not measured: the unfused chain's kernels one after the other (unfused_attention.h).
    // The GPU's score elements: its sequences x heads, each of its queries against every key.
    const double scores = grid.batch_heads * seq * static_cast<double>(c.s.training.sequence_length);
    const UnfusedAttentionTime u = unfused_attention_time(flops, scores, stored_bytes(c.s.training.precision), c.s.model.dropout,
                                                          c.s.training.precision, c.hw, c.s.cluster.gpu, launch, c.tensor_time_scale);
    fwd = u.forward;
    bwd = u.backward;
  }
  return {fwd, bwd};
}

// Eager kernels (layer_code_rules.h) and FP8 quantization: passes over the minimal traffic at the
// class's bandwidth; the backward of an elementwise op moves 1.5x the forward's bytes (reads the
// output gradient and the input, writes the input gradient), as the class measurements count it
// (docs/model.md §20); quantization kernels run in one pass only (op.forward/backward_share).
PassTimes kernel_class_op_time(const Op& op, const OpTimeContext& c, double launch, double moved) {
  // The class's bandwidth (model/kernel_class_time.h) at this op's row length when it runs as one
  // fused row kernel: the hidden size, or the vocabulary shard for the loss (an eager chain of
  // several elementwise kernels has no row term); the call's fixed cost is the launch term here.
  const auto class_bw = [&](int k) {
    const KernelClass kc = static_cast<KernelClass>(k);
    const double row = op.kernels > 1        ? 0.0
                       : op.row_length > 0 ? tp_share(op.row_length, op.flops_split, c.tp, c.sp)
                                           : static_cast<double>(c.s.model.hidden);
    return kernel_class_bandwidth(c.hw, c.s.cluster.gpu, kc, row);
  };
  const double bytes = moved * op.passes;
  const double fwd = op.forward_share > 0 ? op.forward_share * bytes / class_bw(op.kernel_class) + launch * op.kernels : 0.0;
  const bool once = op.kind == OpKind::loss;  // the loss class is timed forward + backward together
  const double bwd = once || op.backward_share <= 0
                         ? 0.0
                         : op.backward_share * bytes / class_bw(op.kernel_class_backward) + 2 * launch * op.kernels;
  return {fwd, bwd};
}

// PyTorch's ring attention around the core (OpKind::cp_ring_merge), per micro-batch on the ring's slowest
// rank, the last, where every block after the first is a whole merge; counted from
// torch/distributed/tensor/experimental/_attention.py with convert_to_f32 (docs/model.md §15,
// "Context-parallel exchanges"). Eq: the rank's attention-output elements; Ekv: those of K (as many of V).
//   forward  (38 (c - 1) + 12) Eq + 8 c Ekv bytes: each later block's output cast to fp32 (6 B) and merged,
//            out - sigmoid(lse_b - lse) (out - out_b) (32 B); the first cast and the final cast back (12 B);
//            K and V made contiguous and concatenated for the rotation (8 B a step);
//   backward (10 c + 10) Eq + (50 c + 14) Ekv: fp32 accumulators zeroed (4 B); per step dQ += (10 B), dK and
//            dV added into their accumulators' first half and concatenated again (26 B), concatenated in fp32
//            for the ring (16 B), K and V concatenated (8 B); K and V made contiguous, the casts back (6 B).
// Compiled (training.compile) a block's cast and merge fuse into one pass that reads the fp32 output and the
// block's and writes the output: 10 B instead of 38 (the backward's accumulations are single kernels already).
// About six kernels a step forward, seven backward, at the generic memory efficiency.
PassTimes ring_merge_time(const Op& op, const OpTimeContext& c, double launch) {
  if (c.cp <= 1 || cp_comm_of(c.s.parallel, c.s.training.framework) != CpComm::ring_all_gather) return {};
  const double steps = c.cp;
  const ModelSpec& m = c.s.model;
  const double eq = op.bytes_moved / 4.0 * c.b / c.cp / c.tp;
  const double ekv = eq * static_cast<double>(attention_kv_heads(m, repeat_kv_of(c.s.training))) / static_cast<double>(m.heads);
  const double merge = c.s.training.compile ? 10.0 : 38.0;
  return {((merge * (steps - 1) + 12) * eq + 8 * steps * ekv) / c.bw + 6 * steps * launch,
          ((10 * steps + 10) * eq + (50 * steps + 14) * ekv) / c.bw + 7 * steps * launch};
}

}  // namespace

OpTimes time_ops(const std::vector<Op>& ops, const OpTimeContext& c) {
  OpTimes t;
  const double launch = c.hw.kernel_launch.value;
  // Adds an op's pass times to the layer's and returns them for the part they also count in.
  auto add = [&t](PassTimes x) {
    t.fwd += x.fwd;
    t.bwd += x.bwd;
    return x;
  };
  for (const Op& op : ops) {
    if (op.sequence_parallel_only && !(c.sp && c.tp > 1)) continue;
    const double moved = tp_share(op.bytes_moved, op.saved_split == TpSplit::none ? TpSplit::none : op.flops_split, c.tp, c.sp) *
                         c.b / c.cp;
    const double mem_time = moved / c.bw;
    switch (op.kind) {
      case OpKind::gemm: {
        const PassTimes x = add(gemm_op_time(op, c, launch, mem_time));
        t.gemm_fwd += x.fwd;
        t.gemm_bwd += x.bwd;
        break;
      }
      case OpKind::attention_core: {
        const PassTimes x = add(attention_op_time(op, c, launch, mem_time));
        t.attention += x.fwd;
        t.attention_bwd += x.bwd;
        t.attention_core_fwd += x.fwd;
        break;
      }
      case OpKind::collective: break;  // timed from the communication entries (planner/comm_time.h)
      case OpKind::cp_ring_merge: {
        t.attention_core_fwd += add(ring_merge_time(op, c, launch)).fwd;  // rerun with the core it merges
        break;
      }
      default: {
        if (op.bytes_moved <= 0 && op.saved_bytes <= 0) break;
        if (op.kernel_class >= 0) {
          add(kernel_class_op_time(op, c, launch, moved));
          break;
        }
        // The backward moves twice the forward's bytes unless the op counts its own.
        // A pass the op does not run (forward_share or backward_share 0) launches nothing.
        add({op.forward_share > 0 ? op.forward_share * mem_time + launch : 0.0,
             op.backward_share > 0 ? op.backward_share * mem_time + launch : 0.0});
        if (op.attention_scores) t.attention_core_fwd += mem_time + launch;
        break;
      }
    }
  }
  return t;
}

}  // namespace tp
