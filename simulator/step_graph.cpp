#include "step_graph.h"

#include <algorithm>
#include <stdexcept>

#include "gradient_buckets.h"
#include "schedule.h"
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

Task make_task(TaskKind k, int s, int c, int j, double d) {
  Task t;
  t.kind = k;
  t.stage = s;
  t.chunk = c;
  t.micro_batch = j;
  t.duration = d;
  return t;
}

// What the stream order of one stage leaves for its step-level tasks.
struct StageOrdered {
  std::vector<Zero3Piece> sequence;  // ZeRO-3: the stage's per-layer pieces in stream order
  std::vector<int> last_micro_batch;  // per chunk, the micro-batch whose backward runs last
  std::vector<GradientSource> grad_final;  // per chunk, the last gradient-producing task
  int last_backward = -1;
  int last_backward_end = -1;  // last_backward, or the exposed TP/CP/EP collective after it
  std::vector<int> compute_order;     // the stream's order before the optimizer
};

// The phases of build_step_graph, sharing the ids of every (stage, chunk, micro-batch).
class Builder {
 public:
  Builder(const StepInputs& in, StepGraph& out)
      : in_(in), out_(out), p_(in.stages), v_(in.chunks), m_(in.micro_batches), split_(splits_backward(in.schedule)),
        per_layer_(in.per_unit) {
    out_.stages = p_;
    out_.chunks = v_;
    out_.micro_batches = m_;
    for (int s = 0; s < p_; ++s) {
      out_.stream.push_back(g().add_resource({ResourceKind::stream, s, "stage " + std::to_string(s) + " compute", {}}));
      out_.link.push_back(g().add_resource({ResourceKind::link, s, "stage " + std::to_string(s) + " link", {}}));
      const std::string dp_name = "stage " + std::to_string(s) + " DP link";
      out_.dp_link.push_back(in.dp_own_link ? g().add_resource({ResourceKind::link, s, dp_name, {}}) : out_.link.back());
    }
    ids_.resize(static_cast<std::size_t>(p_) * static_cast<std::size_t>(v_) * static_cast<std::size_t>(m_));
    if (per_layer_) pieces_.resize(ids_.size());
  }

  void build() {
    const std::vector<StageOrder> orders = schedule_order(in_.schedule, PipelineShape{p_, v_, m_});
    for (int s = 0; s < p_; ++s) {
      for (int c = 0; c < v_; ++c) {
        for (int j = 0; j < m_; ++j) add_compute(s, c, j);
      }
    }
    add_pipeline_transfers();
    ends_.resize(static_cast<std::size_t>(p_));
    for (int s = 0; s < p_; ++s) add_stage(s, orders[static_cast<std::size_t>(s)]);
    add_step_end_syncs();
  }

 private:
  TaskGraph& g() { return out_.graph; }
  std::size_t at(int s, int c, int j) const {
    return (static_cast<std::size_t>(s) * static_cast<std::size_t>(v_) + static_cast<std::size_t>(c)) * static_cast<std::size_t>(m_) +
           static_cast<std::size_t>(j);
  }

