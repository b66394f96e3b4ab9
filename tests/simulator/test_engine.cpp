// The engine on hand-built graphs: stream order, dependencies, partial dependencies, link
// channels (FIFO per communicator, fair bandwidth sharing between them), cycle detection.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "engine.h"
#include "task_graph.h"

namespace tp::sim {
namespace {

Task make(TaskKind k, int mb, double d) {
  Task t;
  t.kind = k;
  t.micro_batch = mb;
  t.duration = d;
  return t;
}

struct Fixture {
  TaskGraph g;
  int stream0 = g.add_resource({ResourceKind::stream, 0, "s0", {}});
  int stream1 = g.add_resource({ResourceKind::stream, 1, "s1", {}});
  int link = g.add_resource({ResourceKind::link, 0, "l0", {}});
  int on_stream(int r, double d, int mb = 0) {
    const int t = g.add_task(make(TaskKind::forward, mb, d), {r, 0});
    g.append_to_stream(r, t);
    return t;
  }
  int on_link(int channel, double d, int mb = 0) { return g.add_task(make(TaskKind::dp_reduce, mb, d), {link, channel}); }
  Execution run(LinkSharing sharing = LinkSharing::fair) {
    g.validate();
    const CompiledGraph c = compile(g, sharing);
    Engine e(c);
    return e.run(c.duration);
  }
};

TEST(Engine, StreamRunsItsTasksInItsOrder) {
  Fixture f;
  const int b = f.on_stream(f.stream0, 2.0, 1);
  const int a = f.on_stream(f.stream0, 1.0, 0);
  const Execution x = f.run();
  EXPECT_EQ(x.start[static_cast<std::size_t>(b)], 0.0);
  EXPECT_EQ(x.start[static_cast<std::size_t>(a)], 2.0);
  EXPECT_EQ(x.makespan, 3.0);
  EXPECT_EQ(x.cause[static_cast<std::size_t>(a)], b);
}

TEST(Engine, DependencyAcrossStreamsWaitsAndRecordsItsCause) {
  Fixture f;
  const int a = f.on_stream(f.stream0, 1.5);
  const int c = f.on_stream(f.stream1, 1.0);
  f.g.add_dependency(a, c);
  const Execution x = f.run();
  EXPECT_EQ(x.start[static_cast<std::size_t>(c)], 1.5);
  EXPECT_EQ(x.end[static_cast<std::size_t>(c)], 2.5);
  EXPECT_EQ(x.cause[static_cast<std::size_t>(c)], a);
}

TEST(Engine, PartialDependencyReleasesAtItsFraction) {
  Fixture f;
  const int a = f.on_stream(f.stream0, 4.0);
  const int z = f.on_link(kChannelDp, 1.0);
  f.g.add_partial_dependency(a, z, 0.5);
  const Execution x = f.run();
  EXPECT_EQ(x.start[static_cast<std::size_t>(z)], 2.0);
  EXPECT_EQ(x.end[static_cast<std::size_t>(z)], 3.0);
  EXPECT_EQ(x.makespan, 4.0);
}

TEST(Engine, OneCommunicatorRunsItsTransfersOneAfterAnother) {
  Fixture f;
  const int a = f.on_link(kChannelDp, 1.0, 0);
  const int b = f.on_link(kChannelDp, 1.0, 1);
  const Execution x = f.run();
  EXPECT_EQ(x.end[static_cast<std::size_t>(a)], 1.0);
  EXPECT_EQ(x.start[static_cast<std::size_t>(b)], 1.0);
  EXPECT_EQ(x.end[static_cast<std::size_t>(b)], 2.0);
  EXPECT_EQ(x.cause[static_cast<std::size_t>(b)], a);
}

TEST(Engine, TwoCommunicatorsShareTheLinkBandwidth) {
  {
    Fixture f;  // equal transfers at half rate each: both end at 2 + 2
    const int a = f.on_link(kChannelP2p, 2.0);
    const int b = f.on_link(kChannelDp, 2.0);
    const Execution x = f.run(LinkSharing::fair);
    EXPECT_NEAR(x.end[static_cast<std::size_t>(a)], 4.0, 1e-12);
    EXPECT_NEAR(x.end[static_cast<std::size_t>(b)], 4.0, 1e-12);
  }
  {
    Fixture f;  // 1 s and 2 s of work: the short one ends at 2 (half rate), the long one at 3
    const int a = f.on_link(kChannelP2p, 2.0);
    const int b = f.on_link(kChannelDp, 1.0);
    const Execution x = f.run(LinkSharing::fair);
    EXPECT_NEAR(x.end[static_cast<std::size_t>(b)], 2.0, 1e-12);
    EXPECT_NEAR(x.end[static_cast<std::size_t>(a)], 3.0, 1e-12);
  }
  {
    Fixture f;  // FIFO links: one transfer at a time, in the order they became ready
    const int a = f.on_link(kChannelP2p, 2.0);
    const int b = f.on_link(kChannelDp, 1.0);
    const Execution x = f.run(LinkSharing::fifo);
    EXPECT_EQ(x.end[static_cast<std::size_t>(a)], 2.0);
    EXPECT_EQ(x.end[static_cast<std::size_t>(b)], 3.0);
  }
}

TEST(Engine, ATransferJoiningLaterSlowsTheOneInFlight) {
  Fixture f;
  const int a = f.on_stream(f.stream0, 1.0);
  const int x1 = f.on_link(kChannelP2p, 3.0);  // alone for 1 s (2 s left), then shared
  const int x2 = f.on_link(kChannelDp, 1.0);   // joins at 1, needs 2 s at half rate: ends at 3
  f.g.add_dependency(a, x2);
  const Execution x = f.run(LinkSharing::fair);
  EXPECT_NEAR(x.end[static_cast<std::size_t>(x2)], 3.0, 1e-12);
  EXPECT_NEAR(x.end[static_cast<std::size_t>(x1)], 4.0, 1e-12);  // 1 s left after 3, alone again
}

TEST(TaskGraph, CycleIsRejectedAndNamed) {
  Fixture f;
  const int a = f.on_stream(f.stream0, 1.0, 7);
  const int b = f.on_stream(f.stream1, 1.0, 8);
  f.g.add_dependency(a, b);
  f.g.add_dependency(b, a);
  try {
    f.g.validate();
    FAIL() << "a cycle was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("cycle"));
    EXPECT_THAT(e.what(), ::testing::ContainsRegex("F s0 mb[78]"));
  }
}

TEST(TaskGraph, StreamOrderAgainstTheDataFlowIsACycle) {
  Fixture f;
  const int second = f.on_stream(f.stream0, 1.0, 1);  // runs first on the stream...
  const int first = f.on_stream(f.stream0, 1.0, 0);
  f.g.add_dependency(first, second);  // ...but needs the other's output
  EXPECT_THROW(f.g.validate(), std::logic_error);
}

TEST(TaskGraph, StreamTaskMissingFromTheOrderIsRejected) {
  Fixture f;
  f.g.add_task(make(TaskKind::forward, 0, 1.0), {f.stream0, 0});
  EXPECT_THROW(f.g.validate(), std::logic_error);
}

}  // namespace
}  // namespace tp::sim
