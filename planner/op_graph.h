// The op graph of a transformer: every op of a layer, of the embedding and of the output head,
// with its parameters, FLOPs and the bytes it keeps for the backward pass. Parameters, FLOPs,
// activation memory (and later compute time and simulator tasks) are all sums over this list.
//
// Quantities are for ONE sequence of s tokens on ONE model replica before any split: the caller
// multiplies by the micro-batch and divides by the parallel degrees via the split flags.
// Activation layout follows Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
// Transformer Models", arXiv:2205.05198, section 4.1 and Table 2); see docs/model.md.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives.h"
#include "framework_rules.h"
#include "layer_code_rules.h"
#include "specs.h"

namespace tp {

// cp_ring_merge: PyTorch's ring attention around the attention core under context parallelism (its per-block
// output merges and gradient accumulations in fp32), timed only with cp > 1 and parallel.cp_comm
// ring_all_gather (planner/op_times.cpp).
enum class OpKind { gemm, attention_core, norm, elementwise, embedding, loss, collective, cp_ring_merge };
enum class Block { embedding, attention, mlp, head, step };  // step: collectives of a stage or of the step

// What an op is in the layer code where its kind does not say it. The kernel rules of eager code and of
// FP8 training (op_graph_kernels.cpp) read this, never an op's name.
enum class OpRole : std::uint8_t {
  none,
  block_norm,     // a block's pre-norm, the final norm or the embedding norm: its output feeds GEMMs
  head_norm,      // Qwen3's q_norm / k_norm: its output feeds the attention, not a GEMM
  residual,       // the residual add closing a block
  activation,     // the MLP's activation (dense or expert)
  norm_fed_gemm,  // a GEMM reading a block norm's output (qkv, fc1): Transformer Engine fuses the norm into it
  router,         // the MoE router: a plain Linear, outside Transformer Engine's FP8 modules
};

// How a tensor is divided across the tensor-parallel ranks of a layer.
enum class TpSplit {
  none,    // replicated on every TP rank (row-parallel bias, router, gathered MoE input)
  tp,      // always divided by tp (column/row-parallel shards, heads, vocab-parallel logits)
  seq_tp,  // divided by tp only with sequence parallelism (norm inputs, dropout masks ...)
};

// The per-GPU share of a value split as `split` over `tp` ranks (`sp`: sequence parallelism on).
inline double tp_share(double v, TpSplit split, int tp, bool sp) {
  switch (split) {
    case TpSplit::none: return v;
    case TpSplit::tp: return v / tp;
    case TpSplit::seq_tp: return sp ? v / tp : v;
  }
  return v;
}

// --- Communication entries (OpKind::collective) ---
// The process group a collective runs over (planner/collectives.h, ParallelGroups). pp: two adjacent
// pipeline stages; pp_ends: the first and the last stage of a pipeline group, Megatron's "embedding group"
// (megatron/core/parallel_state.py, initialize_model_parallel: embedding_ranks = [ranks[0], ranks[-1]]).
// dp: the data x context ranks (the gradient all-reduce without ZeRO); dp_shard: the ranks ZeRO shards
// the states over (all of dp unless parallel.dp_shard is smaller); dp_replica: the ranks holding the
// same shard, one per sharding group (hybrid sharding).
// cp_inner, cp_outer: the two levels of a hierarchical context-parallel group (parallel.cp_a2a ranks of
// adjacent cp rank, and the cp / cp_a2a such groups).
enum class CommGroup : std::uint8_t { tp, cp, ep, dp, pp, pp_ends, dp_shard, dp_replica, cp_inner, cp_outer };
inline constexpr int kCommGroupCount = 10;
// The compute a collective may hide behind when the layout enables that overlap (bounded: it hides at
// most that compute, the rest is exposed).
enum class CommOverlap : std::uint8_t {
  none,            // on the critical path
  layer_gemms,     // the layer's GEMMs of the same pass (parallel.overlap.tp_comm)
  attention_core,  // the fused attention of the layer but its first block ((c - 1)/c of it: ring attention's
                   // c - 1 K/V passes, each hidden behind the block before it)
  attention_local_block,  // the attention of the local block only (1/c: PyTorch's K/V all-gather)
  step_forward,    // the next step's forward pass (ZeRO 1/2 parameter gather, overlap.param_gather)
  step_backward,   // the backward of the step (gradient reduce, overlap.grad_reduce)
  step_compute,    // the step's forward and backward (ZeRO-3 gathers and reduce)
  step_end,        // after the gradient reduce, before the optimizer, on the critical path (Megatron's
                   // finalize_model_grads, DeepSpeed's ReduceTiedGrads)
};
// Which layouts an entry applies to (the ZeRO stage of the data-parallel entries; pipelined: pp > 1;
// sequence_parallel: sequence parallelism on with tp > 1; no_sequence_parallel: off or tp = 1; cp_*: the
// context-parallel exchange, cp_comm_of).
enum class CommWhen : std::uint8_t {
  always, zero0, zero1_or_2, zero_any, zero3, pipelined, sequence_parallel, no_sequence_parallel, cp_p2p,
  cp_all_gather, cp_a2a, cp_ring_all_gather, cp_a2a_p2p
};
// What the entry's bytes count.
enum class CommBytes : std::uint8_t {
  activations,  // `bytes` per sequence before splits (divided per `split` over tp, always by cp), x micro-batch
  sequence,     // as activations, not divided by cp: the whole sequence a context-parallel all-gather assembles
  gradients,    // the stage's parameters x the gradient element bytes (training.grad_precision); for the
                // sequence-parallel gradient all-reduce, the stage's sequence_parallel_parameters
  weights,      // the stage's parameters x the bytes of one stored parameter (parameter_bytes: fp32 under autocast)
  fixed,        // `bytes` as they are, whatever the split and micro-batch (one value per tensor: FP8 amax)
  parameter_gradients,  // `bytes` counts parameters (divided per `split` over tp) x the gradient element bytes
  gradient_shard,  // the stage's parameters x the gradient element bytes / the sharding group's ranks
};

// The collective one pass runs: `count` of them per micro-batch (per step for gradients/weights);
// count 0 = none (Megatron's f operator is the identity in the forward, g in the backward).
struct CommCall {
  float count = 0;  // small whole numbers, exact
  Collective kind = Collective::all_reduce;
};
enum class CommPass : std::uint8_t { forward, backward };

struct Comm {
  double bytes = 0;  // activations: per sequence, before splits (collectives.h size convention)
  CommCall forward, backward;        // without sequence parallelism
  CommCall forward_sp, backward_sp;  // with it (the TP operators change; the others repeat the above)
  TpSplit split = TpSplit::none;
  CommGroup group = CommGroup::tp;
  CommOverlap overlap = CommOverlap::none;
  CommWhen when = CommWhen::always;
  CommBytes source = CommBytes::activations;
  bool per_peer = false;  // repeated (group size - 1) times (ring exchange)
  const CommCall& call(CommPass pass, bool sp) const {
    return pass == CommPass::forward ? (sp ? forward_sp : forward) : (sp ? backward_sp : backward);
  }
};

struct Op {
  const char* name = "";
  OpKind kind = OpKind::elementwise;
  Block block = Block::attention;
  OpRole role = OpRole::none;
  bool expert = false;  // inside an MoE expert: parameters further divided by ep

