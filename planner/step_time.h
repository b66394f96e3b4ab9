// Time of one training step from the op graph, the hardware profile and the topology:
// compute (roofline per op), recompute, exposed TP/CP/EP/PP/DP communication, pipeline bubble,
// optimizer step and offload transfers. Formulas and sources: docs/model.md, "Step time".
#pragma once

#include "estimate.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "specs.h"

#include <vector>

namespace tp {

struct ExposedComm {
  Seconds tp, cp, ep, pp, dp;
  Seconds offload;  // activation offload's host copies (synchronous, planner/offload_time.h)
  Seconds total() const { return tp + cp + ep + pp + dp + offload; }
};

// The slowest stage's compute, recompute and optimizer step by the kind of kernel that runs them (GPU time
// over the step): GEMMs, the attention core (the fused kernel, or the unfused chain), the optimizer's update
// and the memory-bound rest (norms, activations, residual adds, casts, the loss, FP8 quantization, FSDP's
// copies, and the step's passes over weights and gradients: autocast's casts, gradient accumulation, DDP's
// bucket copies). Sums to compute + recompute + optimizer.
struct ComputeByKind {
  Seconds gemm, attention, memory_bound, optimizer;
};

// Durations of one pipeline stage for ONE micro-batch (the simulator's task durations).
struct StageTiming {
  Seconds forward;          // compute of the forward pass (embedding/head included on first/last stage), with
                            // the activation offload's copies to the host
  Seconds backward_input;   // input-gradient part of the backward pass
  Seconds backward_weight;  // weight-gradient GEMMs (deferred by zero-bubble schedules)
  Seconds recompute;        // forward recomputation before the backward pass, with the copies back from the host
  Seconds comm_forward;     // exposed TP/CP/EP communication of the forward pass
  Seconds comm_backward;    // likewise for the backward pass (and the recompute)
  // Once per step, not per micro-batch (so not in total()): the stage's end-of-step collectives after the
  // gradient reduce and before the optimizer (planner/comm_time.h, step_end_comm): the sequence-parallel
  // gradients' all-reduce over the stage's TP group, then the tied embedding's between the first and the
  // last stage (one collective of both).
  Seconds step_end_tp;
  Seconds step_end_ends;
  Seconds total() const { return forward + backward_input + backward_weight + recompute + comm_forward + comm_backward; }
};

struct StepTime {
  Seconds step;        // one optimizer step
  Seconds compute;     // forward + backward of the slowest stage, all micro-batches
  Seconds recompute;   // forward recomputation on that stage
  Seconds bubble;      // pipeline fill/drain (and stage imbalance)
  Seconds optimizer;   // optimizer step (and offload transfers)
  Seconds overlap_contention;  // compute lost to the data-parallel collectives it hides (overlap_contention.h)
  ExposedComm exposed;  // communication on the critical path, per kind
  ComputeByKind compute_by_kind;
  Seconds forward_per_micro_batch;   // slowest stage, one micro-batch (with its exposed comm)
  Seconds backward_per_micro_batch;  // likewise, recompute included
  int slowest_stage = 0;
  double mfu = 0;            // model FLOPs / (GPUs x peak of the training precision x step)
  double hfu = 0;            // hardware FLOPs (with recompute) / same
  double tflops_per_gpu = 0;  // model TFLOP/s per GPU
  double tokens_per_second = 0;
  double tokens_per_second_per_gpu = 0;
  Watts gpu_power;  // average per GPU over the step (power model of the profile)

  // Inputs of the event simulator: per-stage micro-batch durations and the step-level transfers.
  std::vector<StageTiming> stages;
  Seconds p2p_hop;           // one activation (or gradient) transfer between adjacent stages
  Seconds dp_reduce;         // gradient reduce (all-reduce or reduce-scatter) of the slowest stage, unoverlapped
  Seconds dp_gather;         // parameter all-gather (ZeRO 1/2: after the optimizer; ZeRO-3: one pass over the
                             // stage's weights, with the host-to-device copy of an offloaded shard), unoverlapped
  int dp_buckets = 1;        // gradient buckets the reduce is split into
  // Whether the data-parallel collectives and the pipeline's sends leave the GPU on the same link: both within
  // the node (its NVLink port) or both across nodes (its NIC). A gradient group inside the node with the stages
  // on different nodes (or the reverse) keeps the two apart.
  bool dp_shares_pipeline_link = true;
  Seconds optimizer_step;    // = optimizer
};

StepTime step_time(const Scenario& s, const OpGraph& g, const Estimate& e, const HardwareProfile& hw);
// The same into an existing StepTime, reusing its vector.
void step_time_into(const Scenario& s, const OpGraph& g, const Estimate& e, const HardwareProfile& hw, StepTime& out);

}  // namespace tp
