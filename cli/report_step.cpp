// Report section 2: where one optimizer step's time goes (a waterfall of the StepTime parts, which
// add up to time.step_seconds: docs/model.md, "Step time"), with MFU, HFU and throughput.
#include <cmath>
#include <string>
#include <vector>

#include "format_units.h"
#include "report_sections.h"
#include "svg.h"

namespace tp {
namespace {

struct StepPart {
  std::string name;
  std::string json;  // path in evaluate --format json
  double seconds;
};

std::vector<StepPart> step_parts(const StepTime& t) {
  return {{"compute (forward + backward)", "time.compute", t.compute.value},
          {"recompute", "time.recompute", t.recompute.value},
          {"exposed TP communication", "time.exposed_comm.tp", t.exposed.tp.value},
          {"exposed CP communication", "time.exposed_comm.cp", t.exposed.cp.value},
          {"exposed EP communication", "time.exposed_comm.ep", t.exposed.ep.value},
          {"pipeline bubble", "time.bubble", t.bubble.value},
          {"exposed PP communication", "time.exposed_comm.pp", t.exposed.pp.value},
          {"exposed DP communication", "time.exposed_comm.dp", t.exposed.dp.value},
          {"compute slowed by the DP traffic it hides", "time.overlap_contention", t.overlap_contention.value},
          {"activation offload copies", "time.exposed_comm.offload", t.exposed.offload.value},
          {"optimizer step", "time.optimizer", t.optimizer.value}};
}

// Seconds or milliseconds, whichever reads better for the step.
struct TimeUnit {
  double scale;
  const char* name;
};
TimeUnit time_unit(double step) { return step < 1.0 ? TimeUnit{1e3, "ms"} : TimeUnit{1.0, "s"}; }

std::string waterfall(const StepTime& t) {
  const std::vector<StepPart> parts = step_parts(t);
  const TimeUnit u = time_unit(t.step.value);
  const double width = 1180, left = 250, right = 170, top = 20, row = 30;
  const double plot_bottom = top + row * static_cast<double>(parts.size() + 1);
  const svg::Ticks ticks = svg::nice_ticks(0, t.step.value * u.scale, 8);
  const svg::Scale x{0, ticks.hi, left, width - right};
  svg::Canvas c(width, plot_bottom + 80, "Step time waterfall");
  svg::x_axis(c, x, ticks, plot_bottom, top, std::string("time within one optimizer step [") + u.name + "]");

  double acc = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const StepPart& p = parts[i];
    const double y = top + row * static_cast<double>(i) + 5;
    const double v = p.seconds * u.scale;
    const bool zero = p.seconds <= 0;
    c.text(left - 8, y + 15, p.name, "end", zero ? "label muted" : "label");
    if (!zero) {
      const double x0 = x(acc), x1 = x(acc + v);
      c.rect(x0, y, std::max(x1 - x0, 1.0), row - 10, svg::series(static_cast<int>(i)).fill,
             p.name + ": " + format_fixed(v, 3) + " " + u.name, "stroke=\"#333\" stroke-width=\"0.6\"");
      const double pct = 100.0 * p.seconds / t.step.value;
      c.text(x1 + 6, y + 15, format_fixed(v, 3) + " " + u.name + " (" + svg::num(pct, 1) + "%)", "start", "value");
    } else {
      c.text(x(acc) + 6, y + 15, std::string("0 ") + u.name, "start", "value muted");  // numbers carry units
    }
    acc += v;
  }
  const double y = top + row * static_cast<double>(parts.size()) + 5;
  c.text(left - 8, y + 15, "step", "end", "label strong");
  c.rect(x(0), y, x(t.step.value * u.scale) - x(0), row - 10, "#333", "step: " + format_fixed(t.step.value * u.scale, 3) + " " + u.name);
  c.text(x(t.step.value * u.scale) + 6, y + 15, format_fixed(t.step.value * u.scale, 3) + " " + u.name, "start", "value strong");

