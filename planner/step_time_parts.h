// The step-level parts of the step time (planner/step_time.cpp puts them together): the data-parallel
// gradient reduce and ZeRO parameter gathers with their overlap windows, and the optimizer step.
// Formulas and sources: docs/model.md, "Step time".
#pragma once

#include "comm_time.h"
#include "estimate.h"
#include "hardware_profile.h"
#include "offload_time.h"
#include "op_graph.h"
#include "specs.h"
#include "zero3_modules.h"

namespace tp {

// Data-parallel communication of the slowest stage over one step, from the graph's step entries.
struct DataParallelComm {
  double exposed = 0;  // on the critical path after the overlap windows
  double reduce = 0;   // one gradient reduce (all-reduce or reduce-scatter), unoverlapped
  double gather = 0;   // one parameter all-gather (ZeRO >= 1), unoverlapped
  double traffic = 0;  // every data-parallel collective of the step, seconds on the link (hidden + exposed)
  int buckets = 1;     // gradient buckets the reduce is split into
  // Of `exposed`: what the first micro-batch's forward waits for its unit-by-unit gathers (ZeRO-3, FSDP's
  // SHARD_GRAD_OP) after the first (Zero3Communication::first_forward), on every stage: the pipeline's fill
  // runs through p - 1 such forwards (step_time.cpp).
  double first_forward = 0;
  // Of `exposed`: what the gradient reduces' backlog waits for the pipeline's sends on the link they share
  // (MicroBatchPasses::forward_sends, backward_sends): link time, not data-parallel traffic, so hidden traffic
  // excludes it.
  double behind_sends = 0;
};

// One micro-batch on a stage: its forward and backward (exposed layer communication included), and the
// weight-gradient GEMMs within the backward (the pass ZB-H1 splits off).
struct MicroBatchPasses {
  double forward = 0;
  double backward = 0;
  double weight_gradient = 0;
  // Link time the stage's pipeline sends of one micro-batch take on the data-parallel collectives' link, the
  // forward's activations and the backward's input gradients: 0 where those collectives have a link of their
  // own (StepTime::dp_shares_pipeline_link false).
  double forward_sends = 0;
  double backward_sends = 0;
  // The pipeline's steady-state wait on each micro-batch after the first (PipelineTime::steady_transfers):
  // part of the stage's path between two micro-batches' gradients.
  double pipeline_wait = 0;
};

// The parameters of a stage on one GPU (before ZeRO sharding), and of those the MoE experts'.
struct StageParameters {
  double total = 0;
  double expert = 0;
};

// `stage`: the stage's parameters on one GPU; `passes`: the stage's micro-batch; `stage_index`: the
// stage; `gather_h2d`: seconds to copy a host-resident parameter shard up before each gather; `zero3`:
// the layer's gathered units (zero3_layer), read with ZeRO-3 only.
DataParallelComm data_parallel_comm(const Scenario& s, const OpGraph& g, const CommLayout& l, const StageParameters& stage,
                                    double micro_batches, const MicroBatchPasses& passes, int stage_index,
                                    double gather_h2d, const Zero3Layer& zero3);

// The optimizer step of a stage: the update itself (its GPU kernels, or under offload the host's step and
// the transfers the step waits for), and the step's memory-bound passes over the weights and gradients
// beside it (autocast's casts, the in-place gradient accumulation, DDP's bucket copies, FP8 weight casts).
struct OptimizerTime {
  double update = 0;
  double weight_passes = 0;
  double total() const { return update + weight_passes; }
};

// The optimizer step of `stage` (index `stage_index`) over `micro_batches` micro-batches. `bw`: the effective
// HBM bandwidth; `offload`: the host transfers and CPU step (planner/offload_time.h); `backward_window`: the
// step's backward time, which the gradient copies to the host overlap.
OptimizerTime optimizer_step_seconds(const Scenario& s, const OpGraph& g, const HardwareProfile& hw,
                                     const MemoryBreakdown& stage, int stage_index, double bw,
                                     const OffloadTimes& offload, double backward_window, double micro_batches);

}  // namespace tp
