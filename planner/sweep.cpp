#include "sweep.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "checks.h"
#include "errors.h"
#include "work_limits.h"
#include "plan.h"

namespace tp {
namespace {

// What besides sequence, precision and flash attention decides the op graph's saved bytes and kernels.
int graph_code_of(const TrainingSpec& t) {
  return static_cast<int>(t.framework) * 4 + (t.autocast ? 2 : 0) + (t.compile ? 1 : 0);
}

std::int64_t parse_int(const Axis& a, const std::string& v, std::int64_t min) {
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || end == nullptr || *end != '\0' || x < min) {
    throw InputError(a.where, a.key, "'" + v + "' is not an integer >= " + std::to_string(min));
  }
  return x;
}

bool parse_bool(const Axis& a, const std::string& v) {
  if (v == "true") return true;
  if (v == "false") return false;
  throw InputError(a.where, a.key, "'" + v + "' is not true or false");
}

// The first `count` values of an enum, named by their to_string() spelling (the scenario's words).
template <class E>
E parse_named(const Axis& a, const std::string& v, int count) {
  std::string list;
  for (int i = 0; i < count; ++i) {
    const E e = static_cast<E>(i);
    if (v == to_string(e)) return e;
    list += (list.empty() ? "" : " | ") + std::string(to_string(e));
  }
  throw InputError(a.where, a.key, "'" + v + "' is not one of " + list);
}

using Setter = std::function<void(Scenario&)>;

Setter int_setter(const Axis& a, const std::string& v, std::int64_t min, void (*write)(Scenario&, std::int64_t)) {
  const std::int64_t x = parse_int(a, v, min);
  return [x, write](Scenario& s) { write(s, x); };
}

Setter recompute_setter(const Axis& a, const std::string& v) {
  Recompute rc;
  if (v.rfind("{", 0) == 0) {
    const size_t colon = v.find(':');
    const size_t close = v.find('}');
    if (v.find("every") == std::string::npos || colon == std::string::npos || close == std::string::npos) {
      throw InputError(a.where, a.key, "'" + v + "' is not none | selective | full | {every: k}");
    }
    std::string k = v.substr(colon + 1, close - colon - 1);
    k.erase(std::remove(k.begin(), k.end(), ' '), k.end());
    rc = {RecomputeMode::every, static_cast<int>(parse_int(a, k, 1))};
  } else {
    rc.mode = parse_named<RecomputeMode>(a, v, 3);  // none | selective | full ({every: k} above)
  }
  return [rc](Scenario& s) { s.parallel.recompute = rc; };
}

Setter make_setter(const Axis& a, const std::string& v) {
  const std::string& k = a.key;
  if (k == "parallel.tp") return int_setter(a, v, 1, [](Scenario& s, std::int64_t x) { s.parallel.tp = static_cast<int>(x); });
  if (k == "parallel.pp")
    return int_setter(a, v, 1, [](Scenario& s, std::int64_t x) {
      s.parallel.pp = static_cast<int>(x);
      s.parallel.layers_auto = true;
    });
  if (k == "parallel.dp")
    return int_setter(a, v, 1, [](Scenario& s, std::int64_t x) {
      s.parallel.dp = static_cast<int>(x);
      s.parallel.dp_auto = false;
    });
  if (k == "parallel.cp") return int_setter(a, v, 1, [](Scenario& s, std::int64_t x) { s.parallel.cp = static_cast<int>(x); });
  if (k == "parallel.ep") return int_setter(a, v, 1, [](Scenario& s, std::int64_t x) { s.parallel.ep = static_cast<int>(x); });
  if (k == "parallel.vpp")
    return int_setter(a, v, 1, [](Scenario& s, std::int64_t x) {
      s.parallel.vpp = static_cast<int>(x);
      s.parallel.layers_auto = true;
    });
  if (k == "parallel.zero") {
    const std::int64_t z = parse_int(a, v, 0);
    if (z > 3) throw InputError(a.where, a.key, "'" + v + "' is not a ZeRO stage 0-3");
    return [z](Scenario& s) { s.parallel.zero = static_cast<int>(z); };
  }
  if (k == "parallel.schedule") {
    const Schedule sc = parse_named<Schedule>(a, v, 4);
    return [sc](Scenario& s) { s.parallel.schedule = sc; };
  }
  if (k == "parallel.sequence_parallel") {
    const bool b = parse_bool(a, v);
    return [b](Scenario& s) { s.parallel.sequence_parallel = b; };
  }
  if (k == "parallel.recompute") return recompute_setter(a, v);
  if (k == "training.micro_batch") return int_setter(a, v, 1, [](Scenario& s, std::int64_t x) { s.training.micro_batch = x; });
  if (k == "training.global_batch") return int_setter(a, v, 1, [](Scenario& s, std::int64_t x) { s.training.global_batch = x; });
  if (k == "training.sequence_length")
    return int_setter(a, v, 1, [](Scenario& s, std::int64_t x) { s.training.sequence_length = x; });
  if (k == "training.flash_attention") {
    const bool b = parse_bool(a, v);
    return [b](Scenario& s) { s.training.flash_attention = b; };
  }
  if (k == "training.precision") {
    const Precision p = parse_named<Precision>(a, v, kPrecisionCount);
    return [p](Scenario& s) { s.training.precision = p; };
  }
  if (k == "cluster.nodes") return int_setter(a, v, 1, [](Scenario& s, std::int64_t x) { s.cluster.nodes = static_cast<int>(x); });
  throw InputError(a.where, a.key, "not a fast sweep key");
}

// The fields a fast setter may touch, restored before every point.
struct Mutable {
  ParallelSpec parallel;
  TrainingSpec training;
  int nodes = 1;
  double headroom = 0;
};

void save(const Scenario& s, Mutable& m) {
  m.parallel = s.parallel;
  m.training = s.training;
  m.nodes = s.cluster.nodes;
  m.headroom = s.memory.headroom;
}

void restore(Scenario& s, const Mutable& m) {
  s.parallel = m.parallel;  // copy-assignment keeps layers_per_stage's storage: no allocation
  s.training = m.training;
  s.cluster.nodes = m.nodes;
  s.memory.headroom = m.headroom;
}

// Keys whose values change what parallel: auto enumerates.
bool shapes_auto(const std::string& key) {
  return key == "cluster.nodes" || key == "training.global_batch" || key == "training.sequence_length";
}

struct GridBlock {
  int base = 0;
  std::vector<std::uint32_t> block_values;  // value index per block axis
  std::shared_ptr<const std::vector<LayoutChoice>> layouts;  // parallel: auto, or empty
  std::uint64_t start = 0, count = 0;
};

struct Better {  // strict weak order: lower objective first, then lower index
  bool operator()(const SweepPoint& a, const SweepPoint& b) const {
    return a.objective != b.objective ? a.objective < b.objective : a.index < b.index;
  }
};

// Inserts into a Pareto front over (x, y), both minimised; ties keep the lower index.
template <class X, class Y>
void pareto_insert(std::vector<SweepPoint>& front, const SweepPoint& p, X x, Y y) {
  for (const SweepPoint& q : front) {
    const bool no_worse = x(q) <= x(p) && y(q) <= y(p);
    const bool better = x(q) < x(p) || y(q) < y(p) || q.index < p.index;
    if (no_worse && better) return;
  }
  front.erase(std::remove_if(front.begin(), front.end(),
                             [&](const SweepPoint& q) {
                               const bool no_worse = x(p) <= x(q) && y(p) <= y(q);
                               const bool better = x(p) < x(q) || y(p) < y(q) || p.index < q.index;
                               return no_worse && better;
                             }),
              front.end());
  front.push_back(p);
}

double run_x(const SweepPoint& p) { return p.run_seconds; }
double cost_y(const SweepPoint& p) { return p.cost; }
double gpus_y(const SweepPoint& p) { return p.gpus; }

struct ThreadState {
  Scenario work;
  Mutable saved;
  int block = -1;
  OpGraph graph;
  bool graph_valid = false;
  const Scenario* graph_base = nullptr;
  std::int64_t graph_seq = 0;
  Precision graph_precision = Precision::bf16;
  bool graph_flash = true;
  int graph_code = -1;  // framework, autocast and compile the graph was built for (framework_rules.h)

