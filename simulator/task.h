// One task of the simulated step: what it is (kind, stage, virtual chunk, micro-batch, bucket) and
// how long it takes. Names follow "<kind> s<stage> c<chunk> mb<micro-batch>" (or "b<bucket>"), then
// "l<layer>" and "u<unit>" for ZeRO-3's per-layer tasks.
#pragma once

#include <cstdint>
#include <string>

namespace tp::sim {

enum class TaskKind : std::uint8_t {
  forward,              // F: forward pass of one chunk for one micro-batch
  backward,             // B: full backward pass (input and weight gradients)
  backward_input,       // B: input-gradient part (zero-bubble schedules)
  backward_weight,      // W: weight-gradient part (zero-bubble schedules)
  recompute,            // R: forward recomputation before the backward pass
  collective_forward,   // exposed TP/SP/CP/EP collectives of the forward pass
  collective_backward,  // likewise of the backward pass (and the recompute)
  send_forward,         // PP activation send to the next virtual stage
  send_backward,        // PP gradient send to the previous virtual stage
  dp_reduce,            // one bucket of the data-parallel gradient reduce(-scatter)
  dp_gather,            // one bucket of the ZeRO parameter all-gather after the optimizer
  overlap_slowdown,     // compute lost to the data-parallel collectives it hid (planner/overlap_contention.h)
  zero3_gather_forward,   // ZeRO-3: gather of the chunk's weights before its forward
  zero3_gather_backward,  // ZeRO-3: gather before its backward (or recompute)
  optimizer,            // optimizer step of the stage's shard
  sp_grad_sync,         // end of step: the sequence-parallel gradients' all-reduce over the stage's TP group
  step_end_sync,        // end of step: the tied embedding's gradient all-reduce, first and last stage
};
inline constexpr int kTaskKindCount = 16;

// Short code used in task names and trace events ("F", "B", "W", "R", "reduce" ...).
const char* task_code(TaskKind k);

// Where a task's time goes in the per-stage accounting.
enum class TaskClass : std::uint8_t { compute, collective, p2p, dp };
TaskClass task_class(TaskKind k);

struct Task {
  TaskKind kind = TaskKind::forward;
  std::int32_t stage = 0;
  std::int32_t chunk = -1;        // -1 when not per chunk (optimizer, gathers after the step)
  std::int32_t micro_batch = -1;  // -1 when not per micro-batch
  std::int32_t bucket = -1;       // DP buckets
  std::int32_t layer = -1;        // ZeRO-3: the layer within the chunk (-1: the whole chunk)
  std::int32_t unit = -1;         // ZeRO-3: the gather unit within the layer (-1: the whole layer)
  double duration = 0;            // seconds
};

std::string task_name(const Task& t);

}  // namespace tp::sim
