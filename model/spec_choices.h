// The scenario's choices: the enumerations a scenario's keys name (docs/scenario-reference.md), with their
// names for output. Plain data; specs.h holds the structs that use them.
#pragma once

namespace tp {

enum class Precision { fp32, tf32, fp16, bf16, fp8 };
inline constexpr int kPrecisionCount = 5;
const char* to_string(Precision p);
// Bytes of one element stored in this precision (tf32 is stored as fp32; fp8 as 1 byte).
double element_bytes(Precision p);
// Bytes of a weight or activation kept while training in `p`: 4 for fp32/tf32, else 2 (fp8 training
// keeps 16-bit weights and, through Transformer Engine, 16-bit copies of most activations).
double stored_bytes(Precision p);

// gelu: torch.nn.GELU / F.gelu, one kernel that keeps its input (MPT, torchtitan, Megatron's fused
// bias-GeLU); gelu_tanh: Hugging Face's NewGELUActivation (`gelu_new`, GPT-2), the tanh approximation
// composed of pow/tanh/mul torch ops, each keeping its own tensors (planner/framework_rules.cpp).
enum class Activation { gelu, gelu_tanh, swiglu, relu, relu2 };
enum class Norm { layernorm, rmsnorm };
enum class Position { rope, learned, alibi };
enum class Optimizer { sgd, momentum, adam, adamw, adafactor, adam8bit, lion };
enum class Schedule { gpipe, one_f_one_b, interleaved, zb_h1 };
// every: Megatron's uniform segments (every layer recomputed, one input kept per k layers); one_in:
// torchtitan's selective layer checkpointing (one layer in k checkpointed, the others keep everything).
// selective: Megatron's attention-core recompute; selective_op: torchtitan's op-level policy (planner/selective_op.h).
enum class RecomputeMode { none, selective, full, selective_op, every, one_in };
enum class OffloadTarget { none, cpu };
// The training framework whose model-state layout, sharding and optimizer the plan follows (rules:
// planner/framework_rules.h); it also gives the default layer code (layer_code_of).
enum class Framework { megatron, deepspeed, fsdp, pytorch };
// The code the transformer layer runs (training.layer_code; planner/layer_code_rules.h, saved_tensor_rules):
//  fused: Megatron's model code with its fused kernels -- Megatron-Core + Transformer Engine (fused norm+GEMM,
//         bias-GeLU, SwiGLU, RoPE), or Megatron-DeepSpeed's megatron/model (apex fused LayerNorm, fused
//         bias-GeLU, fused scale-mask-softmax, fused bias-dropout-add); vocab-parallel fp32 loss, padded vocabulary;
//  eager: PyTorch modules as written (Hugging Face transformers, torchtitan): every op saves its own inputs.
enum class LayerCode { fused, eager };
// How context parallelism exchanges the attention's keys and values (parallel.cp_comm; docs/model.md §15,
// "Context-parallel communication"):
//  p2p:        a ring of K/V chunk passes, each hidden behind the attention of the chunk before it
//              (Megatron-Core's default --cp-comm-type p2p, Transformer Engine AttnFuncWithCPAndKVP2P);
//  all_gather: K and V all-gathered before the attention, on the critical path; the backward gathers them
//              again and reduce-scatters their gradients (TE AttnFuncWithCPAndKVAllGather, Llama 3 §3.3.2);
//  a2a:        all-to-alls of Q, K, V before the attention and of its output after, heads split over cp
//              (DeepSpeed-Ulysses; TE AttnFuncWithCPAndQKVOA2A), on the critical path;
//  ring_all_gather: PyTorch context_parallel's ring attention with its default rotation: K and V arrive by
//              one all-gather hidden behind the local block, dK/dV go round the ring;
//  a2a_p2p:    hierarchical ("a2a+p2p", Megatron-Core --hierarchical-context-parallel-sizes): a2a within
//              groups of parallel.cp_a2a ranks, then a p2p ring across the cp / cp_a2a groups.
enum class CpComm { p2p, all_gather, a2a, ring_all_gather, a2a_p2p };
// How FP8 training scales its tensors (Transformer Engine recipes): `delayed` takes each tensor's scale
// from the amax history of earlier steps (DelayedScaling); `current` computes the tensor's own amax just
// before the cast (TE 2.x Float8CurrentScaling, Megatron's --fp8-recipe tensorwise).
enum class Fp8Recipe { delayed, current };
// How an MoE layer sends tokens to their experts' ranks and back (docs/model.md §14, "MoE token dispatch").
// all_to_all: one copy per (token, expert) in an all-to-all over the expert-parallel group (Megatron-Core's
// `alltoall` dispatcher, torchtitan, DeepSpeed). deepep: DeepEP's normal kernels or NVIDIA's Hybrid-EP
// (Megatron-Core's `flex` dispatcher): a token crosses the network once per node that holds one of its
// experts and NVLink once per GPU that does (DeepSeek-V3, arXiv:2412.19437, §3.2.2).
enum class MoeDispatcher { all_to_all, deepep };
// Dtype of the optimizer states: fp32, or the parameters' own dtype (`same`, PyTorch's AdamW default).
enum class StatePrecision { fp32, same };
// What one FSDP unit holds: a whole transformer layer (FSDP2 fully_shard per block, FSDP1's
// transformer_auto_wrap_policy), or each submodule of it (FSDP1 nested wrap() of every Linear /
// attention / norm, or size_based_auto_wrap_policy over small modules).
enum class FsdpUnit { layer, submodule };
// When FSDP1 issues a unit's gather in the backward (its `backward_prefetch` argument,
// torch/distributed/fsdp/api.py BackwardPrefetch): `pre` before the gradient computation of the unit
// after it (BACKWARD_PRE, the default of later FSDP1; FSDP2 prefetches alike), `post` after that
// computation (BACKWARD_POST), `none` only when the unit's own backward starts, behind the reduce-scatter
// of the unit before on the same process group (None, PyTorch 1.11's default: "no overlap").
enum class BackwardPrefetch { pre, post, none };
// Which FSDP the run uses: FSDP1 (torch.distributed.fsdp.FullyShardedDataParallel: each unit's parameters
// in one flat parameter, gathered in place and used through views) or FSDP2 (fully_shard: per-parameter
// sharding, the gathered flat buffer copied out into each parameter). They differ in the copies around
// their collectives that run on the compute stream (docs/model.md §15, "FSDP's copies").
enum class FsdpVersion { fsdp1, fsdp2 };
// How an Adam/AdamW step runs (docs/model.md, "Optimizer step"): `fused` = one kernel over parameters,
// gradients and both states (torch's fused=True, apex/DeepSpeed FusedAdam, Transformer Engine's);
// `foreach` = torch's multi-tensor implementation, one kernel per torch op over all tensors (torch.optim's
// default on CUDA); `for_loop` = one kernel per torch op and tensor (torch's foreach=False, Composer's
// DecoupledAdamW).
enum class OptimizerKernel { fused, foreach, for_loop };
// When the data-parallel gradients are reduced under gradient accumulation: after every micro-batch's
// backward, or after the last one only (DDP's no_sync, FSDP1's no_sync, FSDP2's
// set_requires_gradient_sync(False) around the others).
enum class GradientSync { every_micro_batch, last_micro_batch };

const char* to_string(Activation a);
const char* to_string(Optimizer o);
const char* to_string(Schedule s);
const char* to_string(RecomputeMode r);
const char* to_string(Framework f);
const char* to_string(LayerCode c);
const char* to_string(OptimizerKernel k);
const char* to_string(CpComm c);
// Adam and AdamW, the optimizers whose step `training.optimizer_kernel` describes.
inline bool is_adam(Optimizer o) { return o == Optimizer::adam || o == Optimizer::adamw; }

}  // namespace tp