  Plan plan;  // reused for every point of this thread

  std::uint64_t feasible = 0, oom = 0, indivisible = 0, constrained = 0, no_progress = 0;
  std::map<std::string, std::uint64_t> reasons;
  std::vector<SweepPoint> top;  // heap, worst at front
  std::vector<SweepPoint> pareto_cost, pareto_gpus, nearest, all;
};

}  // namespace

const char* to_string(PointStatus s) {
  switch (s) {
    case PointStatus::feasible: return "feasible";
    case PointStatus::out_of_memory: return "out_of_memory";
    case PointStatus::indivisible: return "indivisible";
    case PointStatus::constrained: return "constraint";
    case PointStatus::no_progress: return "no_progress";
  }
  return "?";
}

bool is_fast_key(const std::string& key) {
  static const char* keys[] = {"parallel.tp", "parallel.pp", "parallel.dp", "parallel.cp", "parallel.ep",
                               "parallel.vpp", "parallel.zero", "parallel.schedule", "parallel.sequence_parallel",
                               "parallel.recompute", "training.micro_batch", "training.global_batch",
                               "training.sequence_length", "training.flash_attention", "training.precision",
                               "cluster.nodes"};
  for (const char* k : keys) {
    if (key == k) return true;
  }
  return false;
}

FastAxis make_fast_axis(const Axis& a) {
  FastAxis f;
  f.key = a.key;
  for (const auto& v : a.values) {
    f.labels.push_back(v);
    f.setters.push_back(make_setter(a, v));
  }
  return f;
}

