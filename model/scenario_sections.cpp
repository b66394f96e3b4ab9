// Section readers of a scenario file (scenario_sections.h): value ranges, defaults and in-section checks.
#include "scenario_sections.h"

#include <cstdint>
#include <cstdio>
#include <string>

#include "spec_reader.h"
#include "units.h"

namespace tp {
namespace {

constexpr std::int64_t kBig = std::int64_t(1) << 52;

// Upper bounds of the quantities that multiply into run totals: far above any real job, low enough
// that no product of them (tokens x step time x GPUs x price) leaves the range of a double.
constexpr double kMaxTokens = 1e18;        // the largest published runs train on ~1e13-1e14 tokens
constexpr double kMaxUsdPerGpuHour = 1e6;
constexpr double kMaxPerKwh = 1e6;         // USD or kg CO2 per kWh
constexpr double kMaxHostPower = 1e9;      // watts per node
constexpr double kMaxSeconds = 1e12;       // a restart, ~31,700 years
constexpr double kMaxBufferBytes = 1e15;   // CUDA context, communication bucket

// r.quantity() bounded above: an InputError naming the field when `value` exceeds `max`.
double at_most(MapReader& r, const std::string& key, double value, double max) {
  if (value > max) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", max);
    r.fail(key, "is out of range: at most " + std::string(buf) + " (in base SI units)");
  }
  return value;
}

Precision read_precision(MapReader& r, const std::string& key, Precision def) {
  return r.choice(key, def,
                  {{"fp32", Precision::fp32}, {"tf32", Precision::tf32}, {"fp16", Precision::fp16},
                   {"bf16", Precision::bf16}, {"fp8", Precision::fp8}});
}

OffloadTarget read_offload(MapReader& r, const std::string& key) {
  return r.choice(key, OffloadTarget::none, {{"none", OffloadTarget::none}, {"cpu", OffloadTarget::cpu}});
}

// training.fused_loss and fp8_recipe, after precision and framework (docs/scenario-reference.md).
void read_loss_and_fp8_recipe(MapReader& r, TrainingSpec& t) {
  t.fused_loss = r.boolean("fused_loss", t.fused_loss);
  // Megatron's fused loss is Transformer Engine's parallel_cross_entropy, written and tested for bf16 and
  // fp32 logits only (transformer_engine/pytorch/cross_entropy.py; tests/pytorch/test_parallel_cross_entropy.py).
  if (t.fused_loss && layer_code_of(t) == LayerCode::fused && t.precision == Precision::fp16) {
    r.fail("fused_loss", "the fused layer code's cross-entropy (Transformer Engine parallel_cross_entropy) takes bf16 "
                         "or fp32 logits; training.precision fp16 gives fp16 logits");
  }
  t.fp8_recipe = r.choice("fp8_recipe", t.fp8_recipe, {{"delayed", Fp8Recipe::delayed}, {"current", Fp8Recipe::current}});
  if (r.has("fp8_recipe") && t.precision != Precision::fp8) {
    r.fail("fp8_recipe", std::string("is the FP8 scaling recipe; only valid with training.precision: fp8 (here ") +
                             to_string(t.precision) + ")");
  }
}

// training.layer_code (docs/scenario-reference.md), after framework, autocast and compile: absent, the
// framework's own. Fused code is Megatron's model with 16-bit weights: torch.autocast (fp32 weights cast per
// module) and torch.compile (Inductor fusing eager elementwise chains) are settings of eager PyTorch modules,
// and the fused code's rules (planner/framework_rules.cpp) model neither, so both are refused with it.
void read_layer_code(MapReader& r, TrainingSpec& t) {
  if (r.has("layer_code")) {
    t.layer_code = r.choice("layer_code", LayerCode::fused, {{"fused", LayerCode::fused}, {"eager", LayerCode::eager}});
  }
  if (layer_code_of(t) != LayerCode::fused) return;
  if (t.autocast) {
    r.fail("layer_code", "fused layer code (Megatron's model, Transformer Engine kernels) keeps 16-bit weights; "
                         "training.autocast: true is a setting of eager PyTorch modules (use layer_code: eager)");
  }
  if (t.compile) {
    r.fail("layer_code", "fused layer code runs its own fused kernels; training.compile: true (torch.compile) "
                         "fuses eager PyTorch modules (use layer_code: eager)");
  }
  if (t.fused_norm) {
    r.fail("fused_norm", "is a setting of eager layer code; the fused layer code (Megatron's model) fuses its norms "
                         "already (use layer_code: eager)");
  }
}

// training.checkpoint_early_stop, after framework and layer_code: absent, on for fsdp's eager code (torch's
// non-reentrant checkpoint_wrapper, early stop on since torch 2.1), off elsewhere (Hugging Face's reentrant
// default, DeepSpeed's and Megatron's own checkpoint functions). Fused code checkpoints with Megatron's own
// function, which reruns the whole region (tensor_parallel/random.py CheckpointFunction).
void read_checkpoint_early_stop(MapReader& r, TrainingSpec& t) {
  const bool eager = layer_code_of(t) == LayerCode::eager;
  t.checkpoint_early_stop = r.boolean("checkpoint_early_stop", eager && t.framework == Framework::fsdp);
  if (t.checkpoint_early_stop && !eager) {
    r.fail("checkpoint_early_stop", "is torch.utils.checkpoint's early stop (use_reentrant=False); the fused layer "
                                    "code checkpoints with Megatron's own function, which reruns the whole region "
                                    "(use layer_code: eager)");
  }
}

// Sequence length, the batch in sequences or in tokens, the micro-batch and the run's tokens.
void read_batch(MapReader& r, TrainingSpec& t) {
  t.sequence_length = r.integer("sequence_length", t.sequence_length, 1, kBig);
  const bool by_sequences = r.has("global_batch");
  const bool by_tokens = r.has("global_batch_tokens");
  if (by_sequences && by_tokens) {
    r.fail("global_batch_tokens", "give either training.global_batch (sequences) or global_batch_tokens, not both");
  }
  t.global_batch = r.integer("global_batch", 0, 1, kBig);
  if (by_tokens) {
    double tokens = r.quantity("global_batch_tokens", Dim::count, 0.0, 1.0);
    double seqs = tokens / static_cast<double>(t.sequence_length);
    if (seqs != static_cast<double>(static_cast<std::int64_t>(seqs))) {
      r.fail("global_batch_tokens", "is not a whole number of sequences of training.sequence_length (" +
                                        std::to_string(t.sequence_length) + ") tokens");
    }
    t.global_batch = static_cast<std::int64_t>(seqs);
  }
  t.micro_batch = r.integer("micro_batch", t.micro_batch, 1, kBig);
  if (!by_sequences && !by_tokens) t.global_batch = 0;  // resolve_layout(): micro_batch x dp
  t.tokens = at_most(r, "tokens", r.quantity("tokens", Dim::count, 1e12, 0.0), kMaxTokens);
}

// The framework and the torch settings: they set the defaults of the keys read after them
// (docs/model.md, "Frameworks").
void read_framework(MapReader& r, TrainingSpec& t) {
  t.framework = r.choice("framework", t.framework,
                         {{"megatron", Framework::megatron}, {"deepspeed", Framework::deepspeed},
                          {"fsdp", Framework::fsdp}, {"pytorch", Framework::pytorch}});
  t.autocast = r.boolean("autocast", t.autocast);
  t.compile = r.boolean("compile", t.compile);
  t.fused_norm = r.boolean("fused_norm", t.fused_norm);
  if (t.autocast && (t.framework == Framework::megatron || t.framework == Framework::deepspeed)) {
    r.fail("autocast", std::string("is a torch.autocast setting; ") + to_string(t.framework) +
                           " keeps 16-bit weights with an fp32 master copy (use framework: pytorch or fsdp)");
  }
  if (t.compile && t.framework != Framework::pytorch && t.framework != Framework::fsdp) {
    r.fail("compile", std::string("is a torch.compile setting; ") + to_string(t.framework) + " does not use it");
  }
}

// The master copy and the gradients' dtype. Plain PyTorch keeps no master copy: a model cast to 16 bits
// trains in 16 bits, and under autocast the fp32 parameters are the master (PyTorch AMP docs, "Automatic
// Mixed Precision").
void read_master_and_gradients(MapReader& r, TrainingSpec& t) {
  const bool own_master = t.framework == Framework::pytorch || t.autocast;
  std::string master =
      r.choice<std::string>("master_weights", own_master ? "none" : "fp32", {{"none", "none"}, {"fp32", "fp32"}});
  if (t.autocast && master == "fp32") r.fail("master_weights", "autocast keeps fp32 parameters: they are the master copy");
  t.master_weights = master == "fp32";
  Precision same = t.precision == Precision::fp8 ? Precision::bf16 : t.precision;
  if (same == Precision::tf32) same = Precision::fp32;
  if (t.autocast) same = Precision::fp32;  // gradients take the fp32 parameters' dtype
  t.grad_precision = r.choice(
      "grad_precision", same,
      {{"same", same}, {"fp32", Precision::fp32}, {"fp16", Precision::fp16}, {"bf16", Precision::bf16}});
}

// The optimizer, the dtype of its states and the kernel its step runs.
void read_optimizer(MapReader& r, TrainingSpec& t) {
  t.optimizer = r.choice("optimizer", t.optimizer,
                         {{"sgd", Optimizer::sgd}, {"momentum", Optimizer::momentum}, {"adam", Optimizer::adam},
                          {"adamw", Optimizer::adamw}, {"adafactor", Optimizer::adafactor},
                          {"adam8bit", Optimizer::adam8bit}, {"lion", Optimizer::lion}});
  // torch.optim.AdamW/SGD keep states like the parameter ("same"); Megatron, DeepSpeed and FSDP keep them in fp32.
  t.optimizer_state_precision =
      r.choice("optimizer_state_precision",
               t.framework == Framework::pytorch ? StatePrecision::same : StatePrecision::fp32,
               {{"fp32", StatePrecision::fp32}, {"same", StatePrecision::same}});
  // torch.optim.AdamW without fused/foreach runs its multi-tensor (foreach) code on CUDA (torch/optim/
  // optimizer.py _default_to_fused_or_foreach); Megatron, DeepSpeed and torchtitan use fused kernels.
  t.optimizer_kernel = r.choice(
      "optimizer_kernel", t.framework == Framework::pytorch ? OptimizerKernel::foreach : OptimizerKernel::fused,
      {{"fused", OptimizerKernel::fused}, {"foreach", OptimizerKernel::foreach}, {"for_loop", OptimizerKernel::for_loop}});
  if (r.has("optimizer_kernel") && !is_adam(t.optimizer)) {
    r.fail("optimizer_kernel", std::string("sets how an Adam or AdamW step runs; optimizer is ") + to_string(t.optimizer));
  }
}

// The attention: fused or explicit, which fused kernel, unpadded around it or not.
void read_attention(MapReader& r, TrainingSpec& t) {
  t.flash_attention = r.boolean("flash_attention", t.flash_attention);
  if (r.has("attention_kernel")) {
    t.attention_kernel = read_attention_kernel(r, "attention_kernel", AttentionKernel::flash);
    if (!t.flash_attention) {
      r.fail("attention_kernel", "names the fused attention kernel, but flash_attention is false (explicit attention); "
                                 "set flash_attention: true or remove the key");
    }
  }
  if (r.has("repeat_kv")) {
    t.repeat_kv = r.boolean("repeat_kv", false);
    if (*t.repeat_kv && (t.framework == Framework::megatron || t.framework == Framework::deepspeed)) {
      r.fail("repeat_kv", std::string("is a setting of eager PyTorch model code; ") + to_string(t.framework) +
                              "'s attention takes grouped K and V");
    }
  }
  t.attention_unpad = r.boolean("attention_unpad", t.attention_unpad);
  if (t.attention_unpad && !t.flash_attention) {
    r.fail("attention_unpad", "unpads Q, K, V around a fused attention kernel's variable-length entry point, but "
                              "flash_attention is false (explicit attention); set flash_attention: true or remove the key");
  }
}

// When gradients are reduced across micro-batches. Megatron's schedules always run the first micro-batches
// under no_sync; DeepSpeed's engine decides by ZeRO stage (its no_sync refuses partitioned gradients). FSDP
// and plain PyTorch leave it to the loop.
void read_gradient_sync(MapReader& r, TrainingSpec& t) {
  if (!r.has("gradient_sync")) return;
  if (t.framework == Framework::megatron || t.framework == Framework::deepspeed) {
    r.fail("gradient_sync", std::string("is the training loop's choice under fsdp or pytorch; ") + to_string(t.framework) +
                                " decides it itself (docs/scenario-reference.md); remove the key");
  }
  t.gradient_sync = r.choice("gradient_sync", GradientSync::every_micro_batch,
                             {{"every_micro_batch", GradientSync::every_micro_batch},
                              {"last_micro_batch", GradientSync::last_micro_batch}});
}

}  // namespace

