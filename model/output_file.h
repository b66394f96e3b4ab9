// Writing an output file (a profile, measurements, a CSV, a trace, a report) so that a failure never
// leaves it half-written: the text goes to a fresh temporary file in the target's folder, renamed over the
// target once complete. A link is followed (the file it names is replaced, the link kept); a target that
// is not a regular file (/dev/null, a pipe) is written in place, as the shell's `>` would; a folder or a
// missing folder is an IoError naming the path the user gave.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace tp {

// Streams the file's content through `write`; `what` names it in messages ("the trace file").
void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& write,
                       const std::string& what = "the file");

// The same with the whole text at hand.
void write_file_atomically(const std::string& path, const std::string& text);

// Throws the IoError write_output_file would for a target it cannot write (a folder, a missing folder),
// for checks before long work.
void check_output_target(const std::string& path, const std::string& what = "the file");

}  // namespace tp
