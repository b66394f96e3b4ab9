// Compute time of an op list for one micro-batch on one GPU: a roofline per op (GEMMs at the profile's
// GEMM model, the attention core at its fused-attention curve, eager kernels at their class bandwidth),
// with the parts the communication overlap and the recompute need. Formulas: docs/model.md, "Step time".
#pragma once

#include <vector>

#include "hardware_profile.h"
#include "op_graph.h"
#include "specs.h"

namespace tp {

struct OpTimes {
  double fwd = 0, bwd = 0;
  double gemm_fwd = 0, gemm_bwd = 0;   // part spent in GEMMs (TP overlap window, weight-gradient share)
  double attention = 0;                // fused attention forward (CP overlap window)
  double attention_bwd = 0;            // its backward
  double attention_core_fwd = 0;       // what selective recompute repeats
};

// What timing an op needs from the scenario and the layout.
struct OpTimeContext {
  const Scenario& s;
  const HardwareProfile& hw;
  int tp, cp;
  bool sp;
  double b;                          // micro-batch, sequences
  double peak_gemm, peak_attn, bw;   // FLOP/s of the training precision and attention; effective HBM B/s
  bool te_tp_overlap = false;        // the layer's TP GEMMs run as Transformer Engine's overlap chunks (tp_overlap.h)
  double tensor_time_scale = 1.0;    // compute-bound GEMM and fused-attention time x this (model/sustained_clock.h)
};

// Collective entries (OpKind::collective) take no compute time; planner/comm_time.h times them.
OpTimes time_ops(const std::vector<Op>& ops, const OpTimeContext& c);

}  // namespace tp
