// Inputs found by the libFuzzer targets in fuzz/ (scripts/fuzz.sh), reduced by hand: each must end
// as a clear InputError (exit 1 from the binary), never a crash, an uncaught library exception or a
// hang. The oracle is the error contract of docs/scenario-reference.md and docs/calibration.md.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "errors.h"
#include "measurements.h"
#include "scenario.h"

namespace tp {
namespace {

using ::testing::HasSubstr;

// fuzz_measurements: nlohmann::json throws out_of_range (not parse_error) for a number past the
// double range; it escaped as "internal error" (exit 70) before.
TEST(FuzzRegressions, MeasurementsNumberPastTheDoubleRangeIsAnInputError) {
  try {
    (void)measurements_from_text("{\"schema\": 1.7e05743980407715}", "m.json");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("m.json: not valid JSON"));
    EXPECT_THAT(e.what(), HasSubstr("number overflow"));
  }
}

// fuzz_scenario, 2026-11-30: yaml-cpp's LoadAll (taken to find a second document) looped forever on these
// seven bytes; the document is read with Load and a second one found by its marker.
TEST(FuzzRegressions, ScenarioTextThatHungLoadAllEnds) {
  try {
    (void)load_scenario_text(", Te# u", "s.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("model: required"));  // a scalar document: no model
  }
}

}  // namespace
}  // namespace tp
