// Time of one training step from the op graph, the hardware profile and the topology:
// compute (roofline per op), recompute, exposed TP/CP/EP/PP/DP communication, pipeline bubble,
// optimizer step and offload transfers. Formulas and sources: docs/model.md, "Step time".
#pragma once

#include "estimate.h"
#include "hardware_profile.h"
#include "op_graph.h"
#include "specs.h"

namespace tp {

struct ExposedComm {
  Seconds tp, cp, ep, pp, dp;
  Seconds total() const { return tp + cp + ep + pp + dp; }
};

struct StepTime {
  Seconds step;        // one optimizer step
  Seconds compute;     // forward + backward of the slowest stage, all micro-batches
  Seconds recompute;   // forward recomputation on that stage
  Seconds bubble;      // pipeline fill/drain (and stage imbalance)
  Seconds optimizer;   // optimizer step (and offload transfers)
  ExposedComm exposed;  // communication on the critical path, per kind
  Seconds forward_per_micro_batch;   // slowest stage, one micro-batch (with its exposed comm)
  Seconds backward_per_micro_batch;  // likewise, recompute included
  int slowest_stage = 0;
  double mfu = 0;            // model FLOPs / (GPUs x peak of the training precision x step)
  double hfu = 0;            // hardware FLOPs (with recompute) / same
  double tflops_per_gpu = 0;  // model TFLOP/s per GPU
  double tokens_per_second = 0;
  double tokens_per_second_per_gpu = 0;
  Watts gpu_power;  // average per GPU over the step (power model of the profile)
};

StepTime step_time(const Scenario& s, const OpGraph& g, const Estimate& e, const HardwareProfile& hw);

}  // namespace tp
