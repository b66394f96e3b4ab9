// The scenario: model, cluster, training, parallel layout, costs and memory settings.
// Plain data in base SI units (see units.h); loading and checks live in scenario.h.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "units.h"

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
// The code the transformer layer runs (training.layer_code; planner/framework_rules.h, saved_tensor_rules):
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

struct MoeSpec {
  int experts = 0;  // 0 = dense model
  int top_k = 0;
  std::int64_t expert_ffn_hidden = 0;
  double capacity_factor = 1.0;  // tokens an expert buffers, relative to a perfectly even split
  bool enabled() const { return experts > 0; }
};

struct ModelSpec {
  std::string key;   // catalog key, or "inline"
  std::string name;  // display name
  int layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;          // = heads for MHA, 1 for MQA
  std::int64_t head_dim = 0;  // = hidden / heads unless given
  std::int64_t ffn_hidden = 0;
  std::int64_t vocab = 0;
  Activation activation = Activation::gelu;
  Norm norm = Norm::layernorm;
  Position position = Position::rope;
  std::int64_t max_positions = 0;  // rows of the learned position table
  bool embedding_norm = false;     // a norm right after the embedding (BLOOM)
  bool qk_norm = false;            // a norm over each head of q and of k before RoPE (Qwen3, OLMo 2)
  bool tied_embeddings = false;
  bool bias = false;
  bool dropout = false;  // dropout layers (1-byte masks kept for backward)
  MoeSpec moe;
  std::int64_t published_parameters = 0;  // from the catalog, 0 when unknown
};

struct GpuSpec {
  std::string key;
  std::string name;
  std::string vendor;
  std::string generation;
  Bytes memory;
  ByteRate memory_bandwidth;
  std::array<FlopRate, kPrecisionCount> peak{};  // 0 = unsupported
  Watts tdp;
  ByteRate nvlink;  // per GPU, per direction; 0 = none
  ByteRate pcie;    // host link per direction
  // SM clocks (Hz; 0 = not in the catalog): the datasheet's maximum boost, and the clock a GPU of a busy
  // multi-GPU server holds under tensor-core load at its power cap (docs/model.md §15, "Sustained clock").
  double boost_clock_hz = 0;
  double sustained_clock_hz = 0;
  // Streaming multiprocessors (AMD: compute units); 0 = not in the catalog: a fused attention kernel's
  // grid is taken to fill the GPU (model/attention_grid.h).
  int sms = 0;
  FlopRate peak_for(Precision p) const { return peak[static_cast<int>(p)]; }
};

// The peak attention runs at when training in `p`: 16-bit tensor cores (fp8 training keeps attention in
// bf16, Transformer Engine's DotProductAttention), fp32/tf32 cores only when training in those.
FlopRate attention_peak(const GpuSpec& g, Precision p);

struct LinkSpec {
  ByteRate bandwidth;  // per GPU (intra) or per NIC (inter), per direction
  Seconds latency;
};

// The vendor of a node's host CPU, as NCCL's cost model reads it (planner/collectives.h, the network post
// overhead of a ring's steps): `other` where it is neither or not known.
enum class HostCpu { other, intel, amd };
const char* to_string(HostCpu c);

struct ClusterSpec {
  std::string key;
  std::string name;
  GpuSpec gpu;
  int nodes = 1;
  int gpus_per_node = 8;
  LinkSpec intra_node;
  LinkSpec inter_node;
  int nics_per_node = 8;
  double oversubscription = 1.0;  // inter-node fabric: offered / available bisection bandwidth (>= 1)
  // GPUs sharing one PCIe uplink to the host CPU (a PCIe switch's): host copies of GPUs behind one switch
  // divide its bandwidth when they run together, as a data-parallel step's offload copies do.
  int gpus_per_host_link = 1;
  Bytes host_memory;  // per node, 0 = unknown
  Watts host_power;   // per node, from the cluster preset (costs.host_power_per_node overrides)
  double sustained_clock_hz = 0;  // `sustained_clock`: the SM clock its GPUs hold under load; 0 = the default rule
  HostCpu host_cpu = HostCpu::other;  // `host_cpu`
  int gpus() const { return nodes * gpus_per_node; }
};