  // Compute tasks of one (stage, chunk, micro-batch); ZeRO-3: per-layer pieces.
  void add_compute(int s, int c, int j) {
    const StageTiming& st = in_.stage[static_cast<std::size_t>(s)].timing;
    const Placement on_stream{out_.stream[static_cast<std::size_t>(s)], 0};
    const double f = st.forward.value / v_, rc = st.recompute.value / v_;
    const double bi = st.backward_input.value / v_, bw = st.backward_weight.value / v_;
    // ZeRO-3's per-layer pieces run each layer's collectives after it; otherwise one task per pass.
    const double cf = per_layer_ ? 0.0 : st.comm_forward.value / v_, cb = per_layer_ ? 0.0 : st.comm_backward.value / v_;
    Ids& x = ids_[at(s, c, j)];
    if (per_layer_) {
      LayerPieces& lp = pieces_[at(s, c, j)];
      const int layers = chunk_layers(in_.stage[static_cast<std::size_t>(s)].layers, v_, c);
      ChunkWork work{s, c, j, layers, f, rc, split_ ? bi : bi + bw, bw, split_};
      work.comm_forward = st.comm_forward.value / v_;
      work.comm_backward = st.comm_backward.value / v_;
      lp = add_layer_pieces(g(), on_stream, in_.zero3, work);
      x.f = lp.forward.front().task;
      x.f_last = lp.forward.back().task;
      x.b = lp.backward.front().task;
      x.b_last = lp.backward.back().task;
    } else {
      x.f = g().add_task(make_task(TaskKind::forward, s, c, j, f), on_stream);
    }
    if (cf > 0) {
      const int f_out = x.out_forward();
      x.cf = g().add_task(make_task(TaskKind::collective_forward, s, c, j, cf), on_stream);
      g().add_dependency(f_out, x.cf);
    }
    if (!per_layer_) {
      if (rc > 0) x.r = g().add_task(make_task(TaskKind::recompute, s, c, j, rc), on_stream);
      x.b = g().add_task(make_task(split_ ? TaskKind::backward_input : TaskKind::backward, s, c, j, split_ ? bi : bi + bw), on_stream);
      if (x.r >= 0) g().add_dependency(x.r, x.b);
    }
    const int b_out = x.out_backward();
    if (cb > 0) {
      x.cb = g().add_task(make_task(TaskKind::collective_backward, s, c, j, cb), on_stream);
      g().add_dependency(b_out, x.cb);
    }
    if (split_) {
      x.w = per_layer_ ? pieces_[at(s, c, j)].weight.front().task
                       : g().add_task(make_task(TaskKind::backward_weight, s, c, j, bw), on_stream);
      g().add_dependency(b_out, x.w);
    }
  }

  // Pipeline transfers between virtual stages (chunk c of stage s is virtual stage c·p + s).
  void add_pipeline_transfers() {
    const double hop = p_ > 1 ? in_.p2p_hop.value : 0.0;
    const int virtual_stages = p_ * v_;
    for (int s = 0; s < p_; ++s) {
      const Placement on_link{out_.link[static_cast<std::size_t>(s)], kChannelP2p};
      for (int c = 0; c < v_; ++c) {
        const int vs = c * p_ + s;
        for (int j = 0; j < m_; ++j) {
          const Ids& x = ids_[at(s, c, j)];
          if (vs + 1 < virtual_stages) {
            const Ids& next = ids_[at((vs + 1) % p_, (vs + 1) / p_, j)];
            link(x.out_forward(), next.f, hop, make_task(TaskKind::send_forward, s, c, j, hop), on_link);
          } else {
            g().add_dependency(x.out_forward(), x.first_backward());  // the loss: backward starts here
          }
          if (vs > 0) {
            const Ids& prev = ids_[at((vs - 1) % p_, (vs - 1) / p_, j)];
            link(x.out_backward(), prev.first_backward(), hop, make_task(TaskKind::send_backward, s, c, j, hop), on_link);
          }
        }
      }
    }
  }

  // `to` waits for `from`, through a send task when the hop takes time.
  void link(int from, int to, double hop, const Task& send, Placement on_link) {
    if (hop > 0) {
      const int t = g().add_task(send, on_link);
      g().add_dependency(from, t);
      g().add_dependency(t, to);
    } else {
      g().add_dependency(from, to);
    }
  }

