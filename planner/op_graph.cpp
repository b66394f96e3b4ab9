#include "op_graph.h"

#include "attention_flops.h"
#include "kernel_class.h"
#include "op_builders.h"
#include "op_graph_comm.h"
#include "op_graph_kernels.h"

namespace tp {

OpGraph build_op_graph(const ModelSpec& m, std::int64_t seq, Precision precision, bool flash_attention) {
  TrainingSpec t;
  t.precision = precision;
  return build_op_graph(m, seq, precision, flash_attention, saved_tensor_rules(t, m), m.vocab);
}

OpGraph build_op_graph(const ModelSpec& m, const TrainingSpec& t, int tp) {
  OpGraph g = build_op_graph(m, t.sequence_length, t.precision, t.flash_attention, saved_tensor_rules(t, m),
                             padded_vocab(m.vocab, layer_code_of(t), tp));
  // The end-of-step gradient syncs of the framework (framework_rules.h): Megatron's finalize_model_grads
  // all-reduces the sequence-parallel gradients first, then the tied embedding's.
  const FrameworkRules& fw = framework_rules(t.framework);
  if (fw.sequence_parallel_grad_sync) add_sequence_parallel_grad_all_reduce(g.step);
  if (m.tied_embeddings && fw.tied_embedding_grad_sync) {
    add_tied_embedding_grad_all_reduce(g.step, static_cast<double>(g.vocab) * static_cast<double>(m.hidden));
  }
  return g;
}

namespace {

// The first MLP GEMM's width in units of the FFN size: SwiGLU's gate and up projections, or one.
double fc1_width(Activation a) { return a == Activation::swiglu ? 2.0 : 1.0; }

// What every block builder needs: the model, the framework's saved-tensor rules and the per-sequence
// sizes derived from them (one sequence of s tokens, unsplit).
struct Sizes {
  const ModelSpec& m;
  const SavedTensorRules& r;
  Precision precision;
  bool flash_attention;
  double s, h, a, q_dim, kv_dim;
  double kv_attention;  // the width of K (as of V) the attention reads: q_dim when the code repeats them (repeat_kv)
  double bpv;   // bytes per stored value in the training precision
  double mask;  // dropout masks are 1 byte per element (0 without dropout)
  // Communication entries sit beside the compute ops: TP collectives after each block's norm (input
  // side) and before its residual add (output side), the CP ring exchange before the attention core, the
  // MoE all-to-alls around the experts. Their bytes are in the training precision (what the GEMMs read
  // and write): `act_bytes` = s x h.
  double act_bytes;
};

Sizes sizes_of(const ModelSpec& m, std::int64_t seq, Precision precision, bool flash_attention, const SavedTensorRules& r) {
  const double s = static_cast<double>(seq);
  const double h = static_cast<double>(m.hidden);
  const double a = static_cast<double>(m.heads);
  const double bpv = stored_bytes(precision);
  const double q_dim = a * static_cast<double>(m.head_dim);
  const double kv_dim = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim);
  const double kv_attention = static_cast<double>(attention_kv_heads(m, r.repeat_kv)) * static_cast<double>(m.head_dim);
  return Sizes{m, r, precision, flash_attention, s, h, a, q_dim, kv_dim, kv_attention, bpv, m.dropout ? 1.0 : 0.0, s * h * bpv};
}

// training.attention_unpad (docs/model.md §20, "Unpadded attention"): flash-attn's bert_padding around
// flash_attn_varlen_func, as llm-foundry's flash_attn_fn calls it (llmfoundry/models/layers/attention.py,
// PR #838 tree). Forward: unpad_input gathers Q, K and V (IndexFirstAxis, torch.gather: read and write
// each) and pad_input scatters the output into a zeroed tensor (IndexPutFirstAxis: write zeros, read and
// write the values). Backward: each gather's gradient is a zeroed tensor scattered into (write, read,
// write), the scatter's a gather (read, write). The out-projection then keeps the padded output while the
// kernel keeps its unpadded one: one more copy of it saved (the int64 token indices, 8 B per token, are
// left out: under 0.1 % of it at any hidden size here).
void add_attention_unpad(std::vector<Op>& L, const Sizes& x) {
  const double qkv = x.s * (x.q_dim + 2.0 * x.kv_dim) * x.bpv, out = x.s * x.q_dim * x.bpv;
  const double forward = 2.0 * qkv + 3.0 * out, backward = 3.0 * qkv + 2.0 * out;
  Op& unpad = add_elementwise(L, "attention_unpad", Block::attention, out, TpSplit::tp, forward);
  unpad.backward_share = backward / forward;
}

// Eager code's TP collectives on the sequence dimension (docs/model.md §15, "Sequence-dimension copies"):
// PyTorch's functional collectives gather and scatter along dim 0 only, so a [b, s, h] tensor sharded on s
// is gathered, then `torch.cat(torch.chunk(..., dim=0), dim=gather_dim)`, and scattered after the mirror
// `torch.cat(torch.chunk(..., dim=scatter_dim))` (torch/distributed/_functional_collectives.py,
// all_gather_tensor / reduce_scatter_tensor): one copy of the whole tensor, read and written, per
// collective and pass. Megatron's [s, b, h] layout gathers on dim 0 and copies nothing.
void add_sequence_dim_copy(std::vector<Op>& L, Block block, const Sizes& x) {
  if (!x.r.eager_kernels) return;
  Op& copy = add_elementwise(L, "tp_sequence_copy", block, 0.0, TpSplit::none, 2.0 * x.act_bytes);
  copy.backward_share = 1.0;  // the backward's collective is the mirror one, with its own copy
  copy.sequence_parallel_only = true;
}

// The attention core and the tensor it keeps beside Q, K, V: the fp32 log-sum-exp (FlashAttention) or
// the s x s scores.
void add_attention_core(std::vector<Op>& L, const Sizes& x) {
  const ModelSpec& m = x.m;
  const double s = x.s, a = x.a, q_dim = x.q_dim, kv_dim = x.kv_attention, bpv = x.bpv;
  Op& core = add_op(L);
  core.name = "attention_core";
  core.kind = OpKind::attention_core;
  core.block = Block::attention;
  // QK^T and softmax(.)V: 2 * (2 s^2 d) per head, full (non-causal) count as in Megatron's formula.
  core.fwd_flops = attention_forward_flops(1.0, a, s, s, static_cast<double>(m.head_dim));
  core.bwd_flops = kAttentionBackwardFactor * core.fwd_flops;
  core.saved_bytes = s * (q_dim + 2.0 * kv_dim) * bpv;  // Q, K, V
  core.saved_split = TpSplit::tp;
  core.bytes_moved = s * (2.0 * q_dim + 2.0 * kv_dim) * bpv;  // read Q, K, V; write O
  if (!x.flash_attention) core.bytes_moved += 4.0 * a * s * s * bpv;  // scores written and read twice
  Op& scores = add_elementwise(L, "attention_scores", Block::attention, 0.0, TpSplit::tp);
  if (x.flash_attention) {
    scores.name = "attention_logsumexp";
    scores.saved_bytes = a * s * 4.0;  // fp32 log-sum-exp per row
  } else {
    // softmax output (bpv), dropout mask (1 B) and dropout output (bpv) per score.
    scores.saved_bytes = a * s * s * (bpv + (m.dropout ? 1.0 + bpv : 0.0));
    scores.attention_scores = true;
  }
  if (x.r.attention_unpad) add_attention_unpad(L, x);
}

// --- attention block: 11sbh + 5as^2b in 16-bit with dropout (Korthikanti eq. 2) ---
// Rotary embedding of Q and K after the qkv GEMM: reads and writes both (it keeps nothing: cos/sin are
// recomputed). Eager code runs `rotate_half`'s kernel chain (its kernel classes); Megatron-Core's fused RoPE
// (apply_rope_fusion, on by default: Transformer Engine's fused_apply_rotary_pos_emb) one pass, whose
// backward rotates the incoming gradient the same way, reading and writing as many bytes as the forward.
void add_rotary(std::vector<Op>& L, const Sizes& x) {
  const SavedTensorRules& r = x.r;
  Op& rope = add_elementwise(L, "rotary", Block::attention, 0.0, TpSplit::tp, 2.0 * x.s * (x.q_dim + x.kv_dim) * x.bpv);
  if (r.eager_kernels) set_kernels(rope, KernelClass::rotary_fwd, KernelClass::rotary_bwd, r.rotary_passes, r.rotary_kernels);
  else rope.backward_share = 1.0;
}

// K and V repeated to the query heads before the attention (repeat_kv_of: torchtitan's Llama `repeat_kv`,
// torch.unsqueeze(x, 3).expand(...).reshape(...), which copies): reads both, writes them q_dim wide; its backward
// sums each head's copies back (reads the wide gradients, writes the narrow ones), as many bytes. The attention
// then keeps and reads the wide ones (add_attention_core, x.kv_attention).
void add_repeat_kv(std::vector<Op>& L, const Sizes& x) {
  Op& repeat = add_elementwise(L, "repeat_kv", Block::attention, 0.0, TpSplit::tp,
                               x.s * 2.0 * (x.kv_dim + x.kv_attention) * x.bpv);
  repeat.backward_share = 1.0;
}

// PyTorch's ring attention (torch/distributed/tensor/experimental/_attention.py, `_templated_ring_attention`
// and its backward, with `_cp_options.convert_to_f32`): the attention core's merges of per-block outputs and
// its fp32 gradient accumulators. Its bytes are the attention output's in fp32, s x q x 4; op_times.cpp counts
// the passes per ring step (docs/model.md §15, "Context-parallel exchanges").
void add_ring_merge(std::vector<Op>& L, const Sizes& x) {
  add_elementwise(L, "cp_ring_merge", Block::attention, 0.0, TpSplit::tp, x.s * x.q_dim * 4.0).kind = OpKind::cp_ring_merge;
}

// Bias-dropout-add into the residual stream closing a block: reads two tensors, writes one (and the mask).
void add_residual(std::vector<Op>& L, const char* name, Block block, const Sizes& x) {
  add_elementwise(L, name, block, x.s * x.h * x.mask, TpSplit::seq_tp, x.s * x.h * (3.0 * x.bpv + x.mask)).role = OpRole::residual;
}

void add_attention_block(std::vector<Op>& L, const Sizes& x) {
  const ModelSpec& m = x.m;
  const SavedTensorRules& r = x.r;
  const double s = x.s, h = x.h, q_dim = x.q_dim, kv_dim = x.kv_dim, bpv = x.bpv;
  const double qkv_reads = norm_output_readers(Block::attention, r);
  add_norm(L, "attention_norm", Block::attention, m, s, bpv, r.norm);
  add_tp_input_operator(L, Block::attention, x.act_bytes);
  add_sequence_dim_copy(L, Block::attention, x);
  add_gemm(L, "qkv", Block::attention, h, q_dim + 2.0 * kv_dim, s, m.bias, false, s * h * r.gemm_input * qkv_reads,
           TpSplit::seq_tp).role = OpRole::norm_fed_gemm;
  if (m.qk_norm) {
    add_head_norm(L, "q_norm", m, s, q_dim, bpv, r.head_norm);
    add_head_norm(L, "k_norm", m, s, kv_dim, bpv, r.head_norm);
  }
  if (m.position == Position::rope) add_rotary(L, x);
  if (x.kv_attention > kv_dim) add_repeat_kv(L, x);
  // The context-parallel exchanges move K and V as wide as the attention reads them.
  add_cp_exchanges(L, s * 2.0 * x.kv_attention * bpv, s * 2.0 * q_dim * bpv, s * 2.0 * x.kv_attention * 4.0);
  add_attention_core(L, x);
  add_ring_merge(L, x);
  // Its input is the attention output the fused attention keeps anyway, plus FP8 training's FP8 copy.
  add_gemm(L, "attention_out", Block::attention, q_dim, h, s, m.bias, true, s * q_dim * (bpv + r.attention_out_extra),
           TpSplit::tp);
  add_tp_output_operator(L, Block::attention, x.act_bytes);
  add_sequence_dim_copy(L, Block::attention, x);
  add_residual(L, "attention_residual", Block::attention, x);
}

// Dense MLP: fc1 (gate and up for SwiGLU), the activation, fc2.
void add_dense_mlp(std::vector<Op>& L, const Sizes& x) {
  const ModelSpec& m = x.m;
  const SavedTensorRules& r = x.r;
  const double s = x.s, h = x.h, bpv = x.bpv;
  const double fc1_reads = norm_output_readers(Block::mlp, r);
  const double f = static_cast<double>(m.ffn_hidden);
  add_gemm(L, "fc1", Block::mlp, h, fc1_width(m.activation) * f, s, m.bias, false, s * h * r.gemm_input * fc1_reads,
           TpSplit::seq_tp).role = OpRole::norm_fed_gemm;
  add_elementwise(L, to_string(m.activation), Block::mlp, s * f * r.activation, TpSplit::tp,
                  s * f * bpv * (fc1_width(m.activation) + 1.0)).role = OpRole::activation;
  add_gemm(L, "fc2", Block::mlp, f, h, s, m.bias, true, s * f * r.fc2_input, TpSplit::tp);
}

// MoE MLP: the router, the expert all-to-alls and the experts' GEMMs over the routed tokens.
void add_moe_mlp(std::vector<Op>& L, const Sizes& x) {
  const ModelSpec& m = x.m;
  const SavedTensorRules& r = x.r;
  const double s = x.s, h = x.h, bpv = x.bpv;
  const double e = static_cast<double>(m.moe.experts);
  const double k = static_cast<double>(m.moe.top_k);
  const double cap = m.moe.capacity_factor;
  const double f = static_cast<double>(m.moe.expert_ffn_hidden);
  // Router: replicated linear h -> experts; keeps its input and fp32 probabilities.
  // Replicated on every TP rank: neither column- nor row-parallel.
  Op& router = add_gemm(L, "router", Block::mlp, h, e, s, false, false, s * h * bpv + s * e * 4.0, TpSplit::seq_tp);
  router.role = OpRole::router;
  router.params_replicated = router.params_split;
  router.params_split = 0;
  router.flops_split = TpSplit::none;
  // Each token visits top_k experts. An expert takes capacity_factor x its even share of them (GShard's
  // expert capacity; Megatron-Core's moe_expert_capacity_factor with moe_pad_expert_input_to_capacity): below
  // 1 the rest are dropped, above 1 the buffer is padded. Its GEMMs run, its activations keep and the
  // all-to-alls move the whole buffer; model FLOPs count the tokens it serves (at most the routed ones).
  const double routed = k * s;
  const double buffered = cap * routed;
  const double served_share = std::min(1.0, 1.0 / cap);
  // Permutation into expert order before the dispatch: Megatron-Core moe_utils.permute,
  // tokens.index_select(0, sorted_indices // topk), reads and writes each of the k copies; its backward
  // adds the copies' gradients back into the token rows (as many bytes). Keeps only the int indices.
  add_elementwise(L, "expert_permute", Block::mlp, 0.0, TpSplit::seq_tp, 2.0 * routed * h * bpv).backward_share = 1.0;
  add_ep_all_to_all(L, "ep_dispatch", cap * k * x.act_bytes);
  // FLOPs over the buffered tokens: active experts only.
  Op& fc1 = add_gemm(L, "expert_fc1", Block::mlp, h, fc1_width(m.activation) * f, buffered, m.bias, false,
                     buffered * h * bpv, TpSplit::none, e);
  fc1.expert = true;
  fc1.model_flops_share = served_share;
  Op& act = add_elementwise(L, "expert_activation", Block::mlp, buffered * f * r.activation, TpSplit::tp,
                            buffered * f * bpv * (fc1_width(m.activation) + 1.0));
  act.expert = true;
  act.role = OpRole::activation;
  Op& fc2 = add_gemm(L, "expert_fc2", Block::mlp, f, h, buffered, m.bias, true, buffered * f * bpv, TpSplit::tp, e);
  fc2.expert = true;
  fc2.model_flops_share = served_share;
  add_ep_all_to_all(L, "ep_combine", cap * k * x.act_bytes);
  // Combining the expert outputs weighted by the router probabilities keeps the outputs.
  add_elementwise(L, "expert_combine", Block::mlp, routed * h * bpv, TpSplit::seq_tp, 2.0 * routed * h * bpv);
}

// --- MLP block: 19sbh for GELU with 4h (Korthikanti eq. 3), or MoE ---
void add_mlp_block(std::vector<Op>& L, const Sizes& x) {
  add_norm(L, "mlp_norm", Block::mlp, x.m, x.s, x.bpv, x.r.norm);
  // With sequence parallelism an MoE block gathers over TP the tokens the all-to-all brought, top_k x
  // capacity_factor copies of each, and reduce-scatters the experts' outputs alike (Megatron-Core
  // token_dispatcher.py, MoEAlltoAllTokenDispatcher: "A2A(EP) -> AG(TP)", "RS(TP) -> A2A(EP)"); a dense
  // block its own tokens.
  const bool moe = x.m.moe.enabled();
  const double routed_act = moe ? x.m.moe.capacity_factor * x.m.moe.top_k * x.act_bytes : x.act_bytes;
  const auto tp_operator = [&](Op& (*add)(std::vector<Op>&, Block, double)) {
    if (!moe) {
      add(L, Block::mlp, x.act_bytes);
      return;
    }
    add(L, Block::mlp, x.act_bytes).comm.when = CommWhen::no_sequence_parallel;
    add(L, Block::mlp, routed_act).comm.when = CommWhen::sequence_parallel;
  };
  tp_operator(add_tp_input_operator);
  add_sequence_dim_copy(L, Block::mlp, x);
  if (!moe) add_dense_mlp(L, x);
  else add_moe_mlp(L, x);
  tp_operator(add_tp_output_operator);
  add_sequence_dim_copy(L, Block::mlp, x);
  add_residual(L, "mlp_residual", Block::mlp, x);
}

// What the layer code adds around the blocks: eager kernel classes, the GEMMs' dtype and FP8
// training's quantization kernels.
void finish_layer(std::vector<Op>& L, const Sizes& x) {
  const SavedTensorRules& r = x.r;
  if (r.eager_kernels) apply_eager_kernels(L, x.m, r, x.s, x.bpv);
  for (Op& op : L) {
    // The MoE router is a plain Linear outside Transformer Engine's FP8 modules (bf16 under FP8).
    if (op.kind == OpKind::gemm) op.compute_precision = x.precision == Precision::fp8 && op.role == OpRole::router ? Precision::bf16 : x.precision;
  }
  if (x.precision == Precision::fp8) add_fp8_quantization(L, !r.eager_kernels, r.fp8_recipe);
}

// --- embedding (first stage): vocabulary-parallel word embedding over `v` rows, replicated positions ---
void add_embedding(std::vector<Op>& E, const Sizes& x, double v) {
  const ModelSpec& m = x.m;
  const double s = x.s, h = x.h, bpv = x.bpv;
  Op& emb = add_op(E);
  emb.name = "embedding";
  emb.kind = OpKind::embedding;
  emb.block = Block::step;
  emb.params_split = v * h;
  emb.gemm_rows = v;
  emb.gemm_cols = h;
  emb.gemm_count = 1;
  if (m.position == Position::learned) emb.params_replicated = static_cast<double>(m.max_positions) * h;
  emb.flops_split = TpSplit::seq_tp;
  emb.bytes_moved = 2.0 * s * h * bpv;  // gather rows, write the hidden states
  if (m.embedding_norm) add_norm(E, "embedding_norm", Block::step, m, s, bpv, x.r.norm);
  if (m.dropout) add_elementwise(E, "embedding_dropout", Block::step, s * h * x.mask, TpSplit::seq_tp, s * h * (2.0 * bpv + x.mask));
}

// --- head (last stage): final norm, output layer over `v` columns, cross-entropy on fp32 logits ---
void add_head(std::vector<Op>& H, const Sizes& x, double v) {
  const ModelSpec& m = x.m;
  const SavedTensorRules& r = x.r;
  const double s = x.s, h = x.h;
  add_norm(H, "final_norm", Block::head, m, s, x.bpv, r.norm);
  if (r.eager_kernels) apply_eager_kernels(H, m, r, s, x.bpv);
  Op& out = add_gemm(H, "output", Block::head, h, v, s, false, false, s * h * r.head_input, TpSplit::seq_tp);
  // Model FLOPs count the model's vocabulary; the padded columns are hardware work (docs/model.md §4).
  out.model_flops_share = static_cast<double>(m.vocab) / v;
  if (m.tied_embeddings) {
    out.params_split = 0;  // shares the word embedding (a copy lives on the last stage when pp > 1)
  }
  // Megatron's output layer is tensor_parallel.ColumnParallelLinear, not a Transformer Engine module:
  // it runs in bf16 under FP8 training (megatron/core/models/gpt/gpt_model.py; docs/model.md).
  out.compute_precision = x.precision == Precision::fp8 ? Precision::bf16 : x.precision;
  // Its traffic per logit counted from the layer code's loss (layer_code_rules.cpp), over the
  // (padded) vocabulary: every row of the logits is reduced, padded columns included.
  Op& loss = add_elementwise(H, "cross_entropy", Block::head, s * v * r.loss_saved, TpSplit::tp, s * v * r.loss_forward_traffic);
  loss.kind = OpKind::loss;
  loss.backward_share = r.loss_backward_traffic / r.loss_forward_traffic;
  loss.row_length = v;
  loss.working_forward = s * v * r.loss_forward_extra;
  loss.working_backward = s * v * r.loss_backward_extra;
  if (r.loss_is_eager_class) {
    // Measured as one class forward + backward with the fp32 upcast: 12 B per logit (fused_ref.py).
    set_kernels(loss, KernelClass::cross_entropy, KernelClass::cross_entropy, 1, 4);
    loss.bytes_moved = 12.0 * s * v;
  }
}

}  // namespace

