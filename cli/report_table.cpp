#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attention_curves.h"
#include "estimate_parts.h"
#include "format_units.h"
#include "op_graph.h"
#include "attention_kernel_rules.h"
#include "report.h"
#include "sustained_clock.h"

namespace tp {
namespace {

std::string gib(Bytes b) { return format_fixed(b.value / kGiB, 2); }

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

void row(std::ostream& out, const std::string& label, const std::vector<std::string>& cells) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "  %-16s", label.c_str());
  out << buf;
  for (const auto& c : cells) {
    std::snprintf(buf, sizeof buf, "%12s", c.c_str());
    out << buf;
  }
  out << "\n";
}

// Stages to show: all when few, else the first, the worst and the last.
std::vector<const MemoryBreakdown*> shown_stages(const Estimate& e) {
  std::vector<const MemoryBreakdown*> out;
  if (e.stages.size() <= 6) {
    for (const auto& b : e.stages) out.push_back(&b);
    return out;
  }
  out.push_back(&e.stages.front());
  if (e.memory.stage != 0 && e.memory.stage != static_cast<int>(e.stages.size()) - 1) out.push_back(&e.stages[static_cast<size_t>(e.memory.stage)]);
  out.push_back(&e.stages.back());
  return out;
}

// Run totals: days, dollars, energy and the failure model; a job that cannot make progress says so.
void print_run(std::ostream& out, const Scenario& s, const Plan& p) {
  const RunTotals& r = p.run;
  const StepTime& t = p.time;
  const FailureModel& f = r.failures;
  const bool progress = f.regime == Regime::ok;
  out << "  Run         " << format_count(r.steps) << " steps, ";
  if (progress) {
    out << format_seconds(r.seconds_with_failures.value) << " (" << format_seconds(r.seconds.value)
        << " without failures), " << format_count(r.gpu_hours) << " GPU-hours\n";
    out << "  Cost        " << format_amount(r.cost.value, 0) << " USD (" << format_amount(r.cost_without_failures.value, 0)
        << " USD without failures)";
  } else {
    out << "never finishes with failures (" << format_seconds(r.seconds.value) << " without failures)\n";
    out << "  Cost        " << format_amount(r.cost_without_failures.value, 0) << " USD without failures";
  }
  if (s.costs.spot_gpu_hour.value > 0) {
    out << (r.spot_regime == Regime::ok
                ? ", spot " + format_amount(r.spot_cost.value, 0) + " USD (" + format_fixed(r.expected_preemptions, 0) +
                      " preemptions, checkpoint every " + format_seconds(r.spot_checkpoint_interval.value) + ")"
                : std::string(", spot: preemptions come faster than the job progresses"));
  }
  out << "\n";
  out << "  Energy      " << format_amount(progress ? r.energy_kwh : r.energy_kwh_without_failures, 0) << " kWh"
      << (progress ? "" : " without failures") << " (" << format_fixed(t.gpu_power.value, 0) << " W per GPU"
      << (s.cluster.host_power.value > 0 ? " + " + format_fixed(s.cluster.host_power.value / 1e3, 1) + " kW per node's host" : "")
      << ", PUE " << format_fixed(s.costs.pue, 2) << ")";
  if (progress) {
    out << ", " << format_amount(r.energy_cost_usd, 0) << " USD of electricity, " << format_amount(r.co2_kg / 1000.0, 1)
        << " t CO2";
  }
  out << "\n";
  out << "  Failures    job MTBF " << format_seconds(f.job_mtbf.value) << ", ";
  if (progress) out << format_fixed(f.expected_failures, 1) << " expected; ";
  out << "checkpoint " << format_bytes(p.checkpoint_bytes.value) << " written in " << format_seconds(f.checkpoint_write.value)
      << (progress && !f.checkpointed ? ", none taken (the run is better restarted from its start)"
              : " every " + format_seconds(f.checkpoint_interval.value))
      << "; goodput " << format_fixed(100 * f.goodput, 1) << "%\n";
}

