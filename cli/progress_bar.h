// The progress bar long work draws on the terminal (sweep, report --grid): on stderr, and only when stderr is
// a terminal, so that files and pipes get no carriage returns.
#pragma once

#include <cstdint>
#include <functional>

namespace tp {

// A callback drawing "[=====     ]  50.0%  1.2 M points/s  ETA 3 s" (`things`: "points", "steps"), timed from
// now; empty (draws nothing) when stderr is not a terminal.
std::function<void(std::uint64_t done, std::uint64_t total)> terminal_progress(const char* things);

}  // namespace tp
