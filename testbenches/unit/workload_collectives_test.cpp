// The collective algorithms (models/workload/coll_*.cpp) on the ideal network
// (models/workload/ideal_network.h) against their closed forms: n ranks, S bytes, per-message
// latency alpha and link rate B (the formulas of ../shared/docs/transport-and-collectives-facts.md
// and each algorithm's header). Exact to the femtosecond where S splits evenly: 800G is 10,000 fs
// a byte.
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/workload/collective.h"
#include "models/workload/ideal_network.h"
#include "models/workload/workload_results.h"

namespace fabricsim {
void PrintTo(const Time& t, std::ostream* os) {
  *os << t.as_fs() << " fs";
}
}  // namespace fabricsim

namespace fabricsim::workload {
namespace {

const BitRate kB = BitRate::gbps(800);
const Time kAlpha = Time::ns(1500);
constexpr int64_t kFsPerByte = 10000;

std::vector<int> iota(int n) {
  std::vector<int> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

struct Outcome {
  Time time;
  std::vector<uint64_t> sent;  // bytes per rank
  size_t nodes = 0;
};

Outcome run(const std::string& algo, int n, uint64_t S, int channels = 1, uint64_t chunk = 0,
            std::vector<uint64_t> sizes = {}) {
  ExecGraph g(n);
  CollectiveCall c;
  c.name = algo;
  c.ranks = iota(n);
  c.bytes = S;
  c.channels = channels;
  c.chunk_bytes = chunk;
  c.sizes = std::move(sizes);
  add_collective(g, algo, c);
  g.finalize();
  IdealNetwork net(n, kB, kAlpha);
  WorkloadEngine e(g, net);
  Outcome r;
  r.time = net.run(e);
  EXPECT_TRUE(e.finished()) << algo << " left " << e.unfinished() << " nodes";
  r.sent.assign(static_cast<size_t>(n), 0);
  for (const Node& x : g.nodes())
    if (x.kind == NodeKind::kSend) r.sent[x.rank] += x.bytes;
  r.nodes = g.size();
  return r;
}

Time ser(uint64_t bytes) {
  return Time::fs(static_cast<int64_t>(bytes) * kFsPerByte);
}

TEST(Collectives, RingAllReduceIsTwoNMinusOneSteps) {
  for (int n : {2, 3, 4, 8, 16})
    for (uint64_t S : {uint64_t{1024}, uint64_t{1} << 20, uint64_t{64} << 20}) {
      const uint64_t s = S / n * n;  // evenly split
      const Outcome r = run("allreduce_ring", n, s);
      // 2(n-1) alpha + 2(n-1)/n S/B
      EXPECT_EQ(r.time, kAlpha * (2 * (n - 1)) + ser(s / n) * (2 * (n - 1))) << n << " " << s;
      for (uint64_t b : r.sent) EXPECT_EQ(b, 2 * (n - 1) * (s / n));
    }
}

// Each ring step on the ideal network: alpha + S/(nB), one after the other, n messages of S/n.
TEST(Collectives, RingStepsFollowEachOther) {
  const int n = 4;
  const uint64_t S = 1 << 20;
  ExecGraph g(n);
  CollectiveCall c;
  c.name = "ar";
  c.ranks = iota(n);
  c.bytes = S;
  add_collective(g, "allreduce_ring", c);
  g.finalize();
  IdealNetwork net(n, kB, kAlpha);
  WorkloadEngine e(g, net);
  net.run(e);
  const auto steps = step_results(g, e);
  ASSERT_EQ(steps.size(), static_cast<size_t>(2 * (n - 1)));
  const Time one = kAlpha + ser(S / n);
  for (size_t k = 0; k < steps.size(); ++k) {
    EXPECT_EQ(steps[k].step, k);
    EXPECT_EQ(steps[k].start, one * static_cast<int64_t>(k)) << k;
    EXPECT_EQ(steps[k].end - steps[k].start, one) << k;
    EXPECT_EQ(steps[k].messages, static_cast<uint64_t>(n));
    EXPECT_EQ(steps[k].bytes, S);
  }
}

TEST(Collectives, UnevenSizesCostAtMostAByteAStep) {
  const int n = 7;
  const uint64_t S = 1000003;
  const Outcome r = run("allreduce_ring", n, S);
  const Time even =
      kAlpha * (2 * (n - 1)) + Time::fs(static_cast<int64_t>(2 * (n - 1) * S * kFsPerByte / n));
  EXPECT_GE(r.time, even);
  EXPECT_LE(r.time, even + ser(1) * (2 * (n - 1)));
  // Every byte of the buffer is reduced and gathered: each rank sends 2(n-1)/n of S, to a byte
  // per step.
  for (uint64_t b : r.sent) EXPECT_NEAR(static_cast<double>(b), 2.0 * (n - 1) * S / n, 2 * n);
}

TEST(Collectives, ReduceScatterAndAllGatherAreOnePass) {
  for (const char* algo : {"reducescatter_ring", "allgather_ring"})
    for (int n : {2, 5, 8}) {
      const uint64_t S = (uint64_t{1} << 20) / n * n;
      EXPECT_EQ(run(algo, n, S).time, (kAlpha + ser(S / n)) * (n - 1)) << algo << n;
    }
}

TEST(Collectives, HalvingDoublingIsTwoLogNSteps) {
  for (int n : {2, 4, 8, 16, 32}) {
    const uint64_t S = uint64_t{1} << 22;
    int log2n = 0;
    while ((1 << log2n) < n) ++log2n;
    // 2 log2(n) alpha + 2 (n-1)/n S/B
    EXPECT_EQ(run("allreduce_halving_doubling", n, S).time,
              kAlpha * (2 * log2n) + ser(2 * (n - 1) * (S / n)))
        << n;
  }
  EXPECT_THROW(run("allreduce_halving_doubling", 6, 6000), std::invalid_argument);
}

TEST(Collectives, AllToAllDirectAndPairwise) {
  for (int n : {2, 4, 9}) {
    const uint64_t S = uint64_t{1} << 20;
    const uint64_t block = S / n;
    const uint64_t s = block * n;
    // Direct: every send posted at once, the sender's link the bottleneck.
    EXPECT_EQ(run("alltoall_direct", n, s).time, kAlpha + ser(block) * (n - 1)) << n;
    // Pairwise: n - 1 exchanges one after the other.
    EXPECT_EQ(run("alltoall_pairwise", n, s).time, (kAlpha + ser(block)) * (n - 1)) << n;
  }
}

TEST(Collectives, AllToAllVMovesEachPairsBytes) {
  const int n = 3;
  // From rank i to j: sizes[i][j] (the diagonal stays home); rank 0 is the busiest sender.
  const std::vector<uint64_t> sizes = {7, 4000, 1000, 200, 0, 300, 500, 600, 9};
  const Outcome r = run("alltoallv_direct", n, 5000, 1, 0, sizes);
  EXPECT_EQ(r.sent, (std::vector<uint64_t>{5000, 500, 1100}));
  // Rank 0's sends leave one after the other (4000 B to 1, then 1000 B to 2: 5000 B); rank 2's
  // 600 B to 1 left at 1100 B-times, so rank 1's link takes 0's 4000 B after it: in at 5100.
  EXPECT_EQ(r.time, kAlpha + ser(5100));
  EXPECT_THROW(run("alltoallv_direct", n, 5000, 1, 0, {1, 2, 3}), std::invalid_argument);
}

TEST(Collectives, BroadcastPipelinesSlicesAlongTheRing) {
  const int n = 8;
  const uint64_t S = uint64_t{1} << 20;
  for (uint64_t m : {1, 4, 16}) {
    const uint64_t b = S / m;
    // (n-1)(alpha + b/B) + (m-1) b/B
    EXPECT_EQ(run("broadcast_ring", n, S, 1, m == 1 ? 0 : b).time,
              (kAlpha + ser(b)) * (n - 1) + ser(b) * static_cast<int64_t>(m - 1))
        << m;
  }
}

TEST(Collectives, ChannelsSplitTheDataOverConnections) {
  const int n = 4, C = 4;
  const uint64_t S = uint64_t{1} << 20;
  ExecGraph g(n);
  CollectiveCall c;
  c.name = "ar";
  c.ranks = iota(n);
  c.bytes = S;
  c.channels = C;
  add_collective(g, "allreduce_ring", c);
  g.finalize();
  std::vector<uint64_t> per_channel(C);
  for (const Node& x : g.nodes())
    if (x.kind == NodeKind::kSend) per_channel[x.channel] += x.bytes;
  for (uint64_t b : per_channel) EXPECT_EQ(b, n * 2 * (n - 1) * S / n / C);
}

// Double binary tree: on 2 ranks each tree is one edge, so it is the ring (2 alpha + S/B); on
// many ranks its latency grows with log2(n), so small messages finish far sooner than on the
// ring; every tree edge carries its half of S up and down: 2 (n-1) S bytes in all.
TEST(Collectives, DoubleBinaryTree) {
  const uint64_t S = 1 << 20;
  EXPECT_EQ(run("allreduce_tree", 2, S).time, kAlpha * 2 + ser(S));
  for (int n : {7, 16, 33}) {  // (on 3 ranks the tree is a chain of 2 hops: 4 alpha, as the ring)
    const Outcome tree = run("allreduce_tree", n, 4096);
    const Outcome ring = run("allreduce_ring", n, 4096 / n * n);
    EXPECT_LT(tree.time, ring.time) << n;
    uint64_t total = 0;
    for (uint64_t b : tree.sent) total += b;
    EXPECT_EQ(total, 2 * static_cast<uint64_t>(n - 1) * 4096) << n;
  }
  // Pipelined in chunks, a large message on 16 ranks gets most of the link: at most
  // 2 (n-1)/n S/B x 1.5 + its depth's latencies.
  const int n = 16;
  const Outcome big = run("allreduce_tree", n, 64 << 20, 1, 256 << 10);
  EXPECT_LT(big.time, ser(uint64_t{64 << 20} * 2 * (n - 1) / n * 3 / 2) + kAlpha * 40);
}

TEST(Collectives, BusFactorsAreNcclTests) {
  const auto& reg = CollectiveRegistry::global();
  EXPECT_DOUBLE_EQ(reg.at("allreduce_ring").bus_factor(8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(reg.at("allreduce_halving_doubling").bus_factor(8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(reg.at("allreduce_tree").bus_factor(8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(reg.at("allgather_ring").bus_factor(8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(reg.at("reducescatter_ring").bus_factor(8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(reg.at("alltoall_direct").bus_factor(8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(reg.at("broadcast_ring").bus_factor(8), 1.0);
}

TEST(Collectives, BadCallsAreRefusedWithTheirName) {
  ExecGraph g(4);
  CollectiveCall c;
  c.name = "grads";
  c.bytes = 1 << 20;
  auto msg = [&](const std::string& algo) {
    try {
      add_collective(g, algo, c);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  c.ranks = {0};
  EXPECT_NE(msg("allreduce_ring").find("grads (allreduce_ring): a communicator of 1"),
            std::string::npos);
  c.ranks = {0, 5};
  EXPECT_NE(msg("allreduce_ring").find("rank 5 is outside the job's 4 ranks"), std::string::npos);
  c.ranks = {1, 1};
  EXPECT_NE(msg("allreduce_ring").find("rank 1 appears twice"), std::string::npos);
  c.ranks = {0, 1, 2};
  c.bytes = 2;
  EXPECT_NE(msg("allreduce_ring").find("cannot be cut"), std::string::npos);
  EXPECT_NE(msg("allreduce_bogus").find("unknown collective 'allreduce_bogus'"), std::string::npos);
}

}  // namespace
}  // namespace fabricsim::workload
