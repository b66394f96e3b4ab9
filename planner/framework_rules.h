// What each training framework does with the model states and the data-parallel collectives, as a table:
// one entry per framework, each rule citing the code or documentation it was read from (docs/model.md,
// "Frameworks"). The memory estimate (dtypes, gradient lifetime), the step time and the simulator (which
// collectives run when, what waits for them) consult this table instead of testing the framework. What the
// layer's own code keeps and runs (fused or eager, model/specs.h LayerCode, the scenario's
// training.layer_code) is in layer_code_rules.h.
#pragma once

#include <cstdint>
#include <limits>

#include "specs.h"

namespace tp {

struct FrameworkRules {
  Framework framework = Framework::megatron;
  const char* name = "";
  // Gradients live in a buffer allocated once and kept across steps (Megatron's contiguous grad
  // buffer, DeepSpeed's partitioned gradients) instead of being freed by zero_grad(set_to_none=True).
  bool persistent_gradients = true;
  // Under ZeRO-3 with a master copy the sharded parameter is the fp32 master itself: the 16-bit compute copy
  // exists only gathered, one unit at a time, and no 16-bit shard is kept between steps. FSDP2 casts the
  // fp32 shard at each all-gather's copy-in (MixedPrecisionPolicy param_dtype, _fully_shard/_fsdp_collectives.py
  // foreach_all_gather); FSDP1 frees its low-precision shard after each gather (_runtime_utils.py
  // _free_low_precision_sharded_param). DeepSpeed keeps a 16-bit partition beside its fp32 one (stage3.py
  // fp16_partitioned_groups_flat, fp32_partitioned_groups_flat). Measured on one H100 (FSDP2 world size 1,
  // h100-framework-steps.json): 13.87 GiB between steps for 1.24 B parameters = 12 B/param, no 2 B shard.
  bool sharded_parameter_is_master = false;
  // Fused attention through Transformer Engine, which picks cuDNN's fused attention on Hopper and later
  // and FlashAttention-2 before (attention_kernel_of below). false: PyTorch SDPA's FlashAttention-2 backend.
  // It stays with the framework whatever the layer code: Megatron-DeepSpeed's fused layer calls the
  // flash-attn package's FlashAttention-2 too (megatron/model/transformer.py FlashSelfAttention,
  // --use-flash-attn-v2: flash_attn_varlen_func).
  bool transformer_engine_attention = false;
  // The optimizer step is one multi-tensor kernel timed at the profile's measured `adamw` kernel class
  // (torch's fused AdamW; DeepSpeed's FusedAdam, ops/adam/multi_tensor_adam.cu) rather than at the generic
  // memory bandwidth (planner/optimizer_time.cpp).
  bool adamw_class_optimizer = true;
  const char* source = "";  // where the rules above were read
  // ZeRO-3 parameter gathers a whole layer at a time (FSDP units of one layer, `memory.zero3_prefetch_layers`
  // ahead; Megatron's and plain PyTorch's sharding the same way) rather than module by module.
  bool zero3_whole_layers = true;
  // DeepSpeed gathers each submodule just before it runs and releases it after, fetching up to
  // `zero3_prefetch_parameters` elements ahead (deepspeed/runtime/zero/config.py: stage3_prefetch_bucket_size
  // default 5e7; partitioned_param_coordinator.py fetch_sub_module / release_sub_module). 0: no bucket
  // (whole-layer units, or FSDP's units of one submodule, prefetched one unit ahead).
  double zero3_prefetch_parameters = 0;
  // No ZeRO-3 prefetch is issued while this many parameters are gathered: DeepSpeed's
  // stage3_max_live_parameters (runtime/zero/config.py, default 1e9; partitioned_param_coordinator.py,
  // fetch_sub_module: the prefetch budget is min(max_available - available, prefetch_bucket_size),
  // nothing is prefetched when it is not positive). FSDP prefetches one unit ahead whatever its size.
  double zero3_live_parameters = std::numeric_limits<double>::infinity();
  // A gathered parameter used again before this many other parameters are fetched is kept rather than
  // released: DeepSpeed's stage3_max_reuse_distance (runtime/zero/config.py, default 1e9;
  // partitioned_param_coordinator.py, __params_to_release); 0 where every module is released after use.
  double zero3_reuse_distance = 0;
  // The gradients are reduce-scattered after every backward, not once per step: each rank keeps only
  // its partition of the accumulated gradient (DeepSpeed issue #2252, maintainer's answer; engine.py
  // allreduce_gradients: "ZeRO stage >= 2 communicates during non gradient accumulation boundaries as well").
  // FSDP does the same unless the training loop turns the sync off: FSDP1's `no_sync()` context and FSDP2's
  // `set_requires_gradient_sync(False)` are opt-in (torch/distributed/fsdp/fully_sharded_data_parallel.py,
  // _fully_shard/_fully_shard.py), and holding the unsharded gradients across micro-batches costs a whole
  // model's gradients per GPU; Composer (llm-foundry) never calls it for FSDP (trainer/dist_strategy.py
  // ddp_sync_context: DistributedDataParallel only).
  bool reduce_every_micro_batch = false;
  // The lowest ZeRO stage at which reduce_every_micro_batch holds: DeepSpeed reduces once, at the accumulation
  // boundary, while each rank holds whole gradients (stages 0 and 1: engine.py allreduce_gradients), and every
  // micro-batch once they are partitioned (2 and 3).
  int reduce_every_micro_batch_from_zero = 0;
  // Each micro-batch after the first adds its gradients to the ones kept so far with an in-place add, one
  // kernel per parameter tensor: torch autograd's AccumulateGrad (`variable.grad += new_grad`,
  // torch/csrc/autograd/functions/accumulate_grad.h) for plain PyTorch; FSDP1's
  // `_saved_grad_shard += sharded_grad` (_runtime_utils.py _accumulate_sharded_grad) and FSDP2's sharded
  // gradient accumulation for FSDP, on the sharded gradients; DeepSpeed up to ZeRO-2 (autograd into the
  // 16-bit .grad, or below ZeRO-2 the fp32 accumulator below; at ZeRO-2 into the kept partition's .grad, a
  // view of stage_1_and_2.py's grads_in_partition). Megatron accumulates inside the weight gradient GEMM
  // (gradient_accumulation_fusion: main_grad is the GEMM's C with beta 1).
  bool accumulates_gradients_in_place = false;
  // The highest ZeRO stage at which the in-place accumulation above holds. DeepSpeed's ZeRO-3 accumulates
  // each reduced partition into its fp32 partition (stage3.py partition_grads): not modelled.
  int in_place_accumulation_max_zero = 3;
  // DeepSpeed ZeRO-1 and ZeRO-2 (stage_1_and_2.py, contiguous_gradients true by default,
  // runtime/zero/config.py): each gradient is copied into the reduce bucket
  // (reduce_independent_p_g_buckets_and_remove_grads, `new_grad_tensor.copy_(grad_reduc)`) on the stream the
  // backward runs on, and after the reduce the rank's own partition into grads_in_partition
  // (copy_grads_in_partition): with partitioned gradients from every micro-batch's gradient hook, at ZeRO-1
  // from reduce_gradients at the accumulation boundary (reduce_ready_partitions_and_remove_grads). ZeRO-3
  // copies on its reduce stream, beside the backward (not counted); BF16_Optimizer has no bucket.
  bool copies_gradients_into_reduce_bucket = false;
  // DeepSpeed's engine all-reduces the gradients itself where no ZeRO optimizer partitions them (engine.py
  // allreduce_gradients -> buffered_allreduce_fallback -> allreduce_no_retain, allreduce_and_copy,
  // allreduce_bucket): at ZeRO 0, and under BF16_Optimizer, which has no reduce_gradients (bf16_optimizer.py;
  // the pipeline engine's _bf16_reduce_grads alike), once per step at the accumulation boundary on the
  // compute stream, with copies around the all-reduce (optimizer_time.cpp engine_all_reduce_copy_seconds) and
  // a buffer for it (stage_memory.cpp engine_all_reduce_buffer). Its buckets of gradient tensors close once
  // they pass this many elements (engine.py MEMORY_OPT_ALLREDUCE_SIZE, 5e8); 0: no such all-reduce.
  double engine_all_reduce_bucket = 0;
  // 16-bit parameters with fp32 gradients (grad_precision fp32) below ZeRO-2 accumulate in a separate fp32
  // buffer: after each micro-batch's backward every 16-bit gradient is cast to fp32 and added to it (a cast
  // kernel and an add kernel per tensor). DeepSpeed (engine.py _configure_optimizer: bf16 with fp32 accumulation at
  // ZeRO 0 or 1 runs BF16_Optimizer) bf16_optimizer.py _update_hp_grad, `hp_grad.add_(lp.grad.to(fp32))`
  // after every micro-batch, pipe/engine.py _exec_backward_pass included; fp16 at ZeRO-1:
  // stage_1_and_2.py fill_grad_accum_attribute, the first micro-batch's gradient only cast.
  bool casts_gradients_to_fp32_accumulator = false;
  // Full recompute runs the forward hooks again, so the recompute forward gathers every module anew
  // (DeepSpeed's per-submodule fetch; FSDP's recompute reuses the backward's gather of the unit).
  bool recompute_regathers = false;
  // ZeRO-3 with the optimizer on the host: each reduced gradient partition is copied to the host's fp32
  // gradient with a blocking copy_ from the gradient hook (DeepSpeed stage3.py __partition_grads,
  // `fp32_grad_tensor.copy_(grad_buffer)` without non_blocking, v0.6.2 through v0.14), so the thread that
  // issues the backward waits for the bucket's reduce-scatter and its copy before the next backward
  // kernels: the reduce-scatter and the copy do not overlap the backward (gradient_reduce_overlaps).
  bool host_gradient_copy_blocks = false;
  // Tensors of at most this many elements are persistent under ZeRO-3: held whole on every rank and never
  // gathered (DeepSpeed's stage3_param_persistence_threshold, runtime/zero/config.py, default 1e5;
  // partition_parameters.py sets ds_persist). 0 where every parameter of a unit is sharded (FSDP2's
  // fully_shard, Megatron's distributed optimizer). planner/zero3_modules.h.
  double zero3_persistence_threshold = 0;
  // ZeRO-3 reduce-scatters the gradients in buckets of up to this many elements, filled in the order the
  // backward produces them: before a gradient joins, a bucket that is not empty and would exceed the size
  // with it is reduce-scattered (DeepSpeed stage3.py reduce_independent_p_g_buckets_and_remove_grads,
  // `elements_in_ipg_bucket + param.ds_numel > reduce_bucket_size`, v0.6.2 to today; reduce_bucket_size
  // default 5e8, runtime/zero/config.py). A weight larger than the bucket is a reduce-scatter of its own,
  // and so is each run of small tensors (biases, norms) between two such weights. 0: one reduce-scatter
  // per unit (FSDP's flat gradient per unit, torch/distributed/fsdp).
  double zero3_reduce_bucket = 0;
  // With pipeline parallelism a tied word embedding lives on the first stage (input embedding) and on the
  // last (output layer); after the backward its gradient is all-reduced between the two stages, on the
  // critical path before the optimizer. Megatron-Core: finalize_model_grads -> _allreduce_word_embedding_grads
  // (megatron/core/distributed/finalize_model_grads.py, core_r0.8.0: all_reduce of the weight's main_grad over
  // parallel_state.get_embedding_group()). DeepSpeed's pipeline engine: TiedLayerSpec in
  // deepspeed/runtime/pipe/module.py, the TrainSchedule's ReduceTiedGrads instruction (pipe/schedule.py) run by
  // PipelineEngine._exec_reduce_tied_grads (pipe/engine.py: all_reduce of each tied weight's gradient over its
  // tied group, the stages holding it). FSDP / plain PyTorch: no pipeline engine of this kind modelled.
  bool tied_embedding_grad_sync = false;
  // With sequence parallelism each TP rank computes the gradient of the parameters replicated across TP
  // (norm weights and biases, row-parallel biases, the MoE router) from its own sequence shard; after the
  // backward the gradients are summed over the TP group in one coalesced all-reduce, on the critical path
  // before the optimizer. Megatron-Core: finalize_model_grads -> _allreduce_layernorm_grads (core_r0.8.0:
  // params with the `sequence_parallel` attribute, _flatten_dense_tensors of their main_grad, one all_reduce
  // over get_tensor_model_parallel_group()).
  bool sequence_parallel_grad_sync = false;
  // At ZeRO stages 0-2 the data-parallel gradient reduce overlaps the backward and the ZeRO-1/2 parameter
  // all-gather overlaps the next step's start, unless the scenario's parallel.overlap says otherwise.
  // DeepSpeed: false. Its overlap_comm defaults to stage == 3 (runtime/zero/config.py, overlap_comm_valid),
  // so below stage 3 the gradient buckets are reduced on the compute stream between the backward kernels
  // (stage_1_and_2.py reduce_ipg_grads) or after the backward (engine.py allreduce_gradients at the
  // accumulation boundary); and optimizer.step() all-gathers the updated 16-bit partitions before it returns
  // (stage_1_and_2.py step, all_gather_dp_groups), with no setting to defer it.
  bool overlaps_zero12_collectives = true;
  // Hybrid sharding (parallel.dp_shard): the all-reduce of a unit's reduced shard over the replicas runs on a
  // stream and communicator of its own, so the next unit's reduce-scatter runs beside it. FSDP1
  // _runtime_utils._reduce_grad: dist.all_reduce(new_sharded_grad, group=state._inter_node_pg) under
  // state._all_reduce_stream, after reduce_scatter_tensor on the post-backward stream; FSDP2 foreach_reduce:
  // all_reduce_stream.wait_stream(reduce_scatter_stream). Megatron-Core runs the inter-instance all_reduce
  // on the bucket's own communication stream right after its reduce-scatter (param_and_grad_buffer.py
  // start_grad_sync): false, in series.
  bool replica_all_reduce_own_stream = false;
  // Hybrid sharding that all-reduces over the replicas once per step, at the gradient accumulation boundary,
  // where the reduce-scatters in the sharding group run every micro-batch: DeepSpeed's MiCS
  // (runtime/zero/mics.py, MiCS_Optimizer.allreduce_mics_shard_grads returns unless
  // is_gradient_accumulation_boundary).
  bool replica_all_reduce_once_per_step = false;
  // At ZeRO-2 the parameters are still gathered unit by unit in every forward, kept through the backward,
  // and each unit's gradients reduce-scattered after its backward: FSDP's SHARD_GRAD_OP (FSDP1
  // ShardingStrategy.SHARD_GRAD_OP, no reshard after the forward, torch/distributed/fsdp/api.py; FSDP2
  // fully_shard(reshard_after_forward=False)). A backward that syncs the gradients frees them (FSDP1
  // _runtime_utils.py _should_free_in_backward: `state._sync_gradients or` a reshard-after-forward strategy;
  // FSDP2's post_backward reshard), so each such micro-batch's forward gathers them again. false: one
  // gather of the updated parameters after the optimizer (Megatron's distributed optimizer, DeepSpeed's
  // stage_1_and_2.py all_gather_dp_groups).
  bool zero2_gathers_per_unit = false;
  // Each reduced gradient (shard) is kept in the sharded parameter's dtype, whatever dtype the reduce ran
  // in: FSDP1 casts it back (_runtime_utils.py _cast_grad_to_param_dtype, "so that the optimizer step runs
  // with that dtype"; off only with keep_low_precision_grads; NO_SHARD, zero 0, too: _reduce_grad_no_shard
  // casts the all-reduced gradient alike), FSDP2 alike
  // (_fsdp_collectives.py foreach_reduce: _to_dtype_if_needed(reduce_output, orig_dtype)). Under mixed
  // precision that parameter is the fp32 master, so a bf16 reduce (llm-foundry's DEFAULT and PURE modes,
  // fms-fsdp's bfSixteen) still keeps 4 B per gradient element. false: training.grad_precision (Megatron's
  // gradient buffer, DeepSpeed's 16-bit gradient partitions).
  bool sharded_gradient_in_parameter_dtype = false;
  // With the optimizer offloaded, the reduced gradient partitions (ZeRO >= 2) go straight to the host: the
  // GPU keeps none. DeepSpeed: stage_1_and_2.py copy_grads_in_partition returns before allocating
  // grads_in_partition under cpu_offload; stage3.py puts grad_partitions_flat_buffer on self.device, the CPU
  // when the optimizer is offloaded.
  bool gradient_partitions_on_host = false;
  // Under pipeline parallelism the loop syncs the gradients once, after the last micro-batch's backward, and
  // not overlapped: torch.distributed.pipelining turns the sync (and the reshard) off for every backward and
  // reduce-scatters once after the last one (stage.py, backward_maybe_with_nosync), as torchtitan runs FSDP
  // with PP. The default of training.gradient_sync and overlap.grad_reduce when the scenario leaves them.
  bool pipeline_syncs_last_micro_batch = false;
  // A backward that reduces the gradients returns only once they are reduced: the compute stream waits for
  // the reduce at the end of every such backward, so what outlasts that backward is exposed there and does not
  // run on into the next micro-batch. FSDP1 _runtime_utils.py _post_backward_final_callback
  // (current_stream.wait_stream(_post_backward_stream), and the replicas' all-reduce stream); FSDP2
  // _fsdp_param_group.py finalize_backward -> _wait_for_post_backward (wait_event(_post_reduce_event));
  // DeepSpeed stage_1_and_2.py / stage3.py independent_gradient_partition_epilogue, which synchronizes after
  // every backward; DDP's Reducer::finalize_backward waits for every bucket's all-reduce. Megatron-FSDP
  // leaves its per-backward reduce-scatters running into the next micro-batch (megatron_fsdp.py
  // _root_post_backward: finish_grad_sync only under model_auto_sync, off by default).
  bool waits_for_reduce_after_backward = true;
};

const FrameworkRules& framework_rules(Framework f);

// Whether the backward waits for each gradient bucket's reduce-scatter and copy to the host
// (host_gradient_copy_blocks, ZeRO-3 with the optimizer offloaded to the host). Read by the step time
// (gradient_reduce_overlaps, the copy in the optimizer part) and the simulator (Zero3Rules).
inline bool host_gradient_copy_holds_backward(const FrameworkRules& fw, const ParallelSpec& p) {
  return fw.host_gradient_copy_blocks && p.zero >= 3 && p.offload_optimizer == OffloadTarget::cpu;
}

// Plain PyTorch over more than one data-parallel rank runs torch DistributedDataParallel (its buckets: the
// memory in stage_memory.cpp, the copies in optimizer_time.cpp; docs/model.md §9, "DDP's buckets").
inline bool runs_ddp(const Scenario& s) {
  return s.training.framework == Framework::pytorch && s.parallel.dp * s.parallel.cp > 1;
}

// Whether the data-parallel collectives go unit by unit with the layers (ZeRO-3, FSDP's SHARD_GRAD_OP:
// zero2_gathers_per_unit) rather than once per step in buckets. Only ZeRO-3 gathers them again for the backward.
inline bool gathers_per_unit(const FrameworkRules& fw, const ParallelSpec& p) {
  return p.zero >= 3 || (p.zero == 2 && fw.zero2_gathers_per_unit);
}

// parallel.overlap.grad_reduce where the scenario sets it, else the framework's default: overlapped, but at
// ZeRO stages 0-2 of a framework that does not overlap them (overlaps_zero12_collectives).
inline bool grad_reduce_overlapped(const FrameworkRules& fw, const ParallelSpec& p) {
  if (fw.pipeline_syncs_last_micro_batch && p.pp > 1) return p.overlap_grad_reduce.value_or(false);
  return p.overlap_grad_reduce.value_or(p.zero >= 3 || fw.overlaps_zero12_collectives);
}
// parallel.overlap.param_gather where set, else the framework's default (as grad_reduce_overlapped).
inline bool param_gather_overlapped(const FrameworkRules& fw, const ParallelSpec& p) {
  return p.overlap_param_gather.value_or(p.zero >= 3 || fw.overlaps_zero12_collectives);
}

// Whether the gradients are reduced after every micro-batch's backward rather than once per step: the
// scenario's training.gradient_sync (fsdp and pytorch loops), else the framework's rule.
inline bool reduces_every_micro_batch(const FrameworkRules& fw, const TrainingSpec& t, const ParallelSpec& p) {
  if (t.gradient_sync) return *t.gradient_sync == GradientSync::every_micro_batch;
  if (fw.pipeline_syncs_last_micro_batch && p.pp > 1) return false;
  return fw.reduce_every_micro_batch && p.zero >= fw.reduce_every_micro_batch_from_zero;
}

// Whether each micro-batch's gradient reduce must end before the next micro-batch's work starts
// (waits_for_reduce_after_backward with a reduce after every backward).
inline bool reduce_waited_after_each_backward(const FrameworkRules& fw, const TrainingSpec& t, const ParallelSpec& p) {
  return fw.waits_for_reduce_after_backward && reduces_every_micro_batch(fw, t, p);
}

// Under gathers_per_unit: whether the backward gathers the units again (ZeRO-3; SHARD_GRAD_OP keeps the
// forward's), and whether every micro-batch's forward gathers them (SHARD_GRAD_OP frees them only after a
// backward that syncs the gradients: FSDP1 _runtime_utils.py _should_free_in_backward).
inline bool gathers_in_backward(const ParallelSpec& p) { return p.zero >= 3; }
inline bool gathers_every_micro_batch(const FrameworkRules& fw, const TrainingSpec& t, const ParallelSpec& p) {
  return gathers_in_backward(p) || reduces_every_micro_batch(fw, t, p);
}

// FSDP with the sync off for all but the last micro-batch (training.gradient_sync: last_micro_batch, and
// FSDP's default under pipeline parallelism: pipeline_syncs_last_micro_batch) keeps
// whole gradients, in the gathered parameters' dtype, until that sync: "FSDP will accumulate the full model
// gradients (instead of gradient shards) until the eventual sync" (torch/distributed/fsdp/
// fully_sharded_data_parallel.py, no_sync; FSDP2's set_requires_gradient_sync(False) alike: autograd
// accumulates into the unsharded parameters' .grad).
inline bool accumulates_unsharded_gradients(const Scenario& s) {
  return s.training.framework == Framework::fsdp &&
         !reduces_every_micro_batch(framework_rules(Framework::fsdp), s.training, s.parallel) && s.micro_batches() > 1;
}
// Bytes per element of those whole gradients: FSDP1 accumulates in the gathered parameters' dtype (autograd
// into the unsharded flat parameter's .grad); FSDP2 converts them to the reduce dtype and accumulates there
// (_fully_shard/_fsdp_param.py, to_accumulated_grad_if_needed: unsharded_accumulated_grad =
// grad.to(reduce_dtype), called from _fsdp_param_group.py post_backward when not reduce_grads).
double unsharded_gradient_bytes(const Scenario& s);

// Whether the gradients accumulate in a separate fp32 copy (FrameworkRules::casts_gradients_to_fp32_accumulator):
// 16-bit parameters with fp32 gradients at a ZeRO stage whose accumulation is modelled.
bool accumulates_into_fp32_copy(const Scenario& s);

// DeepSpeed's BF16_Optimizer (accumulates_into_fp32_copy with bf16 parameters): besides the fp32 gradients it
// keeps every bf16 .grad until the next backward begins (bf16_optimizer.py clear_lp_grads sets them to None
// then; update_hp_grads(clear_lp_grads=False) after each backward, pipe/engine.py and BF16_Optimizer.backward),
// 2 B per parameter more; fp16 at ZeRO-1 frees each gradient once added (stage_1_and_2.py fill_grad_accum_attribute).
bool keeps_16bit_gradients_beside_fp32_copy(const Scenario& s);

// Which all-reduce DeepSpeed's engine runs itself (FrameworkRules::engine_all_reduce_bucket): none where a ZeRO
// optimizer reduces the gradients; BF16_Optimizer's fp32 flat gradient buffers (keeps_16bit_gradients_beside_
// fp32_copy, ZeRO 0 or 1); at ZeRO 0 otherwise the `.grad` tensors flattened into buckets. Read by the copies
// around it (optimizer_time.cpp) and its buffer at the step's end (stage_memory.cpp).
enum class EngineAllReduce { none, bf16_optimizer_buffers, flattened_buckets };
EngineAllReduce engine_all_reduce_of(const Scenario& s);

// Whether the gradients go through DeepSpeed's ZeRO-1/2 reduce bucket (copies_gradients_into_reduce_bucket at
// ZeRO-2, and at ZeRO-1 unless BF16_Optimizer runs, which all-reduces its own flat buffers): the copies in
// optimizer_time.cpp, the bucket's memory in stage_memory.cpp.
bool fills_reduce_bucket(const Scenario& s);

// Bytes per element of a sharded parameter as FSDP keeps it: the fp32 master where one is kept (mixed
// precision shards the fp32 parameters and gathers 16-bit copies), else the parameter's own dtype (a model
// built in 16 bits without a master, as PyTorch 1.11's FSDP ran before MixedPrecision).
double sharded_parameter_bytes(const TrainingSpec& t);

// Bytes per element of the gradients a GPU keeps across micro-batches and hands to the optimizer:
// training.grad_precision, or the sharded parameter's dtype (the fp32 master where one is kept, else the
// parameter's own) where the framework casts each reduced shard back (sharded_gradient_in_parameter_dtype).
double kept_gradient_bytes(const Scenario& s);

// Whether the step's gradient reduce-scatter may hide behind the backward: the layout asks for it
// (grad_reduce_overlapped) and the backward does not wait for it.
inline bool gradient_reduce_overlaps(const FrameworkRules& fw, const ParallelSpec& p) {
  return grad_reduce_overlapped(fw, p) && !host_gradient_copy_holds_backward(fw, p);
}

// The ZeRO-3 gather settings a scenario runs with: the scenario's `memory.zero3_*` keys where given
// (DeepSpeed's ds_config stage3_* keys, model/scenario_sections.cpp read_memory), else the framework's
// defaults above. The one place the planner and the simulator read these four values from.
struct Zero3Settings {
  // Gathered a whole layer at a time (FrameworkRules::zero3_whole_layers); false: module by module
  // (DeepSpeed, or FSDP units of one submodule, `memory.fsdp_unit: submodule`).
  bool whole_layers = true;
  double prefetch_parameters = 0;   // FrameworkRules::zero3_prefetch_parameters
  double live_parameters = 0;       // FrameworkRules::zero3_live_parameters
  double reuse_distance = 0;        // FrameworkRules::zero3_reuse_distance
  double persistence_threshold = 0; // FrameworkRules::zero3_persistence_threshold
  double reduce_bucket = 0;         // FrameworkRules::zero3_reduce_bucket
  bool recompute_regathers = false;  // FrameworkRules::recompute_regathers (or FSDP submodule units)
  // When a backward gather is issued (FSDP's `memory.fsdp_backward_prefetch`; DeepSpeed prefetches
  // within its live-parameter limit: pre).
  BackwardPrefetch backward_prefetch = BackwardPrefetch::pre;
};
Zero3Settings zero3_settings_of(const FrameworkRules& fw, const MemorySettings& m);
// Whether a step with this recompute runs a recompute pass of gathers: the recompute forward gathers every
// unit again (full recompute, where the settings say the framework regathers). The one rule the step
// time, the memory and the simulator read.
inline bool zero3_recompute_pass(const Zero3Settings& z, RecomputeMode mode) {
  return z.recompute_regathers && mode == RecomputeMode::full;
}

}  // namespace tp
