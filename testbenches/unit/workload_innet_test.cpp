// In-network all-reduce (models/workload/coll_allreduce_innet.cpp) and its trees
// (models/workload/innet_plan.h): the tree over a plan, the refusals, and the times on the ideal
// network (models/workload/ideal_network.h) against closed forms: the units are ranks of their
// own there, each link B, each message alpha, so a unit of k children takes k chunks in one
// after another and sends k results out one after another.
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/workload/collective.h"
#include "models/workload/ideal_network.h"
#include "models/workload/innet_plan.h"

namespace fabricsim::workload {
namespace {

const BitRate kB = BitRate::gbps(800);
const Time kAlpha = Time::ns(1500);
const Time kPerByte = Time::fs(10000);  // 800G

std::vector<int> iota(int n) {
  std::vector<int> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

// A leaf-spine's units: `leaves` leaf units (k ranks each, in order) under one spine unit.
InNetworkPlan leaf_spine(int leaves, int k, uint64_t buffer = uint64_t{1} << 30) {
  InNetworkPlan p;
  p.job_ranks = leaves * k;
  for (int r = 0; r < p.job_ranks; ++r) p.leaf_of_rank.push_back(r / k);
  for (int l = 0; l < leaves; ++l) {
    p.parent.push_back(leaves);
    p.name.push_back("leaf" + std::to_string(l));
  }
  p.parent.push_back(-1);
  p.name.push_back("spine0");
  p.buffer.assign(static_cast<size_t>(leaves + 1), buffer);
  return p;
}

Time run(const InNetworkPlan& p, std::vector<int> ranks, uint64_t S, uint64_t chunk,
         ExecGraph* out = nullptr) {
  ExecGraph g(p.job_ranks + p.units());
  CollectiveCall c;
  c.name = "innet";
  c.ranks = std::move(ranks);
  c.bytes = S;
  c.chunk_bytes = chunk;
  c.innet = &p;
  add_collective(g, "allreduce_innet", c);
  g.finalize();
  IdealNetwork net(g.ranks(), kB, kAlpha);
  WorkloadEngine e(g, net);
  const Time t = net.run(e);
  EXPECT_TRUE(e.finished());
  if (out) *out = g;
  return t;
}

TEST(InNetworkTree, FollowsTheUnitsAndDropsSingleChildUnits) {
  const InNetworkPlan p = leaf_spine(2, 4);
  // All 8 ranks: two leaf units under the spine's, the root.
  ReductionTree t = reduction_tree(p, iota(8));
  ASSERT_EQ(t.rank.size(), 11u);
  EXPECT_EQ(t.rank[t.root], p.rank_of_unit(2));
  EXPECT_EQ(t.children[t.root].size(), 2u);
  EXPECT_EQ(t.rank[t.parent[0]], p.rank_of_unit(0));
  EXPECT_EQ(t.rank[t.parent[7]], p.rank_of_unit(1));
  EXPECT_EQ(t.depth(), 2);
  // Ranks of one leaf: that leaf's unit is the root, the spine's is left out.
  t = reduction_tree(p, {4, 5, 6});
  ASSERT_EQ(t.rank.size(), 4u);
  EXPECT_EQ(t.rank[t.root], p.rank_of_unit(1));
  EXPECT_EQ(t.depth(), 1);
  // One rank per leaf: the leaves' units have one child each and are left out.
  t = reduction_tree(p, {0, 4});
  ASSERT_EQ(t.rank.size(), 3u);
  EXPECT_EQ(t.rank[t.root], p.rank_of_unit(2));
  EXPECT_EQ(t.parent[0], t.root);
  EXPECT_EQ(t.parent[1], t.root);
  // Children first.
  const std::vector<int> up = reduction_tree(p, iota(8)).up_order();
  EXPECT_EQ(up.back(), reduction_tree(p, iota(8)).root);
}

TEST(InNetworkTree, RefusesRanksWithoutAUnitOrACommonRoot) {
  InNetworkPlan p = leaf_spine(2, 2);
  p.leaf_of_rank[3] = -1;
  EXPECT_THROW(reduction_tree(p, {0, 3}), std::invalid_argument);
  p = leaf_spine(2, 2);
  p.parent[1] = -1;  // two roots
  EXPECT_THROW(reduction_tree(p, {0, 3}), std::invalid_argument);
}

TEST(InNetworkAllReduce, RefusedWithoutAggregationUnits) {
  ExecGraph g(4);
  CollectiveCall c;
  c.name = "innet";
  c.ranks = iota(4);
  c.bytes = 1 << 20;
  try {
    add_collective(g, "allreduce_innet", c);
    FAIL() << "no refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("switch.aggregation.enabled"), std::string::npos);
  }
}

TEST(InNetworkAllReduce, RefusesAChunkLargerThanTheBuffer) {
  const InNetworkPlan p = leaf_spine(1, 4, 64 << 10);
  EXPECT_THROW(run(p, iota(4), 1 << 20, 128 << 10), std::invalid_argument);
  EXPECT_THROW(run(p, iota(4), 1 << 20, 0), std::invalid_argument);  // one 1 MiB chunk
}

TEST(InNetworkAllReduce, EveryRankSendsAndReceivesS) {
  const InNetworkPlan p = leaf_spine(2, 4);
  ExecGraph g(1);
  run(p, iota(8), 1 << 20, 64 << 10, &g);
  std::vector<uint64_t> sent(static_cast<size_t>(g.ranks())), got(sent);
  for (const Node& x : g.nodes()) (x.kind == NodeKind::kSend ? sent : got)[x.rank] += x.bytes;
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(sent[r], 1u << 20) << r;
    EXPECT_EQ(got[r], 1u << 20) << r;
  }
  // A leaf unit: 4 chunks in and 1 up; the spine's: 2 in, 2 down.
  EXPECT_EQ(got[p.rank_of_unit(0)], 5u << 20);
  EXPECT_EQ(sent[p.rank_of_unit(0)], 5u << 20);
  EXPECT_EQ(got[p.rank_of_unit(2)], 2u << 20);
}

TEST(InNetworkAllReduce, OneUnitOneChunkClosedForm) {
  // k ranks, one chunk: k chunks into the unit back to back, then k results out:
  // 2 alpha + 2 k S / B.
  for (int k : {2, 4, 8}) {
    const uint64_t S = 256 << 10;
    EXPECT_EQ(run(leaf_spine(1, k), iota(k), S, 0),
              kAlpha * 2 + kPerByte * static_cast<int64_t>(2 * k * S))
        << k;
  }
}

TEST(InNetworkAllReduce, BufferBoundClosedForm) {
  // A buffer of one chunk, 2 ranks on one unit: a rank's chunk waits for the previous one's
  // result, a round trip R = 2 alpha + 3c/B (its chunk, the other's queued behind it at the
  // unit's port, its result), so m chunks take m R + c/B (the second rank's last result):
  // throughput buffer / R.
  const uint64_t c = 64 << 10, m = 16;
  const Time w = kPerByte * static_cast<int64_t>(c);
  const Time rtt = kAlpha * 2 + w * 3;
  EXPECT_EQ(run(leaf_spine(1, 2, c), iota(2), m * c, c), rtt * static_cast<int64_t>(m) + w);
  // Two chunks' buffer: two in flight per round trip, within the unit port's queueing (3c/B).
  const Time two = run(leaf_spine(1, 2, 2 * c), iota(2), m * c, c);
  EXPECT_GE(two, rtt * static_cast<int64_t>(m / 2));
  EXPECT_LE(two, rtt * static_cast<int64_t>(m / 2) + w * 3);
  // A large buffer: the unit's port bounds it, 2c/B a chunk each way.
  const Time big = run(leaf_spine(1, 2), iota(2), m * c, c);
  EXPECT_LT(big, two);
  EXPECT_EQ(big, kAlpha * 2 + w * static_cast<int64_t>(2 * (m + 1)));
}

}  // namespace
}  // namespace fabricsim::workload