TrainingSpec read_training(MapReader& r) {
  TrainingSpec t;
  read_batch(r, t);
  t.precision = read_precision(r, "precision", t.precision);
  read_framework(r, t);
  read_layer_code(r, t);
  read_checkpoint_early_stop(r, t);
  read_loss_and_fp8_recipe(r, t);
  read_master_and_gradients(r, t);
  read_optimizer(r, t);
  read_attention(r, t);
  t.moe_dispatcher = r.choice("moe_dispatcher", t.moe_dispatcher,
                              {{"all_to_all", MoeDispatcher::all_to_all}, {"deepep", MoeDispatcher::deepep}});
  read_gradient_sync(r, t);
  return t;
}

Recompute read_recompute(MapReader& r) {
  Recompute rc;
  YAML::Node n = r.node("recompute");
  if (!n.IsDefined()) return rc;
  if (n.IsMap()) {
    MapReader m(n, r.field("recompute"), r.file());
    const bool one_in = m.has("one_in");
    if (one_in && m.has("every")) m.fail("one_in", "give either every or one_in, not both");
    rc.mode = one_in ? RecomputeMode::one_in : RecomputeMode::every;
    rc.every = static_cast<int>(m.integer(one_in ? "one_in" : "every", 0, 1, 100000));
    m.finish();  // an unknown key first: it is named, with the closest known one
    if (!one_in && !m.has("every")) {
      m.fail("every", "required: {every: k} (segments of k layers) or {one_in: k} (one layer in k checkpointed)");
    }
    return rc;
  }
  rc.mode = r.choice("recompute", rc.mode,
                     {{"none", RecomputeMode::none}, {"selective", RecomputeMode::selective},
                      {"full", RecomputeMode::full}, {"selective_op", RecomputeMode::selective_op}});
  return rc;
}