  double params_split = 0;       // parameters divided by tp (and by ep for experts)
  double params_replicated = 0;  // parameters every TP rank holds (norm weights, row-parallel bias)
  double gemm_rows = 0;          // weight-matrix shape for factored optimizers (0 for vectors)
  double gemm_cols = 0;
  double gemm_count = 0;         // how many such matrices (experts)

  double fwd_flops = 0;  // matmul FLOPs of the forward pass, all TP ranks together (1 MAC = 2 FLOP)
  double bwd_flops = 0;  // input-gradient + weight-gradient FLOPs
  // Share of those FLOPs that model FLOPs (the MFU numerator) count: the output layer over a padded
  // vocabulary counts the model's vocabulary, V / V_padded (docs/model.md §4); the rest is hardware work.
  double model_flops_share = 1.0;
  TpSplit flops_split = TpSplit::tp;
  // GEMMs: the dtype the GEMM runs in, timed through gemm_seconds at that dtype. FP8 training runs the
  // transformer layers' Linear modules in FP8 and keeps the output layer and the MoE router in bf16
  // (docs/model.md, "FP8 training").
  Precision compute_precision = Precision::bf16;
  bool row_parallel = false;  // GEMMs: row-parallel (input split by tp) rather than column-parallel
  bool bias = false;          // GEMMs: adds a bias vector over its output columns

