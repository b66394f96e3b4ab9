// Every catalog model on a sensible cluster gives a full breakdown and a verdict: the cluster is
// DGX H100 nodes enough for 16 bytes per parameter at half of the GPU memory, tensor parallelism the
// largest power of two up to 8 that divides the heads, ZeRO-1, selective recompute, and for MoE models expert
// parallelism over the largest power of two of the data-parallel ranks that divides the experts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "catalog.h"
#include "plan.h"
#include "tests/test_support.h"

namespace tp {
namespace {

TEST(CatalogModels, EveryModelGetsABreakdownAndAVerdict) {
  for (const auto& [key, m] : Catalog::builtin().models()) {
    SCOPED_TRACE(key);
    const double params = total_parameters(m);
    int tp = 8;
    while (m.heads % tp != 0 || m.kv_heads % tp != 0) tp /= 2;  // whole KV heads per TP rank
    const double gpus_needed = params * 16.0 / (0.5 * 80.0 * 1024 * 1024 * 1024);
    int nodes = 1;
    while (nodes * 8 < gpus_needed) nodes *= 2;
    int ep = 1;
    while (m.moe.enabled() && 2 * ep <= nodes * 8 / tp && m.moe.experts % (2 * ep) == 0) ep *= 2;
    Scenario s = test::scenario("model: " + key + "\ncluster: {preset: dgx-h100, nodes: " + std::to_string(nodes) +
                                "}\ntraining: {sequence_length: 2048, micro_batch: 1, tokens: 10 G}\n"
                                "parallel: {tp: " + std::to_string(tp) + ", pp: 1, ep: " + std::to_string(ep) +
                                ", zero: 1, recompute: selective}\n");
    Plan p = make_plan(s, default_profile(s.cluster.gpu));
    // Megatron (the default framework) holds the vocabulary padded to a multiple of 128 x tp in the
    // embedding and, untied, in the output layer as well (layer_code_rules.h, vocab_multiple).
    const double multiple = 128.0 * tp;
    const double padded = std::ceil(static_cast<double>(m.vocab) / multiple) * multiple;
    const double padding = (padded - static_cast<double>(m.vocab)) * static_cast<double>(m.hidden) * (m.tied_embeddings ? 1 : 2);
    EXPECT_EQ(p.estimate.parameters_total, params + padding);
    EXPECT_GT(p.estimate.memory.weights.value, 0.0);
    EXPECT_GT(p.estimate.memory.activations.value, 0.0);
    EXPECT_GT(p.estimate.memory.total.value, p.estimate.memory.weights.value);
    EXPECT_EQ(p.estimate.feasible, p.estimate.memory.total <= p.estimate.usable);
    EXPECT_TRUE(std::isfinite(p.time.step.value));
    // The least here: gpt2-355m, 4.6 %: tp 8 over a 1,024-wide model leaves 128-wide GEMM slices beside
    // four TP collectives per layer (qwen3-30b-a3b, at tp 8 before KV heads had to be whole per rank, 3.6 %).
    EXPECT_GT(p.time.mfu, 0.03);
    std::printf("%-16s tp %d ep %2d on %3d GPUs: MFU %.1f %%\n", key.c_str(), tp, ep, nodes * 8, 100.0 * p.time.mfu);
    EXPECT_LT(p.time.mfu, 0.9);
    EXPECT_GT(p.run.cost.value, 0.0);
    EXPECT_GT(p.run.energy_kwh, 0.0);
  }
}

}  // namespace
}  // namespace tp
