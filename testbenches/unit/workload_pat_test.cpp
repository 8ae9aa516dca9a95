// PAT all-gather and reduce-scatter (models/workload/coll_allgather_pat.cpp) on the ideal network
// (ideal_network.h): unchunked (full aggregation) log2(n) alpha + (n - 1)/n S/B exactly for n a
// power of two, within it otherwise; (n - 1)/n S sent and received by every rank whatever the
// aggregation; log2(n) messages a rank unchunked, n - 1 at one block a message; and every rank's
// result depends on every rank's data (the causal closure of the graph's dependencies and
// matched messages), which a schedule that dropped or misrouted a block would break.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/workload/collective.h"
#include "models/workload/ideal_network.h"
#include "models/workload/workload_engine.h"
#include "testbenches/unit/two_level_network.h"

namespace fabricsim::workload {
namespace {

const BitRate kB = BitRate::gbps(800);  // 10,000 fs a byte
const Time kAlpha = Time::ns(1500);
constexpr int64_t kFsPerByte = 10000;

struct Outcome {
  Time time;
  std::vector<uint64_t> sent, received, messages;  // per rank
  std::vector<std::vector<char>> reaches;          // [rank][origin]: origin's data reached rank
};

int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

Outcome run(const std::string& algo, int n, uint64_t S, uint64_t chunk = 0, int channels = 1) {
  ExecGraph g(n);
  CollectiveCall c = iota_call(n, S, channels);
  c.chunk_bytes = chunk;
  add_collective(g, algo, c);
  g.finalize();
  IdealNetwork net(n, kB, kAlpha);
  WorkloadEngine e(g, net);
  Outcome r;
  r.time = net.run(e);
  EXPECT_TRUE(e.finished()) << algo << " left " << e.unfinished() << " nodes";
  const auto un = static_cast<size_t>(n);
  r.sent.assign(un, 0);
  r.received.assign(un, 0);
  r.messages.assign(un, 0);
  // Origins reaching each node: a send's rank and its dependencies' origins; a receive's, its
  // matched send's (added before it by these algorithms).
  std::vector<uint32_t> send_of(g.size(), kNoNode);
  for (uint32_t i = 0; i < g.size(); ++i)
    if (g.node(i).kind == NodeKind::kSend) send_of[g.match(i)] = i;
  std::vector<std::vector<char>> from(g.size(), std::vector<char>(un, 0));
  r.reaches.assign(un, std::vector<char>(un, 0));
  for (uint32_t i = 0; i < g.size(); ++i) {
    const Node x = g.node(i);
    auto& f = from[i];
    for (uint32_t d = x.dep_begin; d < x.dep_end; ++d)
      for (size_t o = 0; o < un; ++o) f[o] |= from[g.deps()[d]][o];
    const auto ur = static_cast<size_t>(x.rank);
    if (x.kind == NodeKind::kSend) {
      f[ur] = 1;
      r.sent[ur] += x.bytes;
      ++r.messages[ur];
    } else if (x.kind == NodeKind::kRecv) {
      EXPECT_LT(send_of[i], i);
      for (size_t o = 0; o < un; ++o) f[o] |= from[send_of[i]][o];
      r.received[ur] += x.bytes;
      for (size_t o = 0; o < un; ++o) r.reaches[ur][o] |= f[o];
    }
  }
  return r;
}

Time closed_form(int n, uint64_t S) {
  return kAlpha * ceil_log2(n) + Time::fs(static_cast<int64_t>((n - 1) * (S / n)) * kFsPerByte);
}

TEST(Pat, UnchunkedIsLog2nLatenciesPlusTheRingsBytes) {
  for (const std::string algo : {"allgather_pat", "reducescatter_pat"})
    for (const int n : {2, 4, 8, 16, 64}) {
      const uint64_t S = uint64_t{4096} * static_cast<uint64_t>(n);
      const Outcome r = run(algo, n, S);
      EXPECT_EQ(r.time, closed_form(n, S)) << algo << " n=" << n;
      // The ring: (n - 1) latencies; at 64 ranks and 256 KiB, 63 against 6.
      if (n >= 8) {
        EXPECT_LT(r.time, kAlpha * (n - 1)) << algo << " n=" << n;
      }
      for (int i = 0; i < n; ++i)
        EXPECT_EQ(r.messages[static_cast<size_t>(i)], static_cast<uint64_t>(ceil_log2(n)))
            << algo << " n=" << n << " rank " << i;
    }
}

// Non-powers of two: ceil(log2 n) messages a rank; a dimension whose blocks are all the sender's
// own goes at once, so the time is at most the closed form (and at least its bytes).
TEST(Pat, NonPowersOfTwoTakeCeilLog2Steps) {
  for (const std::string algo : {"allgather_pat", "reducescatter_pat"})
    for (const int n : {3, 5, 6, 12, 24}) {
      const uint64_t S = uint64_t{4096} * static_cast<uint64_t>(n);
      const Outcome r = run(algo, n, S);
      EXPECT_LE(r.time, closed_form(n, S)) << algo << " n=" << n;
      EXPECT_GE(r.time, kAlpha + Time::fs(static_cast<int64_t>((n - 1) * 4096) * kFsPerByte));
      for (int i = 0; i < n; ++i)
        EXPECT_EQ(r.messages[static_cast<size_t>(i)], static_cast<uint64_t>(ceil_log2(n)));
    }
}

// Whatever the aggregation (chunk 0: full; a chunk of 4 blocks: P = 2, A = 16; blocks larger
// than the chunk: one block a message, the schedule repeated per piece; two channels): each rank
// sends and receives (n - 1)/n S, and every rank's data reaches every rank.
TEST(Pat, EveryRankSendsTheRingsBytesAndHearsFromEveryRank) {
  struct Case {
    int n;
    uint64_t block, chunk;
    int channels;
    uint64_t messages;  // per rank
  };
  for (const Case& k : {Case{16, 1024, 0, 1, 4}, Case{32, 1024, 4096, 1, 0},
                        Case{16, 1 << 20, 256 << 10, 1, 4 * 15}, Case{12, 2048, 0, 2, 2 * 4},
                        Case{13, 4096, 1024, 1, 4 * 12}, Case{64, 512, 0, 1, 6}})
    for (const std::string algo : {"allgather_pat", "reducescatter_pat"}) {
      const uint64_t S = k.block * static_cast<uint64_t>(k.n);
      const Outcome r = run(algo, k.n, S, k.chunk, k.channels);
      for (int i = 0; i < k.n; ++i) {
        const auto ui = static_cast<size_t>(i);
        EXPECT_EQ(r.sent[ui], S - k.block) << algo << " n=" << k.n << " rank " << i;
        EXPECT_EQ(r.received[ui], S - k.block) << algo << " n=" << k.n << " rank " << i;
        if (k.messages) {
          EXPECT_EQ(r.messages[ui], k.messages) << algo << " n=" << k.n;
        }
        for (int o = 0; o < k.n; ++o)
          if (o != i) {
            EXPECT_TRUE(r.reaches[ui][static_cast<size_t>(o)])
                << algo << " n=" << k.n << ": rank " << o << " never reaches rank " << i;
          }
      }
    }
}

// Partial aggregation (a 2 KiB chunk of 1 KiB blocks: P = 2 blocks a message, A = 16 of 32
// ranks: D = 2): the steps of the
// multiples of 2 aggregated (4 dimensions, 1 to 8 blocks in messages of 2: 8 messages), then the
// odd blocks at distance 1 (16 blocks: 8 messages), 16 a rank; more than unchunked's 5.
TEST(Pat, BufferLimitedAggregationSendsMoreMessages) {
  const Outcome r = run("allgather_pat", 32, 32 * 1024, 2048);
  for (const uint64_t m : r.messages) EXPECT_EQ(m, 16u);
  // Still log2(32) hops deep (block 31: 0 -> 16 -> 24 -> 28 -> 30 -> 31), the smaller messages
  // overlapping their bytes with the latencies.
  EXPECT_GE(r.time, kAlpha * 5);
  EXPECT_LE(r.time, run("allgather_pat", 32, 32 * 1024).time);
}

TEST(Pat, BusFactorIsTheRings) {
  const auto& reg = CollectiveRegistry::global();
  EXPECT_DOUBLE_EQ(reg.at("allgather_pat").bus_factor(8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(reg.at("reducescatter_pat").bus_factor(8), 7.0 / 8);
}

}  // namespace
}  // namespace fabricsim::workload
