// Clock inputs (docs/scenario-reference.md: cluster.sustained_clock, a GPU's boost_clock and
// sustained_clock; a profile's clock and power.sustained_clock): a frequency with its unit, positive.
// Each error names the file, line, column and field, and says what was expected.
#include <gtest/gtest.h>

#include <string>

#include "error_test_support.h"
#include "catalog.h"
#include "hardware_profile.h"
#include "scenario.h"

namespace tp {
namespace {

using errtest::fails_at;
using errtest::load_error;
using errtest::Yaml;

TEST(ClockErrors, ClusterClockNeedsAFrequency) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, sustained_clock: 1575 W}";
  EXPECT_TRUE(fails_at(y.str(), "1575 W", 0, "cluster.sustained_clock", {"unit 'W' is a power", "1980 MHz"}));
  y.cluster = "{preset: dgx-h100, nodes: 1, sustained_clock: 1575}";
  EXPECT_TRUE(fails_at(y.str(), "1575}", 0, "cluster.sustained_clock", {"missing unit"}));
  y.cluster = "{preset: dgx-h100, nodes: 1, sustained_clock: 0 MHz}";
  EXPECT_TRUE(fails_at(y.str(), "0 MHz", 0, "cluster.sustained_clock", {"value '0 MHz' must be positive"}));
  y.cluster = "{preset: dgx-h100, nodes: 1, sustained_clock: 1.6 GHz}";
  const auto ok = load_error(y.str());
  EXPECT_FALSE(ok.thrown) << ok.what;
}

TEST(ClockErrors, InlineGpuClocks) {
  Yaml y;
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: {preset: h100-sxm-80gb, boost_clock: fast}}";
  EXPECT_TRUE(fails_at(y.str(), "fast", 0, "cluster.gpu.boost_clock", {"no number"}));
  y.cluster = "{preset: dgx-h100, nodes: 1, gpu: {preset: h100-sxm-80gb, sustained_clock: -5 MHz}}";
  EXPECT_TRUE(fails_at(y.str(), "-5 MHz", 0, "cluster.gpu.sustained_clock", {"must be positive"}));
}

TEST(ClockErrors, ProfileClocks) {
  const GpuSpec gpu = Catalog::builtin().cluster("dgx-h100", {"test", 0, 0}, "cluster").gpu;
  try {
    (void)load_profile_text("gpu: h100-sxm-80gb\nclock: 1980 MB\n", "p.yaml", gpu);
    ADD_FAILURE() << "a clock in MB loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("p.yaml:2:8: clock: ", 0), 0u) << e.what();
  }
  try {
    (void)load_profile_text("gpu: h100-sxm-80gb\npower: {idle: 100 W, sustained_clock: 0 Hz}\n", "p.yaml", gpu);
    ADD_FAILURE() << "a zero sustained clock loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sustained_clock"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tp