ParallelSpec read_parallel(MapReader& r) {
  ParallelSpec p;
  p.tp = static_cast<int>(r.integer("tp", 1, 1, 1 << 20));
  p.pp = static_cast<int>(r.integer("pp", 1, 1, 1 << 20));
  auto dp = r.integer_or_auto("dp", 1, 1 << 30);
  p.dp_auto = !dp.has_value();
  p.dp = dp.value_or(1);
  p.cp = static_cast<int>(r.integer("cp", 1, 1, 1 << 20));
  p.ep = static_cast<int>(r.integer("ep", 1, 1, 1 << 20));
  p.vpp = static_cast<int>(r.integer("vpp", 1, 1, 1 << 10));
  YAML::Node lps = r.node("layers_per_stage");
  p.layers_auto = !lps.IsDefined() || (lps.IsScalar() && lps.Scalar() == "auto");
  if (!p.layers_auto) {
    if (!lps.IsSequence()) r.fail("layers_per_stage", "expected 'auto' or a list of layer counts, one per stage");
    for (const auto& item : lps) {
      p.layers_per_stage.push_back(
          static_cast<int>(scalar_integer(item, r.field("layers_per_stage"), r.file(), 1, 100000)));
    }
  }
  p.schedule = r.choice("schedule", p.schedule,
                        {{"gpipe", Schedule::gpipe}, {"1f1b", Schedule::one_f_one_b},
                         {"interleaved", Schedule::interleaved}, {"zb-h1", Schedule::zb_h1}});
  if (r.has("cp_comm")) {
    p.cp_comm = r.choice("cp_comm", CpComm::p2p,
                         {{"p2p", CpComm::p2p},
                          {"all_gather", CpComm::all_gather},
                          {"a2a", CpComm::a2a},
                          {"ring_all_gather", CpComm::ring_all_gather},
                          {"a2a+p2p", CpComm::a2a_p2p}});
  }
  if (r.has("cp_a2a")) p.cp_a2a = static_cast<int>(r.integer("cp_a2a", 1, 1, 1 << 20));
  p.zero = static_cast<int>(r.integer("zero", 1, 0, 3));
  if (r.has("dp_shard")) p.dp_shard = static_cast<int>(r.integer("dp_shard", 1, 1, 1 << 30));
  p.sequence_parallel = r.boolean("sequence_parallel", p.tp > 1);
  p.recompute = read_recompute(r);
  if (r.has("offload")) {
    MapReader o(r.node("offload"), r.field("offload"), r.file());
    p.offload_optimizer = read_offload(o, "optimizer");
    p.offload_params = read_offload(o, "params");
    p.offload_activations = read_offload(o, "activations");
    o.finish();
  }
  if (r.has("placement")) {
    YAML::Node order = r.node("placement");
    const std::string expected = "a list of tp, cp, dp, pp in some order, innermost first, e.g. [tp, cp, dp, pp]";
    if (!order.IsSequence() || order.size() != 4) r.fail("placement", "expected " + expected);
    bool seen[4] = {false, false, false, false};
    for (size_t i = 0; i < 4; ++i) {
      const std::string name = order[i].IsScalar() ? order[i].Scalar() : "";
      int d = name == "tp" ? 0 : name == "cp" ? 1 : name == "dp" ? 2 : name == "pp" ? 3 : -1;
      if (d < 0 || seen[d]) {
        throw InputError(location_of(order[i], r.file()), r.field("placement"),
                         "'" + name + "' " + (d < 0 ? "is not a mesh dimension" : "is given twice") + ": expected " + expected);
      }
      seen[d] = true;
      p.placement[i] = static_cast<MeshDim>(d);
    }
  }
  if (r.has("overlap")) {
    MapReader o(r.node("overlap"), r.field("overlap"), r.file());
    if (o.has("grad_reduce")) p.overlap_grad_reduce = o.boolean("grad_reduce", true);
    if (o.has("param_gather")) p.overlap_param_gather = o.boolean("param_gather", true);
    p.overlap_tp_comm = o.boolean("tp_comm", p.overlap_tp_comm);
    o.finish();
  }
  return p;
}

