#include "svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tp::svg {
namespace {

// Colour and hatch per series: adjacent series differ in both, so a greyscale print still tells
// them apart.
constexpr int kSeriesCount = 9;
constexpr const char* kSeriesColors[kSeriesCount] = {kBlue,   kOrange, kSkyBlue,  kGreen,   kVermillion,
                                                     kPurple, kYellow, "#666666", "#FFFFFF"};

// Hatch path of pattern i in an 8 x 8 tile ("" = solid).
constexpr const char* kHatches[kSeriesCount] = {
    "",                                  // solid
    "M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4",  // diagonal /
    "M0,4 h8",                            // horizontal
    "M-2,6 l4,4 M0,0 l8,8 M6,-2 l4,4",     // diagonal \ (backslash)
    "M4,0 v8",                            // vertical
    "M0,0 l8,8 M8,0 l-8,8",               // cross
    "M2,2 h1 v1 h-1 z M6,6 h1 v1 h-1 z",  // dots
    "M0,2 h8 M0,6 h8",                    // double horizontal
    "M0,0 l8,8 M8,0 l-8,8 M4,0 v8",       // white with a star hatch
};

}  // namespace

Series series(int i) {
  const int k = ((i % kSeriesCount) + kSeriesCount) % kSeriesCount;
  return Series{kSeriesColors[k], "url(#tp-p" + std::to_string(k) + ")"};
}

std::string pattern_defs() {
  std::string s = "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>";
  for (int i = 0; i < kSeriesCount; ++i) {
    s += "<pattern id=\"tp-p" + std::to_string(i) +
         "\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\"><rect width=\"8\" height=\"8\" fill=\"" +
         kSeriesColors[i] + "\"/>";
    if (*kHatches[i]) {
      s += std::string("<path d=\"") + kHatches[i] + "\" stroke=\"#000\" stroke-opacity=\"0.55\" stroke-width=\"1.2\"/>";
    }
    s += "</pattern>";
  }
  s += "<pattern id=\"tp-idle\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">"
       "<rect width=\"6\" height=\"6\" fill=\"#f4f4f4\"/><circle cx=\"3\" cy=\"3\" r=\"0.9\" fill=\"#999\"/></pattern>";
  s += "<pattern id=\"tp-oom\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
       "<rect width=\"8\" height=\"8\" fill=\"#d9d9d9\"/><path d=\"M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4\" "
       "stroke=\"#888\" stroke-width=\"1\"/></pattern>";
  s += "</defs></svg>";
  return s;
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string num(double v, int decimals) {
  if (!std::isfinite(v)) v = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s == "-0" || s.rfind("-0.", 0) == 0) {
    bool zero = s.find_first_not_of("-0.") == std::string::npos;
    if (zero) s.erase(0, 1);
  }
  return s;
}

std::string tick_label(double v) {
  if (!std::isfinite(v)) return "0";
  const double a = std::fabs(v);
  char buf[64];
  if (a == 0) return "0";
  if (a >= 1e9 || a < 1e-3) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  if (a >= 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    std::string s = buf, out;
    const size_t start = s[0] == '-' ? 1 : 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (i > start && (s.size() - i) % 3 == 0) out += ',';
      out += s[i];
    }
    return out;
  }
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string decade_label(double v) {
  if (!(v > 0) || !std::isfinite(v)) return "0";
  const int k = static_cast<int>(std::lround(std::log10(v)));
  if (k >= 0 && k <= 3) return tick_label(std::pow(10.0, k));
  static const char* const kSup[10] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  std::string out = k < 0 ? "10⁻" : "10";
  for (char ch : std::to_string(std::abs(k))) out += kSup[ch - '0'];
  return out;
}

Ticks nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.1);
  const double raw = (hi - lo) / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = f * mag;
    if (step >= raw) break;
  }
  Ticks t;
  t.lo = std::floor(lo / step) * step;
  t.hi = std::ceil(hi / step - 1e-9) * step;
  for (double v = t.lo; v <= t.hi + step * 1e-6; v += step) t.values.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

Ticks log_ticks(double lo, double hi) {
  lo = std::max(lo, 1e-30);
  hi = std::max(hi, lo * 10);
  Ticks t;
  const int a = static_cast<int>(std::floor(std::log10(lo)));
  const int b = static_cast<int>(std::ceil(std::log10(hi)));
  t.lo = std::pow(10.0, a);
  t.hi = std::pow(10.0, std::max(b, a + 1));
  for (int k = a; k <= std::max(b, a + 1); ++k) t.values.push_back(std::pow(10.0, k));
  return t;
}

double Scale::operator()(double v) const {
  double f;
  if (log) {
    f = (std::log10(std::max(v, 1e-300)) - std::log10(v0)) / (std::log10(v1) - std::log10(v0));
  } else {
    f = v1 == v0 ? 0.0 : (v - v0) / (v1 - v0);
  }
  if (!std::isfinite(f)) f = 0;
  return p0 + f * (p1 - p0);
}

Canvas::Canvas(double width, double height, std::string label)
    : width_(width), height_(height), label_(std::move(label)) {}

static std::string title_element(std::string_view title) {
  return title.empty() ? std::string() : "<title>" + escape(title) + "</title>";
}

void Canvas::rect(double x, double y, double w, double h, std::string_view fill, std::string_view title,
                  std::string_view extra) {
  body_ += "<rect x=\"" + num(x, 1) + "\" y=\"" + num(y, 1) + "\" width=\"" + num(std::max(w, 0.0), 2) +
           "\" height=\"" + num(std::max(h, 0.0), 1) + "\" fill=\"" + std::string(fill) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  if (title.empty()) {
    body_ += "/>";
  } else {
    body_ += ">" + title_element(title) + "</rect>";
  }
}

