#include "step_inputs.h"

#include <algorithm>

namespace tp::sim {

StepInputs step_inputs(const Scenario& s, const Plan& p) {
  const ParallelSpec& par = s.parallel;
  const StepTime& t = p.time;
  StepInputs in;
  in.schedule = par.schedule;
  in.stages = static_cast<int>(t.stages.size());
  in.chunks = par.schedule == Schedule::interleaved ? std::max(1, par.vpp) : 1;
  in.micro_batches = static_cast<int>(std::max<std::int64_t>(1, p.estimate.micro_batches));
  in.p2p_hop = t.p2p_hop;
  in.dp_buckets = std::max(1, t.dp_buckets);
  in.zero = par.zero;
  in.overlap_grad_reduce = par.overlap_grad_reduce;
  in.overlap_param_gather = par.overlap_param_gather;

  const auto& mem = p.estimate.stages;
  const bool have_memory = mem.size() == t.stages.size();
  const std::size_t slowest = static_cast<std::size_t>(std::clamp(t.slowest_stage, 0, std::max(0, in.stages - 1)));
  const double base = have_memory ? mem[slowest].parameters : 0.0;
  for (std::size_t i = 0; i < t.stages.size(); ++i) {
    StageInputs st;
    st.timing = t.stages[i];
    const double ratio = (have_memory && base > 0) ? mem[i].parameters / base : 1.0;
    st.dp_reduce = t.dp_reduce * ratio;
    st.dp_gather = t.dp_gather * ratio;
    st.optimizer = t.optimizer_step * ratio;
    if (have_memory) {
      st.planner_in_flight = mem[i].in_flight;
      st.planner_activations = mem[i].activations;
    }
    in.stage.push_back(st);
  }
  return in;
}

}  // namespace tp::sim
