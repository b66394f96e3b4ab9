// Report section 4: a sweep as pictures. Run time vs cost of every feasible layout with the Pareto
// front and the best layouts labelled (hover a point: its layout), and a feasibility map over
// tp x pp: colour = the best step time of the cell, grey hatching = nothing fits, with the reason.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "format_units.h"
#include "report_sections.h"
#include "svg.h"

namespace tp {
namespace {

constexpr double kDay = 86400.0;

svg::Scale axis_scale(double lo, double hi, double p0, double p1, svg::Ticks& ticks) {
  // Log scale when the values span more than a factor 20 (sweeps over cluster sizes do).
  if (lo > 0 && hi / lo > 20) {
    ticks = svg::log_ticks(lo, hi);
    return svg::Scale{ticks.lo, ticks.hi, p0, p1, true};
  }
  const double pad = (hi - lo) * 0.08 + (hi == lo ? std::max(std::fabs(hi) * 0.1, 1e-9) : 0);
  ticks = svg::nice_ticks(std::max(0.0, lo - pad), hi + pad, 6);
  return svg::Scale{ticks.lo, ticks.hi, p0, p1, false};
}

std::string point_title(const SweepPoint& p, const std::string& layout) {
  return layout + "\n" + std::to_string(p.gpus) + " GPUs, step " + format_fixed(p.step, 3) + " s, MFU " +
         svg::num(100 * p.mfu, 1) + "%\nrun " + format_fixed(p.run_seconds / kDay, 2) + " days, " +
         format_fixed(p.cost, 0) + " USD, memory " + format_bytes(p.memory);
}

std::string scatter(const SweepReport& r) {
  const SweepResult& res = r.result;
  std::vector<size_t> feasible;
  for (size_t i = 0; i < res.all.size(); ++i) {
    if (res.all[i].status == PointStatus::feasible) feasible.push_back(i);
  }
  double x_lo = 1e300, x_hi = 0, y_lo = 1e300, y_hi = 0;
  for (size_t i : feasible) {
    x_lo = std::min(x_lo, res.all[i].run_seconds / kDay), x_hi = std::max(x_hi, res.all[i].run_seconds / kDay);
    y_lo = std::min(y_lo, res.all[i].cost), y_hi = std::max(y_hi, res.all[i].cost);
  }
  const double width = 1180, left = 110, right = 30, top = 20, plot_h = 420, bottom = top + plot_h;
  svg::Ticks xt, yt;
  const svg::Scale x = axis_scale(x_lo, x_hi, left, width - right, xt);
  const svg::Scale y = axis_scale(y_lo, y_hi, bottom, top, yt);
  svg::Canvas c(width, bottom + 90, "Run time versus cost of every feasible layout");
  svg::x_axis(c, x, xt, bottom, top, std::string("run wall time with failures [days]") + (x.log ? ", log scale" : ""));
  svg::y_axis(c, y, yt, left, width - right, std::string("run cost on-demand [USD]") + (y.log ? ", log" : ""));

  // At most ~3000 markers: a page that opens fast; the front and the best are always drawn.
  const size_t stride = std::max<size_t>(1, feasible.size() / 3000);
  for (size_t k = 0; k < feasible.size(); k += stride) {
    const SweepPoint& p = res.all[feasible[k]];
    c.circle(x(p.run_seconds / kDay), y(p.cost), 3.2, svg::kSkyBlue, "#1f5f86",
             point_title(p, r.all_labels[feasible[k]]));
  }
  std::vector<std::pair<double, double>> front;
  for (const SweepPoint& p : res.pareto_cost) front.emplace_back(x(p.run_seconds / kDay), y(p.cost));
  std::sort(front.begin(), front.end());
  c.polyline(front, svg::kVermillion, 2);
  for (size_t i = 0; i < res.pareto_cost.size(); ++i) {
    const SweepPoint& p = res.pareto_cost[i];
    c.diamond(x(p.run_seconds / kDay), y(p.cost), 6.5, svg::kVermillion, "#000", point_title(p, r.pareto_labels[i]));
  }
  // The best five, labelled; a label that would cover an earlier one moves up, with a leader line.
  const size_t labelled = std::min<size_t>(res.top.size(), 5);
  std::vector<std::pair<double, double>> placed;
  for (size_t i = 0; i < labelled; ++i) {
    const SweepPoint& p = res.top[i];
    const double px = x(p.run_seconds / kDay), py = y(p.cost);
    c.circle(px, py, 8, "none", "#000", point_title(p, r.top_labels[i]));
    double lx = px + 10, ly = py - 8;
    for (bool moved = true; moved;) {
      moved = false;
      for (const auto& [ox, oy] : placed) {
        if (std::fabs(ox - lx) < 26 && std::fabs(oy - ly) < 13) ly = oy - 14, moved = true;
      }
    }
    placed.emplace_back(lx, ly);
    if (ly < py - 12) c.line(px + 3, py - 3, lx, ly - 4, "#000", 0.8);
    c.text(lx + 1, ly, "#" + std::to_string(i + 1), "start", "label strong");
  }
  svg::legend(c, 20, bottom + 50, width - 40,
              {{"feasible layout" + std::string(stride > 1 ? " (1 in " + std::to_string(stride) + " drawn)" : ""),
                svg::kSkyBlue, "circle"},
               {"Pareto front: no layout both faster and cheaper", svg::kVermillion, "diamond"},
               {"#n: rank by the objective (" + r.objective + ")", "none", "circle"}});
  return c.str();
}

// Viridis (van der Walt & Smith 2015, matplotlib): perceptually uniform, colour-blind safe, and its
// lightness rises monotonically, so it reads in greyscale. Five stops, linearly interpolated.
std::string viridis(double f) {
  static const double stops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  f = std::clamp(std::isfinite(f) ? f : 0.0, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(f));
  const double t = f - i;
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(stops[i][0] + t * (stops[i + 1][0] - stops[i][0])),
                static_cast<int>(stops[i][1] + t * (stops[i + 1][1] - stops[i][1])),
                static_cast<int>(stops[i][2] + t * (stops[i + 1][2] - stops[i][2])));
  return buf;
}

struct Cell {
  const SweepPoint* best = nullptr;  // fastest feasible step
  std::string best_label;
  const SweepPoint* nearest_oom = nullptr;  // closest to fitting
  int constrained = 0;
};

// What one cell of the map says: its fill, two lines of text and the hover title.
struct CellText {
  std::string fill = "url(#tp-oom)", line1, line2, title;
  bool dark = false;
};

CellText cell_text(const Cell* cell, int tp, int pp, double lo, double hi, const SweepReport& r, double cw) {
  CellText t;
  if (cell && cell->best) {
    const double f = hi > lo ? (cell->best->step - lo) / (hi - lo) : 0.0;
    t.fill = viridis(f), t.dark = f < 0.55;
    t.line1 = format_fixed(cell->best->step, 2) + " s";
    t.line2 = std::to_string(cell->best->gpus) + " GPUs";
    t.title = "best: " + cell->best_label + ", step " + format_fixed(cell->best->step, 3) + " s";
  } else if (cell && cell->nearest_oom) {
    const SweepPoint& p = *cell->nearest_oom;
    t.line1 = "out of memory";
    t.line2 = svg::num(p.memory / kGiB, 0) + " of " + svg::num(p.capacity / kGiB, 0) + " GiB";
    t.title = "out of memory: the closest layout needs " + format_bytes(p.memory) + " of " + format_bytes(p.capacity) +
              " usable";
  } else if (cell && cell->constrained > 0) {
    t.line1 = "constraint", t.line2 = "budget / deadline";
    t.title = "every layout of this cell breaks a constraint of the sweep";
  } else if (!cell) {
    t.line1 = "not swept", t.line2 = "no such layout";
    t.title = "no layout of the sweep has tp " + std::to_string(tp) + " and pp " + std::to_string(pp);
  } else {
    const auto why = r.impossible_reasons.find({tp, pp});
    t.line1 = "impossible";
    t.title = why == r.impossible_reasons.end() ? "no valid layout" : why->second;
    t.line2 = t.title.substr(0, t.title.find(':')).substr(0, static_cast<size_t>(cw / 6.5));
  }
  return t;
}

std::map<std::pair<int, int>, Cell> collect_cells(const SweepReport& r) {
  std::map<std::pair<int, int>, Cell> cells;
  const SweepResult& res = r.result;
  for (size_t i = 0; i < res.all.size(); ++i) {
    const SweepPoint& p = res.all[i];
    Cell& cell = cells[{p.tp, p.pp}];
    if (p.status == PointStatus::feasible && (!cell.best || p.step < cell.best->step)) {
      cell.best = &p, cell.best_label = r.all_labels[i];
    }
    if (p.status == PointStatus::out_of_memory &&
        (!cell.nearest_oom || p.memory / p.capacity < cell.nearest_oom->memory / cell.nearest_oom->capacity)) {
      cell.nearest_oom = &p;
    }
    if (p.status == PointStatus::constrained) ++cell.constrained;
  }
  return cells;
}

void colour_bar(svg::Canvas& c, double x, double top, double bottom, double lo, double hi) {
  const double w = 18;
  for (int k = 0; k < 40; ++k) {
    c.rect(x, bottom - (bottom - top) * (k + 1) / 40.0, w, (bottom - top) / 40.0 + 0.5, viridis(k / 39.0));
  }
  c.text(x + w + 6, bottom, format_fixed(lo, 2) + " s", "start", "tick");
  c.text(x + w + 6, top + 10, format_fixed(hi, 2) + " s", "start", "tick");
  c.text(x, top - 8, "best step [s]", "start", "tick");
}

std::string feasibility_map(const SweepReport& r) {
  const std::map<std::pair<int, int>, Cell> cells = collect_cells(r);
  std::set<int> tps, pps;
  double lo = 1e300, hi = 0;
  for (const auto& [k, cell] : cells) {
    tps.insert(k.first), pps.insert(k.second);
    if (cell.best) lo = std::min(lo, cell.best->step), hi = std::max(hi, cell.best->step);
  }
  const double left = 110, top = 30, cw = std::min(200.0, 900.0 / std::max<size_t>(pps.size(), 1)), ch = 58;
  const double bottom = top + ch * static_cast<double>(tps.size());
  const double width = std::max(left + cw * static_cast<double>(pps.size()) + 200, 700.0);
  svg::Canvas c(width, bottom + 110, "Feasibility map: tensor parallel by pipeline parallel");
  int col = 0;
  for (int pp : pps) c.text(left + cw * (col++ + 0.5), top - 8, std::to_string(pp), "middle", "tick");
  c.text(left + cw * static_cast<double>(pps.size()) / 2, bottom + 22, "pipeline-parallel size pp [GPUs per replica]",
         "middle", "axis-title");
  c.text(30, (top + bottom) / 2, "tensor-parallel size tp [GPUs]", "middle", "axis-title",
         "transform=\"rotate(-90 30 " + svg::num((top + bottom) / 2, 1) + ")\"");
  int row = 0;
  for (int tp : tps) {
    const double cy = top + ch * row++;
    c.text(left - 8, cy + ch / 2 + 4, std::to_string(tp), "end", "tick");
    col = 0;
    for (int pp : pps) {
      const double cx = left + cw * col++;
      const auto it = cells.find({tp, pp});
      const CellText t = cell_text(it == cells.end() ? nullptr : &it->second, tp, pp, lo, hi, r, cw);
      c.rect(cx + 1, cy + 1, cw - 2, ch - 2, t.fill, t.title, "stroke=\"#fff\" stroke-width=\"1\"");
      const std::string cls = t.dark ? "cell light" : "cell";
      c.text(cx + cw / 2, cy + ch / 2 - 2, t.line1, "middle", cls);
      c.text(cx + cw / 2, cy + ch / 2 + 14, t.line2, "middle", cls + " small");
    }
  }
  if (hi > 0) colour_bar(c, left + cw * static_cast<double>(pps.size()) + 40, top, bottom, lo, hi);
  svg::legend(c, 20, bottom + 44, width - 40,
              {{"fastest feasible step of the cell (darker = faster)", viridis(0.2), "rect"},
               {"no layout fits: out of memory, constraint or impossible (reason in the cell)", "url(#tp-oom)", "rect"}});
  return c.str();
}

std::string top_table(const SweepReport& r) {
  std::string h = "<table class=\"numbers\"><caption>Best layouts by " + svg::escape(r.objective) +
                  "</caption><tr><th>#</th><th>layout</th><th>GPUs</th><th>memory [GiB]</th><th>step [s]</th>"
                  "<th>MFU [%]</th><th>run [days]</th><th>cost [USD]</th><th>energy [MWh]</th></tr>";
  for (size_t i = 0; i < r.result.top.size(); ++i) {
    const SweepPoint& p = r.result.top[i];
    h += "<tr><td>" + std::to_string(i + 1) + "</td><td class=\"layout\">" + svg::escape(r.top_labels[i]) + "</td><td>" +
         std::to_string(p.gpus) + "</td><td>" + svg::num(p.memory / kGiB, 1) + "</td><td>" + format_fixed(p.step, 3) +
         "</td><td>" + svg::num(100 * p.mfu, 1) + "</td><td>" + format_fixed(p.run_seconds / kDay, 2) + "</td><td>" +
         format_fixed(p.cost, 0) + "</td><td>" + format_fixed(p.energy_kwh / 1000, 1) + "</td></tr>";
  }
  return h + "</table>";
}

}  // namespace

