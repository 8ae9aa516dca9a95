// ExecGraph (models/workload/exec_graph.h) and WorkloadEngine (workload_engine.h) on the ideal
// network: what a rank's GPU does with compute nodes, when receives finish, how a step's
// compute and communication overlap, and the errors a malformed graph gets.
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fabricsim::workload
