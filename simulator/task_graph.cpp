#include "task_graph.h"

#include <boost/graph/topological_sort.hpp>
#include <iterator>
#include <stdexcept>

namespace tp::sim {

int TaskGraph::add_resource(Resource r) {
  resources_.push_back(std::move(r));
  return static_cast<int>(resources_.size()) - 1;
}

int TaskGraph::add_task(const Task& t, Placement where) {
  tasks_.push_back(t);
  placement_.push_back(where);
  return static_cast<int>(boost::add_vertex(graph_));
}

void TaskGraph::add_dependency(int before, int after) {
  boost::add_edge(static_cast<std::size_t>(before), static_cast<std::size_t>(after), EdgeInfo{1.0, false}, graph_);
}

void TaskGraph::add_partial_dependency(int before, int after, double fraction) {
  if (fraction >= 1.0) {
    add_dependency(before, after);
    return;
  }
  boost::add_edge(static_cast<std::size_t>(before), static_cast<std::size_t>(after),
                  EdgeInfo{fraction < 0.0 ? 0.0 : fraction, false}, graph_);
}

void TaskGraph::append_to_stream(int resource, int task) {
  auto& order = resources_[static_cast<std::size_t>(resource)].order;
  if (!order.empty()) {
    boost::add_edge(static_cast<std::size_t>(order.back()), static_cast<std::size_t>(task), EdgeInfo{1.0, true}, graph_);
  }
  order.push_back(task);
}

std::string TaskGraph::cycle_member() const {
  // Kahn's algorithm: what never becomes free of predecessors lies on (or behind) a cycle.
  std::vector<int> indegree(tasks_.size(), 0);
  for (auto [e, end] = boost::edges(graph_); e != end; ++e) ++indegree[boost::target(*e, graph_)];
  std::vector<std::size_t> free;
  for (std::size_t i = 0; i < indegree.size(); ++i) {
    if (indegree[i] == 0) free.push_back(i);
  }
  while (!free.empty()) {
    const std::size_t v = free.back();
    free.pop_back();
    for (auto [e, end] = boost::out_edges(v, graph_); e != end; ++e) {
      if (--indegree[boost::target(*e, graph_)] == 0) free.push_back(boost::target(*e, graph_));
    }
  }
  for (std::size_t i = 0; i < indegree.size(); ++i) {
    if (indegree[i] > 0) return task_name(tasks_[i]);
  }
  return "?";
}

void TaskGraph::validate() const {
  std::vector<int> in_stream(tasks_.size(), 0);
  for (const Resource& r : resources_) {
    for (int t : r.order) ++in_stream[static_cast<std::size_t>(t)];
  }
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    const Placement& p = placement_[i];
    if (p.resource < 0 || p.resource >= static_cast<int>(resources_.size())) {
      throw std::logic_error("task " + task_name(tasks_[i]) + " has no resource");
    }
    const Resource& r = resources_[static_cast<std::size_t>(p.resource)];
    const bool stream = r.kind == ResourceKind::stream;
    if (stream && in_stream[i] != 1) {
      throw std::logic_error("task " + task_name(tasks_[i]) + " appears " + std::to_string(in_stream[i]) +
                             " times in the order of " + r.name);
    }
    if (!stream && (in_stream[i] != 0 || p.channel < 0 || p.channel >= kLinkChannels)) {
      throw std::logic_error("task " + task_name(tasks_[i]) + " is badly placed on link " + r.name);
    }
  }
  std::vector<std::size_t> order;
  order.reserve(tasks_.size());
  try {
    boost::topological_sort(graph_, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    throw std::logic_error("the task graph of the step has a cycle through " + cycle_member() +
                           ": the schedule contradicts the data flow");
  }
}

}  // namespace tp::sim
