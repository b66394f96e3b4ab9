// Report section 3: one simulated training step (simulator/, the same task graph and engine as
// `trainplan simulate`) as a timeline: a lane per pipeline stage for its compute stream and a thin
// lane for its network link, tasks coloured and hatched by kind, micro-batch numbers on the tasks
// wide enough to hold them, idle time dotted so the bubbles show. Beyond 16 stages the first 8 and
// the last 8 are drawn.
#include <algorithm>
#include <string>
#include <vector>

#include "engine.h"
#include "errors.h"
#include "format_units.h"
#include "report_sections.h"
#include "simulate.h"
#include "step_graph.h"
#include "step_inputs.h"
#include "svg.h"
#include "task.h"

namespace tp {
namespace {

// Series index (colour + hatch) of a task kind, and its legend entry.
int kind_series(sim::TaskKind k) {
  using sim::TaskKind;
  switch (k) {
    case TaskKind::forward: return 0;
    case TaskKind::backward:
    case TaskKind::backward_input: return 1;
    case TaskKind::send_forward:
    case TaskKind::send_backward:
    case TaskKind::step_end_sync: return 2;
    case TaskKind::backward_weight: return 3;
    case TaskKind::dp_reduce:
    case TaskKind::dp_gather:
    case TaskKind::zero3_gather_forward:
    case TaskKind::zero3_gather_backward: return 4;
    case TaskKind::collective_forward:
    case TaskKind::collective_backward:
    case TaskKind::sp_grad_sync: return 5;
    case TaskKind::recompute: return 6;
    case TaskKind::overlap_slowdown:
    case TaskKind::optimizer: return 7;
  }
  return 7;
}

const char* kKindNames[8] = {"F forward",          "B backward",          "PP send / tied-embedding sync (link)",
                             "W weight gradient",  "DP reduce / gather (link)", "TP/CP/EP collectives",
                             "R recompute",        "optimizer, overlap slowdown"};

bool on_link(sim::TaskKind k) {
  const sim::TaskClass c = sim::task_class(k);
  return c == sim::TaskClass::p2p || c == sim::TaskClass::dp;
}

std::vector<int> shown_stages(int n) {
  std::vector<int> out;
  for (int s = 0; s < n; ++s) {
    if (n <= 16 || s < 8 || s >= n - 8) out.push_back(s);
  }
  return out;
}

// A time window of the step, drawn as one chart.
struct Window {
  double t0 = 0, t1 = 0;
  std::string label;  // aria-label
};

// One bar to draw: a task, or a run of tasks of the same kind too thin to draw apart.
struct Bar {
  double x0, x1;
  int series;
  bool link;
  int micro_batch;  // -1 for a merged run
  double t0;        // start, seconds
  int chunk;        // virtual chunk (interleaved schedules); -1 when not per chunk
  std::string title;
};

// The bars of one stage in the window: tasks closer than half a pixel to the previous one of the
// same kind and lane are merged into one bar, so thousands of DP buckets show as the span they cover.
std::vector<Bar> stage_bars(const sim::StepGraph& g, const sim::Execution& x, const std::vector<size_t>& order,
                            const svg::Scale& xs, const Window& w, double scale, const char* unit) {
  std::vector<Bar> bars;
  std::vector<int> runs;  // tasks merged into bars[i]
  int last[2][8];
  for (auto& lane : last) std::fill(lane, lane + 8, -1);
  const auto& tasks = g.graph.tasks();
  for (size_t i : order) {
    const sim::Task& t = tasks[i];
    const double a = std::max(x.start[i], w.t0), b = std::min(x.end[i], w.t1);
    if (b <= a) continue;
    const double x0 = xs(a * scale), x1 = xs(b * scale);
    const int series = kind_series(t.kind);
    const bool link = on_link(t.kind);
    int& prev = last[link ? 1 : 0][series];
    const auto p = static_cast<size_t>(prev);
    if (prev >= 0 && x0 - bars[p].x1 < 0.5 && x1 - x0 < 2 && (runs[p] > 1 || bars[p].x1 - bars[p].x0 < 2)) {
      Bar& m = bars[p];
      m.x1 = std::max(m.x1, x1);
      m.micro_batch = -1;
      ++runs[p];
      m.title = std::to_string(runs[p]) + " tasks (" + kKindNames[series] + "): " + format_fixed(m.t0 * scale, 3) + "–" +
                format_fixed(b * scale, 3) + " " + unit;
      continue;
    }
    prev = static_cast<int>(bars.size());
    runs.push_back(1);
    bars.push_back({x0, x1, series, link, t.micro_batch, x.start[i], t.chunk,
                    sim::task_name(t) + ": " + format_fixed(x.start[i] * scale, 3) + "–" + format_fixed(x.end[i] * scale, 3) +
                        " " + unit});
  }
  return bars;
}

std::string draw_timeline(const sim::StepGraph& g, const sim::Execution& x, const Window& w) {
  const std::vector<int> stages = shown_stages(g.stages);
  const bool ms = x.makespan < 1.0;
  const double scale = ms ? 1e3 : 1.0;
  const char* unit = ms ? "ms" : "s";
  const double width = 1180, left = 100, right = 20, top = 14;
  const double lane_h = 24, link_h = 11, gap = 8;
  const bool skipped = g.stages > 16;
  const double rows_h = static_cast<double>(stages.size()) * (lane_h + link_h + gap) + (skipped ? 24 : 0);
  const double axis_y = top + rows_h;
  svg::Ticks ticks = svg::nice_ticks(w.t0 * scale, w.t1 * scale, 10);
  ticks.lo = w.t0 * scale, ticks.hi = w.t1 * scale;  // the window exactly; ticks outside are not drawn
  const svg::Scale xs{ticks.lo, ticks.hi, left, width - right};
  svg::Canvas c(width, axis_y + 100, w.label);

  // Tasks of each stage, in start order.
  std::vector<std::vector<size_t>> by_stage(static_cast<size_t>(g.stages));
  for (size_t i = 0; i < g.graph.tasks().size(); ++i) by_stage[static_cast<size_t>(g.graph.tasks()[i].stage)].push_back(i);
  double y = top;
  for (size_t k = 0; k < stages.size(); ++k) {
    const int s = stages[k];
    if (skipped && k > 0 && stages[k - 1] != s - 1) {
      c.text(left + 6, y + 15, "… stages " + std::to_string(stages[k - 1] + 1) + "–" + std::to_string(s - 1) +
                                   " not drawn (" + std::to_string(s - stages[k - 1] - 1) + " stages, same pattern) …",
             "start", "label muted");
      y += 24;
    }
    c.rect(left, y, width - right - left, lane_h, svg::kIdleFill);
    c.rect(left, y + lane_h + 1, width - right - left, link_h, svg::kIdleFill);
    c.text(left - 8, y + 16, "stage " + std::to_string(s), "end", "label");
    c.text(left - 8, y + lane_h + 10, "link", "end", "tick");
    std::vector<size_t>& order = by_stage[static_cast<size_t>(s)];
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x.start[a] < x.start[b]; });
    for (const Bar& b : stage_bars(g, x, order, xs, w, scale, unit)) {
      const double ty = b.link ? y + lane_h + 1 : y, th = b.link ? link_h : lane_h;
      std::string extra = b.x1 - b.x0 > 3 ? "stroke=\"#fff\" stroke-width=\"0.4\"" : "";
      if (b.chunk > 0) extra += " opacity=\"0.6\"";  // later virtual chunks lighter
      c.rect(b.x0, ty, std::max(b.x1 - b.x0, 0.6), th, svg::series(b.series).fill, b.title, extra);
      const std::string mb = std::to_string(b.micro_batch);
      const bool collective = b.series == 5;  // labelled on its F or B already
      if (!b.link && !collective && b.micro_batch >= 0 && b.x1 - b.x0 >= 6.5 * static_cast<double>(mb.size()) + 3) {
        c.text((b.x0 + b.x1) / 2, ty + 16, mb, "middle", "mb");
      }
    }
    y += lane_h + link_h + gap;
  }
  svg::x_axis(c, xs, ticks, axis_y, top, std::string("time since the step began [") + unit + "]");
  std::vector<svg::LegendItem> items;
  for (int k = 0; k < 8; ++k) items.push_back({kKindNames[k], svg::series(k).fill, "rect"});
  items.push_back({"idle (bubble, waiting)", svg::kIdleFill, "rect"});
  svg::legend(c, 20, axis_y + 48, width - 40, items);
  return c.str();
}

}  // namespace