// The fused-attention kernel a profile's attention curves describe, or the one a run uses: cuDNN's fused
// attention (Transformer Engine's choice on Hopper and later), FlashAttention-2 (PyTorch SDPA's default
// backend; Transformer Engine's choice before Hopper) or flash-attn's Triton FlashAttention (llm-foundry
// MPT's attn_impl: triton). docs/model.md §20, "Attention kernels".
enum class AttentionKernel { cudnn, flash, triton };
const char* to_string(AttentionKernel k);
// The kernel to_string names `name`; none for any other word.
std::optional<AttentionKernel> attention_kernel_named(std::string_view name);

struct TrainingSpec {
  std::int64_t sequence_length = 4096;
  std::int64_t global_batch = 0;  // sequences per optimizer step (0 until resolved: micro_batch x dp)
  std::int64_t micro_batch = 1;
  double tokens = 0.0;  // run length, tokens
  Precision precision = Precision::bf16;
  bool master_weights = true;        // fp32 master copy when training in 16/8 bits
  Precision grad_precision = Precision::bf16;  // gradient buffer (Megatron: fp32)
  Optimizer optimizer = Optimizer::adamw;
  bool flash_attention = true;
  // training.attention_kernel as given; absent: the framework's on this GPU (attention_kernel_of).
  std::optional<AttentionKernel> attention_kernel;
  // Q, K and V gathered to the unpadded (tokens, heads, dim) layout before the fused attention's
  // variable-length entry point and its output scattered back (flash-attn's bert_padding unpad_input /
  // pad_input around flash_attn_varlen_func: llm-foundry's attn_impl flash, Hugging Face's
  // flash_attention_2 with a padding mask). docs/model.md §20, "Unpadded attention".
  bool attention_unpad = false;
  // training.repeat_kv as given; absent: the framework's (repeat_kv_of). The model code repeats each K and V
  // head to the query heads it serves before the attention (GQA, MQA).
  std::optional<bool> repeat_kv;
  Framework framework = Framework::megatron;
  // training.layer_code as given; absent: the framework's own (layer_code_of).
  std::optional<LayerCode> layer_code;
  bool autocast = false;  // torch.autocast: fp32 parameters, GEMMs in `precision` on cached 16-bit copies
  bool compile = false;   // torch.compile: elementwise chains fused, their intermediates recomputed
  StatePrecision optimizer_state_precision = StatePrecision::fp32;  // default by framework
  OptimizerKernel optimizer_kernel = OptimizerKernel::fused;          // default by framework
  // training.gradient_sync as given (fsdp and pytorch loops choose it); absent: the framework's
  // (planner/framework_rules.h, reduces_every_micro_batch).
  std::optional<GradientSync> gradient_sync;
  // The loss is one fused cross-entropy kernel on the 16-bit logits instead of an fp32 upcast + cross_entropy:
  // eager frameworks: flash-attn's Triton CrossEntropyLoss (llm-foundry's `fused_crossentropy` default);
  // megatron: Transformer Engine's parallel_cross_entropy (cross_entropy_loss_fusion with
  // cross_entropy_fusion_impl "te", Megatron-Bridge's default).
  bool fused_loss = false;
  // The norms run as one fused kernel each way that keeps its input and per-row statistics (eager code only:
  // torchtitan's `norm_type = "fused_rmsnorm"`, a Triton RMSNorm; apex FusedRMSNorm / FusedLayerNorm).
  bool fused_norm = false;
  // A checkpointed region's recompute stops once every tensor its forward saved is saved again: torch >= 2.1's
  // non-reentrant torch.utils.checkpoint (use_reentrant=False, checkpoint_wrapper NO_REENTRANT), early stop on
  // by default. Default: on for fsdp with eager layer code, off elsewhere (docs/model.md §6, "Early stop").
  bool checkpoint_early_stop = false;
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;  // precision fp8 only
  MoeDispatcher moe_dispatcher = MoeDispatcher::all_to_all;  // MoE models only
};

// Bytes per parameter of the fp32 master copy: 4 when training in 16 or 8 bits with
// master_weights: fp32, else 0.
double master_bytes(const TrainingSpec& t);

// Bytes of one stored parameter: the training precision's, or fp32 under autocast (torch.autocast keeps fp32
// parameters and casts copies for its GEMMs). What the weights take in memory, what ZeRO gathers of them and
// what FSDP copies out of each gather.
double parameter_bytes(const TrainingSpec& t);

