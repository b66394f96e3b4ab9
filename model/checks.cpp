#include "checks.h"

#include <algorithm>
#include <numeric>

#include "errors.h"
#include "problem_collector.h"
#include "section_limits.h"

namespace tp {
namespace {

std::string cluster_label(const ClusterSpec& cl) {
  return cl.key.empty() || cl.key == "inline" ? "this inline cluster" : "the cluster preset '" + cl.key + "'";
}

// A multi-node cluster needs the inter-node link (and NICs), a multi-GPU node the intra-node link:
// the collectives divide their bytes by these bandwidths (planner/collectives.cpp).
void check_links(const ClusterSpec& cl, Collector& c) {
  if (cl.nodes > 1 && cl.inter_node.bandwidth.value <= 0.0) {
    c.add("cluster.inter_node.bandwidth", "cluster.nodes",
          "required: " + num(cl.nodes) + " nodes need an inter-node link, and " + cluster_label(cl) +
              " has none; give cluster.inter_node: {bandwidth: 50 GB/s, nics_per_node: 8} or nodes: 1");
  } else if (cl.nodes > 1 && cl.nics_per_node < 1) {
    c.add("cluster.inter_node.nics_per_node", "cluster.nodes",
          "must be at least 1: " + num(cl.nodes) + " nodes talk through the NICs");
  }
  // Without intra_node the GPU's NVLink, else its PCIe, is the intra-node link (planner/collectives.cpp).
  const bool intra_link = cl.intra_node.bandwidth.value > 0.0 || cl.gpu.nvlink.value > 0.0 || cl.gpu.pcie.value > 0.0;
  if (cl.gpus_per_node > 1 && !intra_link) {
    c.add("cluster.intra_node.bandwidth", "cluster.gpus_per_node",
          "required: " + num(cl.gpus_per_node) + " GPUs per node need an intra-node link, and " + cluster_label(cl) +
              " has none (nor does its GPU give nvlink or pcie); give cluster.intra_node: {bandwidth: 450 GB/s} "
              "or gpus_per_node: 1");
  }
}

// Model shape.
void check_model_shape(const Scenario& s, Collector& c) {
  const ModelSpec& m = s.model;
  if (m.kv_heads <= 0 || m.heads % m.kv_heads != 0) {
    c.add("model.kv_heads", "model.heads",
          "kv_heads (" + num(m.kv_heads) + ") must divide heads (" + num(m.heads) + ")");
  }
  if (m.moe.enabled() && (m.moe.top_k < 1 || m.moe.top_k > m.moe.experts)) {
    c.add("model.moe.top_k", "model.moe.experts",
          "top_k (" + num(m.moe.top_k) + ") must be between 1 and experts (" + num(m.moe.experts) + ")");
  }
}

// Tensor parallelism (Megatron splits heads, KV heads and the MLP across tp).
void check_tensor_parallel(const Scenario& s, Collector& c) {
  const ModelSpec& m = s.model;
  const ParallelSpec& p = s.parallel;
  if (m.heads % p.tp != 0) {
    c.add("parallel.tp", "model.heads", "tp (" + num(p.tp) + ") must divide heads (" + num(m.heads) + ")");
  }
  // Every framework here splits the KV heads over the TP ranks and none replicates them: Megatron-Core
  // divide(num_query_groups, world_size) (transformer/attention.py), Megatron-DeepSpeed alike, torchtitan's
  // and Hugging Face's colwise k/v projections viewed as whole heads of head_dim.
  if (m.kv_heads % p.tp != 0) {
    c.add("parallel.tp", "model.kv_heads",
          "tp (" + num(p.tp) + ") must divide kv_heads (" + num(m.kv_heads) +
              "): each TP rank holds whole KV heads (none of the frameworks replicates them)");
  }
  const long long ffn = m.moe.enabled() ? m.moe.expert_ffn_hidden : m.ffn_hidden;
  if (ffn % p.tp != 0) {
    c.add("parallel.tp", "model.ffn_hidden", "tp (" + num(p.tp) + ") must divide the MLP width (" + num(ffn) + ")");
  }
}

// Layout product and pipeline split.
void check_layout_and_stages(const Scenario& s, Collector& c) {
  const ModelSpec& m = s.model;
  const ParallelSpec& p = s.parallel;
  const long long gpus = s.gpus();
  if (static_cast<long long>(p.tp) * p.pp * p.dp * p.cp != gpus) {
    c.add("parallel.dp", "cluster.nodes",
          "tp × pp × dp × cp = " + num(static_cast<long long>(p.tp) * p.pp * p.dp * p.cp) + " but the cluster has " +
              num(gpus) + " GPUs");
  }
  if (static_cast<int>(p.layers_per_stage.size()) != p.pp) {
    c.add("parallel.layers_per_stage", "parallel.pp",
          "has " + num(static_cast<long long>(p.layers_per_stage.size())) + " entries but pp = " + num(p.pp));
  } else {
    long long sum = 0;
    for (size_t i = 0; i < p.layers_per_stage.size(); ++i) {
      int l = p.layers_per_stage[i];
      sum += l;
      if (l < 1) {
        c.add("parallel.layers_per_stage", "", "stage " + num(static_cast<long long>(i)) + " has no layers");
      } else if (l < fewest_stage_layers(static_cast<int>(i), p.pp, p.vpp)) {
        c.add("parallel.layers_per_stage", "parallel.vpp",
              "stage " + num(static_cast<long long>(i)) + " has " + num(l) + " layers, fewer than its " +
                  num(p.vpp) + " interleaved chunks (vpp; the first and last stage may have one chunk with no layer)");
      }
    }
    if (sum != m.layers) {
      c.add("parallel.layers_per_stage", "model.layers",
            "adds up to " + num(sum) + " layers but the model has " + num(m.layers));
    }
  }
}

// "zero: 0", and when the scenario left it unsaid, whose default it is ("zero: 0 (deepspeed's default)"):
// a message about a stage the user never wrote says where it came from.
std::string zero_said(const Scenario& s) {
  const ParallelSpec& p = s.parallel;
  return "zero: " + num(p.zero) + (p.zero_given ? "" : std::string(" (") + to_string(s.training.framework) + "'s default)");
}

// Schedule and virtual stages.
void check_schedule(const Scenario& s, Collector& c) {
  const ParallelSpec& p = s.parallel;
  if (p.schedule == Schedule::interleaved) {
    if (p.vpp < 2) c.add("parallel.schedule", "parallel.vpp", "interleaved needs vpp ≥ 2 (vpp = " + num(p.vpp) + ")");
    if (p.pp < 2) c.add("parallel.schedule", "parallel.pp", "interleaved needs pp ≥ 2 (pp = " + num(p.pp) + ")");
  } else if (p.vpp > 1) {
    c.add("parallel.vpp", "parallel.schedule",
          "vpp = " + num(p.vpp) + " needs schedule: interleaved (schedule is " + to_string(p.schedule) + ")");
  }
  // DeepSpeed's pipeline engine runs one schedule, its TrainSchedule (deepspeed/runtime/pipe/schedule.py:
  // 1F1B), and asserts "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism" (pipe/engine.py).
  if (s.training.framework != Framework::deepspeed || p.pp < 2) return;
  if (p.schedule != Schedule::one_f_one_b) {
    c.add("parallel.schedule", "training.framework",
          std::string("DeepSpeed's pipeline engine runs 1F1B only (schedule is ") + to_string(p.schedule) +
              "); set schedule: 1f1b" + (p.vpp > 1 ? " and remove vpp" : ""));
  }
  if (p.zero >= 2) {
    c.add("parallel.zero", "training.framework",
          "DeepSpeed's pipeline engine refuses ZeRO-" + num(p.zero) + " with pp = " + num(p.pp) + "; set zero: 0 or 1");
  }
}

// Batch.
void check_batch(const Scenario& s, Collector& c) {
  const ParallelSpec& p = s.parallel;
  const TrainingSpec& t = s.training;
  // Each value is within its own bound (2^52 sequences, 2^30 replicas), their products may not be within 64
  // bits: compared in doubles before any integer product.
  const double step_tokens = static_cast<double>(t.global_batch) * static_cast<double>(t.sequence_length);
  if (step_tokens > section_limits::kMaxTokens) {
    c.add("training.global_batch", "training.sequence_length",
          "a step of global_batch × sequence_length = " + num(t.global_batch) + " × " + num(t.sequence_length) + " = " +
              shown(step_tokens) + " tokens is more than the " + shown(section_limits::kMaxTokens) +
              " tokens a run may train on");
    return;
  }
  if (static_cast<double>(t.micro_batch) * p.dp > static_cast<double>(t.global_batch)) {
    c.add("training.global_batch", "training.micro_batch",
          "global_batch (" + num(t.global_batch) + ") is smaller than micro_batch × dp = " + num(t.micro_batch) + " × " +
              num(p.dp) + ": every replica needs at least one micro-batch a step");
    return;
  }
  const long long per_step = static_cast<long long>(t.micro_batch) * p.dp;
  if (t.global_batch % per_step != 0) {
    // An automatic dp comes from the cluster's size: say so, since the user may only have changed the nodes.
    const std::string derived = p.dp_auto ? " (dp: auto, the cluster's " + num(s.gpus()) + " GPUs / (tp × pp × cp))" : "";
    c.add("training.global_batch", "training.micro_batch",
          "global_batch (" + num(t.global_batch) + ") must be divisible by micro_batch × dp = " + num(t.micro_batch) +
              " × " + num(p.dp) + " = " + num(per_step) + derived);
  } else if (p.schedule == Schedule::interleaved && p.pp > 1 && (t.global_batch / per_step) % p.pp != 0) {
    c.add("parallel.schedule", "training.global_batch",
          "interleaved needs the micro-batches per replica (" + num(t.global_batch / per_step) +
              ") to be a multiple of pp (" + num(p.pp) + ")");
  }
}

// The query and key/value heads one TP rank holds, and whether an all-to-all over `ranks` can give each rank
// whole heads of both.
struct TpRankHeads {
  long long q = 0, kv = 0;
  bool split_over(int ranks) const { return q % ranks == 0 && kv % ranks == 0; }
};

TpRankHeads tp_rank_heads(const Scenario& s) {
  const long long tp = s.parallel.tp;
  return {s.model.heads / tp, s.model.kv_heads / tp};
}

// Hierarchical context parallelism (Megatron-Core --cp-comm-type a2a+p2p with
// --hierarchical-context-parallel-sizes a cp/a): the all-to-all level gives each of its a ranks whole heads.
void check_hierarchical_cp(const Scenario& s, Collector& c) {
  const ParallelSpec& p = s.parallel;
  const bool hierarchical = p.cp_comm == CpComm::a2a_p2p;
  if (!hierarchical) {
    if (p.cp_a2a > 0) c.add("parallel.cp_a2a", "parallel.cp_comm", "is the all-to-all level of cp_comm: a2a+p2p");
    return;
  }
  if (p.cp_a2a < 2 || p.cp % p.cp_a2a != 0) {
    c.add(p.cp_a2a > 0 ? "parallel.cp_a2a" : "parallel.cp_comm", "parallel.cp",
          "a2a+p2p needs parallel.cp_a2a, the ranks of its all-to-all level: at least 2 and dividing cp (" +
              num(p.cp) + ")" + (p.cp_a2a > 0 ? ", here " + num(p.cp_a2a) : ""));
    return;
  }
  const TpRankHeads heads = tp_rank_heads(s);
  if (!heads.split_over(p.cp_a2a)) {
    c.add("parallel.cp_a2a", "model.kv_heads",
          "the all-to-all level splits the heads: the " + num(heads.q) + " query and " + num(heads.kv) +
              " key/value heads per TP rank must be divisible by cp_a2a (" + num(p.cp_a2a) + ")");
  }
}

// Sequence splits.
void check_sequence_splits(const Scenario& s, Collector& c) {
  const ParallelSpec& p = s.parallel;
  const TrainingSpec& t = s.training;
  if (p.cp > 1 && t.sequence_length % (2LL * p.cp) != 0) {
    c.add("parallel.cp", "training.sequence_length",
          "context parallelism splits the sequence into 2 × cp chunks: sequence_length (" +
              num(t.sequence_length) + ") must be divisible by " + num(2LL * p.cp));
  }
  check_hierarchical_cp(s, c);
  if (p.cp > 1 && cp_comm_of(p, t.framework) == CpComm::a2a) {
    // Ulysses gives each context-parallel rank whole heads: the query and the K/V heads of a TP rank
    // must split over cp (TE AttnFuncWithCPAndQKVOA2A asserts both).
    const TpRankHeads heads = tp_rank_heads(s);
    if (!heads.split_over(p.cp)) {
      const bool named = p.cp_comm.has_value();
      const std::string which = named ? "parallel.cp_comm" : "DeepSpeed-Ulysses, the deepspeed default";
      c.add("parallel.cp", named ? "parallel.cp_comm" : "training.framework",
            "a2a context parallelism (" + which + ") splits the heads over cp: the " + num(heads.q) + " query and " +
                num(heads.kv) + " key/value heads per TP rank must be divisible by cp (" + num(p.cp) +
                "); set parallel.cp_comm: p2p, all_gather or ring_all_gather");
    }
  }
  if (p.sequence_parallel && p.tp > 1 && (t.sequence_length / p.cp) % p.tp != 0) {
    c.add("parallel.sequence_parallel", "training.sequence_length",
          "sequence parallelism needs sequence_length / cp (" + num(t.sequence_length / p.cp) +
              ") divisible by tp (" + num(p.tp) + ")");
  }
}

// Experts (Megatron: expert-parallel ranks are taken from the data × context parallel ranks).
void check_experts(const Scenario& s, Collector& c) {
  const ModelSpec& m = s.model;
  const ParallelSpec& p = s.parallel;
  if (s.training.moe_dispatcher == MoeDispatcher::deepep && !m.moe.enabled()) {
    c.add("training.moe_dispatcher", "model.moe", "deepep dispatches tokens to experts; it needs a mixture-of-experts model");
  }
  if (p.ep > 1 && !m.moe.enabled()) {
    c.add("parallel.ep", "model.moe", "ep = " + num(p.ep) + " needs a mixture-of-experts model");
  } else if (m.moe.enabled()) {
    if (m.moe.experts % p.ep != 0) {
      c.add("parallel.ep", "model.moe.experts",
            "ep (" + num(p.ep) + ") must divide the number of experts (" + num(m.moe.experts) + ")");
    }
    if ((static_cast<long long>(p.dp) * p.cp) % p.ep != 0) {
      c.add("parallel.ep", "parallel.dp",
            "ep (" + num(p.ep) + ") must divide dp × cp = " + num(static_cast<long long>(p.dp) * p.cp) +
                " (expert-parallel ranks come from the data-parallel ranks)");
    }
    // Megatron-Core's MoELayer.forward refuses to train with tp > 1 and sequence parallelism off
    // (transformer/moe/moe_layer.py: "performance may degrade if MoE and tensor parallelism are enabled
    // without also enabling sequence parallelism"); model_parallel_config.py alike with ep > 1.
    if (s.training.framework == Framework::megatron && p.tp > 1 && !p.sequence_parallel) {
      c.add("parallel.sequence_parallel", "model.moe",
            "Megatron-Core trains a mixture-of-experts layer with tp > 1 only under sequence parallelism "
            "(moe_layer.py raises otherwise); set sequence_parallel: true");
    }
  }
}

// torchtitan's op-level selective checkpointing counts the aten.mm calls of an eager dense block
// (planner/selective_op.h).
void check_selective_op(const Scenario& s, Collector& c) {
  if (s.parallel.recompute.mode != RecomputeMode::selective_op) return;
  if (layer_code_of(s.training) != LayerCode::eager) {
    c.add("parallel.recompute", "training.layer_code",
          "selective_op is torchtitan's policy for eager layer code; fused layer code recomputes with selective, "
          "full or every");
  } else if (s.model.moe.enabled()) {
    c.add("parallel.recompute", "model.moe",
          "selective_op is modelled for dense layers only: an MoE block's grouped expert GEMMs are not aten.mm calls");
  }
}

// Hybrid sharding (parallel.dp_shard): the states sharded over dp_shard data-parallel ranks, replicated
// over dp / dp_shard such groups (docs/model.md §15, "Hybrid sharding").
void check_hybrid_sharding(const Scenario& s, Collector& c) {
  const ParallelSpec& p = s.parallel;
  // dp_shard = dp is full sharding, the default a sweep's CSV writes back: nothing to check.
  if (p.dp_shard <= 0 || p.dp_shard == p.dp) return;
  if (p.zero == 0) {
    c.add("parallel.dp_shard", "parallel.zero",
          std::string("a sharding group needs ") +
              (s.training.framework == Framework::deepspeed ? "zero: 3 under DeepSpeed (MiCS)" : "zero: 1, 2 or 3") +
              "; " + zero_said(s) + " shards nothing (or remove dp_shard)");
  } else if (p.dp % p.dp_shard != 0) {
    c.add("parallel.dp_shard", "parallel.dp",
          "must divide dp (" + num(p.dp) + "): the replicas are dp / dp_shard groups of " + num(p.dp_shard) +
              " data-parallel ranks");
  } else if (!shards_in_groups(s.training.framework, p.zero)) {
    c.add("parallel.dp_shard", "parallel.zero",
          "DeepSpeed shards within a group only at ZeRO-3 (MiCS, zero_optimization.mics_shard_size); "
          "use zero: 3 or remove dp_shard");
  } else if (s.model.moe.enabled() && p.shard_ranks() % p.ep != 0) {
    c.add("parallel.dp_shard", "parallel.ep",
          "dp_shard × cp (" + num(p.shard_ranks()) + ") must be a multiple of ep (" + num(p.ep) +
              "): the experts' states are sharded over the sharding group's expert-parallel replicas");
  }
}

// Sharding and offload.
void check_sharding_and_offload(const Scenario& s, Collector& c) {
  const ParallelSpec& p = s.parallel;
  if (!framework_has_zero(s.training.framework, p.zero)) {
    // FSDP1 ShardingStrategy (NO_SHARD, SHARD_GRAD_OP, FULL_SHARD, HYBRID_SHARD) and FSDP2 fully_shard
    // (reshard_after_forward) shard the gradients with the optimizer states: no stage shards the states
    // alone. Plain PyTorch shards the optimizer states alone or nothing.
    c.add("parallel.zero", "training.framework",
          s.training.framework == Framework::fsdp
              ? std::string("FSDP has no ZeRO-1 layout: it shards gradients wherever it shards optimizer states. Use ") +
                    (p.pp > 1 ? "zero: 2 (SHARD_GRAD_OP, reshard_after_forward=False: FSDP's layout under pipeline "
                                "parallelism) or 0 (NO_SHARD)"
                              : "zero: 3 (FULL_SHARD, fully_shard), 2 (SHARD_GRAD_OP, reshard_after_forward=False) "
                                "or 0 (NO_SHARD)") +
                    "; a ZeRO-1 run is framework: megatron or deepspeed"
              : "plain PyTorch has DistributedDataParallel (zero: 0) and ZeroRedundancyOptimizer (zero: 1); "
                "sharded gradients or weights are framework: fsdp (zero: 2 or 3) or deepspeed");
  }
  if (p.zero == 3 && p.pp > 1) {
    // Under FSDP the combination is torchtitan's (parallelize.py: reshard_after_forward = not pp_enabled;
    // torch.distributed.pipelining stage.py, backward_maybe_with_nosync): the message names its layout.
    c.add("parallel.zero", "parallel.pp",
          s.training.framework == Framework::fsdp
              ? "with pipeline parallelism FSDP does not reshard a stage's weights between micro-batches "
                "(torchtitan: reshard_after_forward is off under PP) and reduce-scatters once, after the last "
                "backward (torch.distributed.pipelining): that is zero: 2 with training.gradient_sync: "
                "last_micro_batch and parallel.overlap: {grad_reduce: false}; write that, or pp: 1 with zero: 3"
              : "ZeRO-3 shards every layer's weights across data-parallel ranks and gathers them per micro-batch; "
                "with pipeline parallelism that gather repeats for every micro-batch, and neither DeepSpeed nor "
                "Megatron supports the combination. Use zero: 1 or 2 with pp > 1, or pp: 1 with zero: 3");
  }
  if (p.offload_params == OffloadTarget::cpu && p.zero != 3) {
    const Framework f = s.training.framework;
    c.add("parallel.offload.params", "parallel.zero",
          "offloading parameters to the CPU needs zero: 3, here " + zero_said(s) +
              (f == Framework::pytorch ? "; plain PyTorch has no ZeRO-3: framework: fsdp or deepspeed"
               : p.pp > 1              ? "; ZeRO-3 runs without pipeline parallelism: pp: 1"
                                       : ""));
  }
  if (p.offload_activations == OffloadTarget::cpu && p.recompute.mode != RecomputeMode::full &&
      p.recompute.mode != RecomputeMode::every) {  // one_in too: its other layers keep everything on the GPU
    c.add("parallel.offload.activations", "parallel.recompute",
          "offloading activations moves the checkpointed layer inputs to the host: it needs recompute: full or every");
  }
  if ((p.recompute.mode == RecomputeMode::every || p.recompute.mode == RecomputeMode::one_in) && p.recompute.every < 1) {
    c.add(p.recompute.mode == RecomputeMode::every ? "parallel.recompute.every" : "parallel.recompute.one_in", "",
          "must be at least 1 layer");
  }
  check_selective_op(s, c);
  check_hybrid_sharding(s, c);
}

// Hardware support of the precision.
void check_precision_support(const Scenario& s, Collector& c) {
  const TrainingSpec& t = s.training;
  if (s.cluster.gpu.peak_for(t.precision).value <= 0.0) {
    c.add("training.precision", "cluster.gpu",
          std::string("the GPU (") + s.cluster.gpu.name + ") has no " + to_string(t.precision) + " support");
  }
}

}  // namespace

bool shards_in_groups(Framework framework, int zero) { return zero >= (framework == Framework::deepspeed ? 3 : 1); }

std::vector<Problem> check_scenario(const Scenario& s, bool first_only) {
  Collector c{first_only, {}};
  // Links the step time divides by: every byte that crosses a node (or a GPU) needs a bandwidth.
  check_links(s.cluster, c);
  if (c.full()) return c.out;
  check_model_shape(s, c);
  if (c.full()) return c.out;
  check_tensor_parallel(s, c);
  check_layout_and_stages(s, c);
  check_schedule(s, c);
  check_batch(s, c);
  check_sequence_splits(s, c);
  check_experts(s, c);
  check_sharding_and_offload(s, c);
  check_precision_support(s, c);
  return c.out;
}

}  // namespace tp
