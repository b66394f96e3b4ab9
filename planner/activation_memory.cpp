// Activation memory of one GPU: the bytes an op list saves for backward (Korthikanti et al. 2022),
// how many micro-batches a pipeline stage holds at its peak, and recompute / activation offload.
// Formulas and sources: docs/model.md, "Memory".
#include <algorithm>
#include <cmath>

#include "estimate_parts.h"
#include "selective_op.h"

namespace tp {
namespace {

// What an op list keeps for backward and works in beyond it, for one micro-batch on one GPU, in one pass over
// the list: everything saved, the attention scores among it (what selective recompute discards), the working
// memory at the forward and backward peaks, and the loss's largest single tensor (its saved fp32
// log-probabilities or 16-bit logits).
struct SavedSums {
  double saved = 0;
  double scores = 0;
  double working_forward = 0;
  double working_backward = 0;
  double largest_loss = 0;
  double without_scores() const { return saved - scores; }
};
SavedSums saved_sums(const std::vector<Op>& ops, const ShardLayout& l) {
  SavedSums r;
  for (const Op& op : ops) {
    r.working_forward += tp_share(op.working_forward, op.saved_split, l.tp, l.sp);
    r.working_backward += tp_share(op.working_backward, op.saved_split, l.tp, l.sp);
    if (op.kind == OpKind::collective) continue;
    const double saved = tp_share(op.saved_bytes, op.saved_split, l.tp, l.sp);
    r.saved += saved;
    if (op.attention_scores) r.scores += saved;
    if (op.kind == OpKind::loss) r.largest_loss = std::max(r.largest_loss, saved);
  }
  const double scale = l.b / l.cp;
  r.saved *= scale;
  r.scores *= scale;
  r.working_forward *= scale;
  r.working_backward *= scale;
  r.largest_loss *= scale;
  return r;
}

// A layer's input on one GPU, one micro-batch: what a checkpointed layer keeps and a stage boundary sends.
double layer_input_on_gpu(const OpGraph& g, const ShardLayout& l) {
  return tp_share(g.layer_input_bytes, TpSplit::seq_tp, l.tp, l.sp) * l.b / l.cp;
}

// One layer's stored activations under the recompute mode, from the layer's sums.
double layer_kept_bytes(const Scenario& s, const OpGraph& g, const ShardLayout& l, const SavedSums& layer) {
  switch (s.parallel.recompute.mode) {
    case RecomputeMode::none: return layer.saved;
    case RecomputeMode::selective: return layer.without_scores();
    case RecomputeMode::selective_op: return saved_sums(selective_op_checkpoint(s, g).kept, l).saved;
    case RecomputeMode::full:
    case RecomputeMode::every:
    case RecomputeMode::one_in:  // a checkpointed layer's; the others keep layer_full
      return layer_input_on_gpu(g, l);
  }
  return 0.0;
}

// (chunk, micro-batch) activation sets a stage holds at its peak, and layers per chunk.
// GPipe: all m; 1F1B and ZB-H1: p - i (Narayanan et al. 2021; Qi et al. 2023 keep 1F1B's peak);
// interleaved: Megatron's warm-up 2(p - i - 1) + (v - 1)p plus the one in steady state, which for
// stage 0 gives Korthikanti's factor L(1 + (p - 1)/(p v)).
double in_flight_chunks(const ParallelSpec& p, int stage, std::int64_t m) {
  const double md = static_cast<double>(m);
  if (p.pp == 1) return 1.0;
  switch (p.schedule) {
    case Schedule::gpipe: return md;
    case Schedule::one_f_one_b:
    case Schedule::zb_h1: return std::min<double>(p.pp - stage, md);
    case Schedule::interleaved:
      return std::min<double>(md * p.vpp, 2.0 * (p.pp - stage - 1) + (p.vpp - 1.0) * p.pp + 1.0);
  }
  return 1.0;
}

}  // namespace

bool recomputes_layers(const ParallelSpec& p) {
  return p.recompute.mode == RecomputeMode::full || p.recompute.mode == RecomputeMode::every ||
         p.recompute.mode == RecomputeMode::one_in;
}

double checkpointed_layers(const ParallelSpec& p, double layers) {
  switch (p.recompute.mode) {
    case RecomputeMode::none:
    case RecomputeMode::selective:
    case RecomputeMode::selective_op: return 0.0;
    case RecomputeMode::full:
    case RecomputeMode::every: return layers;
    case RecomputeMode::one_in: return std::floor(layers / std::max(1, p.recompute.every));
  }
  return 0.0;
}

Bytes layer_activation_bytes(const Scenario& s, const OpGraph& g) {
  const ShardLayout l = shard_layout(s);
  return Bytes(layer_kept_bytes(s, g, l, saved_sums(g.layer, l)));
}

ActivationInputs activation_inputs(const Scenario& s, const OpGraph& g, const ShardLayout& l) {
  const SavedSums layer = saved_sums(g.layer, l), head = saved_sums(g.head, l);
  ActivationInputs a;
  a.layer_full = layer.saved;
  a.layer_kept = layer_kept_bytes(s, g, l, layer);
  a.layer_scores = layer.scores;
  a.embedding = saved_sums(g.embedding, l).saved;
  a.head = head.saved;
  a.boundary = layer_input_on_gpu(g, l);
  a.head_work_forward = head.working_forward;
  a.head_work_backward = head.working_backward;
  if (recomputes_layers(s.parallel)) a.largest_loss_block = head.largest_loss;
  return a;
}

StageActivations stage_activations(const ParallelSpec& p, const ActivationInputs& a, int stage, int layers,
                                   std::int64_t micro_batches) {
  // The sets stored for the in-flight micro-batches. What recompute rebuilds during one layer's (or
  // segment's) backward is transient and counted with the buffers.
  const double chunks = in_flight_chunks(p, stage, micro_batches);
  const int v = p.chunks();
  const double chunk_layers = static_cast<double>(layers) / v;
  StageActivations st;
  switch (p.recompute.mode) {
    case RecomputeMode::none: st.stored = chunks * chunk_layers * a.layer_full; break;
    case RecomputeMode::selective:
      st.stored = chunks * chunk_layers * a.layer_kept;
      st.recompute_working_set = a.layer_scores;
      break;
    case RecomputeMode::selective_op:  // the kept outputs; one layer's saved tensors rebuilt at a time
      st.stored = chunks * chunk_layers * a.layer_kept;
      st.recompute_working_set = a.layer_full;
      break;
    case RecomputeMode::full:
    case RecomputeMode::every: {
      const int k = p.recompute.mode == RecomputeMode::full ? 1 : p.recompute.every;
      st.stored = chunks * std::ceil(chunk_layers / k) * a.layer_kept;
      st.recompute_working_set = std::min<double>(k, chunk_layers) * a.layer_full;
      break;
    }
    case RecomputeMode::one_in: {
      // Every k-th layer keeps its input and is rebuilt, one at a time, in its backward; the others
      // keep everything.
      const double checkpointed = checkpointed_layers(p, chunk_layers);
      st.stored = chunks * (checkpointed * a.layer_kept + (chunk_layers - checkpointed) * a.layer_full);
      st.recompute_working_set = checkpointed > 0 ? a.layer_full : 0.0;
      break;
    }
  }
  // Activation offload (DeepSpeed cpu_checkpointing): the checkpointed layer inputs wait on the host.
  if (p.offload_activations == OffloadTarget::cpu && recomputes_layers(p)) {
    st.offloaded = st.stored;
    st.stored = 0;
  }
  st.in_flight = chunks / v;
  if (stage == 0) st.stored += st.in_flight * a.embedding;
  if (stage == p.pp - 1) st.stored += (p.pp > 1 ? st.in_flight : 1.0) * a.head;
  return st;
}

}  // namespace tp
