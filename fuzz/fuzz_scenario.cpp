// libFuzzer target: the scenario loader (YAML text -> checked Scenario). Bad input must end as an
// InputError or IoError (main() prints it and exits 1); anything else — a crash, a sanitizer report, a
// different exception, a timeout or runaway memory — is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "errors.h"
#include "scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // Labelled inside scenarios/examples/ so that a relative `profile:` resolves as for a real file.
    (void)tp::load_scenario_text(text, TRAINPLAN_SOURCE_DIR "/scenarios/examples/fuzz-input.yaml");
  } catch (const tp::InputError&) {
  } catch (const tp::IoError&) {
  }
  return 0;
}
