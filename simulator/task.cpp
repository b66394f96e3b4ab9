#include "task.h"

namespace tp::sim {

const char* task_code(TaskKind k) {
  switch (k) {
    case TaskKind::forward: return "F";
    case TaskKind::backward: return "B";
    case TaskKind::backward_input: return "B";
    case TaskKind::backward_weight: return "W";
    case TaskKind::recompute: return "R";
    case TaskKind::collective_forward: return "comm-F";
    case TaskKind::collective_backward: return "comm-B";
    case TaskKind::send_forward: return "send-F";
    case TaskKind::send_backward: return "send-B";
    case TaskKind::dp_reduce: return "reduce";
    case TaskKind::dp_gather: return "gather";
    case TaskKind::zero3_gather_forward: return "gather-F";
    case TaskKind::zero3_gather_backward: return "gather-B";
    case TaskKind::optimizer: return "optimizer";
    case TaskKind::overlap_slowdown: return "overlap-slowdown";
    case TaskKind::sp_grad_sync: return "sp-grad-sync";
    case TaskKind::step_end_sync: return "grad-sync";
  }
  return "?";
}

TaskClass task_class(TaskKind k) {
  switch (k) {
    case TaskKind::forward:
    case TaskKind::backward:
    case TaskKind::backward_input:
    case TaskKind::backward_weight:
    case TaskKind::recompute:
    case TaskKind::overlap_slowdown:
    case TaskKind::optimizer: return TaskClass::compute;
    case TaskKind::collective_forward:
    case TaskKind::collective_backward:
    case TaskKind::sp_grad_sync: return TaskClass::collective;  // exposed on the compute stream, like TP's
    case TaskKind::send_forward:
    case TaskKind::send_backward:
    case TaskKind::step_end_sync: return TaskClass::p2p;  // over the pipeline group's ranks
    case TaskKind::dp_reduce:
    case TaskKind::dp_gather:
    case TaskKind::zero3_gather_forward:
    case TaskKind::zero3_gather_backward: return TaskClass::dp;
  }
  return TaskClass::compute;
}

std::string task_name(const Task& t) {
  std::string n = task_code(t.kind);
  n += " s" + std::to_string(t.stage);
  if (t.chunk >= 0) n += " c" + std::to_string(t.chunk);
  if (t.micro_batch >= 0) n += " mb" + std::to_string(t.micro_batch);
  if (t.bucket >= 0) n += " b" + std::to_string(t.bucket);
  if (t.layer >= 0) n += " l" + std::to_string(t.layer);
  if (t.unit >= 0) n += " u" + std::to_string(t.unit);
  return n;
}

}  // namespace tp::sim
