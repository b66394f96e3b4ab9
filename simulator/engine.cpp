#include "engine.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "errors.h"

namespace tp::sim {
namespace {

// No step of a training job lasts a billion years; past this a time is a broken input.
constexpr double kLatestTime = 3.2e16;  // seconds

[[noreturn]] void refuse_time(const char* what, std::size_t task, double seconds) {
  const bool finite = seconds >= 0.0 && seconds <= 1e300;
  throw InputError({"simulator", 0, 0}, "",
                   std::string(what) + " " + std::to_string(task) + " is " + shown(seconds) + " s, " +
                       (finite ? "past a billion years: the scenario's step is too long to simulate (its sizes?)"
                               : "not a finite non-negative time: a duration is infinite, negative or not a number"));
}

}  // namespace

CompiledGraph compile(const TaskGraph& g, LinkSharing sharing) {
  CompiledGraph c;
  const std::size_t n = g.size();
  c.tasks = n;
  c.duration.resize(n);
  c.resource.resize(n);
  c.channel.resize(n);
  c.deps.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const int ti = static_cast<int>(i);
    c.duration[i] = g.task(ti).duration;
    c.resource[i] = g.placement(ti).resource;
    c.channel[i] = sharing == LinkSharing::fifo ? 0 : static_cast<std::uint8_t>(g.placement(ti).channel);
  }
  // Count, then fill, the two CSR lists.
  std::vector<std::uint32_t> nsucc(n, 0), npartial(n, 0);
  const auto& graph = g.graph();
  for (auto [e, end] = boost::edges(graph); e != end; ++e) {
    const EdgeInfo& info = graph[*e];
    if (info.order) continue;
    const std::size_t u = boost::source(*e, graph), v = boost::target(*e, graph);
    ++c.deps[v];
    if (info.fraction < 1.0) {
      ++npartial[u];
    } else {
      ++nsucc[u];
    }
  }
  c.succ_begin.assign(n + 1, 0);
  c.partial_begin.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    c.succ_begin[i + 1] = c.succ_begin[i] + nsucc[i];
    c.partial_begin[i + 1] = c.partial_begin[i] + npartial[i];
  }
  c.succ.resize(c.succ_begin[n]);
  c.partial_to.resize(c.partial_begin[n]);
  c.partial_fraction.resize(c.partial_begin[n]);
  std::vector<std::uint32_t> fill_s(c.succ_begin.begin(), c.succ_begin.end() - 1);
  std::vector<std::uint32_t> fill_p(c.partial_begin.begin(), c.partial_begin.end() - 1);
  for (auto [e, end] = boost::edges(graph); e != end; ++e) {
    const EdgeInfo& info = graph[*e];
    if (info.order) continue;
    const std::size_t u = boost::source(*e, graph), v = boost::target(*e, graph);
    if (info.fraction < 1.0) {
      c.partial_to[fill_p[u]] = static_cast<std::uint32_t>(v);
      c.partial_fraction[fill_p[u]++] = info.fraction;
    } else {
      c.succ[fill_s[u]++] = static_cast<std::uint32_t>(v);
    }
  }
  const auto& res = g.resources();
  c.resource_kind.resize(res.size());
  c.stream_begin.assign(res.size() + 1, 0);
  for (std::size_t r = 0; r < res.size(); ++r) {
    c.resource_kind[r] = res[r].kind;
    c.stream_begin[r + 1] = c.stream_begin[r] + static_cast<std::uint32_t>(res[r].order.size());
    for (int t : res[r].order) c.stream_tasks.push_back(static_cast<std::uint32_t>(t));
  }
  return c;
}

