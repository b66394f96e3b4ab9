// The suite plan: the scenario's own layer GEMMs (fwd / dgrad / wgrad per TP degree) and the grids.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "errors.h"
#include "kernel_traffic.h"
#include "op_graph.h"
#include "suite_plan.h"
#include "test_support.h"

namespace tp {
namespace {

// Llama 3.1 8B, 8192 tokens: h 4096, 32 heads of 128, 8 KV heads, SwiGLU ffn 14336, vocab 128256.
Scenario llama8b(int tp = 8, int mb = 1) {
  return test::scenario("name: t\nmodel: llama3.1-8b\ncluster: {preset: dgx-h100, nodes: 1}\n"
                        "training: {sequence_length: 8192, global_batch: 64, micro_batch: " + std::to_string(mb) +
                        "}\nparallel: {tp: " + std::to_string(tp) + ", pp: 1}\n");
}

const Measurement* find(const std::vector<Measurement>& v, const std::string& label) {
  for (const auto& m : v) {
    if (m.label == label) return &m;
  }
  return nullptr;
}

void expect_shape(const std::vector<Measurement>& v, const std::string& label, std::int64_t m, std::int64_t n, std::int64_t k) {
  const Measurement* x = find(v, label);
  ASSERT_NE(x, nullptr) << label;
  EXPECT_EQ(x->gemm.m, m) << label;
  EXPECT_EQ(x->gemm.n, n) << label;
  EXPECT_EQ(x->gemm.k, k) << label;
}

TEST(SuitePlan, LayerGemmsOfLlama8bAtTp8) {
  const auto g = scenario_gemms(llama8b(), 8, Precision::bf16);
  // qkv: column-parallel, out = (4096 + 2 x 1024) / 8 = 768.
  expect_shape(g, "qkv fwd tp=8", 8192, 768, 4096);
  expect_shape(g, "qkv dgrad tp=8", 8192, 4096, 768);
  expect_shape(g, "qkv wgrad tp=8", 4096, 768, 8192);
  // attention_out: row-parallel, in = 4096 / 8 = 512.
  expect_shape(g, "attention_out fwd tp=8", 8192, 4096, 512);
  expect_shape(g, "attention_out wgrad tp=8", 512, 4096, 8192);
  // fc1: SwiGLU gate + up, out = 2 x 14336 / 8 = 3584; fc2 row-parallel in = 1792.
  expect_shape(g, "fc1 fwd tp=8", 8192, 3584, 4096);
  expect_shape(g, "fc2 fwd tp=8", 8192, 4096, 1792);
  expect_shape(g, "fc2 dgrad tp=8", 8192, 1792, 4096);
  // Logits: vocabulary-parallel over Megatron's padded vocabulary, the shape the planner times:
  // 128256 -> 129024 (the next multiple of 128 x 8), / 8 = 16128.
  expect_shape(g, "output fwd tp=8", 8192, 16128, 4096);
  EXPECT_EQ(g.size(), 5u * 3u);
  for (const auto& m : g) EXPECT_EQ(m.dtype, Precision::bf16);
}

TEST(SuitePlan, LayerGemmFlopsMatchTheOpGraph) {
  // Each of fwd, dgrad and wgrad does the forward's FLOPs / tp; together 3 x (fwd FLOPs of the GEMM ops) / tp.
  const Scenario s = llama8b(4, 2);
  const OpGraph og = build_op_graph(s.model, s.training, 4);  // the logits over the vocabulary padded at tp 4
  double graph = 0;
  for (const auto* ops : {&og.layer, &og.head}) {
    for (const Op& op : *ops) {
      if (op.kind == OpKind::gemm) graph += op.fwd_flops * 2 /* micro-batch */ / 4 /* tp */;
    }
  }
  double planned = 0;
  for (const auto& m : scenario_gemms(s, 4, Precision::bf16)) planned += m.gemm.flops();
  EXPECT_NEAR(planned, 3.0 * graph, 1e-9 * planned);
}

TEST(SuitePlan, TpDegreesDivideHeadsUpToTheNode) {
  EXPECT_EQ(default_tp_degrees(llama8b()), (std::vector<int>{1, 2, 4, 8}));
}

TEST(SuitePlan, ParseSuites) {
  EXPECT_EQ(parse_suites("gemm, memory"), (std::vector<Suite>{Suite::gemm, Suite::memory}));
  EXPECT_EQ(parse_suites("all").size(), static_cast<size_t>(kSuiteCount));
  try {
    (void)parse_suites("gemm,colectives");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "command line: --suite: unknown suite 'colectives' (gemm, attention, kernels, memory, collectives, power or all); "
              "did you mean 'collectives'?");
  }
}

TEST(SuitePlan, CollectiveSizesLikeNcclTests) {
  // nccl-tests -b 8 -e 1G -f 2: 8 B, 16 B, ... 1 GiB = 28 sizes.
  const auto s = collective_sizes(8, 1024.0 * 1024 * 1024);
  ASSERT_EQ(s.size(), 28u);
  EXPECT_EQ(s.front(), 8);
  EXPECT_EQ(s.back(), 1024.0 * 1024 * 1024);
  EXPECT_EQ(s[1], 16);
}

TEST(SuitePlan, WholePlanCoversEveryFamily) {
  SuiteOptions o;
  const Scenario s = llama8b();
  const auto plan = plan_suite(o, &s);
  std::map<MeasuredOp, int> count;
  for (const auto& m : plan) count[m.op]++;
  for (int i = 0; i < kMeasuredOpCount; ++i) {
    const MeasuredOp op = static_cast<MeasuredOp>(i);
    if (op == MeasuredOp::broadcast) continue;  // not planned: all_reduce covers the ring
    EXPECT_GT(count[op], 0) << to_string(op);
  }
  EXPECT_EQ(count[MeasuredOp::all_reduce], 28);
  // Every dtype has a grid; the scenario's shapes are in and not duplicated.
  for (Precision p : o.gemm_dtypes) {
    EXPECT_TRUE(std::any_of(plan.begin(), plan.end(), [&](const Measurement& m) { return m.op == MeasuredOp::gemm && m.dtype == p; }))
        << to_string(p);
  }
  int qkv8 = 0;
  for (const auto& m : plan) qkv8 += m.label.find("qkv fwd tp=8") != std::string::npos ? 1 : 0;
  EXPECT_EQ(qkv8, 1);
  // The scenario's attention shape: 32 / 8 = 4 heads, 1 KV head, causal, fused and unfused.
  const bool has = std::any_of(plan.begin(), plan.end(), [](const Measurement& m) {
    return m.op == MeasuredOp::attention_forward && m.attention.heads == 4 && m.attention.kv_heads == 1 &&
           m.attention.seq_q == 8192 && m.attention.causal && m.label == "scenario tp=8";
  });
  EXPECT_TRUE(has);
}

TEST(SuitePlan, OnlyTheAskedSuites) {
  SuiteOptions o;
  o.suites = {Suite::memory};
  o.quick = true;
  for (const auto& m : plan_suite(o, nullptr)) EXPECT_TRUE(is_memory(m.op) || m.op == MeasuredOp::kernel_launch) << to_string(m.op);
}

// The kernels suite plans every kernel class on fused_ref.py's sizes (../shared/measurements/scripts).
TEST(SuitePlan, KernelsSuiteCoversEveryClassOnRealisticSizes) {
  SuiteOptions o;
  o.suites = {Suite::kernels};
  const auto plan = plan_suite(o, nullptr);
  std::map<KernelClass, int> count;
  for (const auto& m : plan) {
    ASSERT_EQ(m.op, MeasuredOp::memory_kernel);
    ASSERT_GT(m.rows, 0);
    ASSERT_GT(m.cols, 0);
    count[m.kernel]++;
  }
  for (int i = 0; i < kKernelClassCount; ++i) EXPECT_GT(count[static_cast<KernelClass>(i)], 0) << to_string(static_cast<KernelClass>(i));
  // fused_ref.py: 3 token x hidden sizes, 3 token x vocab sizes, 2 parameter counts x 2 state dtypes.
  EXPECT_EQ(count[KernelClass::rmsnorm_fwd], 3);
  EXPECT_EQ(count[KernelClass::cross_entropy], 3);
  EXPECT_EQ(count[KernelClass::adamw], 4);
  const bool big_gelu = std::any_of(plan.begin(), plan.end(), [](const Measurement& m) {
    return m.kernel == KernelClass::gelu_fwd && m.rows == 16384 && m.cols == 4 * 8192;
  });
  EXPECT_TRUE(big_gelu);
  for (const auto& m : plan) {
    if (m.kernel == KernelClass::rotary_fwd) {
      EXPECT_EQ(m.cols % kRotaryHeadDim, 0);
    }
  }
  EXPECT_EQ(parse_suites("kernels"), std::vector<Suite>{Suite::kernels});
}

// Fused attention on fused_ref.py's shapes (../shared/measurements/scripts): d 128 with 32/32 and
// 32/8 heads, d 64 with 32/32, seq 1k..16k (5 lengths), causal and not, forward and backward:
// (2 + 1) x 5 x 2 x 2 = 60 cases, at 16 Ki tokens per run.
TEST(SuitePlan, FusedAttentionOnTheReferenceShapes) {
  SuiteOptions o;
  o.suites = {Suite::attention};
  int cases = 0;
  bool long_gqa = false;
  for (const auto& m : plan_suite(o, nullptr)) {
    if (m.label.rfind("fused_ref", 0) != 0) continue;
    ++cases;
    EXPECT_EQ(m.impl, AttentionImpl::fused);
    EXPECT_EQ(m.attention.batch * m.attention.seq_q, 16384);
    long_gqa |= m.op == MeasuredOp::attention_backward && m.attention.seq_q == 16384 && m.attention.kv_heads == 8 &&
                m.attention.head_dim == 128 && m.attention.causal;
  }
  EXPECT_EQ(cases, 60);
  EXPECT_TRUE(long_gqa);
}

// Minimal traffic per class, by hand from fused_ref.py's bytes_moved (n = bf16 bytes of the main tensor).
TEST(KernelTraffic, MatchesTheReferenceScriptDefinitions) {
  const double n = 8192.0 * 4096 * 2;
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::rmsnorm_fwd, Precision::bf16, 8192, 4096), 2 * n);
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::rmsnorm_bwd, Precision::bf16, 8192, 4096), 3 * n);
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::layernorm_bwd, Precision::bf16, 8192, 4096), 3 * n);
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::residual_add, Precision::bf16, 8192, 4096), 3 * n);
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::cast_to_fp32, Precision::bf16, 8192, 4096), n + 2 * n);
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::cast_to_16bit, Precision::bf16, 8192, 4096), 2 * n + n);
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::gelu_bwd, Precision::bf16, 8192, 4096), 3 * n);
  // swiglu_fwd_eager: 2 na + na; swiglu_bwd_eager: 2 na + 2 na + na (na = the output's bytes).
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::swiglu_fwd, Precision::bf16, 8192, 4096), 3 * n);
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::swiglu_bwd, Precision::bf16, 8192, 4096), 5 * n);
  // adamw_fused: nparam x bytes x 7.
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::adamw, Precision::fp32, 1000, 1), 1000.0 * 4 * 7);
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::adamw, Precision::bf16, 1000, 1), 1000.0 * 2 * 7);
  // Cross-entropy forward + backward on bf16 logits: read, read again, write the gradient.
  EXPECT_DOUBLE_EQ(kernel_bytes_moved(KernelClass::cross_entropy, Precision::bf16, 8192, 50257), 3 * 8192.0 * 50257 * 2);
}

}  // namespace
}  // namespace tp