// The scenario as the planner read it: model, cluster, layout and training settings.
void print_setup(std::ostream& out, const Scenario& s, const Estimate& e) {
  const ParallelSpec& p = s.parallel;
  const ModelSpec& m = s.model;
  out << "  Model       " << m.name << ": " << format_count(e.parameters_total) << " parameters, " << m.layers
      << " layers, hidden " << m.hidden << ", " << m.heads << "/" << m.kv_heads << " heads, "
      << to_string(m.activation);
  // Streamed piece by piece: `"literal" + std::string` here trips GCC 12's -Wrestrict false positive at -O3.
  if (m.moe.enabled()) out << ", MoE " << m.moe.experts << " experts top-" << m.moe.top_k;
  out << "\n";
  out << "  Cluster     " << s.cluster.nodes << " x " << s.cluster.gpus_per_node << " = " << s.gpus() << " x "
      << s.cluster.gpu.name << " (" << format_bytes(s.cluster.gpu.memory.value) << ")\n";
  out << "  Layout      tp " << p.tp << " · pp " << p.pp << " · dp " << p.dp << " · cp " << p.cp;
  if (p.cp > 1) {
    out << " (" << to_string(cp_comm_of(p, s.training.framework));
    if (p.cp_inner() > 1) out << " " << p.cp_inner() << " × " << p.cp_outer();
    out << ")";
  }
  out << " · ep " << p.ep;
  if (p.vpp > 1) out << " · vpp " << p.vpp;
  out << ", " << to_string(p.schedule) << ", " << zero_label(p) << ", sequence parallel "
      << (p.sequence_parallel && p.tp > 1 ? "on" : "off") << ", recompute " << to_string(p.recompute.mode);
  if (p.recompute.mode == RecomputeMode::every || p.recompute.mode == RecomputeMode::one_in) out << " " << p.recompute.every;
  if (s.training.checkpoint_early_stop && recomputes_layers(p)) out << " (early stop)";
  out << "\n";
  out << "  Training    " << to_string(s.training.precision);
  if (s.training.precision == Precision::fp8) {
    out << (s.training.fp8_recipe == Fp8Recipe::current ? " (current scaling)" : " (delayed scaling)");
  }
  out << ", " << to_string(s.training.optimizer);
  if (is_adam(s.training.optimizer) && s.training.optimizer_kernel != OptimizerKernel::fused) out << " (" << to_string(s.training.optimizer_kernel) << ")";
  if (s.model.moe.enabled() && s.training.moe_dispatcher == MoeDispatcher::deepep) out << ", DeepEP dispatch";
  out << (s.training.fused_loss ? ", fused loss" : "")
      << ", FlashAttention " << (s.training.flash_attention ? "on" : "off")
      << (s.training.attention_unpad ? " (unpadded)" : "")
      << (repeats_kv_heads(s.model, s.training) ? ", K/V repeated to the query heads" : "")
      << "; batch "
      << s.training.global_batch << " seq x " << s.training.sequence_length << " tokens = "
      << format_count(e.tokens_per_step) << " tokens/step, micro-batch " << s.training.micro_batch << ", "
      << format_micro_batches(e.micro_batches) << " per replica\n\n";
}

