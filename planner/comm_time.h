// Times of the op graph's communication entries (OpKind::collective, planner/op_graph.h) for one layout:
// which entries apply, their bytes on one GPU, their seconds on the topology, and the exposed part
// after the bounded overlap (a collective overlapped with some compute hides at most that compute).
// Formulas and sources: docs/model.md, "The op graph" and "Step time".
#pragma once

#include <vector>

#include "collectives.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "op_times.h"
#include "specs.h"

namespace tp {

// The topology and process groups of a layout as the communication entries see them.
struct CommLayout {
  Topology topo;
  GroupShape groups[kCommGroupCount];  // indexed by CommGroup
  int tp = 1, cp = 1, pp = 1, zero = 0;
  bool sp = false;  // sequence parallelism on (and tp > 1)
  CpComm cp_comm = CpComm::p2p;  // the context-parallel exchange (cp_comm_of)
  double b = 1;     // micro-batch, sequences
  double weight_bytes = 2;  // one stored parameter (parameter_bytes: fp32 under autocast)
  Precision grad_precision = Precision::bf16;
  // MoE dispatch: under training.moe_dispatcher deepep the expert group's all-to-alls (top_k copies of each
  // token) are timed as deduplicated_dispatch_time of one copy (planner/collectives.h).
  bool deduplicated_dispatch = false;
  int experts = 0, top_k = 0;
  // The experts' data-parallel groups: an expert's replicas are the ranks ep apart in the gradient group, so
  // its gradients are reduced, and its states sharded, over dp x cp / ep of them (Megatron-Core's expert data
  // parallel group, parallel_state.py; DeepSpeed's expert-data-parallel group; torchtitan's dp_mod_ep mesh).
  // Equal to the dp and dp_shard groups without expert parallelism.
  GroupShape expert_dp, expert_dp_shard;
  const GroupShape& group(CommGroup g) const& { return groups[static_cast<int>(g)]; }
  GroupShape group(CommGroup g) && { return groups[static_cast<int>(g)]; }  // a copy from a temporary
};

// Topology from the cluster and the profile's link efficiencies; groups in the placement's order
// (TP innermost, then CP, EP inside DP, DP, PP outermost). The gradient group spans dp x cp. The pipeline's
// ends (first and last stage) share a node only when the whole pipeline group does.
CommLayout comm_layout(const Scenario& s, const HardwareProfile& hw);

// The layout the experts' parameters see: its dp and dp_shard groups are the experts' (expert_dp,
// expert_dp_shard); every other group as in `l`.
CommLayout expert_comm_layout(const CommLayout& l);

// Whether an entry runs in this layout (ZeRO stage).
bool applies(const Comm& c, const CommLayout& l);

// Bytes of ONE collective of the entry on one GPU, in the size convention of planner/collectives.h:
// activations per micro-batch (the entry's bytes split per its rule, divided by cp, x micro-batch);
// gradients and weights of `stage_parameters` (the sequence-parallel gradient all-reduce: the stage's
// sequence-parallel parameters, which its caller passes).
double comm_bytes(const Comm& c, const CommLayout& l, double stage_parameters = 0.0);

// Seconds of the entry's collectives of one pass per micro-batch (count x (group - 1 when per peer) x
// one collective; the call with sequence parallelism when it is on), 0 when it does not apply.
double comm_seconds(const Comm& c, CommPass pass, const CommLayout& l, double stage_parameters = 0.0);

// The same bytes issued as `calls` collectives of equal size (ZeRO-3's per-unit gathers and
// reduce-scatters): each pays its own latency. calls <= 1 is one collective, comm_seconds.
double comm_seconds_in_calls(const Comm& c, CommPass pass, const CommLayout& l, double stage_parameters, double calls);

// Exposed communication of one layer for one micro-batch, per group and pass: per overlap window,
// max(0, sum of the entries - the compute they may hide behind); windows: the layer's GEMMs of the
// same pass (when parallel.overlap.tp_comm), the fused attention (forward; twice in the backward).
struct LayerComm {
  double tp_f = 0, tp_b = 0;
  double tp_traffic_f = 0, tp_traffic_b = 0;  // the TP collectives that may overlap the GEMMs, whole time per pass
  double cp_f = 0, cp_b = 0;
  double ep_f = 0, ep_b = 0;
};
LayerComm layer_comm(const std::vector<Op>& layer, const CommLayout& l, const OpTimes& compute, bool overlap_tp_comm);

// Pipeline: seconds of one boundary transfer (the forward send) and the exposed time of the fill and
// drain chain: each boundary entry pays one hop per stage boundary, v times more when interleaved.
struct PipelineComm {
  double hop = 0;
  double exposed = 0;
};
PipelineComm pipeline_comm(const std::vector<Op>& step, const CommLayout& l, int pp, double v);

// Seconds of the step's end-of-step collectives (CommOverlap::step_end: after the gradient reduce, before
// the optimizer, nothing to hide behind) that the ranks of pipeline stage `stage` take part in: the tied
// embedding's gradient all-reduce runs on the first and the last stage only; the sequence-parallel
// gradient all-reduce on every stage, over its `sequence_parallel_params` (sequence_parallel_parameters).
struct StepEndComm {
  double tp = 0;       // over the TP group (sequence-parallel gradients)
  double pp_ends = 0;  // between the first and the last stage (tied embedding)
  double total() const { return tp + pp_ends; }
};
StepEndComm step_end_comm(const std::vector<Op>& step, const CommLayout& l, int stage, double sequence_parallel_params = 0.0);

}  // namespace tp
