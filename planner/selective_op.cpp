#include "selective_op.h"

#include "framework_rules.h"
#include "layer_code_rules.h"
#include "op_builders.h"

namespace tp {
namespace {

// Output widths of the nn.Linear calls one GEMM entry stands for, in the order the eager block calls them:
// torchtitan's Llama (models/llama/model.py) runs wq, wk, wv, then wo, then w1 (gate), w3 (up) and w2; the
// op list holds q, k and v as one `qkv` entry and gate and up as one fc1 entry (op_graph.cpp).
std::vector<double> linear_calls(const Op& gemm, const ModelSpec& m, const SavedTensorRules& r) {
  const double q = static_cast<double>(m.heads * m.head_dim), kv = static_cast<double>(m.kv_heads * m.head_dim);
  const double f = static_cast<double>(m.ffn_hidden);
  if (gemm.row_parallel) return {gemm.gemm_cols};
  if (gemm.block == Block::attention && r.separate_qkv_modules) return {q, kv, kv};
  if (gemm.block == Block::mlp && r.separate_gate_up_modules) return {f, f};
  return {gemm.gemm_cols};
}

// The GEMM entry restricted to output columns `cols` (one of its calls), for timing.
void add_narrowed(std::vector<Op>& ops, const Op& gemm, double cols) {
  Op& op = add_gemm(ops, gemm.name, gemm.block, gemm.gemm_rows, cols, gemm_tokens(gemm), false, gemm.row_parallel, 0.0,
                    gemm.saved_split);
  op.flops_split = gemm.flops_split;
  op.compute_precision = gemm.compute_precision;
}

// A cached output: `bytes` per sequence, split as `split` over the TP ranks.
void add_cached(std::vector<Op>& kept, const char* name, Block block, double bytes, TpSplit split) {
  add_elementwise(kept, name, block, bytes, split);
}

// A collective the recompute runs again: all of them but reduce-scatters, whose outputs are cached.
Op rerun_collective(const Op& op) {
  Op c = op;
  if (c.comm.forward.kind == Collective::reduce_scatter) c.comm.forward.count = 0;
  if (c.comm.forward_sp.kind == Collective::reduce_scatter) c.comm.forward_sp.count = 0;
  return c;
}

}  // namespace

SelectiveOpCheckpoint selective_op_checkpoint(const Scenario& s, const OpGraph& g) {
  const ModelSpec& m = s.model;
  const SavedTensorRules r = saved_tensor_rules(s.training, m);
  const double seq = static_cast<double>(s.training.sequence_length);
  const double bpv = stored_bytes(s.training.precision);
  const bool sp = s.parallel.sequence_parallel && s.parallel.tp > 1;
  SelectiveOpCheckpoint c;
  add_cached(c.kept, "layer_input", Block::attention, g.layer_input_bytes, TpSplit::seq_tp);
  int mm_calls = 0;  // the block's aten.mm calls so far
  for (const Op& op : g.layer) {
    switch (op.kind) {
      case OpKind::gemm:
        // A Linear with a bias runs aten.addmm, which the policy neither counts nor keeps.
        if (op.bias) {
          c.rerun.push_back(op);
          break;
        }
        for (double cols : linear_calls(op, m, r)) {
          if (++mm_calls % 2 == 0) {
            add_narrowed(c.rerun, op, cols);
          } else {  // column-parallel outputs are split by tp; a row-parallel one is a whole partial sum
            add_cached(c.kept, op.name, op.block, seq * cols * bpv, op.row_parallel ? TpSplit::none : TpSplit::tp);
          }
        }
        break;
      case OpKind::attention_core:
        if (!s.training.flash_attention) {  // explicit attention: bmm and softmax, not in the list
          c.rerun.push_back(op);
          break;
        }
        // The fused kernel's outputs: O and its fp32 log-sum-exp per head and row.
        add_cached(c.kept, op.name, op.block, seq * static_cast<double>(m.heads * m.head_dim) * bpv, TpSplit::tp);
        add_cached(c.kept, "attention_logsumexp", op.block, static_cast<double>(m.heads) * seq * 4.0, TpSplit::tp);
        break;
      case OpKind::cp_ring_merge:  // inside the SDPA call the policy saves (the context-parallel ring's merges)
        break;
      case OpKind::collective:
        c.rerun.push_back(rerun_collective(op));
        if (sp && op.comm.group == CommGroup::tp && op.comm.forward_sp.kind == Collective::reduce_scatter &&
            op.comm.forward_sp.count > 0) {
          add_cached(c.kept, op.name, op.block, op.comm.bytes, TpSplit::seq_tp);
        }
        break;
      default:
        // Entries that move no bytes are saved-tensor bookkeeping (the attention's log-sum-exp or scores), no kernel.
        if (op.bytes_moved > 0) c.rerun.push_back(op);
        break;
    }
  }
  return c;
}

}  // namespace tp
