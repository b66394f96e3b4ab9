#include "attention_grid.h"

#include <algorithm>
#include <cmath>

namespace tp {

namespace {

// The greedy schedule's makespan beyond work / SMs, in units of the longest block (nm), once the grid
// holds more blocks than SMs. Read off the list schedule itself (the simulation of
// tests/unit/test_attention_grid.cpp: 392 grids of 4-256 tiles x 1-256 sequences-heads on 108 and 132 SMs,
// and a wider sweep to 512 tiles while choosing it): the forward's ascending blocks end
// 0.58-0.69 x nm late; the backward's descending ones about as much while a head has few tiles per SM,
// and less as its tiles approach the SM count (a descending run pairs long blocks with the SMs that free
// first), hence the (1 - (nm/SMs)^2).
constexpr double kTailOfLongestBlock = 0.62;

double causal_makespan(double batch_heads, double nm, double sms, AttentionPass pass) {
  if (batch_heads * nm <= sms) return nm;  // one wave: the longest block
  const double work = batch_heads * nm * (nm + 1) / 2;
  const double crowding = std::min(1.0, nm / sms);
  const double tail = kTailOfLongestBlock * nm * (pass == AttentionPass::forward ? 1.0 : 1.0 - crowding * crowding);
  return std::max(nm, work / sms + tail);
}

}  // namespace

double attention_grid_balance(double batch_heads, double seq, double sms, bool causal, AttentionPass pass) {
  if (!(sms > 0) || !(batch_heads > 0) || !(seq > 0)) return 1.0;
  const double nm = std::ceil(seq / kAttentionBlockRows);  // tiles per sequence and head
  if (!causal) {
    // Equal blocks: whole waves of `sms` blocks, the last one partly empty.
    const double blocks = batch_heads * nm;
    return blocks / (sms * std::ceil(blocks / sms));
  }
  const double work = batch_heads * nm * (nm + 1) / 2;  // in units of one tile pair
  return std::min(1.0, work / (sms * causal_makespan(batch_heads, nm, sms, pass)));
}

}  // namespace tp
