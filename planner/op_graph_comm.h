// The communication entries of the op graph (OpKind::collective): built by build_op_graph beside the
// compute ops they belong to. Sources: docs/model.md, "The op graph".
#pragma once

#include <vector>

#include "op_graph.h"

namespace tp {

// Megatron's tensor-parallel operators of one block (Shoeybi et al. 2019, §3 and Fig. 3; Korthikanti et
// al. 2022, §4.2.2 and Fig. 5), over the block's s x h activations (`act`, the whole gathered array):
// the input operator f before the column-parallel GEMM is the identity in the forward and all-reduces
// the input gradient in the backward; with sequence parallelism it all-gathers in the forward and
// reduce-scatters in the backward. The output operator g after the row-parallel GEMM all-reduces in
// the forward (identity in the backward); with sequence parallelism it reduce-scatters in the forward
// and all-gathers in the backward. They may overlap the layer's GEMMs (parallel.overlap.tp_comm).
Op& add_tp_input_operator(std::vector<Op>& ops, Block block, double act);
Op& add_tp_output_operator(std::vector<Op>& ops, Block block, double act);

// Context parallelism, one entry set per exchange (parallel.cp_comm; only the layout's applies), over
// the K/V of the whole sequence (`kv` = s x 2 kv_dim bytes) and, for a2a, Q and the output (`qo` = s x 2
// q_dim bytes), heads split by tp:
//  p2p (Liu et al. 2023, Ring Attention; TE AttnFuncWithCPAndKVP2P): cp - 1 passes of the local K/V chunk,
//    overlapped with the attention; twice in the backward, which also passes dK/dV around the ring;
//  all_gather (TE AttnFuncWithCPAndKVAllGather, "KV all-gather between CP ranks is exposed"; Llama 3
//    §3.3.2): one all-gather of K and V forward, again in the backward (only the local chunks are saved),
//    plus a reduce-scatter of dK/dV; none overlapped;
//  a2a (DeepSpeed-Ulysses, Jacobs et al. 2023 §3.1; TE AttnFuncWithCPAndQKVOA2A): all-to-alls of Q, K, V
//    before the attention and of its output after; in the backward of dO, then dQ, dK, dV; none overlapped;
//  ring_all_gather (torch/distributed/tensor/experimental/_attention.py, _templated_ring_attention with
//    the default _AllGatherRotater): K and V all-gathered once per pass, hidden behind the local block's
//    attention only; the backward passes dK/dV round the ring (_AllToAllRotater), c - 1 sends of the chunk in
//    fp32 (its accumulators' dtype under convert_to_f32): `kv_fp32`, the K/V bytes at 4 B per element;
//  a2a+p2p (Megatron-Core --hierarchical-context-parallel-sizes a c/a): a2a's all-to-alls within the inner
//    a ranks (CommGroup::cp_inner), then p2p's ring across the c/a groups (CommGroup::cp_outer).
void add_cp_exchanges(std::vector<Op>& ops, double kv, double qo, double kv_fp32);

// Expert parallelism: the routed tokens (`routed` = top_k x s x h bytes) go to their experts (dispatch)
// and come back (combine) with one all-to-all each, forward and backward (Lepikhin et al. 2021, GShard
// §2.2; Megatron-Core MoEAlltoAllTokenDispatcher). With sequence parallelism each TP rank sends its shard.
void add_ep_all_to_all(std::vector<Op>& ops, const char* name, double routed);

// FP8 current scaling with sequence parallelism: the amax (one fp32 value) of a tensor quantized on its
// local shard is all-reduced (max) over the TP group before the cast, in `pass` (Transformer Engine 2.9
// Float8CurrentScalingQuantizer::quantize_impl, with_amax_reduction; module/linear.py
// _customize_quantizers_float8_current_scaling). On the critical path; none without sequence parallelism.
void add_tp_amax_all_reduce(std::vector<Op>& ops, Block block, CommPass pass);

// Collectives of a stage or of the step: the activations between pipeline stages and their gradients
// back (one send/receive each way per micro-batch; the layer's s x h output `act`, split by tp with
// sequence parallelism), and the data-parallel gradient reduce and ZeRO parameter gathers over the
// stage's parameters (Rajbhandari et al. 2020, ZeRO §5 and §7: all-reduce without ZeRO, reduce-scatter
// with it; parameters all-gathered after the optimizer with ZeRO 1/2, before every micro-batch's forward
// and backward with ZeRO-3). ZeRO's collectives run over the sharding group; with hybrid sharding
// (parallel.dp_shard) each reduced shard is then all-reduced over its replicas.
void add_step_collectives(std::vector<Op>& step, double act);

// A tied word embedding with pipeline parallelism: its gradient (`embedding_parameters` = V_padded x h,
// split by tp; the gradient buffer's element bytes) is all-reduced between the first and the last
// pipeline stage after the data-parallel gradient reduce, before the optimizer, on the critical path
// (Megatron-Core finalize_model_grads, _allreduce_word_embedding_grads; DeepSpeed PipelineEngine
// _exec_reduce_tied_grads: planner/framework_rules.h, tied_embedding_grad_sync). Applies with pp > 1.
void add_tied_embedding_grad_all_reduce(std::vector<Op>& step, double embedding_parameters);

// Sequence parallelism: the gradients of the stage's parameters replicated across TP (norms, row-parallel
// biases, router: sequence_parallel_parameters) are partial per TP rank and all-reduced over the TP group,
// coalesced into one call, after the gradient reduce and before the optimizer (Megatron-Core
// finalize_model_grads, _allreduce_layernorm_grads; framework_rules.h, sequence_parallel_grad_sync).
void add_sequence_parallel_grad_all_reduce(std::vector<Op>& step);

}  // namespace tp