void Canvas::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
                  std::string_view dash) {
  body_ += "<line x1=\"" + num(x1, 1) + "\" y1=\"" + num(y1, 1) + "\" x2=\"" + num(x2, 1) + "\" y2=\"" + num(y2, 1) +
           "\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + num(width, 1) + "\"";
  if (!dash.empty()) body_ += " stroke-dasharray=\"" + std::string(dash) + "\"";
  body_ += "/>";
}

void Canvas::polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, double width,
                      std::string_view dash) {
  body_ += "<polyline fill=\"none\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + num(width, 1) + "\"";
  if (!dash.empty()) body_ += " stroke-dasharray=\"" + std::string(dash) + "\"";
  body_ += " points=\"";
  for (const auto& [x, y] : points) body_ += num(x, 1) + "," + num(y, 1) + " ";
  body_ += "\"/>";
}

void Canvas::circle(double cx, double cy, double r, std::string_view fill, std::string_view stroke,
                    std::string_view title) {
  body_ += "<circle cx=\"" + num(cx, 1) + "\" cy=\"" + num(cy, 1) + "\" r=\"" + num(r, 1) + "\" fill=\"" +
           std::string(fill) + "\" stroke=\"" + std::string(stroke) + "\"";
  body_ += title.empty() ? "/>" : ">" + title_element(title) + "</circle>";
}

void Canvas::diamond(double cx, double cy, double r, std::string_view fill, std::string_view stroke,
                     std::string_view title) {
  body_ += "<path d=\"M" + num(cx, 1) + "," + num(cy - r, 1) + " L" + num(cx + r, 1) + "," + num(cy, 1) + " L" +
           num(cx, 1) + "," + num(cy + r, 1) + " L" + num(cx - r, 1) + "," + num(cy, 1) + " Z\" fill=\"" +
           std::string(fill) + "\" stroke=\"" + std::string(stroke) + "\"";
  body_ += title.empty() ? "/>" : ">" + title_element(title) + "</path>";
}

void Canvas::text(double x, double y, std::string_view s, std::string_view anchor, std::string_view cls,
                  std::string_view extra) {
  body_ += "<text x=\"" + num(x, 1) + "\" y=\"" + num(y, 1) + "\" text-anchor=\"" + std::string(anchor) + "\"";
  if (!cls.empty()) body_ += " class=\"" + std::string(cls) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  body_ += ">" + escape(s) + "</text>";
}

std::string Canvas::str() const {
  return "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 " + num(width_, 0) + " " +
         num(height_, 0) + "\" width=\"" + num(width_, 0) + "\" height=\"" + num(height_, 0) + "\" aria-label=\"" +
         escape(label_) + "\">" + body_ + "</svg>";
}

void x_axis(Canvas& c, const Scale& x, const Ticks& t, double y, double grid_top, const std::string& title) {
  c.line(x.p0, y, x.p1, y, "#333", 1);
  for (double v : t.values) {
    const double px = x(v);
    if (px < std::min(x.p0, x.p1) - 0.5 || px > std::max(x.p0, x.p1) + 0.5) continue;
    c.line(px, grid_top, px, y, "#e3e3e3", 1);
    c.line(px, y, px, y + 4, "#333", 1);
    c.text(px, y + 16, x.log ? decade_label(v) : tick_label(v), "middle", "tick");
  }
  c.text((x.p0 + x.p1) / 2, y + 34, title, "middle", "axis-title");
}

void y_axis(Canvas& c, const Scale& y, const Ticks& t, double x, double grid_right, const std::string& title) {
  c.line(x, y.p0, x, y.p1, "#333", 1);
  size_t widest = 1;
  for (double v : t.values) {
    const double py = y(v);
    if (py < std::min(y.p0, y.p1) - 0.5 || py > std::max(y.p0, y.p1) + 0.5) continue;
    c.line(x, py, grid_right, py, "#e3e3e3", 1);
    c.line(x - 4, py, x, py, "#333", 1);
    const std::string label = y.log ? decade_label(v) : tick_label(v);
    widest = std::max(widest, label.size());
    c.text(x - 7, py + 4, label, "end", "tick");
  }
  // The title clears the widest tick label (about 6.5 px per character at the tick font size).
  const double tx = x - 18 - 6.5 * static_cast<double>(widest), mid = (y.p0 + y.p1) / 2;
  c.text(tx, mid, title, "middle", "axis-title", "transform=\"rotate(-90 " + num(tx, 1) + " " + num(mid, 1) + ")\"");
}

double legend(Canvas& c, double x, double y, double max_width, const std::vector<LegendItem>& items) {
  double cx = x, cy = y;
  const double row = 20;
  c.raw("<g class=\"legend\">");
  for (const LegendItem& it : items) {
    const double w = 22 + 7.0 * static_cast<double>(it.label.size()) + 18;
    if (cx > x && cx + w > x + max_width) {
      cx = x;
      cy += row;
    }
    if (it.marker == "circle") {
      c.circle(cx + 7, cy + 7, 5, it.fill, "#000");
    } else if (it.marker == "diamond") {
      c.diamond(cx + 7, cy + 7, 6, it.fill, "#000");
    } else if (it.marker == "line" || it.marker == "dash") {
      c.line(cx, cy + 7, cx + 16, cy + 7, it.fill, 2.5, it.marker == "dash" ? "5,3" : "");
    } else {
      c.rect(cx, cy, 16, 14, it.fill, {}, "stroke=\"#333\" stroke-width=\"0.6\"");
    }
    c.text(cx + 22, cy + 11, it.label, "start", "legend-label");
    cx += w;
  }
  c.raw("</g>");
  return cy + row - y;
}

}  // namespace tp::svg