CostSpec read_costs(MapReader& r) {
  CostSpec c;
  c.gpu_hour = Usd(at_most(r, "gpu_hour", r.quantity("gpu_hour", Dim::usd, c.gpu_hour.value), kMaxUsdPerGpuHour));
  c.spot_gpu_hour = Usd(at_most(r, "spot_gpu_hour", r.quantity("spot_gpu_hour", Dim::usd, 0.0), kMaxUsdPerGpuHour));
  c.preemptions_per_day = r.number("preemptions_per_day", 0.0, 0.0, 1e6);
  c.host_power_per_node =
      Watts(at_most(r, "host_power_per_node", r.quantity("host_power_per_node", Dim::watts, 0.0), kMaxHostPower));
  c.pue = r.number("pue", c.pue, 1.0, 10.0);
  c.electricity_usd_per_j = at_most(r, "electricity", r.quantity("electricity", Dim::usd_per_kwh, c.electricity_usd_per_j),
                                    kMaxPerKwh / kJoulesPerKwh);
  c.carbon_kg_per_j =
      at_most(r, "carbon", r.quantity("carbon", Dim::kg_per_kwh, c.carbon_kg_per_j), kMaxPerKwh / kJoulesPerKwh);
  if (r.has("failures")) {
    MapReader f(r.node("failures"), r.field("failures"), r.file());
    c.failures.gpu_mtbf = Seconds(f.quantity("gpu_mtbf", Dim::seconds, c.failures.gpu_mtbf.value, 1.0));
    c.failures.checkpoint_bandwidth =
        ByteRate(f.quantity("checkpoint_bandwidth", Dim::byte_rate, c.failures.checkpoint_bandwidth.value, 1.0));
    c.failures.restart = Seconds(at_most(f, "restart", f.quantity("restart", Dim::seconds, c.failures.restart.value),
                                         kMaxSeconds));
    f.finish();
  }
  return c;
}

