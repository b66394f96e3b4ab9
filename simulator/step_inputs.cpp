#include "step_inputs.h"

#include <algorithm>
#include <limits>
#include <string>
#include <span>

#include "errors.h"
#include "framework_rules.h"
#include "op_graph.h"
#include "sharded_time.h"
#include "zero3_modules.h"

namespace tp::sim {
namespace {

// The units the framework gathers one layer in, with the planner's rules for each (planner/sharded_time.h).
Zero3Rules zero3_rules(const Scenario& s) {
  const FrameworkRules& fw = framework_rules(s.training.framework);
  Zero3Rules z;
  z.reduce_every_micro_batch = reduces_every_micro_batch(fw, s.training, s.parallel);
  const OpGraph g = build_op_graph(s.model, s.training, s.parallel.tp);
  const Zero3Layer layer = zero3_layer(s, g.layer, s.parallel.tp, s.parallel.ep);
  const Zero3Settings& zero3 = layer.settings;
  z.recompute_regathers = zero3_recompute_pass(zero3, s.parallel.recompute.mode);
  z.backward_prefetch = zero3.backward_prefetch;
  z.reduce_holds_backward = host_gradient_copy_holds_backward(fw, s.parallel);
  z.gathers_in_backward = gathers_in_backward(s.parallel);
  z.gathers_every_micro_batch = gathers_every_micro_batch(fw, s.training, s.parallel);
  if (zero3.whole_layers) return z;
  const std::span<const Zero3Module> mods = layer.modules.view();
  for (std::size_t k = 0; k < mods.size(); ++k) {
    GatherUnit u;
    u.gather_share = mods[k].gather_share;
    u.compute_share = mods[k].compute_share;
    u.blocks_prefetch = !zero3_prefetch_allowed(mods[k], zero3.live_parameters);
    u.kept_for_backward = zero3_kept_for_backward(mods, k, zero3.reuse_distance);
    z.units.push_back(u);
  }
  return z;
}

}  // namespace

const std::vector<GatherUnit>& gather_units(const Zero3Rules& z) {
  static const std::vector<GatherUnit> whole_layer(1);
  return z.units.empty() ? whole_layer : z.units;
}

StepInputs step_inputs(const Scenario& s, const Plan& p) {
  const ParallelSpec& par = s.parallel;
  const StepTime& t = p.time;
  StepInputs in;
  in.stages = static_cast<int>(t.stages.size());
  // One stage is no pipeline: the training loop runs each micro-batch's forward and whole backward in turn,
  // whatever schedule the scenario names, and holds one micro-batch's activations (the planner's count,
  // planner/activation_memory.cpp in_flight_chunks): 1F1B's order with no warm-up and no split backward.
  in.schedule = in.stages == 1 ? Schedule::one_f_one_b : par.schedule;
  in.chunks = par.chunks();
  // The task graph counts micro-batches in an int; past it a step is far beyond any --max-tasks anyway.
  if (p.estimate.micro_batches > std::numeric_limits<int>::max()) {
    throw InputError({"simulator", 0, 0}, "",
                     "one step of " + std::to_string(p.estimate.micro_batches) +
                         " micro-batches per replica is more than the simulator counts (2^31 - 1); fewer micro-batches: "
                         "a smaller training.global_batch or a larger training.micro_batch");
  }
  in.micro_batches = static_cast<int>(std::max<std::int64_t>(1, p.estimate.micro_batches));
  in.p2p_hop = t.p2p_hop;
  in.dp_buckets = std::max(1, t.dp_buckets);
  in.dp_own_link = !t.dp_shares_pipeline_link;
  in.zero = par.zero;
  const FrameworkRules& fw = framework_rules(s.training.framework);
  in.overlap_grad_reduce = grad_reduce_overlapped(fw, par);
  in.overlap_param_gather = param_gather_overlapped(fw, par);
  in.per_unit = gathers_per_unit(fw, par);
  in.reduce_every_micro_batch = !in.per_unit && reduces_every_micro_batch(fw, s.training, par);
  in.reduce_waited_after_backward = reduce_waited_after_each_backward(fw, s.training, par);
  if (in.per_unit) in.zero3 = zero3_rules(s);

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
    st.overlap_contention = t.overlap_contention * ratio;
    if (i < par.layers_per_stage.size()) st.layers = std::max(1, static_cast<int>(par.layers_per_stage[i]));
    if (have_memory) {
      st.planner_in_flight = mem[i].in_flight;
      st.planner_activations = mem[i].activations;
    }
    in.stage.push_back(st);
  }
  return in;
}

}  // namespace tp::sim
