// Executes a task graph with the event queue. A task starts when
//   - all its dependencies have finished (partial ones: the given fraction of the producer has run),
//   - and its resource lets it: a stream runs one task at a time in its fixed order (the task must be
//     next); a link runs one task per channel at a time in the order they became ready (FIFO per
//     communicator), and the channels active at once share the link's bandwidth equally
//     (processor sharing: with n active, each progresses at 1/n of its full-bandwidth rate).
// With LinkSharing::fifo every link has a single channel: one transfer at a time, FIFO.
//
// The engine keeps its state between runs, so simulating many steps (jitter) allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "event_queue.h"
#include "task_graph.h"

namespace tp::sim {

enum class LinkSharing : std::uint8_t { fair, fifo };

// The graph in flat arrays (CSR adjacency), as the engine walks it.
struct CompiledGraph {
  std::size_t tasks = 0;
  std::vector<double> duration;  // base durations, seconds
  std::vector<std::int32_t> resource;
  std::vector<std::uint8_t> channel;
  std::vector<std::uint32_t> deps;  // dependencies (completion + partial) per task
  std::vector<std::uint32_t> succ_begin, succ;  // completion edges, by producer
  std::vector<std::uint32_t> partial_begin, partial_to;  // partial edges, by producer
  std::vector<double> partial_fraction;
  std::vector<ResourceKind> resource_kind;
  std::vector<std::uint32_t> stream_begin, stream_tasks;  // per resource: its run order (streams)
};

CompiledGraph compile(const TaskGraph& g, LinkSharing sharing);

struct Execution {
  std::vector<double> start, end;
  std::vector<std::int32_t> cause;  // the task whose completion (or progress) let it start; -1: none
  double makespan = 0;
  std::uint64_t events = 0;
  std::size_t unfinished = 0;  // tasks that never ran (0 unless the graph is inconsistent)
};

class Engine {
 public:
  explicit Engine(const CompiledGraph& g);
  // Runs the step with per-task durations in seconds (durations.size() == tasks).
  const Execution& run(const std::vector<double>& durations);
  const Execution& result() const { return x_; }

 private:
  // The typed callbacks: task done (index = task), partial release (index = partial edge), link
  // check (index = link resource; version = the link's sharing version it was planned for).
  enum Kind : std::uint32_t { kDone = 0, kRelease = 1, kLinkCheck = 2 };
  struct Payload {
    std::uint32_t kind_index;  // kind in the top 2 bits, index below
    std::uint32_t version;
  };
  static Payload payload(Kind k, std::uint32_t index, std::uint32_t version = 0) {
    return Payload{(static_cast<std::uint32_t>(k) << 30) | index, version};
  }
  struct Channel {
    std::int32_t active = -1;
    double remaining = 0;  // seconds at the link's full bandwidth, as of Link::last
    std::vector<std::uint32_t> queue;
    std::size_t head = 0;
  };
  struct Link {
    Channel channels[kLinkChannels];
    int active = 0;
    double last = 0;
    std::uint32_t version = 0;
  };

  void ready(std::uint32_t t, double now, std::int32_t cause);
  void try_stream(std::int32_t r, double now, std::int32_t cause);
  void begin(std::uint32_t t, double now, std::int32_t cause);
  void done(std::uint32_t t, double now);
  void link_enqueue(std::int32_t r, std::uint32_t t, double now, std::int32_t cause);
  void link_advance(Link& l, double now);
  void link_schedule(std::int32_t r, double now);
  void link_check(std::int32_t r, std::uint32_t version, double now);

  // What the hot loop reads per task, in one place (one cache line fetch instead of several).
  struct TaskInfo {
    std::uint32_t succ_begin, succ_end, partial_begin, partial_end;
    std::int32_t resource;
    std::uint8_t channel, stream;
  };

  const CompiledGraph& g_;
  std::vector<TaskInfo> info_;
  const double* dur_ = nullptr;
  EventQueue<Payload> q_;
  Execution x_;
  std::vector<std::uint32_t> deps_;
  std::vector<std::uint32_t> stream_pos_;
  std::vector<std::uint8_t> stream_busy_;
  std::vector<Link> links_;  // indexed by resource (unused for streams)
  std::vector<std::uint32_t> partial_from_;
  std::vector<std::uint32_t> finished_;  // scratch for link checks
};

}  // namespace tp::sim