// Parameters, FLOPs and the memory per GPU of the shown stages.
void print_sizes_and_memory(std::ostream& out, const Scenario& s, const Estimate& e) {
  const ModelSpec& m = s.model;
  out << "  Parameters  " << format_count(e.parameters_total) << " total";
  // The framework's padded vocabulary rows (docs/model.md §3) are held and counted; the catalog counts the model's.
  const std::string unpadded = format_count(total_parameters(m));
  if (unpadded != format_count(e.parameters_total)) out << " (" << unpadded << " in the model + the padded vocabulary's rows)";
  if (m.moe.enabled()) out << ", " << format_count(e.parameters_active) << " active per token";
  out << ", " << format_count(e.parameters_per_gpu) << " on the busiest GPU (before ZeRO sharding)\n";
  out << "  FLOPs       model " << sci(e.flops.model_per_step.value) << " FLOP/step ("
      << (e.flops.model_per_token >= 1e7 ? format_fixed(e.flops.model_per_token / 1e9, 2) + " GFLOP"
                                         : format_count(e.flops.model_per_token) + " FLOP")
      << "/token), hardware "
      << sci(e.flops.hardware_per_step.value) << " FLOP/step (recompute " << sci(e.flops.recompute_per_step.value)
      << " FLOP)\n\n";

  auto stages = shown_stages(e);
  std::vector<std::string> header;
  for (auto* b : stages) header.push_back("stage " + std::to_string(b->stage));
  out << "  Memory per GPU [GiB]\n";
  row(out, "", header);
  auto line = [&](const char* label, Bytes MemoryBreakdown::*field) {
    std::vector<std::string> cells;
    for (auto* b : stages) cells.push_back(gib(b->*field));
    row(out, label, cells);
  };
  {
    std::vector<std::string> cells;
    for (auto* b : stages) cells.push_back(std::to_string(b->layers));
    row(out, "layers", cells);
  }
  line("weights", &MemoryBreakdown::weights);
  line("gradients", &MemoryBreakdown::gradients);
  line("master weights", &MemoryBreakdown::master_weights);
  line("optimizer", &MemoryBreakdown::optimizer);
  line("activations", &MemoryBreakdown::activations);
  line("buffers", &MemoryBreakdown::buffers);
  line("overhead", &MemoryBreakdown::overhead);
  line("total", &MemoryBreakdown::total);
  if (e.host_per_node.value > 0) line("host (offload)", &MemoryBreakdown::host);
  out << "  capacity " << gib(e.capacity) << " GiB, usable " << gib(e.usable) << " GiB (headroom "
      << format_fixed(s.memory.headroom * 100.0, 0) << "%)\n\n";
}

// Fits or not; what does not fit, with the fixes to try.
// The fullest stage against the usable memory (capacity less headroom), which is what it must fit in.
void print_verdict(std::ostream& out, const Estimate& e) {
  const std::string use = "worst stage " + std::to_string(e.memory.stage) + " uses " + gib(e.memory.total) + " GiB of " +
                          gib(e.usable) + " GiB usable (" + format_fixed(100.0 * e.memory.total.value / e.usable.value, 1) +
                          "%)";
  if (e.feasible) {
    out << "  Verdict     FITS: " << use << "\n";
  } else {
    out << "  Verdict     " << (fits_in_memory(e) ? "CANNOT FINISH: " + use + ", but" : "DOES NOT FIT") << "\n";
    for (const auto& v : e.violations) {
      out << "    - " << violation_message(v) << "\n";
      if (!v.fixes.empty()) {
        out << "      try: ";
        for (size_t i = 0; i < v.fixes.size(); ++i) out << (i ? ", or " : "") << v.fixes[i];
        out << "\n";
      }
    }
  }
}

}  // namespace

void print_estimate_table(std::ostream& out, const Scenario& s, const Estimate& e) {
  out << s.name << "  (" << s.source << ")\n\n";
  print_setup(out, s, e);
  print_sizes_and_memory(out, s, e);
  print_verdict(out, e);
}

