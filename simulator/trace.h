// Chrome trace export (the JSON Trace Event Format that Perfetto and chrome://tracing open): one
// complete ("X") event per task, timestamps in microseconds, one track per stage and resource —
// "stage s compute", "stage s TP/CP/EP collectives", "stage s link: pipeline p2p",
// "stage s link: data-parallel" — named by thread_name metadata events.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine.h"
#include "step_graph.h"

namespace tp::sim {

// Writes the step's trace to `path`, event by event (a step of a million tasks is never held whole in
// memory), atomically: a temporary file beside it, then a rename, so a reader never sees half a file.
// Throws IoError naming the path when it cannot be written (nothing is left).
void write_trace(const StepGraph& g, const Execution& x, const std::string& title, const std::string& path);

}  // namespace tp::sim
