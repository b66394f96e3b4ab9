// Report section 1: per-GPU memory of every pipeline stage as stacked bars against the capacity.
#include <algorithm>
#include <array>

#include "format_units.h"
#include "report_sections.h"
#include "svg.h"

namespace tp {
namespace {

struct Part {
  const char* name;
  Bytes MemoryBreakdown::*field;
  const char* json;
};
constexpr std::array<Part, 7> kParts = {{
    {"weights", &MemoryBreakdown::weights, "weights"},
    {"gradients", &MemoryBreakdown::gradients, "gradients"},
    {"master weights", &MemoryBreakdown::master_weights, "master_weights"},
    {"optimizer states", &MemoryBreakdown::optimizer, "optimizer"},
    {"activations", &MemoryBreakdown::activations, "activations"},
    {"buffers", &MemoryBreakdown::buffers, "buffers"},
    {"overhead", &MemoryBreakdown::overhead, "overhead"},
}};

std::string memory_chart(const Estimate& e) {
  const int n = static_cast<int>(e.stages.size());
  const double width = 1180, left = 90, right = 150, top = 40;
  const double plot_h = 320, bottom = top + plot_h;
  double max_gib = e.capacity.value / kGiB;
  for (const auto& b : e.stages) max_gib = std::max(max_gib, b.total.value / kGiB);
  const svg::Ticks ticks = svg::nice_ticks(0, max_gib * 1.05, 6);
  const svg::Scale y{0, ticks.hi, bottom, top};
  svg::Canvas c(width, bottom + 110, "Memory per GPU for each pipeline stage");
  svg::y_axis(c, y, ticks, left, width - right, "memory per GPU [GiB]");

  const double slot = (width - left - right) / std::max(n, 1);
  const double bar = std::min(70.0, slot * 0.7);
  for (int i = 0; i < n; ++i) {
    const MemoryBreakdown& b = e.stages[static_cast<size_t>(i)];
    const double x = left + slot * i + (slot - bar) / 2;
    double acc = 0;
    for (size_t k = 0; k < kParts.size(); ++k) {
      const double v = (b.*kParts[k].field).value / kGiB;
      if (v <= 0) continue;
      const std::string title = "stage " + std::to_string(b.stage) + ": " + kParts[k].name + " " +
                                format_bytes((b.*kParts[k].field).value);
      c.rect(x, y(acc + v), bar, y(acc) - y(acc + v), svg::series(static_cast<int>(k)).fill, title,
             "stroke=\"#fff\" stroke-width=\"0.5\"");
      acc += v;
    }
    const bool over = b.total.value > e.usable.value;
    if (n <= 24) {
      c.text(x + bar / 2, y(acc) - 5, svg::num(acc, 1), "middle", over ? "value bad" : "value");
    }
    if (n <= 32 || i % ((n + 31) / 32) == 0) {
      c.text(x + bar / 2, bottom + 16, std::to_string(b.stage), "middle", "tick");
    }
  }
  c.text((left + width - right) / 2, bottom + 34,
         "pipeline stage [index of " + std::to_string(n) + "]", "middle", "axis-title");

  const double cap = e.capacity.value / kGiB, usable = e.usable.value / kGiB;
  c.line(left, y(cap), width - right, y(cap), svg::kBlack, 2.5);
  c.text(width - right + 6, y(cap) + 4, "capacity " + svg::num(cap, 1) + " GiB", "start", "label");
  if (usable < cap - 1e-9) {
    c.line(left, y(usable), width - right, y(usable), "#555555", 1.5, "6,4");
    c.text(width - right + 6, y(usable) + 16, "usable " + svg::num(usable, 1) + " GiB", "start", "label");
  }

  std::vector<svg::LegendItem> items;
  for (size_t k = 0; k < kParts.size(); ++k) items.push_back({kParts[k].name, svg::series(static_cast<int>(k)).fill, "rect"});
  items.push_back({"GPU capacity", svg::kBlack, "line"});
  if (usable < cap - 1e-9) items.push_back({"usable (less headroom)", "#555555", "dash"});
  svg::legend(c, left, bottom + 52, width - left - 20, items);
  return c.str();
}

std::string memory_table(const Estimate& e) {
  const MemoryBreakdown& w = e.memory;
  std::string h = "<table class=\"numbers\"><caption>Worst stage (stage " + std::to_string(w.stage) +
                  "), per GPU</caption><tr>";
  for (const Part& part : kParts) h += "<th>" + std::string(part.name) + "</th>";
  h += "<th>total</th><th>usable</th></tr><tr>";
  for (const Part& part : kParts) {
    const double v = (w.*part.field).value;
    h += "<td>" + json_number(std::string("memory.per_gpu.") + part.json, v, format_bytes(v)) + "</td>";
  }
  h += "<td>" + json_number("memory.per_gpu.total", w.total.value, format_bytes(w.total.value)) + "</td>";
  h += "<td>" + json_number("memory.usable", e.usable.value, format_bytes(e.usable.value)) + "</td></tr></table>";
  return h;
}

std::string violations_html(const Estimate& e) {
  if (e.feasible) {
    const double spare = e.usable.value - e.memory.total.value;
    return "<p class=\"verdict ok\">&#10004; Fits: the fullest stage leaves " + svg::escape(format_bytes(spare)) +
           " of the usable memory free.</p>";
  }
  const bool memory_fits = fits_in_memory(e);  // infeasible for another reason: failures outpace progress
  std::string h = "<div class=\"verdict bad\"><p><strong>&#10008; " +
                  std::string(memory_fits ? "Cannot finish." : "Does not fit.") + "</strong>";
  if (memory_fits) {
    h += " It fits in memory (the fullest stage leaves " + svg::escape(format_bytes(e.usable.value - e.memory.total.value)) +
         " of the usable memory free), but:";
  }
  h += "</p><ul>";
  for (const Violation& v : e.violations) {
    h += "<li>" + svg::escape(violation_message(v));
    if (v.kind == Violation::Kind::out_of_memory) {
      h += " &mdash; shortfall <strong>" + svg::escape(format_bytes(v.needed - v.available)) + "</strong>";
    }
    if (!v.fixes.empty()) {
      h += "<br>Fixes (each a single change, checked to fit):<ul>";
      for (const std::string& f : v.fixes) h += "<li><code>" + svg::escape(f) + "</code></li>";
      h += "</ul>";
    }
    h += "</li>";
  }
  return h + "</ul></div>";
}

}  // namespace

std::string memory_section(const Scenario& s, const Plan& p) {
  (void)s;
  std::string h = "<section id=\"memory\"><h2>1. Memory per GPU, by pipeline stage</h2>";
  h += violations_html(p.estimate);
  h += "<figure>" + memory_chart(p.estimate) +
       "<figcaption>Stacked bars: what one GPU of each stage holds at its peak (GiB = 2<sup>30</sup> bytes). "
       "Hover a segment for its exact size.</figcaption></figure>";
  h += memory_table(p.estimate);
  return h + "</section>";
}

}  // namespace tp