// The layer code the framework runs when training.layer_code is not given: Megatron-LM's own model
// (megatron/core/models/gpt, Transformer Engine layers) is fused; DeepSpeed, FSDP and plain PyTorch train
// the user's PyTorch model, usually Hugging Face transformers or torchtitan: eager.
LayerCode default_layer_code(Framework f);
// The layer code a scenario runs: training.layer_code, or the framework's default.
LayerCode layer_code_of(const TrainingSpec& t);
// Whether the model code repeats K and V to the query heads before the attention: training.repeat_kv, else
// `fsdp`'s torchtitan Llama (models/llama/model.py `repeat_kv`; IBM's foundation-model-stack expands alike)
// does; Hugging Face's SDPA attention passes grouped K/V (enable_gqa), Megatron and DeepSpeed run fused
// kernels that take them grouped.
bool repeat_kv_of(const TrainingSpec& t);
// The K (and V) heads the attention reads: the query heads when the code repeats them, else the model's KV heads.
inline int attention_kv_heads(const ModelSpec& m, bool repeat_kv) { return repeat_kv ? m.heads : m.kv_heads; }
// Whether the scenario's model code copies K and V wider than the model's KV heads (repeat_kv on a GQA or MQA model).
inline bool repeats_kv_heads(const ModelSpec& m, const TrainingSpec& t) {
  return attention_kv_heads(m, repeat_kv_of(t)) > m.kv_heads;
}

struct Recompute {
  RecomputeMode mode = RecomputeMode::none;
  int every = 0;  // k: layers per checkpointed segment (every), or one checkpointed layer in k (one_in)
};

// Rank placement, innermost first: ranks adjacent in the innermost dimension share a node first.
enum class MeshDim { tp, cp, dp, pp };
const char* to_string(MeshDim d);

// The data-parallel ranks ZeRO shards over: parallel.dp_shard, or all of dp when it is unset (0).
inline int sharding_group(int dp_shard, int dp) { return dp_shard > 0 ? dp_shard : dp; }

struct ParallelSpec;
// The context-parallel exchange a layout runs: parallel.cp_comm, else its framework's: Megatron-Core's
// default p2p, DeepSpeed's sequence parallelism (Ulysses, a2a), PyTorch's context_parallel (ring_all_gather)
// for fsdp and pytorch.
CpComm cp_comm_of(const ParallelSpec& p, Framework f);

struct ParallelSpec {
  int tp = 1;
  int pp = 1;
  int dp = 1;  // resolved from "auto" by resolve_layout()
  bool dp_auto = true;
  int cp = 1;
  int ep = 1;
  int vpp = 1;
  std::vector<int> layers_per_stage;  // one entry per pipeline stage, filled by resolve_layout()
  bool layers_auto = true;            // layers_per_stage: auto
  Schedule schedule = Schedule::one_f_one_b;
  int zero = 1;
  // parallel.dp_shard: the data-parallel ranks ZeRO shards the model states over (hybrid sharding: FSDP's
  // HYBRID_SHARD and FSDP2's 2-D mesh, DeepSpeed's MiCS, Megatron's distributed-optimizer instances);
  // the dp / dp_shard groups hold replicas. 0: all of dp (full sharding).
  int dp_shard = 0;
  bool sequence_parallel = false;
  Recompute recompute;
  OffloadTarget offload_optimizer = OffloadTarget::none;
  OffloadTarget offload_params = OffloadTarget::none;
  // The checkpointed layer inputs (recompute full/every) kept in host memory until the backward pass
  // (DeepSpeed activation_checkpointing.cpu_checkpointing).
  OffloadTarget offload_activations = OffloadTarget::none;
  // parallel.overlap.grad_reduce / param_gather; unset: the framework's default (planner/framework_rules.h,
  // grad_reduce_overlapped and param_gather_overlapped).
  std::optional<bool> overlap_grad_reduce;
  std::optional<bool> overlap_param_gather;
  bool overlap_tp_comm = false;
  std::optional<CpComm> cp_comm;  // parallel.cp_comm; unset: the framework's (cp_comm_of)
  int cp_a2a = 0;                 // parallel.cp_a2a: the all-to-all level of a2a+p2p (0: not given)
  // The ranks of the two levels of a hierarchical context-parallel exchange: the inner all-to-all and the
  // outer ring (1 and cp unless cp_comm is a2a+p2p).
  int cp_inner() const { return cp_comm == CpComm::a2a_p2p && cp_a2a > 0 ? cp_a2a : 1; }
  int cp_outer() const { return std::max(1, cp / cp_inner()); }
  std::array<MeshDim, 4> placement{MeshDim::tp, MeshDim::cp, MeshDim::dp, MeshDim::pp};  // ep lies inside dp

