#include "step_graph.h"

#include <algorithm>
#include <stdexcept>

#include "schedule.h"
#include "work_limits.h"
#include "zero3_graph.h"

namespace tp::sim {
namespace {

// f, b: the first forward and backward task (ZeRO-3: the first per-layer piece); f_last, b_last: the
// last piece under ZeRO-3, else -1.
struct Ids {
  int f = -1, cf = -1, r = -1, b = -1, cb = -1, w = -1, f_last = -1, b_last = -1;
  int out_forward() const { return cf >= 0 ? cf : (f_last >= 0 ? f_last : f); }
  int first_backward() const { return r >= 0 ? r : b; }
  int out_backward() const { return cb >= 0 ? cb : (b_last >= 0 ? b_last : b); }
};

}  // namespace

std::uint64_t task_bound(const StepInputs& in) {
  const std::uint64_t cap = UINT64_MAX / 4;
  const auto p = static_cast<std::uint64_t>(std::max(1, in.stages));
  const auto v = static_cast<std::uint64_t>(std::max(1, in.chunks));
  const auto m = static_cast<std::uint64_t>(std::max(1, in.micro_batches));
  const auto k = static_cast<std::uint64_t>(std::max(1, in.dp_buckets));
  const std::uint64_t slot = in.zero >= 3 ? std::max<std::uint64_t>(10, zero3_tasks_per_slot(in)) : 10;
  const std::uint64_t per_slot = capped_product(capped_product(p, v, cap), capped_product(m, slot, cap), cap);
  const std::uint64_t per_stage = capped_product(p, std::max(k, v) + k + 1, cap);
  return std::min(cap, per_slot + per_stage);
}

StepGraph build_step_graph(const StepInputs& in) {
  const int p = in.stages, v = in.chunks, m = in.micro_batches;
  if (p < 1 || v < 1 || m < 1 || static_cast<int>(in.stage.size()) != p) {
    throw std::invalid_argument("step inputs: need stages, chunks, micro-batches and one timing per stage");
  }
  const bool split = splits_backward(in.schedule);
  const std::vector<StageOrder> orders = schedule_order(in.schedule, PipelineShape{p, v, m});

  StepGraph out;
  out.stages = p;
  out.chunks = v;
  out.micro_batches = m;
  TaskGraph& g = out.graph;
  for (int s = 0; s < p; ++s) {
    out.stream.push_back(g.add_resource({ResourceKind::stream, s, "stage " + std::to_string(s) + " compute", {}}));
    out.link.push_back(g.add_resource({ResourceKind::link, s, "stage " + std::to_string(s) + " link", {}}));
  }

  auto task = [](TaskKind k, int s, int c, int j, double d) {
    Task t;
    t.kind = k;
    t.stage = s;
    t.chunk = c;
    t.micro_batch = j;
    t.duration = d;
    return t;
  };
  auto at = [&](int s, int c, int j) {
    return (static_cast<std::size_t>(s) * static_cast<std::size_t>(v) + static_cast<std::size_t>(c)) * static_cast<std::size_t>(m) +
           static_cast<std::size_t>(j);
  };
  std::vector<Ids> ids(static_cast<std::size_t>(p) * static_cast<std::size_t>(v) * static_cast<std::size_t>(m));
  const bool per_layer = in.zero >= 3;  // ZeRO-3: layer-by-layer pieces, each gathered on its own
  std::vector<LayerPieces> pieces(per_layer ? ids.size() : 0);

  // Compute tasks of every (stage, chunk, micro-batch).
  for (int s = 0; s < p; ++s) {
    const StageTiming& st = in.stage[static_cast<std::size_t>(s)].timing;
    const Placement on_stream{out.stream[static_cast<std::size_t>(s)], 0};
    const double f = st.forward.value / v, cf = st.comm_forward.value / v, rc = st.recompute.value / v;
    const double bi = st.backward_input.value / v, bw = st.backward_weight.value / v, cb = st.comm_backward.value / v;
    for (int c = 0; c < v; ++c) {
      for (int j = 0; j < m; ++j) {
        Ids& x = ids[at(s, c, j)];
        if (per_layer) {
          LayerPieces& lp = pieces[at(s, c, j)];
          const int layers = chunk_layers(in.stage[static_cast<std::size_t>(s)].layers, v, c);
          lp = add_layer_pieces(g, on_stream, in.zero3, ChunkWork{s, c, j, layers, f, rc, split ? bi : bi + bw, bw, split});
          x.f = lp.forward.front().task;
          x.f_last = lp.forward.back().task;
          x.b = lp.backward.front().task;
          x.b_last = lp.backward.back().task;
        } else {
          x.f = g.add_task(task(TaskKind::forward, s, c, j, f), on_stream);
        }
        if (cf > 0) {
          const int f_out = x.out_forward();
          x.cf = g.add_task(task(TaskKind::collective_forward, s, c, j, cf), on_stream);
          g.add_dependency(f_out, x.cf);
        }
        if (!per_layer) {
          if (rc > 0) x.r = g.add_task(task(TaskKind::recompute, s, c, j, rc), on_stream);
          x.b = g.add_task(task(split ? TaskKind::backward_input : TaskKind::backward, s, c, j, split ? bi : bi + bw), on_stream);
          if (x.r >= 0) g.add_dependency(x.r, x.b);
        }
        const int b_out = x.out_backward();
        if (cb > 0) {
          x.cb = g.add_task(task(TaskKind::collective_backward, s, c, j, cb), on_stream);
          g.add_dependency(b_out, x.cb);
        }
        if (split) {
          x.w = per_layer ? pieces[at(s, c, j)].weight.front().task : g.add_task(task(TaskKind::backward_weight, s, c, j, bw), on_stream);
          g.add_dependency(b_out, x.w);
        }
      }
    }
  }

  // Pipeline transfers between virtual stages (chunk c of stage s is virtual stage c·p + s).
  const double hop = p > 1 ? in.p2p_hop.value : 0.0;
  const int virtual_stages = p * v;
  for (int s = 0; s < p; ++s) {
    const Placement on_link{out.link[static_cast<std::size_t>(s)], kChannelP2p};
    for (int c = 0; c < v; ++c) {
      const int vs = c * p + s;
      for (int j = 0; j < m; ++j) {
        const Ids& x = ids[at(s, c, j)];
        if (vs + 1 < virtual_stages) {
          const Ids& next = ids[at((vs + 1) % p, (vs + 1) / p, j)];
          if (hop > 0) {
            const int send = g.add_task(task(TaskKind::send_forward, s, c, j, hop), on_link);
            g.add_dependency(x.out_forward(), send);
            g.add_dependency(send, next.f);
          } else {
            g.add_dependency(x.out_forward(), next.f);
          }
        } else {
          g.add_dependency(x.out_forward(), x.first_backward());  // the loss: backward starts here
        }
        if (vs > 0) {
          const Ids& prev = ids[at((vs - 1) % p, (vs - 1) / p, j)];
          if (hop > 0) {
            const int send = g.add_task(task(TaskKind::send_backward, s, c, j, hop), on_link);
            g.add_dependency(x.out_backward(), send);
            g.add_dependency(send, prev.first_backward());
          } else {
            g.add_dependency(x.out_backward(), prev.first_backward());
          }
        }
      }
    }
  }

  // Stream orders from the schedule, then the step-level tasks of each stage.
  for (int s = 0; s < p; ++s) {
    const StageInputs& si = in.stage[static_cast<std::size_t>(s)];
    const int stream = out.stream[static_cast<std::size_t>(s)];
    const Placement on_dp{out.link[static_cast<std::size_t>(s)], kChannelDp};
    std::vector<Zero3Piece> sequence;  // ZeRO-3: the stage's per-layer pieces in stream order
    std::vector<int> last_micro_batch(static_cast<std::size_t>(v), -1);  // per chunk, the last backward's
    std::vector<int> grad_final(static_cast<std::size_t>(v), -1);  // last gradient-producing task per chunk
    int last_backward = -1;
    auto append = [&](const std::vector<Zero3Piece>& ps) {
      for (const Zero3Piece& piece : ps) g.append_to_stream(stream, piece.task);
      sequence.insert(sequence.end(), ps.begin(), ps.end());
    };
    for (const Slot& slot : orders[static_cast<std::size_t>(s)]) {
      const Ids& x = ids[at(s, slot.chunk, slot.micro_batch)];
      switch (slot.pass) {
        case Pass::forward:
          if (per_layer) {
            append(pieces[at(s, slot.chunk, slot.micro_batch)].forward);
          } else {
            g.append_to_stream(stream, x.f);
          }
          if (x.cf >= 0) g.append_to_stream(stream, x.cf);
          break;
        case Pass::backward:
          if (per_layer) {
            append(pieces[at(s, slot.chunk, slot.micro_batch)].backward);
          } else {
            if (x.r >= 0) g.append_to_stream(stream, x.r);
            g.append_to_stream(stream, x.b);
          }
          if (x.cb >= 0) g.append_to_stream(stream, x.cb);
          last_micro_batch[static_cast<std::size_t>(slot.chunk)] = slot.micro_batch;
          if (!split) {
            const int b = x.b_last >= 0 ? x.b_last : x.b;
            grad_final[static_cast<std::size_t>(slot.chunk)] = b;
            last_backward = b;
          }
          break;
        case Pass::weight:
          if (per_layer) {
            const std::vector<Zero3Piece>& w = pieces[at(s, slot.chunk, slot.micro_batch)].weight;
            append(w);
            last_backward = w.back().task;
          } else {
            g.append_to_stream(stream, x.w);
            last_backward = x.w;
          }
          grad_final[static_cast<std::size_t>(slot.chunk)] = last_backward;
          break;
      }
    }
    const std::vector<int> compute_order = g.resources()[static_cast<std::size_t>(stream)].order;

    // Data-parallel gradient reduce in buckets; ZeRO-3: per-layer gathers and reduce-scatters.
    std::vector<int> buckets;
    if (per_layer) {
      buckets = add_zero3_transfers(g, on_dp, in, s, sequence, last_micro_batch, last_backward);
    } else if (si.dp_reduce.value > 0) {
      const int k = std::max(1, in.dp_buckets);
      if (in.overlap_grad_reduce) {
        const int total = std::max(k, v);
        const double d = si.dp_reduce.value / total;
        for (int c = v - 1; c >= 0; --c) {
          const int kc = total / v + (c < total % v ? 1 : 0);
          for (int i = 0; i < kc; ++i) {
            Task t = task(TaskKind::dp_reduce, s, c, -1, d);
            t.bucket = i;  // numbered within its chunk
            const int b = g.add_task(t, on_dp);
            g.add_partial_dependency(grad_final[static_cast<std::size_t>(c)], b, static_cast<double>(i + 1) / kc);
            buckets.push_back(b);
          }
        }
      } else {
        for (int i = 0; i < k; ++i) {
          Task t = task(TaskKind::dp_reduce, s, -1, -1, si.dp_reduce.value / k);
          t.bucket = i;
          const int b = g.add_task(t, on_dp);
          g.add_dependency(last_backward, b);
          buckets.push_back(b);
        }
      }
    }

    int optimizer = -1;
    if (si.optimizer.value > 0) {
      optimizer = g.add_task(task(TaskKind::optimizer, s, -1, -1, si.optimizer.value), Placement{stream, 0});
      g.append_to_stream(stream, optimizer);
      for (int b : buckets) g.add_dependency(b, optimizer);
    }

    // ZeRO-1/2 parameter all-gather.
    if (in.zero >= 1 && in.zero <= 2 && si.dp_gather.value > 0) {
      const int k = std::max(1, in.dp_buckets);
      std::vector<int> gathers;
      for (int i = 0; i < k; ++i) {
        Task t = task(TaskKind::dp_gather, s, -1, -1, si.dp_gather.value / k);
        t.bucket = i;
        gathers.push_back(g.add_task(t, on_dp));
      }
      if (in.overlap_param_gather) {
        g.add_dependency(gathers.front(), compute_order.front());
        g.add_dependency(gathers.back(), compute_order.size() > 1 ? compute_order[1] : compute_order.front());
      } else {
        const int after = optimizer >= 0 ? optimizer : (buckets.empty() ? last_backward : buckets.back());
        for (int gather : gathers) g.add_dependency(after, gather);
      }
    }
  }
  return out;
}

}  // namespace tp::sim