void print_plan_table(std::ostream& out, const Scenario& s, const Plan& p, const HardwareProfile& hw, Seconds simulated) {
  print_estimate_table(out, s, p.estimate);
  const StepTime& t = p.time;
  auto ms = [](Seconds x) { return format_fixed(x.value * 1e3, 1); };
  // Milliseconds matter for a step; below 10 ms and past hours a unit reads better than "0.000 s" or a long
  // number of seconds.
  const bool in_seconds = t.step.value >= 1e-2 && t.step.value < 1e4;
  const std::string step = in_seconds ? format_fixed(t.step.value, 3) + " s" : format_seconds(t.step.value);
  out << "\n  Step time   " << step << "  (profile: " << hw.name << ", slowest stage "
      << t.slowest_stage << ")\n";
  if (const double scale = tensor_time_scale(s.cluster, hw); scale != 1.0) {
    out << "    tensor-core kernels at the sustained clock " << format_fixed(cluster_sustained_clock_hz(s.cluster, hw) * 1e-6, 0)
        << " MHz of the profile's " << format_fixed(profile_rates_clock_hz(hw, s.cluster.gpu) * 1e-6, 0) << " MHz (x"
        << format_fixed(scale, 3) << " GEMM and attention time)\n";
  } else if (s.cluster.gpus_per_node > 1 && cluster_sustained_clock_hz(s.cluster, hw) == 0 && hw.clock_hz > 0) {
    // Burst rates on a busy node with no known sustained clock: say so, the step may be optimistic.
    out << "    tensor-core kernels at the profile's " << format_fixed(hw.clock_hz * 1e-6, 0) << " MHz: no sustained clock is"
        << " known for the " << s.cluster.gpu.name << " (a busy H100 SXM node holds 1575 of 1980 MHz);"
        << " cluster.sustained_clock sets it\n";
  }
  if (const FusedAttentionCurves a = fused_attention_curves(s.training, s.cluster.gpu, hw); a.published || !a.speed.same()) {
    const std::string whose =
        s.training.attention_kernel ? "training.attention_kernel" : std::string(to_string(s.training.framework)) + "'s kernel";
    out << "    fused attention: " << to_string(attention_kernel_of(s.training, s.cluster.gpu)) << " (" << whose << ") at ";
    if (!a.speed.same()) {
      out << "x" << format_fixed(a.speed.forward, 2);
      if (a.speed.backward != a.speed.forward) out << " forward, x" << format_fixed(a.speed.backward, 2) << " backward,";
      out << " ";
    }
    if (a.published) out << "FlashAttention-2's published " << s.cluster.gpu.generation << " curve\n";
    else out << "the profile's " << to_string(a.described) << " curve\n";
  }
  if (const FusedAttentionGrid g = fused_attention_grid(s, s.training.micro_batch, s.parallel.tp, s.parallel.cp);
      g.forward < 0.95 || g.backward < 0.95) {
    out << "    fused attention grid: " << format_fixed(g.batch_heads, 0) << " sequences x heads per GPU of "
        << format_fixed(g.seq, 0) << " tokens keep " << format_fixed(100 * g.forward, 0) << "% (forward), "
        << format_fixed(100 * g.backward, 0) << "% (backward) of the " << s.cluster.gpu.sms << " SMs busy\n";
  }
  if (simulated.value > 0) {
    out << "    simulated " << format_fixed(simulated.value, 3) << " s (event simulator, "
        << format_fixed(std::fabs(simulated / t.step - 1.0) < 5e-4 ? 0.0 : 100.0 * (simulated / t.step - 1.0), 1)
        << "% vs analytic)\n";
  }
  out << "    compute " << ms(t.compute) << " ms, recompute " << ms(t.recompute) << " ms, bubble " << ms(t.bubble)
      << " ms, optimizer " << ms(t.optimizer) << " ms";
  // The step's passes over the weights and gradients (gradient accumulation, autocast's and FP8's casts, DDP's
  // bucket copies) beside the update itself (planner/step_time_parts.h, OptimizerTime).
  if (const Seconds passes = t.optimizer - t.compute_by_kind.optimizer; passes.value > 5e-5) {
    out << " (" << ms(passes) << " ms of it passes over weights and gradients)";
  }
  out << "\n";
  out << "    GPU time by kernel [ms]: GEMM " << ms(t.compute_by_kind.gemm) << ", attention " << ms(t.compute_by_kind.attention)
      << ", memory-bound " << ms(t.compute_by_kind.memory_bound) << ", optimizer update " << ms(t.compute_by_kind.optimizer)
      << "\n";
  out << "    exposed communication [ms]: tp " << ms(t.exposed.tp) << ", cp " << ms(t.exposed.cp) << ", ep "
      << ms(t.exposed.ep) << ", pp " << ms(t.exposed.pp) << ", dp " << ms(t.exposed.dp);
  if (t.exposed.offload.value > 0) out << ", activation offload " << ms(t.exposed.offload);
  out << "\n";
  if (t.overlap_contention.value > 0) {
    out << "    compute slowed by the data-parallel traffic it hides: " << ms(t.overlap_contention) << " ms\n";
  }
  out << "  Throughput  " << format_count(t.tokens_per_second) << " tokens/s (" << (t.tokens_per_second_per_gpu < 10 ? format_count(t.tokens_per_second_per_gpu) : format_fixed(t.tokens_per_second_per_gpu, 0))
      << " tokens/s per GPU), " << format_fixed(t.tflops_per_gpu, 1) << " TFLOP/s per GPU, MFU "
      << format_fixed(100 * t.mfu, 1) << "%, HFU " << format_fixed(100 * t.hfu, 1) << "%\n";
  print_run(out, s, p);
}

}  // namespace tp