std::string timeline_section(const Scenario& s, const Plan& p) {
  const sim::StepInputs in = sim::step_inputs(s, p);
  try {
    sim::check_task_count(in);  // --max-tasks, as simulate: a step of 429 M tasks exhausted the memory
  } catch (const InputError& e) {
    // The rest of the page stands without the timeline: say why it is missing and how to have it.
    return "<section id=\"timeline\"><h2>3. One simulated step</h2><p class=\"verdict bad\">Not simulated: " +
           svg::escape(e.message()) + "</p></section>";
  }
  const sim::StepGraph g = sim::build_step_graph(in);
  g.graph.validate();
  const sim::CompiledGraph cg = sim::compile(g.graph, sim::LinkSharing::fair);
  sim::Engine engine(cg);
  const sim::Execution& x = engine.run(cg.duration);
  const double makespan = x.makespan;
  const double diff = p.time.step.value > 0 ? makespan / p.time.step.value - 1.0 : 0.0;
  std::string h = "<section id=\"timeline\"><h2>3. One simulated step</h2>";
  h += "<p>" + std::string(to_string(s.parallel.schedule)) + " schedule, " + std::to_string(g.stages) + (g.stages == 1 ? " stage" : " stages") +
       (g.chunks > 1 ? " × " + std::to_string(g.chunks) + " virtual chunks" : "") + ", " +
       format_micro_batches(g.micro_batches) + " per replica (numbers on the tasks), " +
       std::to_string(cg.tasks) + " tasks. Simulated step <strong>" + format_fixed(makespan, 4) +
       " s</strong>; analytic model " + format_fixed(p.time.step.value, 4) + " s (" + (diff >= 0 ? "+" : "") +
       svg::num(100 * diff, 1) + "%).</p>";
  h += "<figure>" + draw_timeline(g, x, {0, makespan, "Timeline of one simulated training step"}) +
       "<figcaption>The whole step. Each stage: its compute stream (upper lane) and its network link (lower lane); "
       "with virtual chunks, the later chunks are drawn lighter. "
       "Dotted background = idle: pipeline fill and drain (the bubble) or waiting on communication. Hover a task "
       "for its name and times.</figcaption></figure>";
  // Many micro-batches make the whole-step view dense: zoom on the fill and on the drain, where the
  // bubbles are (about 3 pipeline depths of micro-batches each).
  const double window = makespan * std::min(0.5, (3.0 * g.stages + 4.0) / std::max(g.micro_batches, 1));
  if (window < makespan * 0.3) {
    h += "<figure>" + draw_timeline(g, x, {0, window, "Timeline zoomed on the pipeline fill"}) +
         "<figcaption>Zoom on the start of the step: the pipeline fills (forward passes only, later stages "
         "wait).</figcaption></figure>";
    h += "<figure>" + draw_timeline(g, x, {makespan - window, makespan, "Timeline zoomed on the pipeline drain"}) +
         "<figcaption>Zoom on the end of the step: the pipeline drains, then gradient reduce, optimizer and "
         "parameter gather.</figcaption></figure>";
  }
  h += "</section>";
  return h;
}

}  // namespace tp
