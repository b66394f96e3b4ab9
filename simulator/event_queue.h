// The event queue of the simulator: a binary min-heap of (time, sequence, payload). Events at the
// same time come out in the order they were pushed (the sequence number breaks ties), so a run is
// deterministic. There is no global clock: run() hands each event's time to the callback.
//
// The payload is a small typed record (the callback's "type" and its arguments); run() dispatches
// it to a handler. Storage is one vector, reused across runs: after the first run no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tp::sim {

template <class Payload>
class EventQueue {
 public:
  struct Event {
    double time;
    std::uint64_t seq;
    Payload payload;
  };

  void reserve(std::size_t n) { heap_.reserve(n); }
  void clear() {
    heap_.clear();
    seq_ = 0;
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  std::uint64_t pushed() const { return seq_; }

  void push(double time, const Payload& payload) {
    // Sift up from a hole at the end.
    std::size_t i = heap_.size();
    heap_.push_back(Event{time, seq_, payload});
    const Event e = heap_[i];
    ++seq_;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Removes and returns the earliest event. The queue must not be empty.
  Event pop() {
    const Event top = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n > 0) {
      // Sift the last element down from the root's hole.
      std::size_t i = 0;
      for (;;) {
        std::size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
        if (!before(heap_[child], last)) break;
        heap_[i] = heap_[child];
        i = child;
      }
      heap_[i] = last;
    }
    return top;
  }

  // Pops events in order and calls handler(time, payload) for each until the queue is empty (the
  // handler may push more). Returns the number of events handled.
  template <class Handler>
  std::uint64_t run(Handler&& handler) {
    std::uint64_t handled = 0;
    while (!heap_.empty()) {
      const Event e = pop();
      handler(e.time, e.payload);
      ++handled;
    }
    return handled;
  }

 private:
  static bool before(const Event& a, const Event& b) { return a.time < b.time || (a.time == b.time && a.seq < b.seq); }

  std::vector<Event> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace tp::sim