  int shard_dp() const { return sharding_group(dp_shard, dp); }
  // Model chunks per pipeline stage: vpp under the interleaved schedule, else one.
  int chunks() const { return schedule == Schedule::interleaved ? std::max(1, vpp) : 1; }
  // The ranks one copy of the sharded states spans (Megatron shards over the data x context group).
  int shard_ranks() const { return shard_dp() * cp; }
  int replicas() const { return std::max(1, dp / std::max(1, shard_dp())); }

  int size_of(MeshDim d) const {
    switch (d) {
      case MeshDim::tp: return tp;
      case MeshDim::cp: return cp;
      case MeshDim::dp: return dp;
      case MeshDim::pp: return pp;
    }
    return 1;
  }
  // Rank distance between neighbours of dimension d: the product of the sizes placed inside it.
  int stride_of(MeshDim d) const {
    int stride = 1;
    for (MeshDim x : placement) {
      if (x == d) break;
      stride *= size_of(x);
    }
    return stride;
  }
};

// "ZeRO-3", with the sharding group and its replicas under hybrid sharding: "ZeRO-3 in groups of 8 × 16".
std::string zero_label(const ParallelSpec& p);

struct FailureSpec {
  Seconds gpu_mtbf = Seconds(50000.0 * kHour);
  ByteRate checkpoint_bandwidth = ByteRate(20e9);
  Seconds restart = Seconds(600.0);
};

struct CostSpec {
  Usd gpu_hour = Usd(2.5);      // price of one GPU-hour
  Usd spot_gpu_hour;            // 0 = no spot pricing
  double preemptions_per_day = 0.0;
  Watts host_power_per_node;    // 0 = use the cluster preset's
  double pue = 1.2;
  double electricity_usd_per_j = 0.10 / kJoulesPerKwh;
  double carbon_kg_per_j = 0.40 / kJoulesPerKwh;
  FailureSpec failures;
};

// Memory constants that are not tensors (documented in docs/model.md).
struct MemorySettings {
  Bytes cuda_context = Bytes(0.5 * kGiB);  // CUDA context, cuBLAS/NCCL workspaces
  double allocator_overhead = 0.05;        // caching-allocator fragmentation, fraction of tensor memory
  double headroom = 0.0;                   // capacity fraction kept free for the verdict
  Bytes comm_bucket = Bytes(25e6);         // gradient reduce / parameter gather bucket
  int zero3_prefetch_layers = 1;           // gathered layers (FSDP units) ahead of the current one (ZeRO-3)
  FsdpUnit fsdp_unit = FsdpUnit::layer;    // FSDP only: what one unit gathers
  BackwardPrefetch fsdp_backward_prefetch = BackwardPrefetch::pre;  // FSDP only: FSDP1's backward_prefetch
  FsdpVersion fsdp_version = FsdpVersion::fsdp2;  // FSDP only: FSDP1 or FSDP2 (fully_shard)
  bool ddp_gradient_as_bucket_view = false;  // plain PyTorch only: DDP's gradient_as_bucket_view
  // DeepSpeed's ZeRO-3 settings (ds_config zero_optimization.stage3_*), parameter counts; absent = the
  // framework's default (planner/framework_rules.h; resolved by zero3_settings_of in planner/framework_rules.h).
  std::optional<double> zero3_prefetch_bucket;        // stage3_prefetch_bucket_size
  std::optional<double> zero3_max_live_parameters;    // stage3_max_live_parameters
  std::optional<double> zero3_max_reuse_distance;     // stage3_max_reuse_distance
  std::optional<double> zero3_persistence_threshold;  // stage3_param_persistence_threshold
  std::optional<double> zero3_reduce_bucket;          // reduce_bucket_size (zero_optimization)
};

struct Scenario {
  std::string name;
  std::string source;  // file it was read from, or "built-in default"
  ModelSpec model;
  ClusterSpec cluster;
  TrainingSpec training;
  ParallelSpec parallel;
  CostSpec costs;
  MemorySettings memory;
  std::string profile;  // path of a hardware profile, "" = datasheet defaults

  int gpus() const { return cluster.gpus(); }
  std::int64_t micro_batches() const {  // per data-parallel replica per step
    return training.global_batch / (static_cast<std::int64_t>(training.micro_batch) * parallel.dp);
  }
};

}  // namespace tp
