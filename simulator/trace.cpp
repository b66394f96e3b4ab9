#include "trace.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include "errors.h"
#include "output_file.h"

namespace tp::sim {
namespace {

const char* class_name(TaskClass c) {
  switch (c) {
    case TaskClass::compute: return "compute";
    case TaskClass::collective: return "collective";
    case TaskClass::p2p: return "p2p";
    case TaskClass::dp: return "dp";
  }
  return "?";
}

const char* track_label(TaskClass c) {
  switch (c) {
    case TaskClass::compute: return "compute";
    case TaskClass::collective: return "TP/CP/EP collectives";
    case TaskClass::p2p: return "link: pipeline p2p";
    case TaskClass::dp: return "link: data-parallel";
  }
  return "?";
}

int track_of(const Task& t) { return t.stage * 4 + static_cast<int>(task_class(t.kind)); }

}  // namespace

namespace {

// One event as JSON text. Names that are not UTF-8 are written with U+FFFD in place of their bad bytes
// (JSON must be UTF-8).
std::string event_text(const nlohmann::json& event) {
  return event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The metadata events: the process's title, each track's name and order.
void write_track_names(std::ostream& out, const StepGraph& g, const std::string& title) {
  out << event_text({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"tid", 0}, {"args", {{"name", title}}}});
  std::set<int> tracks;
  for (const Task& t : g.graph.tasks()) tracks.insert(track_of(t));
  for (int tid : tracks) {
    const std::string name = "stage " + std::to_string(tid / 4) + " " + track_label(static_cast<TaskClass>(tid % 4));
    out << ",\n" << event_text({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", tid}, {"args", {{"name", name}}}});
    out << ",\n" << event_text({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 0}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  }
}

nlohmann::json task_event(const Task& t, double start, double end) {
  nlohmann::json args = {{"kind", task_code(t.kind)}, {"stage", t.stage}};
  if (t.chunk >= 0) args["chunk"] = t.chunk;
  if (t.micro_batch >= 0) args["micro_batch"] = t.micro_batch;
  if (t.bucket >= 0) args["bucket"] = t.bucket;
  if (t.layer >= 0) args["layer"] = t.layer;
  if (t.unit >= 0) args["unit"] = t.unit;
  return {{"name", task_name(t)}, {"cat", class_name(task_class(t.kind))}, {"ph", "X"}, {"ts", start * 1e6},
          {"dur", (end - start) * 1e6}, {"pid", 0}, {"tid", track_of(t)}, {"args", args}};
}

}  // namespace

void write_trace(const StepGraph& g, const Execution& x, const std::string& title, const std::string& path) {
  write_output_file(path, [&](std::ostream& out) {
    out << "{\"traceEvents\": [\n";
    write_track_names(out, g, title);
    const auto& tasks = g.graph.tasks();
    for (std::size_t i = 0; i < tasks.size(); ++i) out << ",\n" << event_text(task_event(tasks[i], x.start[i], x.end[i]));
    out << "\n], \"displayTimeUnit\": \"ms\", \"otherData\": " << event_text({{"step_seconds", x.makespan}}) << "}\n";
  }, "the trace file");
}

}  // namespace tp::sim
