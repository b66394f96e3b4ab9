#include "suite_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include "errors.h"
#include "kernel_traffic.h"
#include "gemm_shapes.h"
#include "op_graph.h"
#include "yaml_reader.h"

namespace tp {

const char* to_string(Suite s) {
  switch (s) {
    case Suite::gemm: return "gemm";
    case Suite::attention: return "attention";
    case Suite::memory: return "memory";
    case Suite::collectives: return "collectives";
    case Suite::power: return "power";
    case Suite::kernels: return "kernels";
  }
  return "?";
}

std::vector<Suite> parse_suites(const std::string& list, const std::string& field) {
  std::vector<Suite> out;
  std::vector<std::string> names;
  for (int i = 0; i < kSuiteCount; ++i) names.emplace_back(to_string(static_cast<Suite>(i)));
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) continue;
    if (item == "all") {
      for (int i = 0; i < kSuiteCount; ++i) out.push_back(static_cast<Suite>(i));
      continue;
    }
    bool found = false;
    for (int i = 0; i < kSuiteCount; ++i) {
      if (item == names[static_cast<size_t>(i)]) {
        out.push_back(static_cast<Suite>(i));
        found = true;
      }
    }
    if (!found) {
      const std::string hint = closest_key(item, names);
      throw InputError({"command line", 0, 0}, field,
                       "unknown suite '" + item + "' (gemm, attention, kernels, memory, collectives, power or all)" +
                           (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
    }
  }
  if (out.empty()) throw InputError({"command line", 0, 0}, field, "no suite given");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

std::int64_t dim(double v) { return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(std::ceil(v - 1e-9)))); }

Measurement gemm_case(std::int64_t m, std::int64_t n, std::int64_t k, Precision p, const std::string& label) {
  Measurement c;
  c.op = MeasuredOp::gemm;
  c.dtype = p;
  c.gemm.m = m;
  c.gemm.n = n;
  c.gemm.k = k;
  c.label = label;
  return c;
}

Measurement attention_case(MeasuredOp op, AttentionImpl impl, const AttentionShape& a, Precision p, const std::string& label) {
  Measurement c;
  c.op = op;
  c.impl = impl;
  c.attention = a;
  c.dtype = p;
  c.label = label;
  return c;
}

Measurement kernel_case(KernelClass k, Precision p, std::int64_t rows, std::int64_t cols, const std::string& label) {
  Measurement c;
  c.op = MeasuredOp::memory_kernel;
  c.kernel = k;
  c.dtype = p;
  c.rows = rows;
  c.cols = cols;
  c.label = label;
  return c;
}

// Fused attention on the shapes of ../shared/measurements/scripts/fused_ref.py (PyTorch SDPA with the
// cuDNN and FlashAttention backends): head dim 128 with 32 heads (MHA) and 32/8 (GQA), head dim 64
// MHA, sequence 1k-16k at 16 Ki tokens per run, causal and not.
std::vector<std::pair<AttentionShape, std::string>> fused_reference_shapes(bool quick) {
  std::vector<std::pair<AttentionShape, std::string>> out;
  const std::vector<std::int64_t> seqs = quick ? std::vector<std::int64_t>{1024}
                                               : std::vector<std::int64_t>{1024, 2048, 4096, 8192, 16384};
  for (std::int64_t d : {64, 128}) {
    for (std::int64_t kv : {32, 8}) {
      if (d == 64 && kv == 8) continue;
      for (std::int64_t sq : seqs) {
        for (bool causal : {true, false}) {
          AttentionShape a;
          a.batch = std::max<std::int64_t>(1, 16384 / sq);
          a.heads = 32;
          a.kv_heads = kv;
          a.seq_q = a.seq_kv = sq;
          a.head_dim = d;
          a.causal = causal;
          out.emplace_back(a, "fused_ref d=" + std::to_string(d) + " h=32/" + std::to_string(kv));
        }
      }
    }
  }
  return out;
}

}  // namespace

bool is_scenario_attention_case(const Measurement& m) {
  return is_attention(m.op) && m.label.rfind(kScenarioAttentionLabel, 0) == 0;
}