  // The stage's stream in the schedule's order.
  StageOrdered order_stage(int s, const StageOrder& order) {
    const int stream = out_.stream[static_cast<std::size_t>(s)];
    StageOrdered r;
    r.last_micro_batch.assign(static_cast<std::size_t>(v_), -1);
    r.grad_final.assign(static_cast<std::size_t>(v_), GradientSource{});
    auto append = [&](const std::vector<Zero3Piece>& ps) {
      for (const Zero3Piece& piece : ps) g().append_to_stream(stream, piece.task);
      r.sequence.insert(r.sequence.end(), ps.begin(), ps.end());
    };
    for (const Slot& slot : order) {
      const std::size_t i = at(s, slot.chunk, slot.micro_batch);
      const Ids& x = ids_[i];
      const auto chunk = static_cast<std::size_t>(slot.chunk);
      switch (slot.pass) {
        case Pass::forward:
          if (per_layer_) append(pieces_[i].forward);
          else g().append_to_stream(stream, x.f);
          if (x.cf >= 0) g().append_to_stream(stream, x.cf);
          break;
        case Pass::backward:
          if (per_layer_) {
            append(pieces_[i].backward);
          } else {
            if (x.r >= 0) g().append_to_stream(stream, x.r);
            g().append_to_stream(stream, x.b);
          }
          if (x.cb >= 0) g().append_to_stream(stream, x.cb);
          r.last_micro_batch[chunk] = slot.micro_batch;
          if (!split_) {
            r.last_backward = x.b_last >= 0 ? x.b_last : x.b;
            r.last_backward_end = x.out_backward();
            r.grad_final[chunk] = grad_source(s, slot.chunk, slot.micro_batch);
          }
          break;
        case Pass::weight:
          if (per_layer_) append(pieces_[i].weight);
          else g().append_to_stream(stream, x.w);
          r.last_backward = per_layer_ ? pieces_[i].weight.back().task : x.w;
          r.last_backward_end = r.last_backward;
          r.grad_final[chunk] = grad_source(s, slot.chunk, slot.micro_batch);
          break;
      }
    }
    r.compute_order = g().resources()[static_cast<std::size_t>(stream)].order;
    return r;
  }

  // Data-parallel gradient reduce in buckets (not under ZeRO-3, which reduce-scatters per unit): after the
  // stage's last backward, or after every micro-batch's (add_micro_batch_reduces).
  std::vector<int> add_reduce_buckets(int s, const StageOrdered& o) {
    const StageInputs& si = in_.stage[static_cast<std::size_t>(s)];
    const Placement on_dp{out_.dp_link[static_cast<std::size_t>(s)], kChannelDp};
    if (si.dp_reduce.value <= 0) return {};
    if (in_.reduce_every_micro_batch) return add_micro_batch_reduces(s);
    if (in_.overlap_grad_reduce) {
      return add_gradient_reduce(g(), on_dp, s, -1, si.dp_reduce.value, in_.dp_buckets, o.grad_final, true);
    }
    // Not overlapped: the whole reduce after the stage's last backward, its exposed collectives included (the
    // training loop reduces once the backward has returned: DeepSpeed on the compute stream, Megatron's
    // finish_grad_sync).
    return add_gradient_reduce(g(), on_dp, s, -1, si.dp_reduce.value, in_.dp_buckets, {{o.last_backward_end, -1}}, false);
  }

  // The gradient-producing compute of (stage s, chunk c, micro-batch j): the weight-gradient or backward
  // task, with the recompute before it, not the exposed TP/CP/EP collective after it.
  GradientSource grad_source(int s, int c, int j) const {
    const Ids& x = ids_[at(s, c, j)];
    if (split_ && x.w >= 0) return {per_layer_ ? pieces_[at(s, c, j)].weight.back().task : x.w, -1};
    if (x.b_last >= 0) return {x.b_last, -1};
    return {x.b, x.r};
  }

  // A whole gradient reduce after each micro-batch's backward (gradient_buckets.h). Not overlapped (DeepSpeed's
  // overlap_comm off: the reduce runs on the compute stream): the buckets follow the micro-batch's backward, its
  // exposed collectives included (the loop reduces once the backward has returned, as add_reduce_buckets), and
  // add_stage holds the stream's next task for them.
  std::vector<int> add_micro_batch_reduces(int s) {
    const StageInputs& si = in_.stage[static_cast<std::size_t>(s)];
    const Placement on_dp{out_.dp_link[static_cast<std::size_t>(s)], kChannelDp};
    std::vector<int> buckets;
    std::vector<GradientSource> grad(static_cast<std::size_t>(v_));
    const bool after_returned_backward = !in_.overlap_grad_reduce && !split_;
    for (int j = 0; j < m_; ++j) {
      for (int c = 0; c < v_; ++c) {
        grad[static_cast<std::size_t>(c)] = after_returned_backward ? GradientSource{ids_[at(s, c, j)].out_backward(), -1}
                                                                    : grad_source(s, c, j);
      }
      const std::vector<int> of_micro_batch =
          add_gradient_reduce(g(), on_dp, s, j, si.dp_reduce.value, in_.dp_buckets, grad, in_.overlap_grad_reduce);
      buckets.insert(buckets.end(), of_micro_batch.begin(), of_micro_batch.end());
    }
    return buckets;
  }

