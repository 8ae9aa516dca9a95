// ExecGraph (models/workload/exec_graph.h) and WorkloadEngine (workload_engine.h) on the ideal
// network: what a rank's GPU does with compute nodes, when receives finish, how a step's
// compute and communication overlap, and the errors a malformed graph gets.
#include <algorithm>
#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/common/stop_signal.h"
#include "models/workload/collective.h"
#include "models/workload/ideal_network.h"

namespace fabricsim {
void PrintTo(const Time& t, std::ostream* os) {
  *os << t.as_fs() << " fs";
}
}  // namespace fabricsim

namespace fabricsim::workload {
namespace {

const BitRate kB = BitRate::gbps(800);  // 10,000 fs a byte
const Time kAlpha = Time::ns(1000);

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(WorkloadEngine, ARanksComputeRunsOneNodeAtATime) {
  ExecGraph g(2);
  const uint32_t a = g.add_compute(0, Time::us(3));
  const uint32_t b = g.add_compute(0, Time::us(2));
  const uint32_t c = g.add_compute(1, Time::us(4));
  g.finalize();
  IdealNetwork net(2, kB, kAlpha);
  WorkloadEngine e(g, net);
  EXPECT_EQ(net.run(e), Time::us(5));
  EXPECT_EQ(e.ended(a), Time::us(3));
  EXPECT_EQ(e.started(b), Time());  // ready at once, waited for the GPU
  EXPECT_EQ(e.ended(b), Time::us(5));
  EXPECT_EQ(e.ended(c), Time::us(4));  // another rank's GPU
}

TEST(WorkloadEngine, AStragglersComputeTakesItsFactorLonger) {
  ExecGraph g(2);
  const uint32_t a = g.add_compute(0, Time::us(10));
  const uint32_t b = g.add_compute(1, Time::us(10));
  g.finalize();
  IdealNetwork net(2, kB, kAlpha);
  WorkloadEngine e(g, net, {1.0, 1.25});
  net.run(e);
  EXPECT_EQ(e.ended(a), Time::us(10));
  EXPECT_EQ(e.ended(b), Time::fs(12500000000));
}

TEST(WorkloadEngine, AMessageDeliveredBeforeItsReceiveWaitsForIt) {
  ExecGraph g(2);
  const uint32_t s = g.add_send(0, 1, 1000, 0);         // delivered at 10 ns + alpha
  const uint32_t busy = g.add_compute(1, Time::us(5));  // rank 1 posts its receive after
  const uint32_t r = g.add_recv(1, 0, 1000, 0, {busy});
  g.finalize();
  IdealNetwork net(2, kB, kAlpha);
  WorkloadEngine e(g, net);
  net.run(e);
  EXPECT_EQ(e.ended(s), Time::ns(1010));
  EXPECT_EQ(e.started(r), Time::us(5));
  EXPECT_EQ(e.ended(r), Time::us(5));
  EXPECT_TRUE(e.finished());
}

// What NicDriver::first_unposted reads: the lowest node not started, so no lower message id is
// posted later (fct.csv's rows go out below it).
TEST(WorkloadEngine, TheFirstUnstartedNodeIsBelowEveryMessageStillToBePosted) {
  ExecGraph g(2);
  const uint32_t c = g.add_compute(0, Time::us(3));
  const uint32_t s = g.add_send(0, 1, 1000, 0, {c});  // posted at 3 us
  g.add_recv(1, 0, 1000, 0);                          // started at once
  g.finalize();
  IdealNetwork net(2, kB, kAlpha);
  WorkloadEngine e(g, net);
  EXPECT_EQ(e.first_unstarted(), 0u);
  e.start(Time());
  EXPECT_EQ(e.first_unstarted(), s);  // the compute and the receive started, not the send
  e.run(Time::us(3));
  EXPECT_EQ(e.first_unstarted(), g.size());
}

// A two-layer data-parallel backward pass on 4 ranks: layer 2's gradients (1 MiB) are
// all-reduced while layer 1's backward computes (20 us), then layer 1's (1 MiB). The ring
// all-reduce of S on n ranks takes T = 2(n-1)(alpha + S/(nB)); the step ends at
// max(10 us + T, 10 us + 20 us) + T: the first all-reduce hidden behind compute if T < 20 us.
TEST(WorkloadEngine, CommunicationOverlapsTheNextLayersCompute) {
  const int n = 4;
  const uint64_t S = 1 << 20;
  const Time T = (kAlpha + Time::fs(static_cast<int64_t>(S / n) * 10000)) * (2 * (n - 1));
  for (const Time back1 : {Time::us(20), Time::us(1)}) {
    ExecGraph g(n);
    RankNodes grads2(n), compute1(n);
    for (int r = 0; r < n; ++r) grads2[r] = {g.add_compute(r, Time::us(10))};
    CollectiveCall c;
    c.ranks = {0, 1, 2, 3};
    c.bytes = S;
    c.name = "layer2";
    const RankNodes ar2 = add_collective(g, "allreduce_ring", c, grads2);
    for (int r = 0; r < n; ++r) compute1[r] = {g.add_compute(r, back1, grads2[r])};
    // Layer 1's all-reduce after its gradients, and after layer 2's (NCCL runs one stream).
    RankNodes before(n);
    for (int r = 0; r < n; ++r) {
      before[r] = ar2[r];
      before[r].push_back(compute1[r][0]);
    }
    c.name = "layer1";
    add_collective(g, "allreduce_ring", c, before);
    g.finalize();
    IdealNetwork net(n, kB, kAlpha);
    WorkloadEngine e(g, net);
    const Time end = net.run(e);
    EXPECT_TRUE(e.finished());
    EXPECT_EQ(end, std::max(Time::us(10) + T, Time::us(10) + back1) + T) << back1.as_ns();
    ASSERT_EQ(g.spans().size(), 2u);
    EXPECT_EQ(g.spans()[0].name, "layer2");
  }
}

TEST(ExecGraph, MalformedGraphsAreErrorsNamingTheNode) {
  ExecGraph g(3);
  EXPECT_NE(error_of([&] { g.add_send(0, 3, 10, 0); }).find("peer rank 3 is not another rank"),
            std::string::npos);
  EXPECT_NE(error_of([&] { g.add_compute(4, Time::us(1)); }).find("rank 4 outside the job's 3"),
            std::string::npos);
  EXPECT_NE(error_of([&] { g.add_recv(1, 0, 0, 0); }).find("a message of 0 bytes"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              g.add_compute(0, Time::us(1), {5});
            }).find("depends on node 5, which is not an earlier node"),
            std::string::npos);
  ExecGraph lone(2);
  lone.add_send(0, 1, 64, 0);
  EXPECT_EQ(error_of([&] { lone.finalize(); }),
            "node 0 (rank 0, send to rank 1, 64 B, channel 0): a send no receive matches");
  ExecGraph other(2);
  other.add_send(0, 1, 64, 0);
  other.add_recv(1, 0, 64, 1);  // another channel
  EXPECT_NE(error_of([&] { other.finalize(); }).find("a send no receive matches"),
            std::string::npos);
  ExecGraph sizes(2);
  sizes.add_send(0, 1, 64, 0);
  sizes.add_recv(1, 0, 32, 0);
  EXPECT_NE(error_of([&] { sizes.finalize(); }).find("expects 32 B"), std::string::npos);
}

// Node names (a Chakra COMP_NODE's, for ranks.csv): kept whole, in node order, "" for the rest.
TEST(ExecGraph, NodesKeepTheNamesGivenInOrder) {
  ExecGraph g(2);
  for (int i = 0; i < 5; ++i) g.add_compute(i % 2, Time::us(1));
  g.set_name(1, "fwd, layer 1");
  g.set_name(2, "");
  g.set_name(3, std::string("a\0b\n", 4));
  EXPECT_EQ(g.name(0), "");
  EXPECT_EQ(g.name(1), "fwd, layer 1");
  EXPECT_EQ(g.name(2), "");
  EXPECT_EQ(g.name(3), std::string("a\0b\n", 4));
  EXPECT_EQ(g.name(4), "");
  EXPECT_EQ(g.name(99), "");
  EXPECT_NE(error_of([&] { g.set_name(2, "late"); }).find("node 2: named out of order"),
            std::string::npos);
  EXPECT_NE(error_of([&] { g.set_name(5, "x"); }).find("node 5: named out of order"),
            std::string::npos);
}

TEST(ExecGraph, SendsMatchReceivesInOrderPerPairAndChannel) {
  ExecGraph g(2);
  const uint32_t s0 = g.add_send(0, 1, 10, 0), s1 = g.add_send(0, 1, 20, 0);
  const uint32_t s2 = g.add_send(0, 1, 30, 1);
  const uint32_t r2 = g.add_recv(1, 0, 30, 1), r0 = g.add_recv(1, 0, 10, 0);
  const uint32_t r1 = g.add_recv(1, 0, 20, 0);
  g.finalize();
  EXPECT_EQ(g.match(s0), r0);
  EXPECT_EQ(g.match(s1), r1);
  EXPECT_EQ(g.match(s2), r2);
  EXPECT_EQ(g.match(r1), s1);
}

// Each rank's send waits on its own receive: no dependency points forward, yet no run can
// finish it (it deadlocked, advising a longer sim.drain_limit). finalize refuses it, naming the
// nodes on the cycle in waiting order.
TEST(ExecGraph, ACycleThroughMatchedMessagesIsRefused) {
  ExecGraph g(2);
  const uint32_t r0 = g.add_recv(0, 1, 64, 0), r1 = g.add_recv(1, 0, 64, 0);
  const uint32_t s0 = g.add_send(0, 1, 64, 0, {r0}), s1 = g.add_send(1, 0, 64, 0, {r1});
  try {
    g.finalize();
    FAIL() << "a cycle was accepted";
  } catch (const CycleError& e) {
    std::vector<uint32_t> on = e.nodes();
    std::sort(on.begin(), on.end());
    EXPECT_EQ(on, (std::vector<uint32_t>{r0, r1, s0, s1}));
    EXPECT_NE(std::string(e.what()).find("a dependency cycle across ranks"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("node 0 (rank 0, receive from rank 1, 64 B, channel 0)"),
              std::string::npos);
  }
  // The same messages without the cycle (rank 1 receives first, then sends): accepted, and run.
  ExecGraph ok(2);
  const uint32_t a = ok.add_send(0, 1, 64, 0), b = ok.add_recv(1, 0, 64, 0);
  ok.add_send(1, 0, 64, 0, {b});
  ok.add_recv(0, 1, 64, 0, {a});
  ok.finalize();
  IdealNetwork net(2, kB, kAlpha);
  WorkloadEngine e(ok, net);
  net.run(e);
  EXPECT_TRUE(e.finished());
}

// The graph's limits: a call counted before its tables are allocated (chunk 1 B on 64 MiB is
// 2^30 slices), a node past the limit, a dependency list past its limit, a message over 2 GiB.
TEST(ExecGraph, LimitsAreRefusedBeforeTheyAreBuilt) {
  CollectiveCall c;
  c.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  c.bytes = uint64_t{64} << 20;
  c.chunk_bytes = 1;
  c.name = "ar";
  ExecGraph g(8);
  const std::string e = error_of([&] { add_collective(g, "allreduce_ring", c); });
  EXPECT_NE(e.find("14 steps x 8 ranks x 1 channels x 8388608 slices needs 1879048192 nodes"),
            std::string::npos)
      << e;
  EXPECT_EQ(g.size(), 0u);
  for (const char* algorithm : {"allreduce_tree", "broadcast_ring"}) {
    ExecGraph h(8);
    EXPECT_NE(
        error_of([&] { add_collective(h, algorithm, c); }).find("more than a workload's graph"),
        std::string::npos)
        << algorithm;
    EXPECT_EQ(h.size(), 0u);
  }

  const GraphLimits saved = graph_limits();
  graph_limits().nodes = 3;
  graph_limits().deps = 4;
  ExecGraph small(2);
  const uint32_t x = small.add_compute(0, Time::us(1)), y = small.add_compute(1, Time::us(1));
  EXPECT_NE(error_of([&] {
              small.add_compute(0, Time::us(1), {x, y, x, y, x});
            }).find("more dependencies than a workload's graph may hold (4 in all"),
            std::string::npos);
  small.add_compute(0, Time::us(1), {x, y});
  EXPECT_NE(error_of([&] {
              small.add_compute(0, Time::us(1));
            }).find("node 3: more than a workload's graph may hold (3 nodes"),
            std::string::npos);
  EXPECT_NE(error_of([&] { small.require(1, "one more"); }).find("one more needs 1 nodes"),
            std::string::npos);
  graph_limits() = saved;

  ExecGraph big(2);
  EXPECT_NE(error_of([&] {
              big.add_send(0, 1, (uint64_t{1} << 31) + 1, 0);
            }).find("a message of 2147483649 B, larger than the largest"),
            std::string::npos);
  big.add_send(0, 1, uint64_t{1} << 31, 0);  // 2 GiB is the most
}

// A stop signal (Ctrl-C) during graph building ends it at once, not after the graph is whole.
TEST(ExecGraph, AStopSignalEndsGraphBuilding) {
  g_stop_signal = SIGINT;
  ExecGraph g(2);
  EXPECT_THROW(g.add_compute(0, Time::us(1)), Interrupted);
  g_stop_signal = 0;
  EXPECT_EQ(g.add_compute(0, Time::us(1)), 0u);
}

// A compute past the clock's range (1000 s on a 1000x straggler) ends at Time::max(), never,
// rather than at a time that wrapped negative.
TEST(WorkloadEngine, AComputePastTheClocksRangeNeverEnds) {
  ExecGraph g(2);
  g.add_compute(0, Time::us(1000000000));
  g.add_compute(1, Time::us(1));
  g.finalize();
  IdealNetwork net(2, kB, kAlpha);
  WorkloadEngine e(g, net, {1000.0, 1.0});
  net.run(e);
  EXPECT_EQ(e.ended(1), Time::us(1));
  EXPECT_TRUE(e.ended(0) == Time::max() || e.ended(0) > Time::us(1000000000)) << e.ended(0).as_fs();
  EXPECT_GE(e.ran(0), Time());
}

}  // namespace
}  // namespace fabricsim::workload

