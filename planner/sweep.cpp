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
#include "sweep_state.h"
#include "layer_code_rules.h"

namespace tp {
using namespace sweep_detail;  // the per-thread state and its types (planner/sweep_state.h)

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

Scenario point_scenario(const SweepBase& base, const std::vector<FastAxis>& axes, const SweepPoint& p) {
  Scenario s = base.scenario;
  for (size_t i = 0; i < axes.size() && i < p.fast_values.size(); ++i) axes[i].setters[p.fast_values[i]](s);
  // The recorded layout is the final one (after the auto layout and every setter).
  LayoutChoice c{p.tp, p.pp, p.cp, p.ep, p.vpp, p.schedule, p.zero, p.recompute, p.micro_batch, p.sequence_parallel, p.dp_shard};
  apply_layout(s, c);
  s.parallel.recompute.every = p.recompute_every;
  resolve_layout(s);
  return s;
}

namespace {

// One sweep: the grid laid out in blocks (a base scenario x the values of the axes that shape parallel: auto),
// every point evaluated on the thread pool into per-thread state, then merged deterministically.
class SweepRun {
 public:
  SweepRun(const std::vector<SweepBase>& bases, const std::vector<FastAxis>& axes, bool parallel_auto,
           Objective objective, const Constraints& constraints, int top_n, const SweepOptions& options)
      : bases_(bases), axes_(axes), parallel_auto_(parallel_auto), objective_(objective), constraints_(constraints),
        top_n_(top_n), options_(options) {
    // Axes that shape the auto enumeration become part of the block; the rest are decoded per point.
    for (int i = 0; i < static_cast<int>(axes.size()); ++i) {
      (parallel_auto && shapes_auto(axes[static_cast<size_t>(i)].key) ? block_axes_ : point_axes_).push_back(i);
    }
  }

  SweepResult run() {
    const auto started = std::chrono::steady_clock::now();
    const std::uint64_t total = plan_blocks();
    tbb::enumerable_thread_specific<ThreadState> states;
    evaluate_all(states, total);
    SweepResult result = merge(states);
    result.total = total;
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
  }

 private:
  const FastAxis& axis(int i) const { return axes_[static_cast<size_t>(i)]; }

  // Lays the grid out in blocks; returns the number of points. Checked products (model/work_limits.h): a
  // grid past the limit is an error before any work, never a 64-bit wrap.
  std::uint64_t plan_blocks() {
    const std::uint64_t max_points = work_limits().sweep_points;
    auto check_total = [&](std::uint64_t points) {
      if (points > max_points) too_many_points({"grid", 0, 0}, "parallel", "the grid's axes and the automatic layouts");
    };
    std::uint64_t per_block_points = 1;
    for (int i : point_axes_) {
      per_block_points = capped_product(per_block_points, axis(i).setters.size(), max_points);
      check_total(per_block_points);
    }
    std::uint64_t total = 0;
    for (int b = 0; b < static_cast<int>(bases_.size()); ++b) {
      std::vector<std::uint32_t> digits(block_axes_.size(), 0);
      do {
        GridBlock blk;
        blk.base = b;
        blk.block_values = digits;
        std::uint64_t layouts = 1;
        if (parallel_auto_) {
          Scenario s = bases_[static_cast<size_t>(b)].scenario;
          for (size_t j = 0; j < block_axes_.size(); ++j) axis(block_axes_[j]).setters[digits[j]](s);
          blk.layouts = std::make_shared<const std::vector<LayoutChoice>>(auto_layouts(s));
          layouts = blk.layouts->size();
        }
        blk.start = total;
        blk.count = capped_product(layouts, per_block_points, max_points);
        check_total(blk.count);
        total += blk.count;
        check_total(total);
        if (blk.count > 0) blocks_.push_back(std::move(blk));
      } while (next_digits(digits));
    }
    return total;
  }

  // Advances the block axes' value digits (first axis fastest); false after the last combination.
  bool next_digits(std::vector<std::uint32_t>& digits) const {
    for (size_t j = 0; j < digits.size(); ++j) {
      if (++digits[j] < axis(block_axes_[j]).setters.size()) return true;
      digits[j] = 0;
    }
    return false;
  }

