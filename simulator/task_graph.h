// The task graph of one training step: tasks, the resources they run on and the dependencies
// between them, held in a Boost.Graph adjacency list (one vertex per task, one edge per dependency).
//
// Three edge flavours:
//  - completion: `after` may start once `before` has finished;
//  - partial:    `after` may start once `fraction` of `before`'s duration has elapsed (gradient
//                buckets become ready while the backward pass that produces them runs);
//  - order:      consecutive tasks of an ordered stream (a stage's compute stream runs its tasks in
//                the schedule's order). The engine enforces these through the stream itself; they are
//                edges here so that validate() also rejects a schedule that contradicts the data flow.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <string>
#include <vector>

#include "task.h"

namespace tp::sim {

enum class ResourceKind : std::uint8_t {
  stream,  // runs one task at a time, in a fixed order (a stage's compute stream)
  link,    // a network link: one FIFO channel per communicator, active channels share the bandwidth
};

// Channels of a link: pipeline send/recv and data-parallel collectives are separate NCCL
// communicators, each running its operations in issue order.
inline constexpr int kChannelP2p = 0;
inline constexpr int kChannelDp = 1;
inline constexpr int kLinkChannels = 2;

struct Resource {
  ResourceKind kind = ResourceKind::stream;
  int stage = 0;
  std::string name;
  std::vector<int> order;  // streams: the tasks in the order they run
};

struct Placement {
  int resource = 0;
  int channel = 0;  // links only
};

struct EdgeInfo {
  double fraction = 1.0;  // < 1: partial dependency
  bool order = false;     // stream order edge
};

class TaskGraph {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeInfo>;

  int add_resource(Resource r);
  int add_task(const Task& t, Placement where);
  // `after` may start once `before` has finished.
  void add_dependency(int before, int after);
  // `after` may start once `fraction` (0..1) of `before`'s duration has elapsed.
  void add_partial_dependency(int before, int after, double fraction);
  // Appends `task` to the run order of stream `resource`.
  void append_to_stream(int resource, int task);

  // Throws std::logic_error when the dependencies and stream orders contain a cycle (the step could
  // never finish), when a stream task is missing from its stream's order, or when a task sits on a
  // resource of the wrong kind.
  void validate() const;

  std::size_t size() const { return tasks_.size(); }
  const Task& task(int i) const { return tasks_[static_cast<std::size_t>(i)]; }
  Task& task(int i) { return tasks_[static_cast<std::size_t>(i)]; }
  const std::vector<Task>& tasks() const { return tasks_; }
  Placement placement(int i) const { return placement_[static_cast<std::size_t>(i)]; }
  const std::vector<Resource>& resources() const { return resources_; }
  const Graph& graph() const { return graph_; }

 private:
  std::string cycle_member() const;

  std::vector<Task> tasks_;
  std::vector<Placement> placement_;
  std::vector<Resource> resources_;
  Graph graph_;
};

}  // namespace tp::sim
