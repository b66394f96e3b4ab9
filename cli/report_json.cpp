#include <cmath>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>

#include "attention_curves.h"
#include "attention_kernel_rules.h"
#include "report.h"
#include "sustained_clock.h"

namespace tp {
namespace {

// Counts (parameters, tokens, steps) are whole numbers: written as JSON integers, not 4.67e10 floats; a count
// beyond 64 bits (a made-up model's parameters) as the number it is, not wrapped to a negative integer.
nlohmann::json whole(double count) {
  if (std::fabs(count) < 9.2e18) return std::llround(count);
  return count;
}

void check_finite(const nlohmann::json& j, const std::string& path) {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    throw std::logic_error("non-finite number at " + path + " of the JSON output");
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) check_finite(it.value(), path + "." + it.key());
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) check_finite(j[i], path + "[" + std::to_string(i) + "]");
  }
}

nlohmann::json memory_json(const MemoryBreakdown& b, const Estimate& e) {
  return {{"stage", b.stage},
          {"layers", b.layers},
          {"in_flight_micro_batches", b.in_flight},
          {"parameters", whole(b.parameters)},
          {"weights", b.weights.value},
          {"gradients", b.gradients.value},
          {"master_weights", b.master_weights.value},
          {"optimizer", b.optimizer.value},
          {"activations", b.activations.value},
          {"buffers", b.buffers.value},
          {"overhead", b.overhead.value},
          {"total", b.total.value},
          {"capacity", e.capacity.value},
          {"host", b.host.value}};
}

}  // namespace

nlohmann::json estimate_json(const Scenario& s, const Estimate& e) {
  nlohmann::json j;
  const ParallelSpec& p = s.parallel;
  j["scenario"] = {{"name", s.name},
                   {"source", s.source},
                   {"model", s.model.key},
                   {"gpu", s.cluster.gpu.key.empty() ? s.cluster.gpu.name : s.cluster.gpu.key},
                   {"gpus", s.gpus()},
                   {"layout",
                    {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp},
                     {"cp_comm", to_string(cp_comm_of(p, s.training.framework))}, {"cp_a2a", p.cp_inner()},
                     {"ep", p.ep}, {"vpp", p.vpp},
                     {"layers_per_stage", p.layers_per_stage}, {"schedule", to_string(p.schedule)},
                     {"zero", p.zero}, {"dp_shard", p.shard_dp()}, {"sequence_parallel", p.sequence_parallel},
                     {"recompute", to_string(p.recompute.mode)}, {"recompute_every", p.recompute.every},
                     {"recompute_early_stop", s.training.checkpoint_early_stop}}},
                   {"micro_batches", e.micro_batches},
                   {"tokens_per_step", whole(e.tokens_per_step)}};
  j["feasible"] = e.feasible;
  j["violations"] = nlohmann::json::array();
  for (const auto& v : e.violations) {
    j["violations"].push_back({{"kind", to_string(v.kind)},
                               {"stage", v.stage},
                               {"needed_bytes", v.needed},
                               {"available_bytes", v.available},
                               {"message", violation_message(v)},
                               {"fixes", v.fixes}});
  }
  j["parameters"] = {{"total", whole(e.parameters_total)},
                     {"per_gpu", whole(e.parameters_per_gpu)},
                     {"active", whole(e.parameters_active)}};
  j["flops"] = {{"model_per_step", e.flops.model_per_step.value},
                {"hardware_per_step", e.flops.hardware_per_step.value},
                {"recompute_per_step", e.flops.recompute_per_step.value},
                {"model_per_token", e.flops.model_per_token}};
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& b : e.stages) stages.push_back(memory_json(b, e));
  j["memory"] = {{"per_gpu", memory_json(e.memory, e)},
                 {"usable", e.usable.value},
                 {"host_per_node", e.host_per_node.value},
                 {"stages", stages}};
  j["units"] = {{"memory", "bytes"}, {"flops", "FLOP"}, {"parameters", "count"}};
  return j;
}

