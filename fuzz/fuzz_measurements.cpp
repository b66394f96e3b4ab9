// libFuzzer target: the measurements reader (JSON text from `calibrate run` -> Measurements,
// calibrate/measurements.h). Bad input must end as an InputError or IoError; anything else is a
// finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "errors.h"
#include "measurements.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)tp::measurements_from_text(text, "fuzz-measurements.json");
  } catch (const tp::InputError&) {
  } catch (const tp::IoError&) {
  }
  return 0;
}