// Saved bytes per op follow `r` (planner/layer_code_rules.cpp); with Megatron's rules they are
// Korthikanti's Table 2.
OpGraph build_op_graph(const ModelSpec& m, std::int64_t seq, Precision precision, bool flash_attention,
                       const SavedTensorRules& r, std::int64_t vocab) {
  const Sizes x = sizes_of(m, seq, precision, flash_attention, r);
  OpGraph g;
  g.vocab = vocab;
  g.layer_input_bytes = x.s * x.h * r.residual;
  g.layer.reserve(48);
  g.embedding.reserve(4);  // embedding, its norm and dropout
  g.head.reserve(8);       // final norm, output layer, loss and the eager casts around them
  add_attention_block(g.layer, x);
  add_mlp_block(g.layer, x);
  finish_layer(g.layer, x);
  add_step_collectives(g.step, x.act_bytes);
  const double v = static_cast<double>(vocab);
  add_embedding(g.embedding, x, v);
  add_head(g.head, x, v);
  return g;
}

double sequence_parallel_parameters(const OpGraph& g, double layers, bool last_stage, int ep) {
  auto replicated = [ep](const std::vector<Op>& ops) {
    double p = 0;
    for (const Op& op : ops) p += op.expert ? op.params_replicated / ep : op.params_replicated;
    return p;
  };
  return layers * replicated(g.layer) + (last_stage ? replicated(g.head) : 0.0);
}

double total_parameters(const OpGraph& g, int layers) {
  auto sum = [](const std::vector<Op>& ops) {
    double p = 0;
    for (const Op& op : ops) p += op.params_split + op.params_replicated;
    return p;
  };
  return sum(g.embedding) + static_cast<double>(layers) * sum(g.layer) + sum(g.head);
}

double total_parameters(const ModelSpec& m) { return total_parameters(build_op_graph(m, 1, Precision::bf16, true), m.layers); }

}  // namespace tp