  const GridBlock& block_of(std::uint64_t index) const {
    return *(std::upper_bound(blocks_.begin(), blocks_.end(), index,
                              [](std::uint64_t i, const GridBlock& b) { return i < b.start; }) - 1);
  }

  void evaluate_all(tbb::enumerable_thread_specific<ThreadState>& states, std::uint64_t total) {
    std::unique_ptr<tbb::global_control> limit;
    if (options_.threads > 0) {
      limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                    static_cast<size_t>(options_.threads));
    }
    std::atomic<std::uint64_t> done{0};
    std::atomic<bool> finished{false};
    std::thread reporter;
    if (options_.progress) {
      reporter = std::thread([&] {
        while (!finished.load()) {
          options_.progress(done.load(), total);
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      });
    }
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, total, 256), [&](const tbb::blocked_range<std::uint64_t>& r) {
      ThreadState& ts = states.local();
      for (std::uint64_t i = r.begin(); i != r.end(); ++i) evaluate(ts, i);
      done.fetch_add(r.size());
    });
    finished = true;
    if (reporter.joinable()) reporter.join();
    if (options_.progress) options_.progress(total, total);
  }

  // Sets ts.work to the point's scenario: its block's base and block values, then its layout and the point
  // axes (first axis varies fastest).
  void decode(ThreadState& ts, std::uint64_t index, SweepPoint& p) const {
    const GridBlock& blk = block_of(index);
    const int block_id = static_cast<int>(&blk - blocks_.data());
    if (ts.block != block_id) {
      ts.work = bases_[static_cast<size_t>(blk.base)].scenario;
      for (size_t j = 0; j < block_axes_.size(); ++j) axis(block_axes_[j]).setters[blk.block_values[j]](ts.work);
      save(ts.work, ts.saved);
      ts.block = block_id;
    } else {
      restore(ts.work, ts.saved);
    }
    std::uint64_t local = index - blk.start;
    p.index = index;
    p.block = blk.base;
    if (blk.layouts) {
      const std::uint64_t n = blk.layouts->size();
      apply_layout(ts.work, (*blk.layouts)[local % n]);
      local /= n;
    }
    for (int i : point_axes_) {
      const auto& ax = axis(i);
      ax.setters[local % ax.setters.size()](ts.work);
      local /= ax.setters.size();
    }
    if (constraints_.memory_headroom >= 0) ts.work.memory.headroom = constraints_.memory_headroom;
  }

  static void record_layout(const Scenario& s, SweepPoint& p) {
    p.tp = s.parallel.tp; p.pp = s.parallel.pp; p.dp = s.parallel.dp; p.cp = s.parallel.cp; p.ep = s.parallel.ep;
    p.vpp = s.parallel.vpp; p.zero = s.parallel.zero; p.schedule = s.parallel.schedule;
    p.recompute = s.parallel.recompute.mode; p.recompute_every = s.parallel.recompute.every;
    p.micro_batch = s.training.micro_batch; p.nodes = s.cluster.nodes; p.gpus = s.gpus();
    p.sequence_parallel = s.parallel.sequence_parallel;
    p.dp_shard = s.parallel.dp_shard;
  }

  void keep(ThreadState& ts, SweepPoint& p, PointStatus status, bool evaluated = true) const {
    p.status = status;
    p.evaluated = evaluated;
    if (options_.keep_all) ts.all.push_back(p);
  }