// A DeepSpeed ZeRO-3 setting (ds_config zero_optimization.stage3_*, deepspeed/runtime/zero/config.py), a
// parameter count; absent = the framework's default. Only DeepSpeed has them: FSDP gathers whole units,
// Megatron's distributed optimizer gathers no parameters per module (docs/model.md §15).
namespace {
std::optional<double> read_zero3_setting(MapReader& r, const char* key, const char* ds_key, Framework framework,
                                         double min) {
  if (!r.has(key)) return std::nullopt;
  if (framework != Framework::deepspeed) {
    r.fail(key, std::string("is DeepSpeed's ") + ds_key + "; framework " + to_string(framework) +
                    " has no such setting (set training.framework: deepspeed or remove the key)");
  }
  constexpr double kMaxParameterCount = 1e15;  // far above any model's parameters; keeps sums finite
  return at_most(r, key, r.quantity(key, Dim::count, 0.0, min), kMaxParameterCount);
}
}  // namespace

MemorySettings read_memory(MapReader& r, Framework framework) {
  MemorySettings m;
  m.cuda_context =
      Bytes(at_most(r, "cuda_context", r.quantity("cuda_context", Dim::bytes, m.cuda_context.value), kMaxBufferBytes));
  m.allocator_overhead = r.number("allocator_overhead", m.allocator_overhead, 0.0, 1.0);
  m.headroom = r.number("headroom", m.headroom, 0.0, 0.9);
  m.comm_bucket =
      Bytes(at_most(r, "comm_bucket", r.quantity("comm_bucket", Dim::bytes, m.comm_bucket.value), kMaxBufferBytes));
  m.zero3_prefetch_layers = static_cast<int>(r.integer("zero3_prefetch_layers", m.zero3_prefetch_layers, 0, 1000));
  m.fsdp_unit = r.choice("fsdp_unit", m.fsdp_unit, {{"layer", FsdpUnit::layer}, {"submodule", FsdpUnit::submodule}});
  if (r.has("fsdp_unit") && framework != Framework::fsdp) {
    r.fail("fsdp_unit", std::string("is how FSDP wraps its units; framework ") + to_string(framework) +
                            " has none (DeepSpeed gathers per submodule already; set training.framework: fsdp or "
                            "remove the key)");
  }
  m.fsdp_backward_prefetch = r.choice("fsdp_backward_prefetch", m.fsdp_backward_prefetch,
                                      {{"pre", BackwardPrefetch::pre}, {"post", BackwardPrefetch::post},
                                       {"none", BackwardPrefetch::none}});
  if (r.has("fsdp_backward_prefetch") && framework != Framework::fsdp) {
    r.fail("fsdp_backward_prefetch", std::string("is FSDP1's backward_prefetch; framework ") + to_string(framework) +
                                          " has no such setting (set training.framework: fsdp or remove the key)");
  }
  m.fsdp_version = r.choice("fsdp_version", m.fsdp_version, {{"1", FsdpVersion::fsdp1}, {"2", FsdpVersion::fsdp2}});
  if (r.has("fsdp_version") && framework != Framework::fsdp) {
    r.fail("fsdp_version", std::string("is which FSDP the run uses; framework ") + to_string(framework) +
                               " is not FSDP (set training.framework: fsdp or remove the key)");
  }
  if (r.has("fsdp_backward_prefetch") && m.fsdp_version == FsdpVersion::fsdp2 &&
      m.fsdp_backward_prefetch != BackwardPrefetch::pre) {
    r.fail("fsdp_backward_prefetch", "is FSDP1's backward_prefetch; FSDP2 (fsdp_version: 2, the default) always "
                                     "prefetches the next unit's gather before the backward (pre): set fsdp_version: 1 "
                                     "or remove the key");
  }
  m.ddp_gradient_as_bucket_view = r.boolean("ddp_gradient_as_bucket_view", m.ddp_gradient_as_bucket_view);
  if (r.has("ddp_gradient_as_bucket_view") && framework != Framework::pytorch) {
    r.fail("ddp_gradient_as_bucket_view", std::string("is torch DistributedDataParallel's gradient_as_bucket_view; "
                                                      "framework ") + to_string(framework) +
                                              " does not run DDP (set training.framework: pytorch or remove the key)");
  }
  // The prefetch bucket is at least one parameter: 0 would stand for whole-layer gathers in the planner.
  m.zero3_prefetch_bucket =
      read_zero3_setting(r, "zero3_prefetch_bucket", "stage3_prefetch_bucket_size", framework, 1.0);
  m.zero3_max_live_parameters =
      read_zero3_setting(r, "zero3_max_live_parameters", "stage3_max_live_parameters", framework, 0.0);
  m.zero3_max_reuse_distance =
      read_zero3_setting(r, "zero3_max_reuse_distance", "stage3_max_reuse_distance", framework, 0.0);
  m.zero3_persistence_threshold =
      read_zero3_setting(r, "zero3_persistence_threshold", "stage3_param_persistence_threshold", framework, 0.0);
  // At least one element: a bucket of 0 would stand for one reduce-scatter per unit in the planner.
  m.zero3_reduce_bucket = read_zero3_setting(r, "zero3_reduce_bucket", "reduce_bucket_size", framework, 1.0);
  return m;
}

}  // namespace tp
