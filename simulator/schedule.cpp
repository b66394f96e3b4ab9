#include "schedule.h"

#include <stdexcept>
#include <string>

namespace tp::sim {

std::vector<StageOrder> schedule_order(Schedule schedule, const PipelineShape& shape) {
  if (shape.stages < 1 || shape.chunks < 1 || shape.micro_batches < 1) {
    throw std::invalid_argument("pipeline shape needs at least one stage, chunk and micro-batch");
  }
  if (schedule != Schedule::interleaved && shape.chunks != 1) {
    throw std::invalid_argument(std::string("schedule ") + to_string(schedule) + " has one chunk per stage");
  }
  switch (schedule) {
    case Schedule::gpipe: return gpipe_order(shape);
    case Schedule::one_f_one_b: return one_f_one_b_order(shape);
    case Schedule::interleaved: return interleaved_order(shape);
    case Schedule::zb_h1: return zb_h1_order(shape);
  }
  throw std::invalid_argument("unknown schedule");
}

bool splits_backward(Schedule schedule) { return schedule == Schedule::zb_h1; }

}  // namespace tp::sim
