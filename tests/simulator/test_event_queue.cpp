// The event queue: events come out in time order, ties in push order, whatever the push order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "event_queue.h"

namespace tp::sim {
namespace {

TEST(EventQueue, PopsInTimeOrderAndTiesInPushOrder) {
  EventQueue<int> q;
  const double times[] = {5, 1, 3, 1, 4, 3, 0.5, 1};
  for (int i = 0; i < 8; ++i) q.push(times[i], i);
  std::vector<int> got;
  q.run([&](double, int p) { got.push_back(p); });
  EXPECT_EQ(got, (std::vector<int>{6, 1, 3, 7, 2, 5, 4, 0}));
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, HandlersMayPushAndTimesNeverGoBack) {
  EventQueue<int> q;
  q.push(0.0, 0);
  double last = -1;
  std::uint64_t n = q.run([&](double t, int depth) {
    EXPECT_GE(t, last);
    last = t;
    if (depth < 10) {
      q.push(t + 2.0, depth + 1);
      q.push(t + 1.0, depth + 1);
    }
  });
  EXPECT_EQ(n, 2047u);  // a full binary tree of depth 10
}

TEST(EventQueue, MatchesASortOnPseudoRandomTimes) {
  EventQueue<std::uint32_t> q;
  std::vector<std::pair<double, std::uint32_t>> ref;
  std::uint64_t x = 42;
  for (std::uint32_t i = 0; i < 10000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const double t = static_cast<double>(x >> 40 & 1023);  // many ties
    q.push(t, i);
    ref.emplace_back(t, i);
  }
  std::stable_sort(ref.begin(), ref.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t k = 0;
  q.run([&](double t, std::uint32_t p) {
    EXPECT_EQ(t, ref[k].first);
    EXPECT_EQ(p, ref[k].second);
    ++k;
  });
  EXPECT_EQ(k, ref.size());
}

}  // namespace
}  // namespace tp::sim
