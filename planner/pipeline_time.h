// The pipeline's time for one step: the slowest stage paces the micro-batches, the other stages' work
// is the fill and drain, and the boundary transfers cost what the schedule cannot hide (docs/model.md
// §15, "Pipeline" and "Pipeline transfers").
#pragma once

#include <vector>

#include "specs.h"
#include "step_time.h"

namespace tp {

struct PipelineStages {
  double worst = 0;        // the slowest stage's time per micro-batch
  double sum = 0;          // all stages' time per micro-batch
};

struct PipelineTime {
  double paced = 0;  // m x slowest stage + fill and drain: compute and layer communication
  // Boundary transfers the steady state cannot hide, (m - 1) x (cycle - slowest stage): the schedule's
  // dependency loop (a micro-batch's forward down the stages and its backward back up, 2 hops per
  // boundary, within the cycles its warm-up allows) and the sender's link (every boundary tensor a stage
  // sends). Zero where the transfers hide behind the stages' compute.
  double steady_transfers = 0;
};

// The boundary tensors stage `stage` sends per micro-batch: each chunk's activations forward, but not from the
// last virtual stage, and each chunk's input gradients back, but not from the first (v chunks under the
// interleaved schedule). The transfers of one stage share its link (the simulator's send tasks, charged to
// the sender).
struct PipelineSends {
  double forward = 0;
  double backward = 0;
  double total() const { return forward + backward; }
};
PipelineSends pipeline_sends_per_micro_batch(const ParallelSpec& p, int stage);

// `stages`: each stage's StageTiming; `hop`: one boundary tensor's transfer (PipelineComm::hop).
PipelineTime pipeline_time(const ParallelSpec& p, const PipelineStages& x, const std::vector<StageTiming>& stages,
                           double m, double hop);

// PipelineTime::steady_transfers alone (for tests): the link's or the dependency loop's excess over the slowest
// stage's `worst`, on each micro-batch after the first.
double pipeline_steady_transfers(const ParallelSpec& p, const std::vector<StageTiming>& stages, double m, double hop,
                                 double worst);

}  // namespace tp