  // Rejections before any arithmetic: a layout that does not divide, or more GPUs / nodes than allowed.
  bool rejected_before_plan(ThreadState& ts, SweepPoint& p) const {
    Scenario& s = ts.work;
    std::vector<Problem> problems = resolve_layout(s);
    if (problems.empty()) problems = check_scenario(s, true);
    record_layout(s, p);
    if (!problems.empty()) {
      ++ts.indivisible;
      const Problem& pr = problems.front();
      ++ts.reasons[pr.other_field.empty() ? pr.field : pr.field + " vs " + pr.other_field];
      keep(ts, p, PointStatus::indivisible, false);
      return true;
    }
    const bool too_many_gpus = constraints_.max_gpus > 0 && s.gpus() > constraints_.max_gpus;
    if (too_many_gpus || (constraints_.max_nodes > 0 && s.cluster.nodes > constraints_.max_nodes)) {
      ++ts.constrained;
      ++ts.reasons[too_many_gpus ? "constraints.max_gpus" : "constraints.max_nodes"];
      keep(ts, p, PointStatus::constrained, false);
      return true;
    }
    return false;
  }

  // The op graph of the point's model, training settings and padded vocabulary, rebuilt only when the
  // settings change; the graphs of the vocabularies already seen are kept (the vocabulary follows tp).
  static void ensure_graph(ThreadState& ts, const SweepBase& base) {
    const Scenario& s = ts.work;
    const bool same_settings = ts.graph_valid && ts.graph_base == &base.scenario &&
                               ts.graph_seq == s.training.sequence_length && ts.graph_precision == s.training.precision &&
                               ts.graph_flash == s.training.flash_attention && ts.graph_code == graph_code_of(s.training);
    if (!same_settings) {
      ts.graphs.clear();
      ts.graph_valid = true;
      ts.graph_base = &base.scenario;
      ts.graph_seq = s.training.sequence_length;
      ts.graph_precision = s.training.precision;
      ts.graph_flash = s.training.flash_attention;
      ts.graph_code = graph_code_of(s.training);
    }
    const std::int64_t vocab = padded_vocab(s.model.vocab, layer_code_of(s.training), s.parallel.tp);
    if (same_settings && ts.graph().vocab == vocab) return;
    for (size_t i = 0; i < ts.graphs.size(); ++i) {
      if (ts.graphs[i].vocab == vocab) {
        ts.graph_index = static_cast<int>(i);
        return;
      }
    }
    ts.graphs.push_back(build_op_graph(s.model, s.training, s.parallel.tp));
    ts.graph_index = static_cast<int>(ts.graphs.size()) - 1;
  }

  void evaluate(ThreadState& ts, std::uint64_t index) const {
    SweepPoint p;
    decode(ts, index, p);
    if (rejected_before_plan(ts, p)) return;
    const SweepBase& base = bases_[static_cast<size_t>(p.block)];
    ensure_graph(ts, base);
    make_plan_into(ts.work, ts.graph(), base.profile, ts.plan);
    const Plan& plan = ts.plan;
    p.memory = plan.estimate.memory.total.value;
    p.capacity = plan.estimate.usable.value;
    p.step = plan.time.step.value;
    p.mfu = plan.time.mfu;
    p.tokens_per_gpu = plan.time.tokens_per_second_per_gpu;
    p.run_seconds = plan.run.seconds_with_failures.value;
    p.finishes = plan.run.failures.regime == Regime::ok;
    p.cost = plan.run.cost.value;
    p.energy_kwh = plan.run.energy_kwh;
    classify(ts, plan, p);
  }

  // After the plan: no progress under failures, out of memory, over budget or deadline, or feasible.
  void classify(ThreadState& ts, const Plan& plan, SweepPoint& p) const {
    if (plan.run.failures.regime == Regime::no_progress && p.memory <= p.capacity) {
      ++ts.no_progress;  // fits, but failures outpace progress: neither feasible nor a memory miss
      keep(ts, p, PointStatus::no_progress);
      return;
    }
    if (!plan.estimate.feasible) {
      ++ts.oom;
      p.status = PointStatus::out_of_memory;  // before the copy into the nearest misses
      p.objective = p.memory / std::max(p.capacity, 1.0);  // nearest misses: smallest overshoot
      if (ts.nearest.size() < 5 || Better()(p, ts.nearest.back())) {
        ts.nearest.push_back(p);
        std::sort(ts.nearest.begin(), ts.nearest.end(), Better());
        if (ts.nearest.size() > 5) ts.nearest.pop_back();
      }
      keep(ts, p, PointStatus::out_of_memory);
      return;
    }
    const bool over_budget = constraints_.budget_usd > 0 && p.cost > constraints_.budget_usd;
    if (over_budget || (constraints_.deadline_s > 0 && p.run_seconds > constraints_.deadline_s)) {
      ++ts.constrained;
      ++ts.reasons[over_budget ? "constraints.budget" : "constraints.deadline"];
      keep(ts, p, PointStatus::constrained);
      return;
    }
    ++ts.feasible;
    rank(ts, p);
    keep(ts, p, PointStatus::feasible);
  }

