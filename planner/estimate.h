// The planner's answer for one scenario: parameters, FLOPs and per-GPU memory.
// estimate() is pure (no I/O), never throws for an infeasible layout and is cheap enough to be
// called millions of times by a sweep: infeasibility is data (violations).
#pragma once

#include <string>
#include <vector>

#include "op_graph.h"
#include "specs.h"
#include "units.h"

namespace tp {

// Per-GPU memory of one pipeline stage.
struct MemoryBreakdown {
  int stage = 0;
  int layers = 0;
  double in_flight = 0;  // micro-batches whose activations the stage holds at its peak (layer-equivalents / layers)
  double parameters = 0;        // parameters held by one GPU of this stage (before ZeRO sharding)
  double layer_parameters = 0;  // of which in transformer layers (the rest: embedding, output layer)
  double expert_parameters = 0;  // of which in MoE experts (their data-parallel group is the experts')
  Bytes weights, gradients, master_weights, optimizer, activations, buffers, overhead, total;
  Bytes host;  // host RAM this GPU needs for offloaded states
};

struct Violation {
  // no_progress: failures come faster than the job can redo the work they lose (run_totals.h); set by
  // make_plan(), not by estimate(). `needed` / `available` are then seconds: lost per failure / job MTBF.
  enum class Kind { out_of_memory, host_memory, no_progress };
  Kind kind = Kind::out_of_memory;
  int stage = 0;
  double needed = 0;     // bytes
  double available = 0;  // bytes
  std::vector<std::string> fixes;  // filled by suggest_fixes(), not by estimate()
};

// "stage 1 needs 88.69 GiB per GPU but 80.00 GiB is usable (8.69 GiB more needed)". Built on demand:
// estimate() stays free of string work for sweeps.
std::string violation_message(const Violation& v);
const char* to_string(Violation::Kind k);  // "out_of_memory" | "host_memory" | "no_progress"

struct FlopCounts {
  Flop model_per_step;     // forward + backward, no recompute (MFU numerator)
  Flop hardware_per_step;  // with recompute (HFU numerator)
  Flop recompute_per_step;
  double model_per_token = 0;  // FLOP per trained token
};

struct Estimate {
  bool feasible = true;
  std::vector<Violation> violations;

  double parameters_total = 0;    // unique parameters of the model
  double parameters_per_gpu = 0;  // on the GPU that holds the most (worst stage, before ZeRO)
  double parameters_active = 0;   // per token (MoE: top_k experts)

  FlopCounts flops;
  MemoryBreakdown memory;              // the stage with the largest total
  std::vector<MemoryBreakdown> stages;
  Bytes capacity;        // GPU memory
  Bytes usable;          // capacity less the headroom
  Bytes host_per_node;   // host RAM for offload on one node
  std::int64_t micro_batches = 0;  // per replica per step
  double tokens_per_step = 0;
};

// Does every stage fit in GPU memory and the offloaded states in host RAM? (An estimate can fit and still be
// infeasible: a job whose failures outpace its progress, Violation::Kind::no_progress.)
bool fits_in_memory(const Estimate& e);

Estimate estimate(const Scenario& s);

// The same with a prebuilt op graph (sweeps reuse one graph for many layouts).
Estimate estimate(const Scenario& s, const OpGraph& graph);
// The same into an existing Estimate, reusing its vectors (no allocation once they are large enough).
void estimate_into(const Scenario& s, const OpGraph& graph, Estimate& out);

// Korthikanti-style activation bytes of ONE layer for ONE micro-batch on one GPU, as stored
// between forward and backward under the scenario's recompute mode (no in-flight factor).
Bytes layer_activation_bytes(const Scenario& s, const OpGraph& graph);

// Optimizer state bytes per parameter (not counting the fp32 master copy); adafactor returns 0
// here because its state depends on matrix shapes (see optimizer_state_bytes in memory.cpp).
double optimizer_bytes_per_param(Optimizer o);

}  // namespace tp
