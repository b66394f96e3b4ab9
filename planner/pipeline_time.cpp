#include "pipeline_time.h"

#include <algorithm>

namespace tp {
namespace {

// Boundary tensors the busiest stage sends per micro-batch, so many hops at least on its link: a middle
// stage's where there is one (a send each way per chunk), else either end's (one fewer).
double busiest_sends_per_micro_batch(const ParallelSpec& p) {
  return pipeline_sends_per_micro_batch(p, p.pp > 2 ? 1 : 0).total();
}

// GPipe: the busiest stage's micro-batch when each pass's sends bound it: max(F, hop) + max(B, hop).
double gpipe_phase_cycle(const std::vector<StageTiming>& stages, double hop) {
  double cycle = 0;
  for (const StageTiming& st : stages) {
    const double f = (st.forward + st.comm_forward).value;
    const double b = st.total().value - f;
    cycle = std::max(cycle, std::max(f, hop) + std::max(b, hop));
  }
  return cycle;
}

// The schedule's dependency loop. Chunk c of stage s sends a micro-batch forward through the virtual stages
// after it (c·p + s … vp − 1) and gets its gradient back: 2(vp − 1 − c·p − s) hops and the work of those
// virtual stages (a chunk of stage j takes t_j / v). Meanwhile stage s runs its own chunks: the backward of
// chunk c follows the forward of the same micro-batch by warm-up + (v − 1 − 2c)·p + 1 chunk cycles, since
// backwards take the chunks in reverse order (simulator/interleaved.cpp; v = 1 and warm-up p − s − 1 for
// 1F1B, simulator/one_f_one_b.cpp). So a chunk cycle lasts at least (work + hops) / cycles, and a micro-batch
// v of them: with uniform 1F1B stages at s = 0, t + 2·hop·(p − 1)/p — the hops sit in every cycle, not only
// in the fill. ZB-H1 defers the weight gradients W: the stages after s run only F and B in the loop.
// Returns the cycle's excess over t, per micro-batch.
double dependency_loop_excess(const ParallelSpec& p, const std::vector<StageTiming>& stages, double m, double hop,
                              double worst) {
  const bool interleaved = p.schedule == Schedule::interleaved;
  const double v = p.chunks();
  const int pp = p.pp, chunks = static_cast<int>(v);
  double all = 0;
  for (const StageTiming& st : stages) all += st.total().value;
  double suffix = 0, excess = 0;  // suffix: the loop's work on the stages from s on
  for (int s = pp - 1; s >= 0; --s) {
    const StageTiming& st = stages[static_cast<size_t>(s)];
    const double deferred = p.schedule == Schedule::zb_h1 ? st.backward_weight.value : 0.0;
    suffix += st.total().value - deferred;
    const double own = suffix + deferred;  // stage s runs its own W in its cycles
    const double warmup = interleaved ? 2.0 * (pp - s - 1) + (v - 1) * pp : pp - s - 1.0;
    if (m * v <= warmup) continue;  // every forward of this stage is a warm-up one
    for (int c = 0; c < chunks; ++c) {
      const double cycles = warmup + (v - 1 - 2.0 * c) * pp + 1;
      if (cycles < 1) continue;
      const double work = (own + (v - 1 - c) * all) / v;
      const double hops = 2.0 * (v * pp - 1 - c * pp - s);
      excess = std::max(excess, v * (work + hops * hop) / cycles - worst);
    }
  }
  return excess;
}

}  // namespace

PipelineSends pipeline_sends_per_micro_batch(const ParallelSpec& p, int stage) {
  if (p.pp <= 1) return {};
  const double v = p.chunks();
  return {stage == p.pp - 1 ? v - 1.0 : v, stage == 0 ? v - 1.0 : v};
}

double pipeline_steady_transfers(const ParallelSpec& p, const std::vector<StageTiming>& stages, double m, double hop,
                                 double worst) {
  if (p.pp <= 1 || hop <= 0) return 0.0;
  // The busiest link sends `sends` boundary tensors per micro-batch: a cycle lasts at least their hops.
  // GPipe's forwards all run before its backwards, so each phase is bound on its own: a micro-batch takes
  // at least max(F, hop) + max(B, hop) on the stage (forward activations, then gradients, one per pass).
  const double link = p.schedule == Schedule::gpipe ? gpipe_phase_cycle(stages, hop) - worst
                                                    : busiest_sends_per_micro_batch(p) * hop - worst;
  // GPipe runs all forwards, then all backwards: no loop within its steady state.
  const double loop = p.schedule == Schedule::gpipe ? 0.0 : dependency_loop_excess(p, stages, m, hop, worst);
  // The first micro-batch's round trip is the fill's (its hops are the fill's 2(p − 1)·v); each later one
  // starts a cycle late by the excess.
  return std::max(0.0, m - 1) * std::max({0.0, link, loop});
}

// The slowest stage paces m micro-batches; the other stages' work is the fill and drain, divided by v for
// the interleaved schedule (Narayanan et al. 2021) and shrunk for ZB-H1, whose bubble is (p-1)(F + B - W)
// instead of (p-1)(F + B + W) (Qi et al. 2023) once there are micro-batches enough: each stage's deferred W
// leaves the drain's chain (one W per stage), and the W of an earlier micro-batch fills a warm-up slot, of
// which there are min(m - 1, p - 1). With one micro-batch the chain is every F and B and stage 0's W alone.
// Each stage on the chain gives its own F + B less its own deferred W's: with uneven stages (a heavy loss
// head on the last) their shares of W differ.
double zb_h1_fill(const ParallelSpec& p, const std::vector<StageTiming>& stages, double m) {
  if (p.pp <= 1 || stages.empty()) return 0.0;
  const double deferred = 1.0 + std::min(std::max(0.0, m - 1.0), p.pp - 1.0) / (p.pp - 1.0);  // 1 … 2 W's
  std::size_t slowest = 0;  // the first of the slowest, as the planner's stage loop takes it
  for (std::size_t i = 1; i < stages.size(); ++i) {
    if (stages[i].total().value > stages[slowest].total().value) slowest = i;
  }
  double fill = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (i != slowest) fill += std::max(0.0, (stages[i].total() - deferred * stages[i].backward_weight).value);
  }
  return fill;
}

PipelineTime pipeline_time(const ParallelSpec& p, const PipelineStages& x, const std::vector<StageTiming>& stages,
                           double m, double hop) {
  const double v = p.chunks();
  const double fill = p.schedule == Schedule::zb_h1 ? zb_h1_fill(p, stages, m) : (x.sum - x.worst) / v;
  PipelineTime r;
  r.paced = m * x.worst + fill;
  r.steady_transfers = pipeline_steady_transfers(p, stages, m, hop, x.worst);
  return r;
}

}  // namespace tp
