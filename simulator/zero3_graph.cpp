#include "zero3_graph.h"

#include <algorithm>
#include <map>

#include "work_limits.h"

namespace tp::sim {
namespace {

Task piece_task(TaskKind kind, const ChunkWork& w, int layer, int unit, double duration) {
  Task t;
  t.kind = kind;
  t.stage = w.stage;
  t.chunk = w.chunk;
  t.micro_batch = w.micro_batch;
  t.layer = layer;
  t.unit = unit;
  t.duration = duration;
  return t;
}

bool is_backward_piece(TaskKind k) {
  return k == TaskKind::backward || k == TaskKind::backward_input || k == TaskKind::backward_weight;
}

bool is_collective_piece(TaskKind k) { return k == TaskKind::collective_forward || k == TaskKind::collective_backward; }

// The unit's share of one layer of the chunk: `chunk_total` is the chunk's whole (per micro-batch or per pass).
double unit_share(double chunk_total, int layers, double share) { return chunk_total / std::max(1, layers) * share; }

}  // namespace

int chunk_layers(int layers, int v, int c) {
  const int n = std::max(1, layers), chunks = std::max(1, v);
  return std::max(1, n / chunks + (c < n % chunks ? 1 : 0));
}

LayerPieces add_layer_pieces(TaskGraph& g, Placement stream, const Zero3Rules& z, const ChunkWork& w) {
  LayerPieces out;
  const std::vector<GatherUnit>& unit_list = gather_units(z);
  const bool gathers_forward = z.gathers_every_micro_batch || w.micro_batch == 0;
  const int units = static_cast<int>(unit_list.size());
  int previous = -1;
  auto add = [&](std::vector<Zero3Piece>& into, TaskKind kind, int l, int u, double chunk_total, bool consumer) {
    const int t = g.add_task(piece_task(kind, w, l, u, unit_share(chunk_total, w.layers, unit_list[static_cast<std::size_t>(u)].compute_share)), stream);
    if (previous >= 0) g.add_dependency(previous, t);
    previous = t;
    into.push_back(Zero3Piece{t, consumer, -1});
  };
  // A layer's share of the chunk's exposed collectives of one pass, after the layer's pieces.
  auto add_collective = [&](std::vector<Zero3Piece>& into, TaskKind kind, int l, double chunk_total) {
    if (chunk_total <= 0) return;
    const int t = g.add_task(piece_task(kind, w, l, -1, chunk_total / std::max(1, w.layers)), stream);
    if (previous >= 0) g.add_dependency(previous, t);
    previous = t;
    into.push_back(Zero3Piece{t, false, -1});
  };
  for (int l = 0; l < w.layers; ++l) {
    for (int u = 0; u < units; ++u) add(out.forward, TaskKind::forward, l, u, w.forward, gathers_forward);
    add_collective(out.forward, TaskKind::collective_forward, l, w.comm_forward);
  }
  previous = -1;  // the backward starts from the incoming gradient, not from this forward
  // A recompute pass of its own only where it gathers again (Zero3Rules::recompute_regathers: DeepSpeed's
  // full recompute, FSDP's submodule units under a layer's checkpoint); otherwise each unit's recompute runs
  // inside its backward, on the backward's gather (a whole-layer unit's checkpoint; selective recompute of
  // the attention core, inside one unit: each unit with a recompute piece of its own gathered every unit
  // before the layer's first backward piece, a random planner-simulator sweep, 2026-12-01: +7 %).
  const bool recompute_pass = w.recompute > 0 && z.recompute_regathers;
  const double backward_work = w.backward + (recompute_pass ? 0.0 : w.recompute);
  const TaskKind backward = w.split_backward ? TaskKind::backward_input : TaskKind::backward;
  for (int l = w.layers - 1; l >= 0; --l) {
    if (recompute_pass) {
      for (int u = 0; u < units; ++u) add(out.backward, TaskKind::recompute, l, u, w.recompute, z.gathers_in_backward);
    }
    for (int u = units - 1; u >= 0; --u) {
      // After a recompute pass that kept the unit (DeepSpeed's reuse distance) the backward needs no gather of
      // its own; nor under SHARD_GRAD_OP (the forward's kept).
      const bool consumer = z.gathers_in_backward &&
                            (!recompute_pass || !unit_list[static_cast<std::size_t>(u)].kept_for_backward);
      add(out.backward, backward, l, u, backward_work, consumer);
      if (!w.split_backward) out.backward.back().gradient = out.backward.back().task;
    }
    add_collective(out.backward, TaskKind::collective_backward, l, w.comm_backward);
  }
  if (!w.split_backward) return out;
  previous = -1;  // W follows the last B (or its collective): the caller links them
  for (int l = w.layers - 1; l >= 0; --l) {
    for (int u = units - 1; u >= 0; --u) {
      add(out.weight, TaskKind::backward_weight, l, u, w.weight, false);
      out.weight.back().gradient = out.weight.back().task;
    }
  }
  return out;
}

namespace {

// A transfer at a piece: its unit's share of one layer of the chunk, from the stage's per-pass total.
Task unit_transfer(TaskKind kind, const Task& at, double stage_total, const StageInputs& si, const StepInputs& in) {
  const std::vector<GatherUnit>& units = gather_units(in.zero3);
  const int v = std::max(1, in.chunks);
  Task t = at;
  t.kind = kind;
  const int layers = chunk_layers(si.layers, v, at.chunk);
  t.duration = unit_share(stage_total / v, layers, units[static_cast<std::size_t>(at.unit)].gather_share);
  return t;
}

struct ReduceScatters {
  std::vector<int> tasks;
  std::vector<int> issued_at;  // per position in the sequence: the reduce-scatter issued when that piece ends
};

// Reduce-scatters first: at the end of a B piece its reduce-scatter is issued before the gather that the same
// moment releases (DeepSpeed stage3.py: launched from the gradient hook, before the next module's pre-backward
// fetch; FSDP: post-backward of one unit, then the pre-backward of the next).
ReduceScatters add_reduce_scatters(TaskGraph& g, Placement dp, const StepInputs& in, const StageInputs& si,
                                   const std::vector<Zero3Piece>& sequence, const std::vector<int>& last_micro_batch,
                                   int last_backward) {
  ReduceScatters out;
  out.issued_at.assign(sequence.size(), -1);
  if (si.dp_reduce.value <= 0) return out;
  // Not overlapped, a reduce-scatter waits for the backward that made its gradients to return: the step's
  // last, or, reducing after every micro-batch, the last gradient piece of its own chunk and micro-batch (the
  // next micro-batch may wait for it: StepInputs::reduce_waited_after_backward).
  std::map<std::pair<int, int>, int> last_gradient_piece;  // (chunk, micro-batch) -> task
  for (const Zero3Piece& piece : sequence) {
    if (piece.gradient < 0) continue;
    const Task& t = g.task(piece.task);
    last_gradient_piece[{t.chunk, t.micro_batch}] = piece.gradient;
  }
  const bool every_micro_batch = in.zero3.reduce_every_micro_batch;
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    const Zero3Piece& piece = sequence[i];
    if (piece.gradient < 0) continue;
    const Task at = g.task(piece.task);  // a copy: add_task below may move the tasks
    const bool last = at.micro_batch == last_micro_batch[static_cast<std::size_t>(at.chunk)];
    if (!every_micro_batch && !last) continue;
    Task t = unit_transfer(TaskKind::dp_reduce, at, si.dp_reduce.value, si, in);
    if (!every_micro_batch) t.micro_batch = -1;
    if (t.duration <= 0) continue;
    const int r = g.add_task(t, dp);
    // The layer's first unit in forward order (its input norm's weight among its parameters) has its
    // gradients only once the layer's input gradient has passed the exposed TP collective after it (the
    // norm's backward follows that collective): its reduce-scatter is issued after the collective.
    const bool after_collective = i + 1 < sequence.size() &&
                                  g.task(sequence[i + 1].task).kind == TaskKind::collective_backward;
    const std::size_t issued = after_collective ? i + 1 : i;
    const int returned = every_micro_batch ? last_gradient_piece[{at.chunk, at.micro_batch}] : last_backward;
    g.add_dependency(in.overlap_grad_reduce ? sequence[issued].task : returned, r);
    const bool holds_next = in.overlap_grad_reduce && in.zero3.reduce_holds_backward && issued + 1 < sequence.size();
    if (holds_next) g.add_dependency(r, sequence[issued + 1].task);
    out.tasks.push_back(r);
    out.issued_at[i] = r;
  }
  return out;
}

// Each consumer piece's gather, issued as the framework prefetches: after the previous consumer's piece
// before it when prefetching, else after the piece just before it.
void add_gathers(TaskGraph& g, Placement dp, const StepInputs& in, const StageInputs& si,
                 const std::vector<Zero3Piece>& sequence, const std::vector<int>& reduce_of) {
  const std::vector<GatherUnit>& units = gather_units(in.zero3);
  std::vector<std::size_t> consumers;  // positions in `sequence`
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    if (sequence[i].consumer) consumers.push_back(i);
  }
  for (std::size_t n = 0; n < consumers.size(); ++n) {
    const std::size_t at = consumers[n];
    const Task& use = g.task(sequence[at].task);
    const TaskKind use_kind = use.kind;  // a copy: add_task below may move the tasks
    const TaskKind kind = use_kind == TaskKind::forward ? TaskKind::zero3_gather_forward : TaskKind::zero3_gather_backward;
    const Task t = unit_transfer(kind, use, si.dp_gather.value, si, in);
    if (t.duration <= 0) continue;
    const int gather = g.add_task(t, dp);  // may move the tasks: read them again below
    g.add_dependency(gather, sequence[at].task);
    if (at == 0) continue;
    // The compute piece before (a layer's collectives after its pieces are not gathered for and reduce nothing);
    // the gather's issue times below follow the stream's previous task, collectives included.
    std::size_t prev = at - 1;
    while (prev > 0 && is_collective_piece(g.task(sequence[prev].task).kind)) --prev;
    const Task& before = g.task(sequence[prev].task);
    // A backward gather after a backward piece under FSDP's backward_prefetch post or none: issued when
    // that piece ends, and on the same process group as that piece's reduce-scatter, in issue order: none
    // issues the reduce-scatter first, post the gather (FSDP1 _post_backward_hook prefetches, then reduces).
    const bool waits_backward = is_backward_piece(before.kind) && use_kind != TaskKind::forward &&
                                in.zero3.backward_prefetch != BackwardPrefetch::pre;
    // (A reduce-scatter that is not overlapped runs after the backward returns, not between its pieces.)
    if (waits_backward && in.overlap_grad_reduce && reduce_of[prev] >= 0) {
      if (in.zero3.backward_prefetch == BackwardPrefetch::none) g.add_dependency(reduce_of[prev], gather);
      else g.add_dependency(gather, reduce_of[prev]);
    }
    const bool blocks = before.unit >= 0 && units[static_cast<std::size_t>(before.unit)].blocks_prefetch;
    const bool blocked = !in.overlap_param_gather || blocks || waits_backward;
    if (blocked) {
      g.add_dependency(sequence[at - 1].task, gather);
    } else if (n >= 2) {
      g.add_dependency(sequence[consumers[n - 1] - 1].task, gather);
    }
  }
}

}  // namespace

std::vector<int> add_zero3_transfers(TaskGraph& g, Placement dp, const StepInputs& in, int stage,
                                     const std::vector<Zero3Piece>& sequence,
                                     const std::vector<int>& last_micro_batch, int last_backward) {
  const StageInputs& si = in.stage[static_cast<std::size_t>(stage)];
  const ReduceScatters reduces = add_reduce_scatters(g, dp, in, si, sequence, last_micro_batch, last_backward);
  if (si.dp_gather.value > 0) add_gathers(g, dp, in, si, sequence, reduces.issued_at);
  return reduces.tasks;
}

std::uint64_t zero3_tasks_per_slot(const StepInputs& in) {
  const std::uint64_t cap = UINT64_MAX / 4;
  int layers = 1;
  for (const StageInputs& s : in.stage) layers = std::max(layers, s.layers);
  const auto units = static_cast<std::uint64_t>(gather_units(in.zero3).size());
  const auto per_layer_units = capped_product(static_cast<std::uint64_t>(layers), units, cap);
  return std::min(cap, capped_product(per_layer_units, 8, cap) + capped_product(static_cast<std::uint64_t>(layers), 2, cap) + 2);
}

}  // namespace tp::sim