  // ZeRO-1/2 parameter all-gather: the previous step's, overlapped with this step's start, or after
  // the optimizer.
  void add_zero12_gathers(int s, const StageOrdered& o, const std::vector<int>& buckets, int optimizer) {
    const StageInputs& si = in_.stage[static_cast<std::size_t>(s)];
    const Placement on_dp{out_.dp_link[static_cast<std::size_t>(s)], kChannelDp};
    const int per_chunk = std::max(1, (std::max(1, in_.dp_buckets) + v_ - 1) / v_);
    std::vector<std::vector<int>> gathers(static_cast<std::size_t>(v_));  // per chunk, in link order
    for (int c = 0; c < v_; ++c) {
      for (int i = 0; i < per_chunk; ++i) {
        Task t = make_task(TaskKind::dp_gather, s, c, -1, si.dp_gather.value / (v_ * per_chunk));
        t.bucket = c * per_chunk + i;
        gathers[static_cast<std::size_t>(c)].push_back(g().add_task(t, on_dp));
      }
    }
    if (in_.overlap_param_gather) return overlap_chunk_gathers(s, o.compute_order, gathers);
    const int after = optimizer >= 0 ? optimizer : (buckets.empty() ? o.last_backward : buckets.back());
    for (const std::vector<int>& chunk : gathers) {
      for (int gather : chunk) g().add_dependency(after, gather);
    }
  }

  // The gathers overlapped with the step's first forwards (Megatron-Core's overlap_param_gather), bucket after
  // bucket in forward order: the forward pre-hook waits for a bucket, then dispatches the next (r0.8
  // distrib_optimizer.py, _finish_param_sync_helper; later versions' finish_param_sync without
  // align_param_gather), so a chunk's gather runs beside that chunk's first forward, its first bucket ahead of
  // it, and the pass after that forward waits for the last bucket, the gather overlapping the forward and its
  // TP collectives (planner/data_parallel_time.cpp). The chain carries on into the next chunk: its first bucket
  // follows this chunk's last, the rest wait for that chunk's first forward to start (the task before it on
  // the stream and the forward that sends it its input).
  void overlap_chunk_gathers(int s, const std::vector<int>& order, const std::vector<std::vector<int>>& gathers) {
    for (int c = 0; c < v_; ++c) {
      const std::vector<int>& chunk = gathers[static_cast<std::size_t>(c)];
      const Ids& first = ids_[at(s, c, 0)];
      g().add_dependency(chunk.front(), first.f);
      if (c > 0) g().add_dependency(gathers[static_cast<std::size_t>(c) - 1].back(), chunk.front());
      const auto start = std::find(order.begin(), order.end(), first.f);
      const auto out = std::find(start, order.end(), first.out_forward());
      if (out != order.end() && out + 1 != order.end()) g().add_dependency(chunk.back(), *(out + 1));
      std::vector<int> starters;  // what the chunk's first forward waits for, besides its first bucket
      if (start != order.begin() && start != order.end()) starters.push_back(*(start - 1));
      const int vs = c * p_ + s;  // the virtual stage
      if (vs > 0) starters.push_back(ids_[at((vs - 1) % p_, (vs - 1) / p_, 0)].out_forward());
      for (std::size_t i = 1; i < chunk.size(); ++i) {
        for (int t : starters) g().add_dependency(t, chunk[i]);
      }
    }
  }

  // A task of `seconds` on stage s's compute stream, started once the gradient reduce `buckets` are
  // done; -1 (no task) when `seconds` is not positive.
  int add_after_reduce(TaskKind kind, int s, int stream, double seconds, const std::vector<int>& buckets) {
    if (seconds <= 0) return -1;
    const int t = g().add_task(make_task(kind, s, -1, -1, seconds), Placement{stream, 0});
    g().append_to_stream(stream, t);
    for (int b : buckets) g().add_dependency(b, t);
    return t;
  }

