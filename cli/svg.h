// A tiny SVG writer for `trainplan report`: shapes with an optional hover title (<title>, shown by
// every browser as a tooltip), linear and log axes with "nice" ticks, legends, the page's palette and
// fill patterns. Charts are written as text straight into the HTML page: no script, no library, no
// network; they print in black and white because every series also has its own hatching.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tp::svg {

// Okabe & Ito (2008), "Color Universal Design": eight colours distinguishable with every common
// colour-vision deficiency. https://jfly.uni-koeln.de/color/
inline constexpr const char* kOrange = "#E69F00";
inline constexpr const char* kSkyBlue = "#56B4E9";
inline constexpr const char* kGreen = "#009E73";
inline constexpr const char* kYellow = "#F0E442";
inline constexpr const char* kBlue = "#0072B2";
inline constexpr const char* kVermillion = "#D55E00";
inline constexpr const char* kPurple = "#CC79A7";
inline constexpr const char* kBlack = "#000000";
inline constexpr const char* kGrey = "#BBBBBB";

// A series style: its colour and hatching, used as fill="url(#id)" (patterns defined once per page
// by pattern_defs()). series(i) cycles through 9 colour + hatch pairs (the 8 Okabe-Ito colours, the
// last one grey, and white with a star hatch).
struct Series {
  const char* color;
  std::string fill;  // "url(#tp-p3)"
};
Series series(int i);
// The hidden <svg> with every pattern the charts refer to (inline once at the top of <body>).
std::string pattern_defs();
// Fill of idle time in the timeline (light grey dots).
inline constexpr const char* kIdleFill = "url(#tp-idle)";

std::string escape(std::string_view text);  // &, <, >, " and '
std::string num(double v, int decimals);    // "12.35"; never inf/NaN (written as 0)
// Compact tick label: "0", "2.5", "1,200", "3e+06".
std::string tick_label(double v);
// Label of a decade on a log axis: "1", "10", "1,000", "10⁶", "10⁻³".
std::string decade_label(double v);

struct Ticks {
  double lo = 0, hi = 1;
  std::vector<double> values;
};
// Ticks at 1, 2, 2.5 or 5 x 10^k covering [lo, hi] with about `target` intervals (Heckbert 1990,
// "Nice numbers for graph labels", Graphics Gems).
Ticks nice_ticks(double lo, double hi, int target = 5);
// Decades covering [lo, hi] (lo > 0) for a log axis.
Ticks log_ticks(double lo, double hi);

// A value -> pixel map along one axis.
struct Scale {
  double v0 = 0, v1 = 1, p0 = 0, p1 = 1;
  bool log = false;
  double operator()(double v) const;
};

class Canvas {
 public:
  // `label`: the accessible name of the chart (aria-label).
  Canvas(double width, double height, std::string label);
  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view title = {},
            std::string_view extra = {});
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            std::string_view dash = {});
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, double width,
                std::string_view dash = {});
  void circle(double cx, double cy, double r, std::string_view fill, std::string_view stroke,
              std::string_view title = {});
  void diamond(double cx, double cy, double r, std::string_view fill, std::string_view stroke,
               std::string_view title = {});
  // anchor: start | middle | end; `cls` a CSS class of the page (e.g. "axis-title", "label").
  void text(double x, double y, std::string_view s, std::string_view anchor = "start", std::string_view cls = {},
            std::string_view extra = {});
  void raw(std::string_view s) { body_ += s; }
  std::string str() const;
  double width() const { return width_; }
  double height() const { return height_; }

 private:
  double width_, height_;
  std::string label_, body_;
};

// Axes: ticks, grid lines across the plot, tick labels and the axis title (which names the unit).
void x_axis(Canvas& c, const Scale& x, const Ticks& t, double y, double grid_top, const std::string& title);
void y_axis(Canvas& c, const Scale& y, const Ticks& t, double x, double grid_right, const std::string& title);

struct LegendItem {
  std::string label;
  std::string fill;    // swatch fill ("url(#tp-p0)", a colour)
  std::string marker;  // "rect" (default), "circle", "diamond", "line", "dash"
};
// A legend laid out left to right, wrapping at `max_width`; returns the height it took.
double legend(Canvas& c, double x, double y, double max_width, const std::vector<LegendItem>& items);

}  // namespace tp::svg
