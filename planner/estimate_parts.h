// The parts planner/estimate.cpp puts together for one scenario: the per-GPU parameter shares and
// model states (memory_states.cpp), the stored activations (activation_memory.cpp) and one pipeline
// stage's memory breakdown with its buffers, host offload and overhead (stage_memory.cpp).
// Internal to the planner: the public API is estimate.h.
#pragma once

#include <cstdint>
#include <vector>

#include "estimate.h"
#include "framework_rules.h"
#include "op_graph.h"
#include "specs.h"
#include "zero3_modules.h"

namespace tp {

// How one GPU holds a slice of the ops: tensor, context and expert parallel sizes, sequence parallel,
// and the micro-batch in sequences.
struct ShardLayout {
  int tp, cp, ep;
  bool sp;
  double b;  // micro-batch, sequences
};
ShardLayout shard_layout(const Scenario& s);

// ---- model states (memory_states.cpp) ----

// Parameters of an op list held by one GPU.
struct ParamShare {
  double dense = 0;   // per GPU, non-expert
  double expert = 0;  // per GPU, expert
  double adafactor_state = 0;  // bytes of factored second moments for these parameters
  double gemm = 0;  // per GPU, weights of GEMMs (what autocast casts to 16 bits)
  double total() const { return dense + expert; }
};

// Per-GPU parameter shares of one transformer layer, of the embedding and of the output layer
// (with the last stage's own copy of a tied word embedding).
struct ModelParamShares {
  ParamShare layer, embedding, head;
};
ModelParamShares model_param_shares(const Scenario& s, const OpGraph& g, const ShardLayout& l);

// The parameters one GPU of a stage with `layers` layers holds (first: the embedding, last: the head).
ParamShare stage_param_share(const ModelParamShares& shares, int layers, bool first, bool last);

// Bytes per parameter of the states held between steps: the weights (none for FSDP's ZeRO-3, whose shard is
// the master copy), gradients, master copy and optimizer states; and the group sizes ZeRO shards them over.
// What ZeRO gathers is parameter_bytes.
struct StateBytesPerParam {
  double weights = 0, gradients = 0, master = 0, optimizer = 0;
  double dense_shard = 1;   // data x context group (Megatron's distributed optimizer)
  double expert_shard = 1;  // the same for expert parameters, divided by the expert parallel size
};
StateBytesPerParam state_bytes_per_param(const Scenario& s);

// The parameters of `ps` a GPU keeps a state for: all of them, or one rank's shard (the dense ones over the
// sharding group, the experts' over theirs) for a state ZeRO shards from stage `sharded_from` on.
struct ZeroCounts {
  double whole = 0;
  double shard = 0;
  double at(int zero, int sharded_from) const { return zero >= sharded_from ? shard : whole; }
};
ZeroCounts zero_counts(const StateBytesPerParam& sb, const ParamShare& ps);

// Per-GPU model states of one stage before any offload.
struct ModelStates {
  double weights = 0, gradients = 0, master = 0, optimizer = 0;
};
ModelStates stage_model_states(const Scenario& s, const StateBytesPerParam& sb, const ParamShare& ps);

// Parameters one GPU holds gathered at once under ZeRO-3 (see memory_states.cpp).
double zero3_gathered_params(const Zero3Settings& zero3, const Zero3Modules& modules, int prefetch_layers);

// ---- activations (activation_memory.cpp) ----

// Activation and working bytes of the model's pieces for one micro-batch on one GPU.
struct ActivationInputs {
  double layer_full = 0;      // one layer, everything saved
  double layer_kept = 0;      // one layer under the recompute mode (layer_activation_bytes)
  double layer_scores = 0;    // one layer's attention scores (what selective recompute rebuilds)
  double embedding = 0;
  double head = 0;
  double boundary = 0;        // one layer input: a pipeline send / receive buffer
  double head_work_forward = 0;   // working memory beyond the saved bytes at the loss's forward peak
  double head_work_backward = 0;  // the same at its backward peak
  double largest_loss_block = 0;  // only where layers are recomputed (else 0)
};
ActivationInputs activation_inputs(const Scenario& s, const OpGraph& g, const ShardLayout& l);

// The activations one stage stores at its peak.
struct StageActivations {
  double stored = 0;     // on the GPU
  double offloaded = 0;  // waiting on the host (activation offload)
  double recompute_working_set = 0;  // transient, rebuilt during one layer's (segment's) backward
  double in_flight = 0;  // micro-batches held (layer-equivalents / layers)
};
StageActivations stage_activations(const ParallelSpec& p, const ActivationInputs& a, int stage, int layers,
                                   std::int64_t micro_batches);

bool recomputes_layers(const ParallelSpec& p);  // full, every-k or one-in-k layer recompute
// How many of `layers` are checkpointed and run their forward again in the backward: all of them under
// full and every-k recompute; under one-in-k (torchtitan's selective layer AC, `_count % k == 0` in
// torchtitan/parallelisms/parallelize_llama.py checkpoint_wrapper) every k-th, floor(layers / k); none
// otherwise (selective recompute repeats the attention core only).
double checkpointed_layers(const ParallelSpec& p, double layers);

// ---- one stage (stage_memory.cpp) ----

// What every stage's breakdown needs, computed once per estimate.
struct StageMemoryInputs {
  ShardLayout layout;
  ModelParamShares params;
  StateBytesPerParam state_bytes;
  ActivationInputs activations;
  double weight_copy_bytes = 0;  // bytes per GEMM weight of autocast's 16-bit copies (0 without)
  double vocab = 0;              // the op graph's vocabulary (padded as the framework pads it)
  double gathered_params = 0;    // ZeRO-3: parameters gathered at once
  double persistent_params = 0;  // ZeRO-3: per layer, parameters held whole (zero3_modules.h)
  std::int64_t micro_batches = 0;  // per replica per step
  const FrameworkRules* framework = nullptr;
};
StageMemoryInputs stage_memory_inputs(const Scenario& s, const OpGraph& g, std::int64_t micro_batches);

MemoryBreakdown stage_memory(const Scenario& s, const StageMemoryInputs& in, int stage);

}  // namespace tp
