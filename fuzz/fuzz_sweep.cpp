// libFuzzer target: the sweep-file loader (YAML text -> SweepSpec), its point count and the fast
// axes' value parsing (planner/sweep.h). Bad input must end as an InputError or IoError; anything
// else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "errors.h"
#include "sweep.h"
#include "sweep_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // Labelled inside scenarios/examples/ so that `base: default.yaml` resolves to the example.
    const tp::SweepSpec spec = tp::load_sweep_text(text, TRAINPLAN_SOURCE_DIR "/scenarios/examples/fuzz-sweep.yaml");
    (void)tp::checked_point_count(spec);
    for (const tp::Axis& a : spec.axes) {
      if (tp::is_fast_key(a.key)) (void)tp::make_fast_axis(a);
    }
  } catch (const tp::InputError&) {
  } catch (const tp::IoError&) {
  }
  return 0;
}
