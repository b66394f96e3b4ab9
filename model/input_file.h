// Reading an input file (scenario, sweep, profile, measurements) whole, with a size cap: a directory,
// a device, a pipe or a file larger than the cap is an error naming the file, found before reading.
#pragma once

#include <cstdint>
#include <string>

namespace tp {

// The bytes of the regular file `path`. Throws InputError naming `path` when it cannot be opened,
// is not a regular file, or holds more than `max_bytes` (work_limits().input_bytes when 0).
std::string read_input_file(const std::string& path, std::uint64_t max_bytes = 0);

// Whether `path` names (links followed) a file this process read with read_input_file: an output written
// there would replace the command's own input (model/output_file.cpp refuses it).
bool was_read_as_input(const std::string& path);

}  // namespace tp