namespace fabricsim::workload {
namespace {

// The graph keeps a packed record per node and builds a Node from it: every field a reader sees
// comes back as it was given (a duration where a message's bytes are kept, a tag kept apart, a
// node's dependencies ending where the next one's begin, the last one's at the list's end).
TEST(ExecGraph, NodesReadBackAsTheyWereAdded) {
  ExecGraph g(3);
  g.set_class("tp");
  const uint32_t c = g.add_compute(2, Time::fs(123456789012345));
  g.begin_span("ar", "allreduce_ring", 3, 4096, 1.0);
  g.set_step(7);
  const uint32_t s = g.add_send(0, 1, (uint64_t{1} << 31), 5, {c}, 42);
  const uint32_t r = g.add_recv(1, 0, (uint64_t{1} << 31), 5, {c, s}, 42);
  g.end_span();
  const uint32_t u = g.add_send(1, 2, 9, 0);
  const uint32_t v = g.add_recv(2, 1, 9, 0, {r, u, c});
  const Node x = g.node(c);
  EXPECT_EQ(x.kind, NodeKind::kCompute);
  EXPECT_EQ(x.rank, 2);
  EXPECT_EQ(x.peer, -1);
  EXPECT_EQ(x.bytes, 0u);
  EXPECT_EQ(x.duration, Time::fs(123456789012345));
  EXPECT_EQ(x.tag_class, 1);
  EXPECT_EQ(x.span, kNoSpan);
  EXPECT_EQ(x.dep_end - x.dep_begin, 0u);
  const Node y = g.node(s);
  EXPECT_EQ(y.kind, NodeKind::kSend);
  EXPECT_EQ(y.peer, 1);
  EXPECT_EQ(y.bytes, uint64_t{1} << 31);
  EXPECT_EQ(y.duration, Time());
  EXPECT_EQ(y.channel, 5);
  EXPECT_EQ(y.tag, 42u);
  EXPECT_EQ(y.step, 7);
  EXPECT_EQ(y.span, 0u);
  ASSERT_EQ(y.dep_end - y.dep_begin, 1u);
  EXPECT_EQ(g.deps()[y.dep_begin], c);
  const Node z = g.node(r);
  EXPECT_EQ(z.tag, 42u);
  ASSERT_EQ(z.dep_end - z.dep_begin, 2u);
  EXPECT_EQ(g.deps()[z.dep_begin + 1], s);
  EXPECT_EQ(g.node(u).tag, 0u);  // a tag is the node's own, not its neighbour's
  EXPECT_EQ(g.node(u).span, kNoSpan);
  EXPECT_EQ(g.node(u).step, 0);
  const Node w = g.node(v);
  ASSERT_EQ(w.dep_end - w.dep_begin, 3u);  // the last node: to the list's end
  EXPECT_EQ(w.dep_end, g.deps().size());
  EXPECT_EQ(g.deps()[w.dep_begin + 2], c);
  size_t k = 0;
  for (const Node& n : g.nodes()) EXPECT_EQ(n.rank, g.node(static_cast<uint32_t>(k++)).rank);
  EXPECT_EQ(k, g.size());
  EXPECT_EQ(g.nodes()[v].peer, 1);
  g.finalize();
  EXPECT_EQ(g.match(s), r);
  EXPECT_EQ(g.match(u), v);
}

// A 4,096-rank ring all-reduce (8,190 steps: 67,092,480 nodes) is within the graph's limit; a
// node more than 2^26 is not; nor a job of more ranks than a record holds.
TEST(ExecGraph, TheLimitHoldsA4096RankRing) {
  ExecGraph g(4096);
  EXPECT_EQ(error_of([&] { g.require(uint64_t{2} * 8190 * 4096, "the ring"); }), "no error");
  EXPECT_NE(error_of([&] {
              g.require((uint64_t{1} << 26) + 1, "more");
            }).find("more needs 67108865 nodes: more than a workload's graph may hold"),
            std::string::npos);
  // A node's record holds a rank in 24 bits.
  EXPECT_NE(error_of([] { ExecGraph h(kMaxGraphRanks + 1); }).find("more than a workload's graph"),
            std::string::npos);
  ExecGraph most(kMaxGraphRanks);
  most.add_send(kMaxGraphRanks - 1, 0, 1, 0);
  EXPECT_EQ(most.node(0).rank, kMaxGraphRanks - 1);
}

}  // namespace
}  // namespace fabricsim::workload
