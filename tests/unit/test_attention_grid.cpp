// The fused attention grid's balance (model/attention_grid.h). Oracles: a greedy list schedule of the
// grid's blocks simulated here (blocks handed, in launch order, to the SM that frees first), and hand
// computation for a one-wave grid and a grid of equal blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <queue>
#include <vector>

#include "attention_grid.h"

namespace tp {
namespace {

// Work / (SMs x makespan) of the grid scheduled block by block: per sequence and head, tiles 0..nm-1 in
// launch order, causal tile i doing i + 1 units in the forward and nm - i in the backward.
double simulated_balance(int batch_heads, int nm, int sms, AttentionPass pass) {
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int i = 0; i < sms; ++i) free_at.push(0.0);
  double work = 0, makespan = 0;
  for (int h = 0; h < batch_heads; ++h) {
    for (int i = 0; i < nm; ++i) {
      const double units = pass == AttentionPass::forward ? i + 1 : nm - i;
      const double end = free_at.top() + units;
      free_at.pop();
      free_at.push(end);
      work += units;
      makespan = std::max(makespan, end);
    }
  }
  return work / (sms * makespan);
}

TEST(AttentionGrid, ClosedFormFollowsTheSimulatedSchedule) {
  double sum = 0, worst = 0;
  int n = 0, close = 0;
  for (int sms : {108, 132}) {
    for (int nm : {4, 8, 16, 32, 64, 128, 256}) {
      for (int bh : {1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256}) {
        for (AttentionPass pass : {AttentionPass::forward, AttentionPass::backward}) {
          const double sim = simulated_balance(bh, nm, sms, pass);
          const double closed = attention_grid_balance(bh, nm * kAttentionBlockRows, sms, true, pass);
          const double d = std::abs(closed - sim);
          sum += d;
          worst = std::max(worst, d);
          close += d < 0.05 ? 1 : 0;
          ++n;
        }
      }
    }
  }
  std::printf("closed form against the schedule: mean |difference| %.4f, max %.3f, within 0.05: %d of %d grids\n",
              sum / n, worst, close, n);
  EXPECT_LT(sum / n, 0.01);
  EXPECT_GE(close, static_cast<int>(0.95 * n));
}

// Grids of the validation runs, per GPU: Llama 8B at micro-batch 1 (32 heads, s 2,048), Megatron-Core 70B at
// TP 8 (8 heads, s 4,096), MPT-13B at s 32,768 (40 heads), a benchmark grid (16 heads, s 16k).
TEST(AttentionGrid, ValidationGridsWithinThreePoints) {
  const struct {
    int batch_heads, nm;
  } grids[] = {{32, 16}, {8, 32}, {40, 256}, {16, 128}, {64, 16}, {100, 8}};
  for (const auto& g : grids) {
    for (AttentionPass pass : {AttentionPass::forward, AttentionPass::backward}) {
      EXPECT_NEAR(attention_grid_balance(g.batch_heads, g.nm * kAttentionBlockRows, 132, true, pass),
                  simulated_balance(g.batch_heads, g.nm, 132, pass), 0.03)
          << g.batch_heads << " x " << g.nm;
    }
  }
}

TEST(AttentionGrid, OneWaveIsItsLongestBlock) {
  // By hand: 1 sequence-head of s = 4,096: 32 causal tiles, 528 units, all started at once on 132 SMs; the
  // last tile's 32 units end it. 528 / (132 x 32) = 0.125.
  EXPECT_NEAR(attention_grid_balance(1, 4096, 132, true, AttentionPass::forward), 528.0 / (132 * 32), 1e-12);
  // A partial last tile counts as a whole one: s = 4,000 is 32 tiles as well.
  EXPECT_NEAR(attention_grid_balance(1, 4000, 132, true, AttentionPass::backward), 528.0 / (132 * 32), 1e-12);
}

TEST(AttentionGrid, EqualBlocksFillWholeWaves) {
  // By hand: 100 sequence-heads x 8 tiles of s = 1,024 = 800 equal blocks; 7 waves of 132 slots hold 924.
  EXPECT_NEAR(attention_grid_balance(100, 1024, 132, false, AttentionPass::forward), 800.0 / 924.0, 1e-12);
  EXPECT_NEAR(attention_grid_balance(132, 128, 132, false, AttentionPass::forward), 1.0, 1e-12);
}

TEST(AttentionGrid, UnknownSmsOrEmptyGridsAreBalanced) {
  EXPECT_EQ(attention_grid_balance(8, 4096, 0, true, AttentionPass::forward), 1.0);
  EXPECT_EQ(attention_grid_balance(0, 4096, 132, true, AttentionPass::forward), 1.0);
  EXPECT_EQ(attention_grid_balance(8, 0, 132, true, AttentionPass::backward), 1.0);
  EXPECT_EQ(attention_grid_balance(8, std::nan(""), 132, true, AttentionPass::backward), 1.0);
}

TEST(AttentionGrid, MoreSequencesNeverUnbalanceTheGrid) {
  // Property: at a fixed sequence, doubling the sequences x heads only fills the tail better.
  for (AttentionPass pass : {AttentionPass::forward, AttentionPass::backward}) {
    for (double s : {1024.0, 4096.0, 16384.0}) {
      double last = 0;
      for (int bh = 1; bh <= 512; bh *= 2) {
        const double b = attention_grid_balance(bh, s, 132, true, pass);
        EXPECT_GE(b, last - 1e-12) << "s " << s << ", " << bh;
        last = b;
      }
    }
  }
}

}  // namespace
}  // namespace tp
