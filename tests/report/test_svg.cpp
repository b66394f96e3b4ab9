// The report's SVG writer: tick placement, value -> pixel maps, escaping, never inf/NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "svg.h"

namespace tp::svg {
namespace {

// Oracle: Heckbert's "nice numbers" (Graphics Gems, 1990) worked by hand: [0, 9.3] in ~5 steps:
// raw step 1.86 -> the next nice step 2 -> 0, 2, ..., 10.
TEST(Svg, NiceTicksFollowHeckbert) {
  const Ticks t = nice_ticks(0, 9.3, 5);
  ASSERT_EQ(t.values.size(), 6u);
  EXPECT_DOUBLE_EQ(t.values.front(), 0);
  EXPECT_DOUBLE_EQ(t.values[1], 2);
  EXPECT_DOUBLE_EQ(t.hi, 10);
  // [0, 84] in ~6 steps: raw 14 -> nice 20 -> 0..100 (hand computed).
  const Ticks g = nice_ticks(0, 84, 6);
  EXPECT_DOUBLE_EQ(g.values[1] - g.values[0], 20);
  EXPECT_DOUBLE_EQ(g.hi, 100);
  // [0, 0.031] in ~5 steps: raw 0.0062 -> 0.01 -> 0, 0.01, 0.02, 0.03, 0.04.
  const Ticks s = nice_ticks(0, 0.031, 5);
  EXPECT_NEAR(s.values[1], 0.01, 1e-15);
  EXPECT_NEAR(s.hi, 0.04, 1e-15);
}

TEST(Svg, DegenerateRangesStillGiveTicks) {
  EXPECT_GE(nice_ticks(5, 5).values.size(), 2u);
  EXPECT_GE(nice_ticks(0, std::numeric_limits<double>::infinity()).values.size(), 2u);
}

TEST(Svg, LogTicksAreDecades) {
  const Ticks t = log_ticks(3, 4000);  // decades 1 .. 10^4 cover [3, 4000]
  ASSERT_EQ(t.values.size(), 5u);
  EXPECT_DOUBLE_EQ(t.values.front(), 1);
  EXPECT_DOUBLE_EQ(t.values.back(), 1e4);
}

TEST(Svg, ScalesMapEndsAndMiddles) {
  const Scale lin{0, 10, 100, 300};
  EXPECT_DOUBLE_EQ(lin(0), 100);
  EXPECT_DOUBLE_EQ(lin(5), 200);
  const Scale down{0, 10, 400, 0};  // y axes grow upwards
  EXPECT_DOUBLE_EQ(down(10), 0);
  const Scale log{1, 100, 0, 200, true};
  EXPECT_NEAR(log(10), 100, 1e-9);  // one decade of two = half way
}

TEST(Svg, EscapesMarkupAndNeverPrintsNaN) {
  EXPECT_EQ(escape("a<b & \"c\">'"), "a&lt;b &amp; &quot;c&quot;&gt;&#39;");
  EXPECT_EQ(num(std::nan(""), 2), "0.00");
  EXPECT_EQ(num(std::numeric_limits<double>::infinity(), 1), "0.0");
  EXPECT_EQ(tick_label(1234567), "1,234,567");
  EXPECT_EQ(tick_label(2.5e9), "2.5e+09");
  EXPECT_EQ(tick_label(2500), "2,500");
  EXPECT_EQ(tick_label(-2500), "-2,500");
  EXPECT_EQ(decade_label(1e6), "10⁶");
  EXPECT_EQ(decade_label(1e-3), "10⁻³");
  EXPECT_EQ(decade_label(100), "100");
}

TEST(Svg, CanvasWritesTitlesForHover) {
  Canvas c(100, 50, "test chart");
  c.circle(10, 10, 3, "#000", "#000", "tp8 pp4 <best>");
  const std::string s = c.str();
  EXPECT_NE(s.find("<title>tp8 pp4 &lt;best&gt;</title>"), std::string::npos) << s;
  EXPECT_NE(s.find("aria-label=\"test chart\""), std::string::npos);
}

}  // namespace
}  // namespace tp::svg
