#include "plan.h"

#include "estimate_parts.h"

namespace tp {

Plan make_plan(const Scenario& s, const HardwareProfile& hw) {
  return make_plan(s, build_op_graph(s.model, s.training, s.parallel.tp),
                   hw);
}

Plan make_plan(const Scenario& s, const OpGraph& g, const HardwareProfile& hw) {
  Plan p;
  make_plan_into(s, g, hw, p);
  return p;
}

void make_plan_into(const Scenario& s, const OpGraph& g, const HardwareProfile& hw, Plan& p) {
  estimate_into(s, g, p.estimate);
  step_time_into(s, g, p.estimate, hw, p.time);
  // A checkpoint holds every parameter once, in the dtypes the memory estimate keeps them in
  // (state_bytes_per_param): the weights (fp32 under autocast), the fp32 master copy and the optimizer
  // states (in the parameter dtype with optimizer_state_precision: same). Adafactor's factored states,
  // a row and a column per matrix, are left out.
  const StateBytesPerParam sb = state_bytes_per_param(s);
  const double per_param = sb.weights + sb.master + sb.optimizer;
  p.checkpoint_bytes = Bytes(per_param * p.estimate.parameters_total);

  RunInputs in;
  in.tokens = s.training.tokens;
  in.tokens_per_step = p.estimate.tokens_per_step;
  in.step_time = p.time.step;
  in.gpus = s.gpus();
  in.nodes = s.cluster.nodes;
  in.gpu_power_busy = p.time.gpu_power;
  in.host_power_per_node = s.cluster.host_power;
  in.checkpoint_bytes = p.checkpoint_bytes;
  in.costs = s.costs;
  p.run = run_totals(in);
  if (p.run.failures.regime == Regime::no_progress) {
    // A valid but degenerate regime: reported as a violation (the job never finishes), never as inf.
    Violation v;
    v.kind = Violation::Kind::no_progress;
    v.needed = p.run.failures.lost_per_failure.value;
    v.available = p.run.failures.job_mtbf.value;
    p.estimate.violations.push_back(v);
    p.estimate.feasible = false;
  }
}

}  // namespace tp
