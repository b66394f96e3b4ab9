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

#include "spec_choices.h"
#include "units.h"

namespace tp {

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

// Hopper or a later NVIDIA generation (Blackwell): warpgroup MMA and TMA, cuDNN's fused attention, DDR5 hosts.
bool hopper_or_later(const GpuSpec& g);

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

// The ZeRO stage a framework runs when parallel.zero is not given, `pp` the layout's pipeline stages:
// Megatron's distributed optimizer (Megatron-Core recipes, --use-distributed-optimizer): 1; DeepSpeed's
// zero_optimization.stage default (deepspeed/runtime/zero/config.py): 0; FSDP's default sharding,
// FULL_SHARD (FSDP1 ShardingStrategy) / fully_shard with reshard_after_forward=True (FSDP2): 3, but 2
// with pipeline parallelism, as torchtitan shards it (parallelize.py: reshard_after_forward = not
// pp_enabled); plain PyTorch's DistributedDataParallel, which shards nothing: 0.
int default_zero(Framework f, int pp);
// Whether a framework has a layout for this ZeRO stage: FSDP shards gradients whenever it shards the
// optimizer states (NO_SHARD 0, SHARD_GRAD_OP 2, FULL_SHARD 3): it has no stage 1; plain PyTorch has DDP
// (0) and ZeroRedundancyOptimizer (1, torch/distributed/optim/zero_redundancy_optimizer.py), no stage 2 or 3.
bool framework_has_zero(Framework f, int zero);

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
  // Whether the scenario (or a sweep axis, an auto layout) gave zero and sequence_parallel; unsaid, they are
  // the layout's defaults, which resolve_layout sets for the layout's framework, pp and tp (default_zero; on
  // when tp > 1), so that a sweep point that changes pp or tp gets its own.
  bool zero_given = false;
  bool sequence_parallel_given = false;
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
