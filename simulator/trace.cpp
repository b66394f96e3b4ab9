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

nlohmann::json chrome_trace(const StepGraph& g, const Execution& x, const std::string& title) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"tid", 0}, {"args", {{"name", title}}}});
  std::set<int> tracks;
  const auto& tasks = g.graph.tasks();
  for (const Task& t : tasks) tracks.insert(track_of(t));
  for (int tid : tracks) {
    const std::string name = "stage " + std::to_string(tid / 4) + " " + track_label(static_cast<TaskClass>(tid % 4));
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", tid}, {"args", {{"name", name}}}});
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 0}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  }
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const Task& t = tasks[i];
    nlohmann::json args = {{"kind", task_code(t.kind)}, {"stage", t.stage}};
    if (t.chunk >= 0) args["chunk"] = t.chunk;
    if (t.micro_batch >= 0) args["micro_batch"] = t.micro_batch;
    if (t.bucket >= 0) args["bucket"] = t.bucket;
    if (t.layer >= 0) args["layer"] = t.layer;
    if (t.unit >= 0) args["unit"] = t.unit;
    events.push_back({{"name", task_name(t)},
                      {"cat", class_name(task_class(t.kind))},
                      {"ph", "X"},
                      {"ts", x.start[i] * 1e6},
                      {"dur", (x.end[i] - x.start[i]) * 1e6},
                      {"pid", 0},
                      {"tid", track_of(t)},
                      {"args", args}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", {{"step_seconds", x.makespan}}}};
}

void write_trace(const nlohmann::json& trace, const std::string& path) {
  // Names that are not UTF-8 are written with U+FFFD in place of their bad bytes (JSON must be UTF-8).
  const std::string text = trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  write_output_file(path, [&](std::ostream& out) { out << text << "\n"; }, "the trace file");
}

}  // namespace tp::sim