  // A feasible point into this thread's top-N heap and Pareto fronts.
  void rank(ThreadState& ts, SweepPoint& p) const {
    switch (objective_) {
      case Objective::time: p.objective = p.run_seconds; break;
      case Objective::cost: p.objective = p.cost; break;
      case Objective::energy: p.objective = p.energy_kwh; break;
      case Objective::tokens_per_gpu: p.objective = -p.tokens_per_gpu; break;
      case Objective::mfu: p.objective = -p.mfu; break;
    }
    if (static_cast<int>(ts.top.size()) < top_n_) {
      ts.top.push_back(p);
      std::push_heap(ts.top.begin(), ts.top.end(), Better());
    } else if (Better()(p, ts.top.front())) {
      std::pop_heap(ts.top.begin(), ts.top.end(), Better());
      ts.top.back() = p;
      std::push_heap(ts.top.begin(), ts.top.end(), Better());
    }
    pareto_insert(ts.pareto_cost, p, run_x, cost_y);
    pareto_insert(ts.pareto_gpus, p, run_x, gpus_y);
  }

  // Deterministic merge of the threads' states: the same result whatever the thread count.
  SweepResult merge(tbb::enumerable_thread_specific<ThreadState>& states) const {
    SweepResult result;
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
      if (options_.keep_all) result.all.insert(result.all.end(), ts.all.begin(), ts.all.end());
    }
    std::sort(top.begin(), top.end(), Better());
    if (static_cast<int>(top.size()) > top_n_) top.resize(static_cast<size_t>(top_n_));
    auto by_time = [](const SweepPoint& a, const SweepPoint& b) {
      return a.run_seconds != b.run_seconds ? a.run_seconds < b.run_seconds : a.index < b.index;
    };
    std::sort(pareto_cost.begin(), pareto_cost.end(), by_time);
    std::sort(pareto_gpus.begin(), pareto_gpus.end(), by_time);
    std::sort(nearest.begin(), nearest.end(), Better());
    if (nearest.size() > 5) nearest.resize(5);
    std::sort(result.all.begin(), result.all.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.index < b.index; });
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
    return result;
  }

  // The value index of every axis for a point, decoded from its index (for labels).
  void label(SweepPoint& p) const {
    const GridBlock& blk = block_of(p.index);
    std::uint64_t local = p.index - blk.start;
    if (blk.layouts) local /= blk.layouts->size();
    p.fast_values.assign(axes_.size(), 0);
    for (size_t j = 0; j < block_axes_.size(); ++j) p.fast_values[static_cast<size_t>(block_axes_[j])] = blk.block_values[j];
    for (int i : point_axes_) {
      const auto n = axis(i).setters.size();
      p.fast_values[static_cast<size_t>(i)] = static_cast<std::uint32_t>(local % n);
      local /= n;
    }
  }

  const std::vector<SweepBase>& bases_;
  const std::vector<FastAxis>& axes_;
  const bool parallel_auto_;
  const Objective objective_;
  const Constraints& constraints_;
  const int top_n_;
  const SweepOptions& options_;
  std::vector<int> block_axes_, point_axes_;
  std::vector<GridBlock> blocks_;
};

}  // namespace

SweepResult run_sweep(const std::vector<SweepBase>& bases, const std::vector<FastAxis>& axes, bool parallel_auto,
                      Objective objective, const Constraints& constraints, int top_n, const SweepOptions& options) {
  return SweepRun(bases, axes, parallel_auto, objective, constraints, top_n, options).run();
}

}  // namespace tp