std::string sweep_section(const SweepReport& r) {
  const SweepResult& res = r.result;
  std::string h = "<section id=\"sweep\"><h2>4. Sweep</h2><p>" + svg::escape(r.source) + ": " +
                  std::to_string(res.total) + " layouts, " + std::to_string(res.feasible) + " feasible, " +
                  std::to_string(res.out_of_memory) + " out of memory, " + std::to_string(res.indivisible) +
                  " impossible, " + std::to_string(res.constrained) + " rejected by constraints; objective " +
                  svg::escape(r.objective) + ".</p>";
  if (res.feasible > 0) {
    h += "<figure>" + scatter(r) +
         "<figcaption>Every feasible layout (hover a point for its layout). The Pareto front joins the layouts no "
         "other layout beats on both run time and cost.</figcaption></figure>";
  } else {
    h += "<p class=\"verdict bad\">No layout of the sweep is feasible.</p>";
  }
  h += "<figure>" + feasibility_map(r) +
       "<figcaption>Each cell: the fastest feasible layout with that tp and pp over the other axes of the sweep; "
       "hover for the layout or the reason nothing fits.</figcaption></figure>";
  if (!res.top.empty()) h += top_table(r);
  if (!res.reasons.empty()) {
    h += "<p>Rejected, by reason: ";
    for (size_t i = 0; i < res.reasons.size(); ++i) {
      h += (i ? "; " : "") + svg::escape(res.reasons[i].first) + " " + std::to_string(res.reasons[i].second);
    }
    h += ".</p>";
  }
  return h + "</section>";
}

}  // namespace tp
