// Report section 5: how well the fitted hardware profile describes the measurements it came from.
#include <algorithm>
#include <cmath>
#include <map>

#include "calibration_view.h"
#include "format_units.h"
#include "report_sections.h"
#include "svg.h"

namespace tp {
namespace {

std::map<std::string, int> dtype_series(const CalibrationView& v) {
  std::map<std::string, int> out;
  for (const auto& p : v.gemm) out.emplace(p.dtype, static_cast<int>(out.size()));
  return out;
}

std::string point_title(const GemmPointView& p) {
  return p.dtype + " " + p.shape + (p.held_out ? " (held out)" : "") + "\nmeasured " + svg::num(100 * p.measured, 1) +
         "% of peak, fitted " + svg::num(100 * p.fitted, 1) + "%";
}

std::vector<svg::LegendItem> dtype_legend(const std::map<std::string, int>& series) {
  std::vector<svg::LegendItem> items;
  for (const auto& [d, i] : series) items.push_back({d + " (fitted on)", svg::series(i).color, "circle"});
  items.push_back({"held out of the fit", "#fff", "diamond"});
  return items;
}

void gemm_marker(svg::Canvas& c, double x, double y, const GemmPointView& p, const char* color) {
  if (p.held_out) {
    c.diamond(x, y, 5.5, "#fff", color, point_title(p));
  } else {
    c.circle(x, y, 3.8, color, "#000", point_title(p));
  }
}

std::string gemm_parity(const CalibrationView& v) {
  const auto series = dtype_series(v);
  double hi = 0;
  for (const auto& p : v.gemm) hi = std::max({hi, 100 * p.measured, 100 * p.fitted});
  const svg::Ticks t = svg::nice_ticks(0, std::min(hi * 1.05, 110.0), 5);
  const double size = 380, left = 80, top = 20;
  const svg::Scale x{0, t.hi, left, left + size}, y{0, t.hi, top + size, top};
  svg::Canvas c(left + size + 30, top + size + 100, "Measured versus fitted GEMM efficiency");
  svg::x_axis(c, x, t, top + size, top, "fitted efficiency [% of dtype peak]");
  svg::y_axis(c, y, t, left, left + size, "measured efficiency [% of peak]");
  c.line(x(0), y(0), x(t.hi), y(t.hi), "#555", 1, "4,3");
  for (const auto& p : v.gemm) gemm_marker(c, x(100 * p.fitted), y(100 * p.measured), p, svg::series(series.at(p.dtype)).color);
  auto items = dtype_legend(series);
  items.push_back({"measured = fitted", "#555", "dash"});
  svg::legend(c, 10, top + size + 46, left + size, items);
  return c.str();
}

std::string gemm_residuals(const CalibrationView& v) {
  const auto series = dtype_series(v);
  double lo = 1e300, hi = 0, r_max = 5;
  for (const auto& p : v.gemm) {
    lo = std::min(lo, p.flops), hi = std::max(hi, p.flops);
    if (p.fitted > 0) r_max = std::max(r_max, std::fabs(100 * (p.measured / p.fitted - 1)));
  }
  const svg::Ticks xt = svg::log_ticks(lo, hi);
  const svg::Ticks yt = svg::nice_ticks(-std::min(r_max, 200.0), std::min(r_max, 200.0), 6);
  const double left = 90, top = 20, w = 520, h = 380;
  const svg::Scale x{xt.lo, xt.hi, left, left + w, true}, y{yt.lo, yt.hi, top + h, top};
  svg::Canvas c(left + w + 20, top + h + 100, "GEMM residuals");
  svg::x_axis(c, x, xt, top + h, top, "GEMM size [FLOP per call], log scale");
  svg::y_axis(c, y, yt, left, left + w, "measured / fitted − 1 [%]");
  c.line(left, y(0), left + w, y(0), "#333", 1.5);
  for (const auto& p : v.gemm) {
    if (p.fitted <= 0) continue;
    const double r = std::clamp(100 * (p.measured / p.fitted - 1), yt.lo, yt.hi);
    gemm_marker(c, x(p.flops), y(r), p, svg::series(series.at(p.dtype)).color);
  }
  svg::legend(c, 10, top + h + 46, left + w, dtype_legend(series));
  return c.str();
}

// Horizontal bars of measured medians (with the min..max range) and the profile's value as a tick.
// `cases`: optional per-case pairs (measured, profile prediction) drawn as small markers with a tooltip.
struct CaseMark {
  double measured, profile;
  std::string title;
};
struct BarRow {
  std::string label;
  double measured, lo, hi, profile;
  std::vector<CaseMark> cases = {};
};

// Each measured case as a small black dot and the profile's prediction for that case as an open
// vermillion circle, joined by a thin line (the residual), so that short-row cases sit at their own
// predicted bandwidth instead of the class's long-row value.
void case_marks(svg::Canvas& c, const svg::Scale& x, double y, const std::vector<CaseMark>& cases) {
  for (const CaseMark& m : cases) {
    c.line(x(m.measured), y, x(m.profile), y, svg::kVermillion, 0.8);
    c.circle(x(m.profile), y, 3.2, "#fff", svg::kVermillion, m.title);
    c.circle(x(m.measured), y, 1.8, "#000", "#000", m.title);
  }
}
std::string bar_chart(const std::vector<BarRow>& rows, const std::string& axis, const std::string& aria,
                      double reference, const std::string& reference_label) {
  double top_v = reference;
  for (const auto& r : rows) top_v = std::max({top_v, r.hi, r.measured, r.profile});
  const svg::Ticks t = svg::nice_ticks(0, top_v * 1.05, 6);
  const double left = 170, top = 16, row = 28, w = 360;
  const double bottom = top + row * static_cast<double>(rows.size());
  const svg::Scale x{0, t.hi, left, left + w};
  svg::Canvas c(left + w + 40, bottom + 84, aria);
  svg::x_axis(c, x, t, bottom, top, axis);
  for (size_t i = 0; i < rows.size(); ++i) {
    const BarRow& r = rows[i];
    const double y = top + row * static_cast<double>(i);
    c.text(left - 8, y + 18, r.label, "end", "label");
    c.rect(x(0), y + 6, x(r.measured) - x(0), row - 12, svg::series(2).fill,
           r.label + ": measured " + svg::tick_label(r.measured) + ", profile " + svg::tick_label(r.profile),
           "stroke=\"#333\" stroke-width=\"0.6\"");
    if (r.hi > r.lo) c.line(x(r.lo), y + row / 2, x(r.hi), y + row / 2, "#000", 1.2);
    c.line(x(r.profile), y + 2, x(r.profile), y + row - 2, svg::kVermillion, 3);
    case_marks(c, x, y + row / 2, r.cases);
  }
  std::vector<svg::LegendItem> items = {{"measured (median; line: min to max)", svg::series(2).fill, "rect"},
                                        {"fitted profile (median of the cases)", svg::kVermillion, "line"}};
  bool any_cases = false;
  for (const auto& r : rows) any_cases = any_cases || !r.cases.empty();
  if (any_cases) items.push_back({"profile at each measured case", "#fff", "circle"});
  if (reference > 0) {
    c.line(x(reference), top, x(reference), bottom, "#000", 1.5, "6,4");
    items.push_back({reference_label, "#000", "dash"});
  }
  svg::legend(c, 10, bottom + 46, left + w, items);
  return c.str();
}

// Tooltip of one measured memory-bound case: its row length and both bandwidths in TB/s.
std::vector<CaseMark> bandwidth_cases(const BandwidthView& b) {
  std::vector<CaseMark> out;
  for (const auto& p : b.cases) {
    const std::string row = p.row_length > 0 ? ", row " + svg::num(p.row_length, 0) + " elements" : "";
    out.push_back({p.measured / 1e12, p.profile / 1e12,
                   b.kernel + row + ", " + svg::num(p.bytes / 1e6, 1) + " MB: measured " + svg::num(p.measured / 1e12, 3) +
                       " TB/s, profile " + svg::num(p.profile / 1e12, 3) + " TB/s"});
  }
  return out;
}

}  // namespace


std::string calibration_section(const CalibrationView& v) {
  std::string h = "<section id=\"calibration\"><h2>5. Calibration</h2><p>Measurements <code>" + svg::escape(v.file) +
                  "</code> on " + svg::escape(v.device) + " (catalog GPU <code>" + svg::escape(v.gpu_key) +
                  "</code>), fitted as <code>trainplan calibrate fit</code> does (every 5th measurement held out).</p>";
  h += "<div class=\"row\">";
  if (!v.gemm.empty()) {
    h += "<figure>" + gemm_parity(v) + "<figcaption>GEMM efficiency: each point a measured shape; on the dashed "
         "line the fitted curve is exact.</figcaption></figure>";
    h += "<figure>" + gemm_residuals(v) + "<figcaption>Residuals of the fitted GEMM curve by size (beyond ±200 % drawn at the edge).</figcaption></figure>";
  }
  h += "</div><div class=\"row\">";
  if (!v.attention.empty()) {
    std::vector<BarRow> rows;
    for (const auto& a : v.attention) {
      rows.push_back({a.what + " (" + std::to_string(a.points) + ")", 100 * a.measured_median, 100 * a.measured_min,
                      100 * a.measured_max, 100 * a.profile});
    }
    h += "<figure>" + bar_chart(rows, "efficiency [% of the 16-bit peak]", "Attention efficiency", 0, "") +
         "<figcaption>Attention kernels, planner FLOP conventions (causal fused counts half).</figcaption></figure>";
  }
  if (!v.bandwidth.empty()) {
    std::vector<BarRow> rows;
    for (const auto& b : v.bandwidth) {
      rows.push_back({b.kernel + " (" + std::to_string(b.points) + ")", b.measured_median / 1e12, b.measured_min / 1e12,
                      b.measured_max / 1e12, b.profile / 1e12, bandwidth_cases(b)});
    }
    h += "<figure>" +
         bar_chart(rows, "achieved HBM bandwidth [TB/s]", "Memory bandwidth per kernel class", v.hbm_datasheet / 1e12,
                   "datasheet " + svg::num(v.hbm_datasheet / 1e12, 2) + " TB/s") +
         "<figcaption>Memory-bound kernels: achieved bandwidth per kernel class; circles: what the profile predicts for "
         "each measured case at its size and row length (short rows of norms and cross-entropy are slower).</figcaption></figure>";
  }
  h += "</div><table class=\"numbers\"><caption>Fit quality on held-out measurements</caption><tr><th>family</th>"
       "<th>fitted</th><th>held out</th><th>R<sup>2</sup></th><th>MAPE of time [%]</th></tr>";
  for (const auto& q : v.quality) {
    h += "<tr><td>" + svg::escape(q.family) + "</td><td>" + std::to_string(q.fitted) + "</td><td>" +
         std::to_string(q.held_out) + "</td><td>" + (std::isfinite(q.r2) ? svg::num(q.r2, 3) : "&ndash;") + "</td><td>" +
         (std::isfinite(q.mape) ? svg::num(q.mape, 1) : "&ndash;") + "</td></tr>";
  }
  h += "</table>";
  if (!v.notes.empty()) {
    h += "<ul class=\"notes\">";
    for (const auto& n : v.notes) h += "<li>" + svg::escape(n) + "</li>";
    h += "</ul>";
  }
  return h + "</section>";
}

}  // namespace tp