  double bytes_moved = 0;  // HBM bytes read + written by the forward kernel (roofline of memory-bound ops)
  // Row-wise kernels (norms, loss): elements one row reduces, before the split (0: the hidden size).
  double row_length = 0;

  double saved_bytes = 0;  // bytes kept for backward
  TpSplit saved_split = TpSplit::tp;
  bool attention_scores = false;  // the s x s tensors that selective recompute drops
  bool sequence_parallel_only = false;  // runs only with tp > 1 and sequence parallelism (timed as nothing else)
  // Working memory beyond saved_bytes at this op's forward and backward peak (the eager loss's fp32
  // logits and gradients), split like saved_bytes.
  double working_forward = 0;
  double working_backward = 0;
  // Eager code (layer_code_rules.h): the kernel classes timing this op's forward and backward
  // (-1 = timed at the profile's generic memory efficiency), memory passes over bytes_moved and
  // kernels launched in the forward (twice as many in the backward).
  int kernel_class = -1;
  int kernel_class_backward = -1;
  double passes = 1.0;
  double kernels = 1.0;
  // Bytes of the forward and of the backward as multiples of bytes_moved (x passes for kernel-class ops).
  // Memory-bound ops at the generic efficiency: the backward moves twice the forward's bytes unless the op
  // counts its own (Megatron's loss). Kernel-class ops (set_kernels): the backward of an elementwise op
  // reads the output gradient and the input and writes the input gradient (1.5x); FP8 quantization ops
  // run in one pass only (0 in the other).
  double forward_share = 1.0;
  double backward_share = 2.0;
  Comm comm;  // OpKind::collective only: no parameters, FLOPs or saved bytes
};

struct OpGraph {
  std::vector<Op> layer;      // one transformer layer (all layers are alike)
  std::vector<Op> embedding;  // first pipeline stage
  std::vector<Op> head;       // last pipeline stage: final norm, output layer, loss
  // Collectives of a stage or of the step rather than of a layer: the pipeline send/receive between
  // stages, the data-parallel gradient reduce and ZeRO parameter gathers, and the end-of-step gradient
  // syncs (the tied word embedding's between the first and last stage).
  std::vector<Op> step;
  double layer_input_bytes = 0;  // bytes of one layer's input (what full recompute keeps), unsplit
  // The vocabulary the embedding, the output layer and the loss run over: the model's, padded as the
  // layer code pads it at the layout's tp (layer_code_rules.h, padded_vocab).
  std::int64_t vocab = 0;
};

// Builds the graph for sequences of `seq` tokens trained in `precision` with Megatron's fused layer code,
// over the model's own vocabulary (no padding). `flash_attention` keeps only the log-sum-exp instead of
// the s x s score tensors.
OpGraph build_op_graph(const ModelSpec& m, std::int64_t seq, Precision precision, bool flash_attention);
// The same for the scenario's layer code, autocast and compile settings (planner/layer_code_rules.h), over
// the vocabulary the layer code runs at tensor parallelism `tp` (padded_vocab); with the framework's
// end-of-step gradient syncs (a tied word embedding's all-reduce between the pipeline's ends).
OpGraph build_op_graph(const ModelSpec& m, const TrainingSpec& t, int tp);
OpGraph build_op_graph(const ModelSpec& m, std::int64_t seq, Precision precision, bool flash_attention,
                       const SavedTensorRules& rules, std::int64_t vocab);

// Parameters of a pipeline stage of `layers` layers (with the head on the last stage) that every TP rank
// holds but whose gradient each rank computes from its own sequence shard under sequence parallelism: the
// ops' replicated parameters (norm weights and biases, row-parallel biases, the router; an expert's divided
// by `ep`). Megatron marks exactly these `sequence_parallel` (Transformer Engine's LayerNorm/RMSNorm and
// LayerNormLinear norm weights, te.Linear's row-parallel bias; megatron/core/transformer/moe/router.py).
double sequence_parallel_parameters(const OpGraph& g, double layers, bool last_stage, int ep);

// Exact parameter count of the model (embeddings counted once when tied).
double total_parameters(const ModelSpec& m);
// The same from a graph already built for the model.
double total_parameters(const OpGraph& g, int layers);

}  // namespace tp