namespace {

// The step time and where it goes.
nlohmann::json time_json(const StepTime& t) {
  nlohmann::json j = {{"step_seconds", t.step.value},
                       {"compute", t.compute.value},
                       {"recompute", t.recompute.value},
                       {"compute_by_kind",
                        {{"gemm", t.compute_by_kind.gemm.value}, {"attention", t.compute_by_kind.attention.value},
                         {"memory_bound", t.compute_by_kind.memory_bound.value}, {"optimizer", t.compute_by_kind.optimizer.value}}},
                       {"bubble", t.bubble.value},
                       {"optimizer", t.optimizer.value},
                       {"overlap_contention", t.overlap_contention.value},
                       {"exposed_comm",
                        {{"tp", t.exposed.tp.value}, {"cp", t.exposed.cp.value}, {"ep", t.exposed.ep.value},
                         {"pp", t.exposed.pp.value}, {"dp", t.exposed.dp.value}, {"offload", t.exposed.offload.value},
                         {"total", t.exposed.total().value}}},
                       {"forward_per_micro_batch", t.forward_per_micro_batch.value},
                       {"backward_per_micro_batch", t.backward_per_micro_batch.value},
                       {"slowest_stage", t.slowest_stage},
                       {"mfu", t.mfu},
                       {"hfu", t.hfu}};
  return j;
}

// The attention kernel the step is timed with, its speed curves and grid balance.
nlohmann::json attention_json(const Scenario& s, const HardwareProfile& hw) {
  const FusedAttentionCurves curves = fused_attention_curves(s.training, s.cluster.gpu, hw);
  const AttentionSpeed& speed = curves.speed;
  const FusedAttentionGrid grid = fused_attention_grid(s, s.training.micro_batch, s.parallel.tp, s.parallel.cp);
  nlohmann::json j = {{"fused", s.training.flash_attention},
                       {"unpad", s.training.attention_unpad},
                       // K and V repeated to the query heads by the model code (training.repeat_kv, repeat_kv_of).
                       {"repeat_kv", repeats_kv_heads(s.model, s.training)},
                       // Explicit attention (flash_attention: false) runs no fused kernel: `unfused`.
                       {"kernel", s.training.flash_attention ? to_string(attention_kernel_of(s.training, s.cluster.gpu))
                                                             : "unfused"},
                       {"profile_kernel", to_string(hw.attention_kernel)},
                       // The curves `speed` applies to: the profile's, or FlashAttention-2's published one.
                       {"curve", curves.published ? "flash2_published" : "profile"},
                       {"speed", {{"forward", speed.forward}, {"backward", speed.backward}}},
                       // How busy the fused kernels' grid keeps the SMs (docs/model.md §15, "The attention grid's tail").
                       {"grid_balance", {{"forward", grid.forward}, {"backward", grid.backward}}}};
  return j;
}

// The whole run: time, cost, energy and the failure model (no totals with failures when it never finishes).
nlohmann::json run_json(const Scenario& s, const Plan& p) {
  const StepTime& t = p.time;
  const RunTotals& r = p.run;
  nlohmann::json j = {{"steps", whole(r.steps)},
                       {"regime", to_string(r.failures.regime)},
                       {"seconds", r.seconds_with_failures.value},
                       {"seconds_without_failures", r.seconds.value},
                       {"gpu_hours", r.gpu_hours},
                       {"cost_usd", r.cost.value},
                       {"cost_usd_without_failures", r.cost_without_failures.value},
                       {"spot_cost_usd", r.spot_cost.value},
                       {"energy_kwh", r.energy_kwh},
                       {"energy_cost_usd", r.energy_cost_usd},
                       {"co2_kg", r.co2_kg},
                       {"gpu_power_watts", t.gpu_power.value},
                       {"goodput", r.failures.goodput},
                       {"failures",
                        {{"job_mtbf_seconds", r.failures.job_mtbf.value},
                         {"expected_failures", r.failures.expected_failures},
                         {"checkpoint_bytes", p.checkpoint_bytes.value},
                         {"checkpoint_write_seconds", r.failures.checkpoint_write.value},
                         {"checkpoint_interval_seconds", r.failures.checkpoint_interval.value},
                         {"checkpointed", r.failures.checkpointed},
                         {"lost_work_seconds", r.failures.lost_work.value},
                         {"restart_seconds", r.failures.restart_time.value}}}};
  if (s.costs.spot_gpu_hour.value > 0.0) {
    j["spot_regime"] = to_string(r.spot_regime);
    j["spot_checkpoint_interval_seconds"] = r.spot_checkpoint_interval.value;
  }
  if (r.failures.regime == Regime::no_progress) {
    // The job never finishes: there is no time, cost or energy with failures to report.
    for (const char* key : {"seconds", "gpu_hours", "cost_usd", "spot_cost_usd", "energy_kwh", "energy_cost_usd",
                            "co2_kg"}) {
      j.erase(key);
    }
    for (const char* key : {"expected_failures", "lost_work_seconds", "restart_seconds"}) j["failures"].erase(key);
  }
  return j;
}

}  // namespace

nlohmann::json plan_json(const Scenario& s, const Plan& p, const HardwareProfile& hw) {
  nlohmann::json j = estimate_json(s, p.estimate);
  const StepTime& t = p.time;
  j["profile"] = hw.name;
  j["time"] = time_json(t);
  j["clocks"] = {{"profile_rates", profile_rates_clock_hz(hw, s.cluster.gpu)},
                 {"sustained", cluster_sustained_clock_hz(s.cluster, hw)},
                 {"tensor_time_scale", tensor_time_scale(s.cluster, hw)}};
  j["attention"] = attention_json(s, hw);
  j["throughput"] = {{"tokens_per_second", t.tokens_per_second},
                     {"tokens_per_second_per_gpu", t.tokens_per_second_per_gpu},
                     {"tflops_per_gpu", t.tflops_per_gpu}};
  j["run"] = run_json(s, p);
  j["units"]["time"] = "seconds";
  j["units"]["clocks"] = "Hz (tensor_time_scale: a factor)";
  j["units"]["run"] = "seconds, GPU-hours, USD, kWh, kg CO2";
  return j;
}

void require_finite_json(const nlohmann::json& j) { check_finite(j, "$"); }

void print_json(std::ostream& out, const nlohmann::json& j) {
  require_finite_json(j);
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace tp
