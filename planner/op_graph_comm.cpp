#include "op_graph_comm.h"

#include "op_builders.h"

namespace tp {
namespace {

CommCall one(Collective kind) { return {1.0f, kind}; }
constexpr CommCall kNone{};

// A communication entry built in place at the end of `ops` (no parameters, FLOPs or saved bytes); the
// calls with sequence parallelism default to those without.
Op& collective_op(std::vector<Op>& ops, const char* name, Block block, CommGroup group, CommOverlap overlap, CommBytes source,
                  double bytes, TpSplit split, CommCall forward, CommCall backward) {
  Op& op = add_op(ops);
  op.name = name;
  op.kind = OpKind::collective;
  op.block = block;
  op.flops_split = TpSplit::none;
  op.saved_split = TpSplit::none;
  op.comm.bytes = bytes;
  op.comm.split = split;
  op.comm.group = group;
  op.comm.overlap = overlap;
  op.comm.source = source;
  op.comm.forward = op.comm.forward_sp = forward;
  op.comm.backward = op.comm.backward_sp = backward;
  return op;
}

}  // namespace

Op& add_tp_input_operator(std::vector<Op>& ops, Block block, double act) {
  Op& f = collective_op(ops, "tp_input", block, CommGroup::tp, CommOverlap::layer_gemms, CommBytes::activations, act,
                        TpSplit::none, kNone, one(Collective::all_reduce));
  f.comm.forward_sp = one(Collective::all_gather);
  f.comm.backward_sp = one(Collective::reduce_scatter);
  return f;
}

Op& add_tp_output_operator(std::vector<Op>& ops, Block block, double act) {
  Op& g = collective_op(ops, "tp_output", block, CommGroup::tp, CommOverlap::layer_gemms, CommBytes::activations, act,
                        TpSplit::none, one(Collective::all_reduce), kNone);
  g.comm.forward_sp = one(Collective::reduce_scatter);
  g.comm.backward_sp = one(Collective::all_gather);
  return g;
}

namespace {

// A ring of K/V chunk passes over `group` (TE AttnFuncWithCPAndKVP2P): group - 1 sends of the local chunk
// forward, twice that backward (K/V and dK/dV), each behind one block of the attention.
void add_kv_ring(std::vector<Op>& ops, const char* name, CommGroup group, CommWhen when, double kv) {
  Op& ring = collective_op(ops, name, Block::attention, group, CommOverlap::attention_core, CommBytes::activations, kv,
                           TpSplit::tp, one(Collective::send_recv), CommCall{2.0f, Collective::send_recv});
  ring.comm.per_peer = true;
  ring.comm.when = when;
}

// Ulysses' all-to-alls over `group` (TE AttnFuncWithCPAndQKVOA2A), each of the rank's own s/c tokens: one per
// tensor, K and V, then Q and the output (dO and dQ in the backward); none overlapped.
void add_head_all_to_alls(std::vector<Op>& ops, const char* kv_name, const char* qo_name, CommGroup group,
                          CommWhen when, double kv, double qo) {
  const CommCall two_all_to_alls{2.0f, Collective::all_to_all};
  collective_op(ops, kv_name, Block::attention, group, CommOverlap::none, CommBytes::activations, kv / 2, TpSplit::tp,
                two_all_to_alls, two_all_to_alls)
      .comm.when = when;
  collective_op(ops, qo_name, Block::attention, group, CommOverlap::none, CommBytes::activations, qo / 2, TpSplit::tp,
                two_all_to_alls, two_all_to_alls)
      .comm.when = when;
}

}  // namespace

void add_cp_exchanges(std::vector<Op>& ops, double kv, double qo, double kv_fp32) {
  const auto cp = CommGroup::cp;
  add_kv_ring(ops, "cp_kv_exchange", cp, CommWhen::cp_p2p, kv);
  collective_op(ops, "cp_kv_all_gather", Block::attention, cp, CommOverlap::none, CommBytes::sequence, kv, TpSplit::tp,
                one(Collective::all_gather), one(Collective::all_gather))
      .comm.when = CommWhen::cp_all_gather;
  collective_op(ops, "cp_kv_grad_reduce_scatter", Block::attention, cp, CommOverlap::none, CommBytes::sequence, kv,
                TpSplit::tp, kNone, one(Collective::reduce_scatter))
      .comm.when = CommWhen::cp_all_gather;
  // PyTorch's rotation: K and V gathered at the first block, waited for at the second; dK/dV passed on.
  collective_op(ops, "cp_kv_rotate_all_gather", Block::attention, cp, CommOverlap::attention_local_block,
                CommBytes::sequence, kv, TpSplit::tp, one(Collective::all_gather), one(Collective::all_gather))
      .comm.when = CommWhen::cp_ring_all_gather;
  Op& grads = collective_op(ops, "cp_kv_grad_exchange", Block::attention, cp, CommOverlap::attention_core,
                            CommBytes::activations, kv_fp32, TpSplit::tp, kNone, one(Collective::send_recv));
  grads.comm.per_peer = true;
  grads.comm.when = CommWhen::cp_ring_all_gather;
  add_head_all_to_alls(ops, "cp_kv_all_to_all", "cp_qo_all_to_all", cp, CommWhen::cp_a2a, kv, qo);
  // a2a+p2p (TE: the all-to-alls over cp_group[0], then the ring over cp_group[1]): the outer ring's K/V chunk,
  // a·s/c tokens of kv_dim/a columns, has the bytes of the local one.
  add_head_all_to_alls(ops, "cp_inner_kv_all_to_all", "cp_inner_qo_all_to_all", CommGroup::cp_inner,
                       CommWhen::cp_a2a_p2p, kv, qo);
  add_kv_ring(ops, "cp_outer_kv_exchange", CommGroup::cp_outer, CommWhen::cp_a2a_p2p, kv);
}

void add_ep_all_to_all(std::vector<Op>& ops, const char* name, double routed) {
  collective_op(ops, name, Block::mlp, CommGroup::ep, CommOverlap::none, CommBytes::activations, routed, TpSplit::seq_tp,
                one(Collective::all_to_all), one(Collective::all_to_all));
}

void add_tp_amax_all_reduce(std::vector<Op>& ops, Block block, CommPass pass) {
  constexpr double kAmaxBytes = 4.0;  // one fp32 amax per tensor
  Op& op = collective_op(ops, "fp8_amax_all_reduce", block, CommGroup::tp, CommOverlap::none, CommBytes::fixed,
                         kAmaxBytes, TpSplit::none, kNone, kNone);
  (pass == CommPass::forward ? op.comm.forward_sp : op.comm.backward_sp) = one(Collective::all_reduce);
}

void add_step_collectives(std::vector<Op>& step, double act) {
  step.reserve(8);  // with the end-of-step gradient syncs
  collective_op(step, "pp_send_recv", Block::step, CommGroup::pp, CommOverlap::none, CommBytes::activations, act,
                TpSplit::seq_tp, one(Collective::send_recv), one(Collective::send_recv));
  collective_op(step, "dp_gradient_all_reduce", Block::step, CommGroup::dp, CommOverlap::step_backward,
                CommBytes::gradients, 0.0, TpSplit::none, kNone, one(Collective::all_reduce))
      .comm.when = CommWhen::zero0;
  const auto S = CommGroup::dp_shard;
  collective_op(step, "dp_gradient_reduce_scatter", Block::step, S, CommOverlap::step_backward, CommBytes::gradients, 0.0,
                TpSplit::none, kNone, one(Collective::reduce_scatter))
      .comm.when = CommWhen::zero_any;
  // Hybrid sharding: each reduced shard is all-reduced over its replicas after its reduce-scatter, on the
  // same bucket or unit (Megatron-Core param_and_grad_buffer.py start_grad_sync: the inter-instance
  // all_reduce of each bucket's shard; FSDP1 _runtime_utils._reduce_grad: all_reduce over _inter_node_pg;
  // FSDP2 foreach_reduce: all_reduce over the replicate mesh dimension).
  collective_op(step, "dp_replica_gradient_all_reduce", Block::step, CommGroup::dp_replica, CommOverlap::step_backward,
                CommBytes::gradient_shard, 0.0, TpSplit::none, kNone, one(Collective::all_reduce))
      .comm.when = CommWhen::zero_any;
  collective_op(step, "zero_parameter_all_gather", Block::step, S, CommOverlap::step_forward, CommBytes::weights, 0.0,
                TpSplit::none, one(Collective::all_gather), kNone)
      .comm.when = CommWhen::zero1_or_2;
  collective_op(step, "zero3_parameter_all_gather", Block::step, S, CommOverlap::step_compute, CommBytes::weights, 0.0,
                TpSplit::none, one(Collective::all_gather), one(Collective::all_gather))
      .comm.when = CommWhen::zero3;
}

void add_tied_embedding_grad_all_reduce(std::vector<Op>& step, double embedding_parameters) {
  collective_op(step, "tied_embedding_grad_all_reduce", Block::step, CommGroup::pp_ends, CommOverlap::step_end,
                CommBytes::parameter_gradients, embedding_parameters, TpSplit::tp, kNone, one(Collective::all_reduce))
      .comm.when = CommWhen::pipelined;
}

void add_sequence_parallel_grad_all_reduce(std::vector<Op>& step) {
  collective_op(step, "sequence_parallel_grad_all_reduce", Block::step, CommGroup::tp, CommOverlap::step_end,
                CommBytes::gradients, 0.0, TpSplit::none, kNone, one(Collective::all_reduce))
      .comm.when = CommWhen::sequence_parallel;
}

}  // namespace tp