  // Stream order from the schedule, then the step-level tasks of the stage.
  void add_stage(int s, const StageOrder& order) {
    const StageInputs& si = in_.stage[static_cast<std::size_t>(s)];
    const int stream = out_.stream[static_cast<std::size_t>(s)];
    const StageOrdered o = order_stage(s, order);
    const Placement on_dp{out_.dp_link[static_cast<std::size_t>(s)], kChannelDp};
    const std::vector<int> buckets = per_layer_ ? add_zero3_transfers(g(), on_dp, in_, s, o.sequence, o.last_micro_batch, o.last_backward)
                                                : add_reduce_buckets(s, o);
    // A micro-batch's reduce that the backward waits for, or that is not overlapped (on the compute stream's
    // path), ends before the next micro-batch's work; a reduce after the last micro-batch holds nothing.
    if (in_.reduce_waited_after_backward || !in_.overlap_grad_reduce) {
      hold_compute_after_each_backward(g(), o.compute_order, buckets);
    }
    // Sequence parallelism: the stage's replicated parameters' gradients summed over its TP group once the
    // data-parallel reduce is done (Megatron's finalize_model_grads), exposed on the compute stream.
    const int sp_sync = add_after_reduce(TaskKind::sp_grad_sync, s, stream, si.timing.step_end_tp.value, buckets);
    // The planner charges the compute that hid data-parallel traffic its slowdown as one block (the
    // simulator does not slow the overlapped tasks themselves): on the compute stream once the
    // gradients are reduced, before the optimizer.
    add_after_reduce(TaskKind::overlap_slowdown, s, stream, si.overlap_contention.value, buckets);
    const int optimizer = add_after_reduce(TaskKind::optimizer, s, stream, si.optimizer.value, buckets);
    if (!per_layer_ && in_.zero >= 1 && in_.zero <= 2 && si.dp_gather.value > 0) add_zero12_gathers(s, o, buckets, optimizer);
    StageEnd& end = ends_[static_cast<std::size_t>(s)];
    if (sp_sync >= 0) {
      end.grads_ready = {sp_sync};
    } else {
      end.grads_ready = buckets;
      end.grads_ready.push_back(o.last_backward);
    }
    end.optimizer = optimizer;
  }

  // The tied embedding's gradient all-reduce between the first and last stage (StageTiming::step_end_ends,
  // from the planner's op graph entry): one collective of the stages that take part, which starts when all
  // of them have their gradients reduced (Megatron's finalize_model_grads runs it after finish_grad_sync
  // and the sequence-parallel all-reduce) and ends before their optimizer.
  void add_step_end_syncs() {
    std::vector<int> members;
    for (int s = 0; s < p_; ++s) {
      if (in_.stage[static_cast<std::size_t>(s)].timing.step_end_ends.value > 0) members.push_back(s);
    }
    std::vector<int> syncs;
    for (int s : members) {
      const double d = in_.stage[static_cast<std::size_t>(s)].timing.step_end_ends.value;
      const int t = g().add_task(make_task(TaskKind::step_end_sync, s, -1, -1, d),
                                 Placement{out_.link[static_cast<std::size_t>(s)], kChannelP2p});
      const int optimizer = ends_[static_cast<std::size_t>(s)].optimizer;
      if (optimizer >= 0) g().add_dependency(t, optimizer);
      syncs.push_back(t);
    }
    for (int s : members) {
      for (int ready : ends_[static_cast<std::size_t>(s)].grads_ready) {
        for (int t : syncs) {
          if (ready >= 0) g().add_dependency(ready, t);
        }
      }
    }
  }

  const StepInputs& in_;
  StepGraph& out_;
  const int p_, v_, m_;
  const bool split_, per_layer_;  // per_layer_: ZeRO-3, layer-by-layer pieces each gathered on its own
  std::vector<Ids> ids_;
  std::vector<LayerPieces> pieces_;
  // Per stage: the tasks after which its gradients are reduced, and its optimizer task (-1: none).
  struct StageEnd {
    std::vector<int> grads_ready;
    int optimizer = -1;
  };
  std::vector<StageEnd> ends_;
};

}  // namespace

StepGraph build_step_graph(const StepInputs& in) {
  const int p = in.stages, v = in.chunks, m = in.micro_batches;
  if (p < 1 || v < 1 || m < 1 || static_cast<int>(in.stage.size()) != p) {
    throw std::invalid_argument("step inputs: need stages, chunks, micro-batches and one timing per stage");
  }
  StepGraph out;
  Builder(in, out).build();
  return out;
}

}  // namespace tp::sim
