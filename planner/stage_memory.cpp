// One pipeline stage's per-GPU memory: model states and activations (memory_states.cpp,
// activation_memory.cpp), buffers, autocast weight copies, host offload, the peak phase when gradients
// are freed each step, and the allocator overhead. Formulas and sources: docs/model.md, "Memory".
#include <algorithm>

#include "estimate_parts.h"
#include "framework_rules.h"
#include "layer_code_rules.h"

namespace tp {
namespace {

// Autocast's 16-bit weight copies of the stage's GEMMs (the tied output layer casts the embedding).
double weight_copies(const Scenario& s, const StageMemoryInputs& in, const ParamShare& ps, bool last) {
  double copies = in.weight_copy_bytes * ps.gemm;
  if (last && s.model.tied_embeddings && s.parallel.pp == 1) {
    copies += in.weight_copy_bytes * in.vocab * s.model.hidden / s.parallel.tp;
  }
  return copies;
}

// The gradient reduce buckets: DeepSpeed's ZeRO-1/2 optimizer (fills_reduce_bucket) allocates its bucket at
// each backward, reduce_bucket_size elements in the parameters' dtype, two of them with overlap_comm
// (stage_1_and_2.py backward, `ipg_buffer`; reduce_bucket_size default 5e8, overlap_comm off below ZeRO-3 by
// default: runtime/zero/config.py); otherwise two buckets of memory.comm_bucket bytes from ZeRO-2 on.
double reduce_bucket_bytes(const Scenario& s, const FrameworkRules& fw) {
  const ParallelSpec& p = s.parallel;
  if (fills_reduce_bucket(s)) {
    const double buckets = grad_reduce_overlapped(fw, p) ? 2.0 : 1.0;
    return buckets * zero3_settings_of(fw, s.memory).reduce_bucket * parameter_bytes(s.training);
  }
  // DeepSpeed's ZeRO-3 allocates its reduce bucket once, at initialisation, and keeps it: reduce_bucket_size
  // elements per gradient dtype (stage3.py, `bucket.buffer = torch.empty(self.reduce_bucket_size, ...)`
  // with contiguous_gradients, on by default).
  const double zero3_bucket = zero3_settings_of(fw, s.memory).reduce_bucket;
  if (p.zero >= 3 && zero3_bucket > 0) return zero3_bucket * parameter_bytes(s.training);
  return p.zero >= 2 ? 2.0 * s.memory.comm_bucket.value : 0.0;
}

// The whole sequence's K and V of one layer that the all-gather exchanges of context parallelism hold while its
// attention runs (split by tp, for the micro-batch's sequences): TE's all_gather also gathers them again in the
// backward and builds whole-sequence dK and dV before its reduce-scatter (AttnFuncWithCPAndKVAllGather.backward):
// twice; PyTorch's rotation (ring_all_gather) gathers them again and passes dK/dV of its own chunk: once.
double cp_gathered_kv(const Scenario& s) {
  const ParallelSpec& p = s.parallel;
  if (p.cp <= 1) return 0.0;
  const CpComm exchange = cp_comm_of(p, s.training.framework);
  if (exchange != CpComm::all_gather && exchange != CpComm::ring_all_gather) return 0.0;
  const double kv_width = static_cast<double>(attention_kv_heads(s.model, repeat_kv_of(s.training))) * s.model.head_dim;
  const double kv = 2.0 * static_cast<double>(s.training.sequence_length) * kv_width / p.tp *
                    static_cast<double>(s.training.micro_batch) * stored_bytes(s.training.precision);
  return exchange == CpComm::all_gather ? 2.0 * kv : kv;
}

// Buffers: recompute working set, pipeline send/receive, ZeRO buckets and gathered parameters: the
// gathered modules and, for each of the stage's `layers`, the persistent tensors held whole (their
// shards are in the weights); context parallelism's gathered K/V.
double stage_buffers(const Scenario& s, const StageMemoryInputs& in, int layers, double recompute_working_set) {
  const ParallelSpec& p = s.parallel;
  double buffers = recompute_working_set + cp_gathered_kv(s);
  if (p.pp > 1) buffers += 2.0 * in.activations.boundary;
  buffers += reduce_bucket_bytes(s, *in.framework);
  if (p.zero >= 3) buffers += (in.gathered_params + layers * in.persistent_params) * parameter_bytes(s.training);
  return buffers;
}

// Offload: optimizer states, master weights and fp32 gradients live on the host (ZeRO-Offload), as do
// offloaded parameters and activations. Moves them out of `states`; returns the host bytes.
double offload_to_host(const ParallelSpec& p, const StageMemoryInputs& in, const ParamShare& ps,
                       double offloaded_activations, ModelStates& states) {
  double host = offloaded_activations;
  if (p.offload_optimizer == OffloadTarget::cpu) {
    const double gradient_params = zero_counts(in.state_bytes, ps).at(p.zero, 2);  // sharded from ZeRO-2 on
    host += states.master + states.optimizer + 4.0 * gradient_params;                // the fp32 gradient copy
    states.master = 0;
    states.optimizer = 0;
    if (in.framework->gradient_partitions_on_host && p.zero >= 2) states.gradients = 0;
  }
  if (p.offload_params == OffloadTarget::cpu) {
    host += states.weights;
    states.weights = 0;
  }
  return host;
}

// Gradients are freed by zero_grad(set_to_none=True) once per step and exist only from the first
// backward pass on. With one micro-batch the peak is the largest of the loss's forward peak
// (activations, weight copies, logits), its backward peak (before any gradient exists), the recompute
// of a layer, and the end of the backward pass (all gradients, activations gone). With gradient
// accumulation every later micro-batch runs those same phases beside the gradients accumulated so far
// (torch accumulates into .grad; FSDP into the sharded gradient: FSDP1 _runtime_utils.py
// _accumulate_sharded_grad, FSDP2 foreach_reduce's accumulation into the sharded DTensor grad), so they
// add up. Sets the breakdown at that peak.
void peak_without_persistent_gradients(const Scenario& s, const StageMemoryInputs& in, bool last, double copies,
                                       double& activations, double& buffers, double& gradients) {
  const RecomputeMode mode = s.parallel.recompute.mode;
  // Autocast's cached 16-bit weights are kept for backward by the GEMMs that used them, unless the
  // layers are recomputed (then only until the autocast region ends with the forward pass; one-in-k
  // recompute leaves the other layers keeping theirs).
  const bool copies_kept = mode == RecomputeMode::none || mode == RecomputeMode::selective || mode == RecomputeMode::one_in;
  const double loss_fwd = activations + copies + (last ? in.activations.head_work_forward : 0.0);
  const double loss_bwd = activations + (copies_kept ? copies : 0.0) + (last ? in.activations.head_work_backward : 0.0);
  const double recompute_peak = activations + buffers;
  const double micro_batch_peak = std::max({loss_fwd, loss_bwd, recompute_peak});
  if (in.micro_batches > 1) {  // a later micro-batch's peak beside the accumulated gradients
    buffers = micro_batch_peak - activations;
    return;
  }
  const double phase = std::max(micro_batch_peak, gradients);
  if (phase == gradients) {
    activations = 0;
    buffers = 0;
  } else {
    gradients = 0;
    buffers = phase - activations;
  }
}

// Plain PyTorch with dp > 1 runs torch DistributedDataParallel, whose reducer allocates its gradient
// buckets once for the run, as large as all the gradients (torch/csrc/distributed/c10d/reducer.cpp,
// initialize_buckets: one flat tensor per bucket). With gradient_as_bucket_view (off by default) the
// parameters' .grad are views into them: the gradients are held for the run. Without it the buckets
// come on top of the gradients.
struct DdpBuckets {
  double extra = 0;             // bytes beside the gradients
  bool hold_gradients = false;  // the gradients live in the buckets for the run
};
DdpBuckets ddp_buckets(const Scenario& s, double gradients) {
  if (!runs_ddp(s)) return {};
  if (s.memory.ddp_gradient_as_bucket_view) return {0.0, true};
  return {gradients, false};
}

// What DeepSpeed allocates at the step's end, after the backward, beside the model states: its own gradient
// all-reduce (FrameworkRules::engine_all_reduce_bucket; engine.py allreduce_bucket): BF16_Optimizer casts each
// fp32 flat gradient group to the communication dtype (bf16) for the all-reduce and frees the copy after it,
// 2 B per parameter of the largest group (one group holds all but the norms and biases: counted as all of the
// stage's); at ZeRO 0 otherwise each bucket is flattened into a new tensor in the gradients' dtype (a bucket
// closes once it passes the size: its last tensor's excess is left out). Then, at ZeRO 0 with an fp32 master,
// the optimizer's step (FP16_Optimizer, which DeepSpeed's bf16 stage 0 runs too since 0.17.6: DDP_BFLOAT16)
// flattens fp32 copies of the 16-bit gradients while they still exist: a list of per-parameter .to(fp32)
// copies and their concatenation, 8 B per parameter (fp16/fused_optimizer.py step, _flatten_dense_tensors).
double step_end_buffer(const Scenario& s, const FrameworkRules& fw, double parameters) {
  switch (engine_all_reduce_of(s)) {
    case EngineAllReduce::none: return 0.0;
    case EngineAllReduce::bf16_optimizer_buffers: return 2.0 * parameters;
    case EngineAllReduce::flattened_buckets: {
      const double bucket = std::min(parameters, fw.engine_all_reduce_bucket) * kept_gradient_bytes(s);
      return std::max(bucket, master_bytes(s.training) > 0 ? 8.0 * parameters : 0.0);
    }
  }
  return 0.0;
}

}  // namespace

StageMemoryInputs stage_memory_inputs(const Scenario& s, const OpGraph& g, std::int64_t micro_batches) {
  StageMemoryInputs in;
  in.layout = shard_layout(s);
  in.params = model_param_shares(s, g, in.layout);
  in.state_bytes = state_bytes_per_param(s);
  in.activations = activation_inputs(s, g, in.layout);
  in.weight_copy_bytes = saved_tensor_rules(s.training, s.model).autocast_weight_copies ? 2.0 : 0.0;
  in.vocab = static_cast<double>(g.vocab);
  in.framework = &framework_rules(s.training.framework);
  if (s.parallel.zero >= 3) {  // read only then (stage_buffers); the sweep's hot path skips it otherwise
    const Zero3Layer zero3 = zero3_layer(s, g.layer, in.layout.tp, in.layout.ep);
    in.gathered_params = zero3_gathered_params(zero3.settings, zero3.modules, s.memory.zero3_prefetch_layers);
    in.persistent_params = zero3.modules.persistent;
  }
  in.micro_batches = micro_batches;
  return in;
}

MemoryBreakdown stage_memory(const Scenario& s, const StageMemoryInputs& in, int stage) {
  const ParallelSpec& p = s.parallel;
  const FrameworkRules& fw = *in.framework;
  MemoryBreakdown b;
  b.stage = stage;
  b.layers = p.layers_per_stage[static_cast<size_t>(stage)];
  const bool first = stage == 0;
  const bool last = stage == p.pp - 1;

  const ParamShare ps = stage_param_share(in.params, b.layers, first, last);
  b.parameters = ps.total();
  b.expert_parameters = ps.expert;
  b.layer_parameters = in.params.layer.total() * b.layers;
  ModelStates states = stage_model_states(s, in.state_bytes, ps);

  const StageActivations sa = stage_activations(p, in.activations, stage, b.layers, in.micro_batches);
  b.in_flight = sa.in_flight;
  double acts = sa.stored;
  const double copies = weight_copies(s, in, ps, last);
  double buffers = stage_buffers(s, in, b.layers, sa.recompute_working_set);
  const double host = offload_to_host(p, in, ps, sa.offloaded, states);
  const DdpBuckets ddp = ddp_buckets(s, states.gradients);

  const bool persistent_gradients = fw.persistent_gradients || ddp.hold_gradients;
  if (!persistent_gradients) {
    peak_without_persistent_gradients(s, in, last, copies, acts, buffers, states.gradients);
  } else {
    buffers += copies;
    // At the step's end the backward's activations and buffers are gone and the step end's buffers come.
    const double step_end = step_end_buffer(s, fw, b.parameters);
    if (step_end > acts + buffers) {
      acts = 0;
      buffers = step_end;
    }
  }
  // Allocator slack (docs/model.md §9): the caching allocator fragments only what is allocated and
  // freed during the step (activations, buffers, gradients freed by zero_grad); tensors allocated once
  // for the run (weights, kept gradient buffers, DDP's buckets, master copy, optimizer states) fill their blocks.
  const double transient = acts + buffers + (persistent_gradients ? 0.0 : states.gradients);
  buffers += ddp.extra;
  const double tensors = states.weights + states.gradients + states.master + states.optimizer + acts + buffers;
  // With layer recompute the backward pass allocates each recomputed layer after the loss has freed
  // its buffers, inside the segments the loss left cached; a split segment is never returned
  // (c10/cuda/CUDACachingAllocator.cpp: release_cached_blocks frees whole free segments only), so the
  // next step's loss needs its largest tensor in a fresh segment: reserved exceeds allocated by it.
  // (A one-in-k recompute with k above the stage's layers recomputes none: no working set, nothing stranded.)
  const double stranded = last && recomputes_layers(p) && sa.recompute_working_set > 0 ? in.activations.largest_loss_block : 0.0;
  b.weights = Bytes(states.weights);
  b.gradients = Bytes(states.gradients);
  b.master_weights = Bytes(states.master);
  b.optimizer = Bytes(states.optimizer);
  b.activations = Bytes(acts);
  b.buffers = Bytes(buffers);
  b.overhead = Bytes(s.memory.cuda_context.value + s.memory.allocator_overhead * transient + stranded);
  b.total = Bytes(tensors) + b.overhead;
  b.host = Bytes(host);
  return b;
}

}  // namespace tp
