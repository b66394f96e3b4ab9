// What one executed step says per stage: busy compute, communication it waited on (exposed),
// bubble, peak in-flight micro-batches; and the critical path of the step.
//
// Exposed communication of a stage: its exposed TP/SP/CP/EP collectives (tasks on its compute
// stream), plus, for every idle gap of its compute stream, the part during which the transfer that
// ended the gap was in flight (a p2p send from a neighbour, a DP bucket or gather, together with the
// transfers it queued behind on its communicator). The rest of the step is bubble:
// busy + exposed + bubble = step time on every stage.
#pragma once

#include <vector>

#include "engine.h"
#include "step_graph.h"

namespace tp::sim {

struct StageReport {
  int stage = 0;
  double busy = 0;                // F, R, B, W and optimizer, seconds
  double exposed_collective = 0;  // TP/SP/CP/EP collectives on the compute stream
  double exposed_p2p = 0;         // waiting on pipeline transfers
  double exposed_dp = 0;          // waiting on DP reduce and parameter gathers
  double bubble = 0;
  int peak_in_flight_chunks = 0;  // (chunk, micro-batch) sets between the start of F and the end of B
  double peak_in_flight = 0;      // the same in micro-batches (chunks / v)
  double peak_weight_pending = 0;  // zb-h1: micro-batches between F and W (their W inputs kept), else = peak_in_flight
  double exposed() const { return exposed_collective + exposed_p2p + exposed_dp; }
};

struct Analysis {
  std::vector<StageReport> stages;
  std::vector<int> critical_path;  // tasks from the first to the one that ends the step
};

Analysis analyze(const StepGraph& g, const Execution& x);

}  // namespace tp::sim
