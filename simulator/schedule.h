// Pipeline schedules: the order in which each stage runs its forward and backward passes.
// A schedule is a pure function of the pipeline's shape; each lives in its own file (gpipe.cpp,
// one_f_one_b.cpp, interleaved.cpp, zb_h1.cpp). Adding one: write the function, add its case to
// schedule_order() in schedule.cpp and its file to CMakeLists.txt.
//
// Virtual stages: chunk c of stage s holds virtual stage c·p + s (Megatron's interleaving), so a
// micro-batch runs forward through (0,0) (1,0) … (p−1,0) (0,1) … (p−1,v−1) and backward the reverse way.
#pragma once

#include <cstdint>
#include <vector>

#include "specs.h"

namespace tp::sim {

enum class Pass : std::uint8_t {
  forward,   // F
  backward,  // B: the whole backward pass, or only its input-gradient part when the schedule splits it
  weight,    // W: weight-gradient part (only schedules that split the backward pass)
};

struct Slot {
  Pass pass = Pass::forward;
  int chunk = 0;
  int micro_batch = 0;
};

using StageOrder = std::vector<Slot>;

struct PipelineShape {
  int stages = 1;         // p
  int chunks = 1;         // v: virtual stages per GPU (interleaved), 1 otherwise
  int micro_batches = 1;  // m per replica per step
};

// GPipe (Huang et al. 2019): all forwards, then all backwards.
std::vector<StageOrder> gpipe_order(const PipelineShape& shape);
// 1F1B (PipeDream-Flush; Narayanan et al. 2021): p − s − 1 warm-up forwards, then one forward and one
// backward alternately, then the remaining backwards.
std::vector<StageOrder> one_f_one_b_order(const PipelineShape& shape);
// Interleaved 1F1B (Narayanan et al. 2021, Megatron-LM's forward_backward_pipelining_with_interleaving).
std::vector<StageOrder> interleaved_order(const PipelineShape& shape);
// ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", handcrafted schedule H1): 1F1B with the
// backward split into B and W, stage s deferring its first s weight-gradient passes to the end.
std::vector<StageOrder> zb_h1_order(const PipelineShape& shape);

// The order for `schedule`; chunks must be 1 unless the schedule is interleaved.
std::vector<StageOrder> schedule_order(Schedule schedule, const PipelineShape& shape);

// Whether the schedule runs the weight-gradient part of the backward pass as separate W slots.
bool splits_backward(Schedule schedule);

}  // namespace tp::sim