std::vector<Measurement> kernel_cases(bool quick) {
  std::vector<Measurement> out;
  using K = KernelClass;
  const std::vector<std::pair<std::int64_t, std::int64_t>> token_hidden =
      quick ? std::vector<std::pair<std::int64_t, std::int64_t>>{{1024, 2048}}
            : std::vector<std::pair<std::int64_t, std::int64_t>>{{8192, 2048}, {8192, 4096}, {16384, 8192}};
  for (const auto& [tokens, hidden] : token_hidden) {
    const std::string label = "tokens=" + std::to_string(tokens) + " hidden=" + std::to_string(hidden);
    for (K k : {K::rmsnorm_fwd, K::rmsnorm_bwd, K::layernorm_fwd, K::layernorm_bwd, K::residual_add, K::cast_to_fp32,
                K::cast_to_16bit}) {
      out.push_back(kernel_case(k, Precision::bf16, tokens, hidden, label));
    }
    for (K k : {K::gelu_fwd, K::gelu_bwd, K::swiglu_fwd, K::swiglu_bwd}) {
      out.push_back(kernel_case(k, Precision::bf16, tokens, 4 * hidden, label + " ffn=" + std::to_string(4 * hidden)));
    }
    // q and k of a GQA layer with 8 KV heads: (hidden / 128 + 8) heads of 128.
    const std::int64_t rotary_cols = (hidden / kRotaryHeadDim + 8) * kRotaryHeadDim;
    for (K k : {K::rotary_fwd, K::rotary_bwd}) out.push_back(kernel_case(k, Precision::bf16, tokens, rotary_cols, label + " q+k"));
  }
  const std::vector<std::pair<std::int64_t, std::int64_t>> token_vocab =
      quick ? std::vector<std::pair<std::int64_t, std::int64_t>>{{1024, 50257}}
            : std::vector<std::pair<std::int64_t, std::int64_t>>{{8192, 50257}, {8192, 128256}, {16384, 128256}};
  for (const auto& [tokens, vocab] : token_vocab) {
    out.push_back(kernel_case(K::cross_entropy, Precision::bf16, tokens, vocab,
                              "tokens=" + std::to_string(tokens) + " vocab=" + std::to_string(vocab)));
  }
  const std::vector<std::int64_t> params = quick ? std::vector<std::int64_t>{16'000'000}
                                                 : std::vector<std::int64_t>{250'000'000, 1'000'000'000};
  for (std::int64_t n : params) {
    for (Precision p : {Precision::fp32, Precision::bf16}) {
      out.push_back(kernel_case(K::adamw, p, n, 1, "params=" + std::to_string(n) + " states " + to_string(p)));
    }
  }
  return out;
}

std::vector<Measurement> scenario_gemms(const Scenario& s, int tp, Precision dtype) {
  std::vector<Measurement> out;
  // The graph at this tp: the logits over the vocabulary the framework pads at this degree (the shape the
  // planner asks gemm_seconds for).
  const OpGraph g = build_op_graph(s.model, s.training, tp);
  const double sequences = static_cast<double>(s.training.micro_batch) / std::max(1, s.parallel.cp);
  auto add = [&](const std::vector<Op>& ops) {
    for (const Op& op : ops) {
      if (op.kind != OpKind::gemm || op.gemm_rows <= 0 || op.gemm_cols <= 0) continue;
      const GemmPassShapes x = gemm_pass_shapes(op, tp, s.parallel.ep, sequences);
      const std::string sfx = " tp=" + std::to_string(tp);
      const auto add_case = [&](const GemmDims& d, const char* pass) {
        out.push_back(gemm_case(dim(d.m), dim(d.n), dim(d.k), dtype, std::string(op.name) + pass + sfx));
      };
      add_case(x.forward, " fwd");
      add_case(x.input_grad, " dgrad");
      add_case(x.weight_grad, " wgrad");
    }
  };
  add(g.layer);
  add(g.head);
  return out;
}

std::vector<int> default_tp_degrees(const Scenario& s) {
  std::vector<int> out;
  for (int t = 1; t <= std::max(1, s.cluster.gpus_per_node); t *= 2) {
    if (s.model.heads % t == 0) out.push_back(t);
  }
  if (std::find(out.begin(), out.end(), s.parallel.tp) == out.end()) out.push_back(s.parallel.tp);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<double> collective_sizes(double min_bytes, double max_bytes) {
  std::vector<double> out;
  double b = std::max(1.0, min_bytes);
  while (b < max_bytes * (1 - 1e-12)) {
    out.push_back(b);
    b *= 2;
  }
  out.push_back(max_bytes);
  return out;
}

namespace {

// The power suite's first case: the idle draw before any kernel runs.
Measurement idle_power_case() {
  Measurement idle;
  idle.op = MeasuredOp::power;
  idle.phase = "idle";
  idle.label = "idle before the runs";
  return idle;
}

// The memory suite's first case: the launch latency of an empty kernel.
Measurement kernel_launch_case() {
  Measurement launch;
  launch.op = MeasuredOp::kernel_launch;
  launch.label = "empty kernel";
  return launch;
}

// The scenario's layer GEMMs (when `s` is given) plus the generic grid: squares, a skinny M sweep and a
// short-K sweep (enough to pin the latency floor, k_half and the memory roofline). Not yet merged.
std::vector<Measurement> gemm_suite_cases(const SuiteOptions& o, const Scenario* s) {
  std::vector<Measurement> gemms;
  if (s != nullptr) {
    const std::vector<int> tps = o.tp_degrees.empty() ? default_tp_degrees(*s) : o.tp_degrees;
    for (int t : tps) {
      for (const auto& c : scenario_gemms(*s, t, s->training.precision)) gemms.push_back(c);
    }
  }
  for (Precision p : o.gemm_dtypes) {
    const bool slow = p == Precision::fp32;
    const std::int64_t top = o.quick ? 2048 : (slow ? 8192 : 16384);
    for (std::int64_t d = 128; d <= top; d *= 2) gemms.push_back(gemm_case(d, d, d, p, "grid square"));
    const std::int64_t big = o.quick ? 1024 : (slow ? 4096 : 8192);
    for (std::int64_t m : {16, 64, 256, 1024, 4096}) {
      if (m < big) gemms.push_back(gemm_case(m, big, big, p, "grid skinny M"));
    }
    for (std::int64_t k : {32, 128, 512, 2048}) {
      if (k < big) gemms.push_back(gemm_case(big, big, k, p, "grid short K"));
    }
  }
  return gemms;
}

// Appends `gemms` to `plan`, merging identical cases (same dtype and m, n, k) and joining their labels.
void append_merged_gemms(const std::vector<Measurement>& gemms, std::vector<Measurement>& plan) {
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, size_t> seen;
  for (const auto& c : gemms) {
    const auto key = std::make_tuple(static_cast<int>(c.dtype), c.gemm.m, c.gemm.n, c.gemm.k);
    auto it = seen.find(key);
    if (it != seen.end()) {
      Measurement& first = plan[it->second];
      if (first.label.size() < 200) first.label += "; " + c.label;
      continue;
    }
    seen[key] = plan.size();
    plan.push_back(c);
  }
}

// The scenario's own attention shape per TP degree (its own tp unless `o` names degrees).
std::vector<std::pair<AttentionShape, std::string>> scenario_attention_shapes(const SuiteOptions& o, const Scenario& s) {
  std::vector<std::pair<AttentionShape, std::string>> shapes;
  const std::vector<int> tps = o.tp_degrees.empty() ? std::vector<int>{s.parallel.tp} : o.tp_degrees;
  for (int t : tps) {
    AttentionShape a;
    a.batch = s.training.micro_batch;
    a.heads = std::max(1, s.model.heads / t);
    a.kv_heads = std::max(1, s.model.kv_heads / t);
    if (a.heads % a.kv_heads != 0) a.kv_heads = a.heads;
    a.seq_q = a.seq_kv = s.training.sequence_length / std::max(1, s.parallel.cp);
    a.head_dim = s.model.head_dim;
    a.causal = true;
    shapes.emplace_back(a, kScenarioAttentionLabel + std::to_string(t));
  }
  return shapes;
}

// The generic attention grid: head dim 64 and 128, GQA ratios 1, 4, 8, causal and not, 16 Ki tokens per run.
std::vector<std::pair<AttentionShape, std::string>> grid_attention_shapes(bool quick) {
  std::vector<std::pair<AttentionShape, std::string>> shapes;
  const std::vector<std::int64_t> seqs = quick ? std::vector<std::int64_t>{512, 1024}
                                               : std::vector<std::int64_t>{1024, 2048, 4096, 8192};
  for (std::int64_t d : {64, 128}) {
    for (int ratio : {1, 4, 8}) {
      for (bool causal : {true, false}) {
        for (std::int64_t sq : seqs) {
          AttentionShape a;
          a.heads = d == 64 ? 32 : 16;
          a.kv_heads = a.heads / ratio;
          a.seq_q = a.seq_kv = sq;
          a.head_dim = d;
          a.causal = causal;
          a.batch = std::max<std::int64_t>(1, 16384 / sq);  // 16 Ki tokens per run
          shapes.emplace_back(a, "grid d=" + std::to_string(d) + " gqa=" + std::to_string(ratio));
        }
      }
    }
  }
  return shapes;
}

// Forward and backward of every scenario and grid shape, fused and unfused, then the fused reference shapes.
void append_attention_cases(const SuiteOptions& o, const Scenario* s, std::vector<Measurement>& plan) {
  const Precision p = (s != nullptr && (s->training.precision == Precision::fp16)) ? Precision::fp16 : Precision::bf16;
  std::vector<std::pair<AttentionShape, std::string>> shapes;
  if (s != nullptr) shapes = scenario_attention_shapes(o, *s);
  for (auto& shape : grid_attention_shapes(o.quick)) shapes.push_back(std::move(shape));
  for (const auto& [a, label] : shapes) {
    for (AttentionImpl impl : {AttentionImpl::fused, AttentionImpl::unfused}) {
      plan.push_back(attention_case(MeasuredOp::attention_forward, impl, a, p, label));
      plan.push_back(attention_case(MeasuredOp::attention_backward, impl, a, p, label));
    }
  }
  for (const auto& [a, label] : fused_reference_shapes(o.quick)) {
    plan.push_back(attention_case(MeasuredOp::attention_forward, AttentionImpl::fused, a, p, label));
    plan.push_back(attention_case(MeasuredOp::attention_backward, AttentionImpl::fused, a, p, label));
  }
}

// STREAM-style copy, scale, triad and reduce from 1 MiB per array, growing 4x up to the top size.
void append_memory_cases(const SuiteOptions& o, std::vector<Measurement>& plan) {
  const double top = o.quick ? 64.0 * 1024 * 1024 : o.memory_max_bytes;
  for (MeasuredOp op : {MeasuredOp::memory_copy, MeasuredOp::memory_scale, MeasuredOp::memory_triad, MeasuredOp::memory_reduce}) {
    for (double b = 1024.0 * 1024; b <= top * (1 + 1e-12); b *= 4) {
      Measurement c;
      c.op = op;
      c.dtype = Precision::fp32;
      c.bytes = b;  // per array; the runner records the bytes moved
      c.label = "grid";
      plan.push_back(c);
    }
  }
}

// The sustained power draw while GEMMs run and while memory kernels run.
void append_sustained_power_cases(std::vector<Measurement>& plan) {
  for (const char* phase : {"gemm", "memory"}) {
    Measurement c;
    c.op = MeasuredOp::power;
    c.phase = phase;
    c.label = std::string("sustained ") + phase;
    plan.push_back(c);
  }
}

// Every collective on the doubling size sweep (collective_sizes).
void append_collective_cases(const SuiteOptions& o, std::vector<Measurement>& plan) {
  const double top = o.quick ? 64.0 * 1024 * 1024 : o.collective_max_bytes;
  for (Collective c : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter, Collective::all_to_all,
                       Collective::send_recv}) {
    for (double b : collective_sizes(o.collective_min_bytes, top)) {
      Measurement m;
      m.op = measured_op_of(c);
      m.dtype = Precision::fp32;
      m.bytes = b;
      m.label = "sweep";
      plan.push_back(m);
    }
  }
}

}  // namespace

std::vector<Measurement> plan_suite(const SuiteOptions& o, const Scenario* s) {
  std::vector<Measurement> plan;
  auto wants = [&](Suite x) { return std::find(o.suites.begin(), o.suites.end(), x) != o.suites.end(); };
  if (wants(Suite::power)) plan.push_back(idle_power_case());
  if (wants(Suite::memory)) plan.push_back(kernel_launch_case());
  if (wants(Suite::gemm)) append_merged_gemms(gemm_suite_cases(o, s), plan);
  if (wants(Suite::attention)) append_attention_cases(o, s, plan);
  if (wants(Suite::memory)) append_memory_cases(o, plan);
  if (wants(Suite::kernels)) {
    for (const auto& c : kernel_cases(o.quick)) plan.push_back(c);
  }
  if (wants(Suite::power)) append_sustained_power_cases(plan);
  if (wants(Suite::collectives)) append_collective_cases(o, plan);
  return plan;
}

}  // namespace tp