Engine::Engine(const CompiledGraph& g) : g_(g) {
  const std::size_t n = g.tasks;
  if (n >= (1u << 30) || g.partial_to.size() >= (1u << 30)) throw std::length_error("engine: too many tasks");
  x_.start.resize(n);
  x_.end.resize(n);
  x_.cause.resize(n);
  deps_.resize(n);
  info_.resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    info_[t] = TaskInfo{g.succ_begin[t], g.succ_begin[t + 1], g.partial_begin[t], g.partial_begin[t + 1], g.resource[t], g.channel[t],
                        static_cast<std::uint8_t>(g.resource_kind[static_cast<std::size_t>(g.resource[t])] == ResourceKind::stream)};
  }
  stream_pos_.resize(g.resource_kind.size());
  stream_busy_.resize(g.resource_kind.size());
  links_.resize(g.resource_kind.size());
  partial_from_.resize(g.partial_to.size());
  for (std::size_t u = 0; u < n; ++u) {
    for (std::uint32_t k = g.partial_begin[u]; k < g.partial_begin[u + 1]; ++k) partial_from_[k] = static_cast<std::uint32_t>(u);
  }
  // Queue capacity: every link task is queued at most once per run.
  std::vector<std::size_t> per_channel(g.resource_kind.size() * kLinkChannels, 0);
  for (std::size_t t = 0; t < n; ++t) {
    if (g.resource_kind[static_cast<std::size_t>(g.resource[t])] == ResourceKind::link) {
      ++per_channel[static_cast<std::size_t>(g.resource[t]) * kLinkChannels + g.channel[t]];
    }
  }
  for (std::size_t r = 0; r < links_.size(); ++r) {
    for (int ch = 0; ch < kLinkChannels; ++ch) links_[r].channels[ch].queue.reserve(per_channel[r * kLinkChannels + static_cast<std::size_t>(ch)]);
  }
  q_.reserve(n + g.partial_to.size() + 64);
  finished_.reserve(kLinkChannels);
}

const Execution& Engine::run(const std::vector<double>& durations) {
  if (durations.size() != g_.tasks) throw std::invalid_argument("engine: one duration per task expected");
  for (std::size_t t = 0; t < durations.size(); ++t) {
    if (!(durations[t] >= 0.0 && durations[t] <= kLatestTime)) refuse_time("the duration of task", t, durations[t]);
  }
  dur_ = durations.data();
  q_.clear();
  std::copy(g_.deps.begin(), g_.deps.end(), deps_.begin());
  std::fill(x_.start.begin(), x_.start.end(), -1.0);
  std::fill(x_.end.begin(), x_.end.end(), -1.0);
  std::fill(x_.cause.begin(), x_.cause.end(), -1);
  for (std::size_t r = 0; r < g_.resource_kind.size(); ++r) {
    stream_pos_[r] = g_.stream_begin[r];
    stream_busy_[r] = 0;
    Link& l = links_[r];
    l.active = 0;
    l.last = 0;
    l.version = 0;
    for (Channel& ch : l.channels) {
      ch.active = -1;
      ch.remaining = 0;
      ch.queue.clear();
      ch.head = 0;
    }
  }
  for (std::uint32_t t = 0; t < g_.tasks; ++t) {
    if (deps_[t] == 0) ready(t, 0.0, -1);
  }
  x_.events = q_.run([this](double now, const Payload& p) {
    // Never advance to inf or NaN (a loop that could not end): refuse the event instead.
    if (!(now >= 0.0 && now <= kLatestTime)) refuse_time("an event time, at task", p.kind_index & 0x3FFFFFFFu, now);
    const std::uint32_t index = p.kind_index & 0x3FFFFFFFu;
    switch (p.kind_index >> 30) {
      case kDone: done(index, now); break;
      case kRelease: {
        const std::uint32_t to = g_.partial_to[index];
        if (--deps_[to] == 0) ready(to, now, static_cast<std::int32_t>(partial_from_[index]));
        break;
      }
      default: link_check(static_cast<std::int32_t>(index), p.version, now); break;
    }
  });
  x_.makespan = 0;
  x_.unfinished = 0;
  for (std::size_t t = 0; t < g_.tasks; ++t) {
    if (x_.end[t] < 0) {
      ++x_.unfinished;
    } else {
      x_.makespan = std::max(x_.makespan, x_.end[t]);
    }
  }
  return x_;
}

void Engine::ready(std::uint32_t t, double now, std::int32_t cause) {
  const TaskInfo& i = info_[t];
  if (i.stream) {
    try_stream(i.resource, now, cause);  // a stream task is ready when its dependency count is 0
  } else {
    link_enqueue(i.resource, t, now, cause);
  }
}