Scenario point_scenario(const SweepBase& base, const std::vector<FastAxis>& axes, const SweepPoint& p) {
  Scenario s = base.scenario;
  for (size_t i = 0; i < axes.size() && i < p.fast_values.size(); ++i) axes[i].setters[p.fast_values[i]](s);
  // The recorded layout is the final one (after the auto layout and every setter).
  LayoutChoice c{p.tp, p.pp, p.cp, p.ep, p.vpp, p.schedule, p.zero, p.recompute, p.micro_batch, p.sequence_parallel};
  apply_layout(s, c);
  s.parallel.recompute.every = p.recompute_every;
  resolve_layout(s);
  return s;
}

SweepResult run_sweep(const std::vector<SweepBase>& bases, const std::vector<FastAxis>& axes, bool parallel_auto,
                      Objective objective, const Constraints& constraints, int top_n, const SweepOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  // Axes that shape the auto enumeration become part of the block; the rest are decoded per point.
  std::vector<int> block_axes, point_axes;
  for (int i = 0; i < static_cast<int>(axes.size()); ++i) {
    (parallel_auto && shapes_auto(axes[static_cast<size_t>(i)].key) ? block_axes : point_axes).push_back(i);
  }
  std::vector<GridBlock> blocks;
  std::uint64_t total = 0;
  // Checked products (model/work_limits.h): a grid past the limit is an error before any work, never a
  // 64-bit wrap.
  const std::uint64_t max_points = work_limits().sweep_points;
  auto check_total = [&](std::uint64_t points) {
    if (points > max_points) too_many_points({"grid", 0, 0}, "parallel", "the grid's axes and the automatic layouts");
  };
  std::uint64_t per_block_points = 1;
  for (int i : point_axes) {
    per_block_points = capped_product(per_block_points, axes[static_cast<size_t>(i)].setters.size(), max_points);
    check_total(per_block_points);
  }
  for (int b = 0; b < static_cast<int>(bases.size()); ++b) {
    std::vector<std::uint32_t> digits(block_axes.size(), 0);
    while (true) {
      GridBlock blk;
      blk.base = b;
      blk.block_values = digits;
      std::uint64_t layouts = 1;
      if (parallel_auto) {
        Scenario s = bases[static_cast<size_t>(b)].scenario;
        for (size_t j = 0; j < block_axes.size(); ++j) axes[static_cast<size_t>(block_axes[j])].setters[digits[j]](s);
        blk.layouts = std::make_shared<const std::vector<LayoutChoice>>(auto_layouts(s));
        layouts = blk.layouts->size();
      }
      blk.start = total;
      blk.count = capped_product(layouts, per_block_points, max_points);
      check_total(blk.count);
      total += blk.count;
      check_total(total);
      if (blk.count > 0) blocks.push_back(std::move(blk));
      size_t j = 0;
      for (; j < digits.size(); ++j) {
        if (++digits[j] < axes[static_cast<size_t>(block_axes[j])].setters.size()) break;
        digits[j] = 0;
      }
      if (j == digits.size()) break;
    }
  }

  SweepResult result;
  result.total = total;
  std::unique_ptr<tbb::global_control> limit;
  if (options.threads > 0) {
    limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                  static_cast<size_t>(options.threads));
  }
  tbb::enumerable_thread_specific<ThreadState> states;
  std::atomic<std::uint64_t> done{0};
  std::atomic<bool> finished{false};
  std::thread reporter;
  if (options.progress) {
    reporter = std::thread([&] {
      while (!finished.load()) {
        options.progress(done.load(), total);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }

  auto evaluate_point = [&](ThreadState& ts, std::uint64_t index) {
    const auto bit = std::upper_bound(blocks.begin(), blocks.end(), index,
                                      [](std::uint64_t i, const GridBlock& b) { return i < b.start; }) - 1;
    const int block_id = static_cast<int>(bit - blocks.begin());
    const GridBlock& blk = *bit;
    const SweepBase& base = bases[static_cast<size_t>(blk.base)];
    if (ts.block != block_id) {
      ts.work = base.scenario;
      for (size_t j = 0; j < block_axes.size(); ++j) axes[static_cast<size_t>(block_axes[j])].setters[blk.block_values[j]](ts.work);
      save(ts.work, ts.saved);
      ts.block = block_id;
    } else {
      restore(ts.work, ts.saved);
    }
    // Decode: the layout first, then the point axes (first axis varies fastest).
    std::uint64_t local = index - blk.start;
    SweepPoint p;
    p.index = index;
    p.block = blk.base;
    if (blk.layouts) {
      const std::uint64_t n = blk.layouts->size();
      apply_layout(ts.work, (*blk.layouts)[local % n]);
      local /= n;
    }
    for (int i : point_axes) {
      const auto& ax = axes[static_cast<size_t>(i)];
      ax.setters[local % ax.setters.size()](ts.work);
      local /= ax.setters.size();
    }
    if (constraints.memory_headroom >= 0) ts.work.memory.headroom = constraints.memory_headroom;
    Scenario& s = ts.work;

    auto record_layout = [&] {
      p.tp = s.parallel.tp; p.pp = s.parallel.pp; p.dp = s.parallel.dp; p.cp = s.parallel.cp; p.ep = s.parallel.ep;
      p.vpp = s.parallel.vpp; p.zero = s.parallel.zero; p.schedule = s.parallel.schedule;
      p.recompute = s.parallel.recompute.mode; p.recompute_every = s.parallel.recompute.every;
      p.micro_batch = s.training.micro_batch; p.nodes = s.cluster.nodes; p.gpus = s.gpus();
      p.sequence_parallel = s.parallel.sequence_parallel;
    };
    std::vector<Problem> problems = resolve_layout(s);
    if (problems.empty()) problems = check_scenario(s, true);
    if (!problems.empty()) {
      ++ts.indivisible;
      const Problem& pr = problems.front();
      ++ts.reasons[pr.other_field.empty() ? pr.field : pr.field + " vs " + pr.other_field];
      if (options.keep_all) {
        record_layout();
        p.status = PointStatus::indivisible;
        ts.all.push_back(p);
      }
      return;
    }
    record_layout();
    if ((constraints.max_gpus > 0 && s.gpus() > constraints.max_gpus) ||
        (constraints.max_nodes > 0 && s.cluster.nodes > constraints.max_nodes)) {
      ++ts.constrained;
      ++ts.reasons[constraints.max_gpus > 0 && s.gpus() > constraints.max_gpus ? "constraints.max_gpus"
                                                                                : "constraints.max_nodes"];
      if (options.keep_all) {
        p.status = PointStatus::constrained;
        ts.all.push_back(p);
      }
      return;
    }
    if (!ts.graph_valid || ts.graph_base != &base.scenario || ts.graph_seq != s.training.sequence_length ||
        ts.graph_precision != s.training.precision || ts.graph_flash != s.training.flash_attention ||
        ts.graph_code != graph_code_of(s.training)) {
      ts.graph = build_op_graph(s.model, s.training);
      ts.graph_valid = true;
      ts.graph_base = &base.scenario;
      ts.graph_seq = s.training.sequence_length;
      ts.graph_precision = s.training.precision;
      ts.graph_flash = s.training.flash_attention;
      ts.graph_code = graph_code_of(s.training);
    }
    make_plan_into(s, ts.graph, base.profile, ts.plan);
    const Plan& plan = ts.plan;
    p.memory = plan.estimate.memory.total.value;
    p.capacity = plan.estimate.usable.value;
    p.step = plan.time.step.value;
    p.mfu = plan.time.mfu;
    p.tokens_per_gpu = plan.time.tokens_per_second_per_gpu;
    p.run_seconds = plan.run.seconds_with_failures.value;
    p.cost = plan.run.cost.value;
    p.energy_kwh = plan.run.energy_kwh;
    if (plan.run.failures.regime == Regime::no_progress && plan.estimate.memory.total.value <= plan.estimate.usable.value) {
      ++ts.no_progress;  // fits, but failures outpace progress: neither feasible nor a memory miss
      p.status = PointStatus::no_progress;
      if (options.keep_all) ts.all.push_back(p);
      return;
    }
    if (!plan.estimate.feasible) {
      ++ts.oom;
      p.status = PointStatus::out_of_memory;
      p.objective = p.memory / std::max(p.capacity, 1.0);  // nearest misses: smallest overshoot
      if (ts.nearest.size() < 5 || Better()(p, ts.nearest.back())) {
        ts.nearest.push_back(p);
        std::sort(ts.nearest.begin(), ts.nearest.end(), Better());
        if (ts.nearest.size() > 5) ts.nearest.pop_back();
      }
      if (options.keep_all) ts.all.push_back(p);
      return;
    }
    if ((constraints.budget_usd > 0 && p.cost > constraints.budget_usd) ||
        (constraints.deadline_s > 0 && p.run_seconds > constraints.deadline_s)) {
      ++ts.constrained;
      ++ts.reasons[constraints.budget_usd > 0 && p.cost > constraints.budget_usd ? "constraints.budget"
                                                                                : "constraints.deadline"];
      p.status = PointStatus::constrained;
      if (options.keep_all) ts.all.push_back(p);
      return;
    }
    ++ts.feasible;
    switch (objective) {
      case Objective::time: p.objective = p.run_seconds; break;
      case Objective::cost: p.objective = p.cost; break;
      case Objective::energy: p.objective = p.energy_kwh; break;
      case Objective::tokens_per_gpu: p.objective = -p.tokens_per_gpu; break;
      case Objective::mfu: p.objective = -p.mfu; break;
    }
    if (static_cast<int>(ts.top.size()) < top_n) {
      ts.top.push_back(p);
      std::push_heap(ts.top.begin(), ts.top.end(), Better());
    } else if (Better()(p, ts.top.front())) {
      std::pop_heap(ts.top.begin(), ts.top.end(), Better());
      ts.top.back() = p;
      std::push_heap(ts.top.begin(), ts.top.end(), Better());
    }
    pareto_insert(ts.pareto_cost, p, run_x, cost_y);
    pareto_insert(ts.pareto_gpus, p, run_x, gpus_y);
    if (options.keep_all) ts.all.push_back(p);
  };

  tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, total, 256), [&](const tbb::blocked_range<std::uint64_t>& r) {
    ThreadState& ts = states.local();
    for (std::uint64_t i = r.begin(); i != r.end(); ++i) evaluate_point(ts, i);
    done.fetch_add(r.size());
  });
  finished = true;
  if (reporter.joinable()) reporter.join();
  if (options.progress) options.progress(total, total);

  // Deterministic merge.
  std::map<std::string, std::uint64_t> reasons;
  std::vector<SweepPoint> top, pareto_cost, pareto_gpus, nearest;
  for (ThreadState& ts : states) {
    result.feasible += ts.feasible;
    result.out_of_memory += ts.oom;
    result.indivisible += ts.indivisible;
    result.constrained += ts.constrained;
    result.no_progress += ts.no_progress;
    for (const auto& [k, v] : ts.reasons) reasons[k] += v;
    top.insert(top.end(), ts.top.begin(), ts.top.end());
    for (const auto& p : ts.pareto_cost) pareto_insert(pareto_cost, p, run_x, cost_y);
    for (const auto& p : ts.pareto_gpus) pareto_insert(pareto_gpus, p, run_x, gpus_y);
    nearest.insert(nearest.end(), ts.nearest.begin(), ts.nearest.end());
    if (options.keep_all) result.all.insert(result.all.end(), ts.all.begin(), ts.all.end());
  }
  std::sort(top.begin(), top.end(), Better());
  if (static_cast<int>(top.size()) > top_n) top.resize(static_cast<size_t>(top_n));
  auto by_time = [](const SweepPoint& a, const SweepPoint& b) {
    return a.run_seconds != b.run_seconds ? a.run_seconds < b.run_seconds : a.index < b.index;
  };
  std::sort(pareto_cost.begin(), pareto_cost.end(), by_time);
  std::sort(pareto_gpus.begin(), pareto_gpus.end(), by_time);
  std::sort(nearest.begin(), nearest.end(), Better());
  if (nearest.size() > 5) nearest.resize(5);
  std::sort(result.all.begin(), result.all.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.index < b.index; });

  // Value labels of the point axes, decoded from the index.
  auto label = [&](SweepPoint& p) {
    const auto bit = std::upper_bound(blocks.begin(), blocks.end(), p.index,
                                      [](std::uint64_t i, const GridBlock& b) { return i < b.start; }) - 1;
    std::uint64_t local = p.index - bit->start;
    if (bit->layouts) local /= bit->layouts->size();
    p.fast_values.assign(axes.size(), 0);
    for (size_t j = 0; j < block_axes.size(); ++j) p.fast_values[static_cast<size_t>(block_axes[j])] = bit->block_values[j];
    for (int i : point_axes) {
      const auto n = axes[static_cast<size_t>(i)].setters.size();
      p.fast_values[static_cast<size_t>(i)] = static_cast<std::uint32_t>(local % n);
      local /= n;
    }
  };
  for (auto* list : {&top, &pareto_cost, &pareto_gpus, &nearest, &result.all}) {
    for (auto& p : *list) label(p);
  }
  result.top = std::move(top);
  result.pareto_cost = std::move(pareto_cost);
  result.pareto_gpus = std::move(pareto_gpus);
  result.nearest_misses = std::move(nearest);
  result.reasons.assign(reasons.begin(), reasons.end());
  std::stable_sort(result.reasons.begin(), result.reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tp