  std::vector<svg::LegendItem> items;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].seconds > 0) items.push_back({parts[i].name, svg::series(static_cast<int>(i)).fill, "rect"});
  }
  items.push_back({"whole step", "#333", "rect"});
  svg::legend(c, 20, plot_bottom + 48, width - 40, items);
  return c.str();
}

std::string tile(const std::string& label, const std::string& value_html, const std::string& note) {
  return "<div class=\"tile\"><div class=\"tile-label\">" + label + "</div><div class=\"tile-value\">" + value_html +
         "</div><div class=\"tile-note\">" + note + "</div></div>";
}

// The compute, recompute and optimizer step by kind of kernel (StepTime::compute_by_kind), as a share of
// their sum: the GPU time a profiler would group the same way.
std::string kernel_kind_tiles(const StepTime& t, TimeUnit u) {
  const ComputeByKind& k = t.compute_by_kind;
  const double sum = (k.gemm + k.attention + k.memory_bound + k.optimizer).value;
  const struct {
    const char* label;
    const char* json;
    Seconds value;
  } kinds[] = {{"GEMM", "time.compute_by_kind.gemm", k.gemm},
               {"attention", "time.compute_by_kind.attention", k.attention},
               {"memory-bound", "time.compute_by_kind.memory_bound", k.memory_bound},
               {"optimizer update", "time.compute_by_kind.optimizer", k.optimizer}};
  std::string h = "<h3>GPU time by kernel</h3><div class=\"tiles\">";
  for (const auto& kind : kinds) {
    const std::string share = sum > 0 ? svg::num(100 * kind.value.value / sum, 1) + " % of compute, recompute and optimizer" : "";
    h += tile(kind.label, json_number(kind.json, kind.value.value, format_fixed(kind.value.value * u.scale, 3) + " " + u.name), share);
  }
  return h + "</div>";
}

}  // namespace

std::string step_section(const Scenario& s, const Plan& p) {
  const StepTime& t = p.time;
  const TimeUnit u = time_unit(t.step.value);
  std::string h = "<section id=\"step\"><h2>2. Step time</h2><div class=\"tiles\">";
  h += tile("step time", json_number("time.step_seconds", t.step.value, format_fixed(t.step.value * u.scale, 3) + " " + u.name),
            "one optimizer step, " + format_micro_batches(p.estimate.micro_batches) + " per replica");
  h += tile("MFU", json_number("time.mfu", t.mfu, svg::num(100 * t.mfu, 1) + " %"),
            "model FLOPs / peak " + std::string(to_string(s.training.precision)));
  h += tile("HFU", json_number("time.hfu", t.hfu, svg::num(100 * t.hfu, 1) + " %"), "with recompute FLOPs");
  h += tile("throughput",
            json_number("throughput.tokens_per_second", t.tokens_per_second, format_count(t.tokens_per_second) + " tokens/s"),
            format_fixed(t.tokens_per_second_per_gpu, 0) + " tokens/s per GPU");
  h += tile("per GPU",
            json_number("throughput.tflops_per_gpu", t.tflops_per_gpu, svg::num(t.tflops_per_gpu, 1) + " TFLOP/s"),
            "model FLOPs achieved");
  h += "</div><figure>" + waterfall(t) +
       "<figcaption>Waterfall: each part of the step starts where the previous one ended; they add up to the "
       "step time. Slowest stage: " +
       std::to_string(t.slowest_stage) + ".</figcaption></figure>";
  h += kernel_kind_tiles(t, u) + "</section>";
  return h;
}

std::string json_number(const std::string& json_path, double value, const std::string& text) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", std::isfinite(value) ? value : 0.0);
  return "<span class=\"num\" data-json=\"" + svg::escape(json_path) + "\" data-value=\"" + buf + "\">" +
         svg::escape(text) + "</span>";
}

}  // namespace tp