void Engine::try_stream(std::int32_t r, double now, std::int32_t cause) {
  const std::size_t ri = static_cast<std::size_t>(r);
  if (stream_busy_[ri] || stream_pos_[ri] == g_.stream_begin[ri + 1]) return;
  const std::uint32_t t = g_.stream_tasks[stream_pos_[ri]];
  if (deps_[t] != 0) return;
  stream_busy_[ri] = 1;
  ++stream_pos_[ri];
  begin(t, now, cause);
  q_.push(now + dur_[t], payload(kDone, t));
}

// Records the start and releases the partial dependents at their fractions of the duration.
void Engine::begin(std::uint32_t t, double now, std::int32_t cause) {
  x_.start[t] = now;
  x_.cause[t] = cause;
  for (std::uint32_t k = info_[t].partial_begin, end = info_[t].partial_end; k < end; ++k) {
    q_.push(now + g_.partial_fraction[k] * dur_[t], payload(kRelease, k));
  }
}

void Engine::done(std::uint32_t t, double now) {
  x_.end[t] = now;
  const TaskInfo& i = info_[t];
  const std::int32_t r = i.resource;
  const bool stream = i.stream != 0;
  if (stream) stream_busy_[static_cast<std::size_t>(r)] = 0;
  const std::int32_t me = static_cast<std::int32_t>(t);
  for (std::uint32_t k = i.succ_begin, end = i.succ_end; k < end; ++k) {
    const std::uint32_t s = g_.succ[k];
    if (--deps_[s] == 0) ready(s, now, me);
  }
  if (stream) try_stream(r, now, me);
}

void Engine::link_advance(Link& l, double now) {
  if (l.active > 0 && now > l.last) {
    const double progress = (now - l.last) / l.active;
    for (Channel& ch : l.channels) {
      if (ch.active >= 0) ch.remaining -= progress;
    }
  }
  l.last = now;
}

void Engine::link_schedule(std::int32_t r, double now) {
  Link& l = links_[static_cast<std::size_t>(r)];
  if (l.active == 0) return;
  double least = -1;
  for (const Channel& ch : l.channels) {
    if (ch.active >= 0 && (least < 0 || ch.remaining < least)) least = ch.remaining;
  }
  ++l.version;
  q_.push(now + std::max(0.0, least) * l.active, payload(kLinkCheck, static_cast<std::uint32_t>(r), l.version));
}

void Engine::link_enqueue(std::int32_t r, std::uint32_t t, double now, std::int32_t cause) {
  Link& l = links_[static_cast<std::size_t>(r)];
  Channel& ch = l.channels[info_[t].channel];
  if (ch.active >= 0) {
    ch.queue.push_back(t);  // starts when the transfers ahead of it on this communicator are done
    return;
  }
  link_advance(l, now);
  ch.active = static_cast<std::int32_t>(t);
  ch.remaining = dur_[t];
  ++l.active;
  begin(t, now, cause);
  link_schedule(r, now);
}

void Engine::link_check(std::int32_t r, std::uint32_t version, double now) {
  Link& l = links_[static_cast<std::size_t>(r)];
  if (version != l.version) return;  // the sharing changed since this check was planned
  link_advance(l, now);
  // This check was planned for the moment the least-remaining transfer ends; end it and any that
  // end with it (to rounding).
  double least = -1;
  for (const Channel& ch : l.channels) {
    if (ch.active >= 0 && (least < 0 || ch.remaining < least)) least = ch.remaining;
  }
  finished_.clear();
  for (Channel& ch : l.channels) {
    if (ch.active < 0) continue;
    const std::uint32_t t = static_cast<std::uint32_t>(ch.active);
    if (ch.remaining <= least + 1e-12 * dur_[t] + 1e-18) {
      finished_.push_back(t);
      ch.active = -1;
      --l.active;
    }
  }
  // The next transfer of each freed communicator starts now, behind the one that ended.
  for (std::uint32_t t : finished_) {
    Channel& ch = l.channels[info_[t].channel];
    if (ch.head < ch.queue.size()) {
      const std::uint32_t next = ch.queue[ch.head++];
      ch.active = static_cast<std::int32_t>(next);
      ch.remaining = dur_[next];
      ++l.active;
      begin(next, now, static_cast<std::int32_t>(t));
    }
  }
  link_schedule(r, now);
  for (std::uint32_t t : finished_) done(t, now);
}

}  // namespace tp::sim
