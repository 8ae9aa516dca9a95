// The scale-up domains (models/workload/scale_up.h) against exact times: one message takes
// S/B + latency, ports are shared max-min fairly, domains are separate networks; and the
// hierarchical all-reduce (coll_allreduce_hierarchical.cpp) on a two-level network (the scale-up
// domains for pairs of one domain, one non-blocking domain of every GPU at the NIC rate for the
// rest: a full-bisection fabric) against its closed form
//   2 (G - 1) (a_up + S/(G B_up)) + 2 (N - 1) (a_nic + S/(G N B_nic)).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "models/workload/collective.h"
#include "models/workload/scale_up.h"
#include "models/workload/workload_engine.h"
#include "testbenches/unit/two_level_network.h"

namespace fabricsim::workload {
namespace {

// 3600Gbps (450 GB/s): 2,222.2 fs a byte; sizes below are multiples of 9 B (20,000 fs).
const BitRate kUp = BitRate::gbps(3600);
const Time kUpLat = Time::ps(1872500);
constexpr double kFsPerByteUp = 8e15 / 3600e9;

// Delivers every message; returns each token's delivery time.
std::vector<Time> drain(ScaleUpNetwork& net, size_t tokens) {
  std::vector<Time> at(tokens, Time::max());
  for (Time t = net.next_event(); t != Time::max(); t = net.next_event()) {
    uint32_t token = 0;
    Time when;
    while (net.pop_delivered(t, token, when)) at[token] = when;
  }
  return at;
}

void expect_near_fs(Time got, double want_fs, const char* what) {
  EXPECT_NEAR(static_cast<double>(got.as_fs()), want_fs, 4.0) << what;
}

TEST(ScaleUp, OneMessageTakesItsBytesAtThePortRatePlusTheLatency) {
  ScaleUpNetwork net(16, 8, kUp, kUpLat);
  const uint64_t s = 9 << 20;
  net.post(0, 3, 5, s, Time());
  const auto at = drain(net, 1);
  expect_near_fs(at[0], static_cast<double>(s) * kFsPerByteUp + kUpLat.as_fs(), "S/B + latency");
  EXPECT_EQ(net.messages(), 1u);
  EXPECT_EQ(net.bytes(), s);
  EXPECT_EQ(net.active(), at[0]);
}

TEST(ScaleUp, PortsAreSharedMaxMinFairly) {
  // A: 0 -> 1; B: 0 -> 2; C: 3 -> 2; D: 4 -> 2. GPU 2's ingress holds three (1/3 each); GPU 0's
  // egress gives A what B leaves: 2/3 (an equal split there would give A 1/2).
  ScaleUpNetwork net(8, 8, kUp, kUpLat);
  const uint64_t s = 9 << 20;
  net.post(0, 0, 1, s, Time());
  net.post(1, 0, 2, s, Time());
  net.post(2, 3, 2, s, Time());
  net.post(3, 4, 2, s, Time());
  const auto at = drain(net, 4);
  const double one = static_cast<double>(s) * kFsPerByteUp;
  expect_near_fs(at[0], 1.5 * one + kUpLat.as_fs(), "A at 2/3 of the port");
  for (int i = 1; i < 4; ++i) expect_near_fs(at[i], 3 * one + kUpLat.as_fs(), "the incast");
}

TEST(ScaleUp, AFinishedMessageHandsItsShareOn) {
  // Two messages out of GPU 0, one a third of the other: half the port each until the short one
  // ends at 2 s/B, then the long one alone: 3 s in all leave by 4 s/B.
  ScaleUpNetwork net(8, 8, kUp, Time());
  const uint64_t s = 9 << 18;
  net.post(0, 0, 1, s, Time());
  net.post(1, 0, 2, 3 * s, Time());
  const auto at = drain(net, 2);
  const double one = static_cast<double>(s) * kFsPerByteUp;
  expect_near_fs(at[0], 2 * one, "short");
  expect_near_fs(at[1], 4 * one, "long");
}

TEST(ScaleUp, DomainsAreSeparateNetworks) {
  ScaleUpNetwork net(16, 8, kUp, kUpLat);
  EXPECT_EQ(net.domains(), 2);
  EXPECT_TRUE(net.same_domain(0, 7));
  EXPECT_FALSE(net.same_domain(7, 8));
  const uint64_t s = 9 << 20;
  net.post(0, 0, 1, s, Time());
  net.post(1, 8, 9, s, Time());  // the other domain's GPUs 0 and 1: no sharing
  const auto at = drain(net, 2);
  EXPECT_EQ(at[0], at[1]);
  expect_near_fs(at[0], static_cast<double>(s) * kFsPerByteUp + kUpLat.as_fs(), "alone");
  EXPECT_THROW(net.post(2, 7, 8, s, at[0]), std::invalid_argument);
  EXPECT_THROW(ScaleUpNetwork(12, 8, kUp, kUpLat), std::invalid_argument);
}

TEST(HierarchicalAllReduce, MatchesItsClosedForm) {
  const BitRate nic = BitRate::gbps(400);
  const Time nic_lat = Time::ns(3000);
  for (const auto& [g, n_dom] : {std::pair{8, 2}, std::pair{8, 4}, std::pair{4, 3}}) {
    const int n = g * n_dom;
    const std::vector<int> dom = domains_of(n, g);
    CollectiveCall c =
        iota_call(n, 9ull * 20 * 8 * 3 * 4096, 1, &dom);  // divides evenly by G N for every case
    ExecGraph graph(n);
    add_collective(graph, "allreduce_hierarchical", c);
    graph.finalize();
    TwoLevelNetwork net(graph, n, g, kUp, kUpLat, false, nic, nic_lat);
    WorkloadEngine e(graph, net);
    const Time t = net.run(e);
    ASSERT_TRUE(e.finished());
    const double s = static_cast<double>(c.bytes);
    const double want = 2.0 * (g - 1) * (kUpLat.as_fs() + s / g * kFsPerByteUp) +
                        2.0 * (n_dom - 1) * (nic_lat.as_fs() + s / g / n_dom * 8e15 / 400e9);
    EXPECT_NEAR(static_cast<double>(t.as_fs()), want, 1e-6 * want) << g << " x " << n_dom;
    // Every byte the closed form counts: 2 (G-1)/G S per rank on the scale-up domain, 2 (N-1)/N
    // S/G per rank on the NICs.
    EXPECT_EQ(net.up_.bytes(), static_cast<uint64_t>(n * 2.0 * (g - 1) / g * s));
    EXPECT_EQ(net.nic_.bytes(), static_cast<uint64_t>(n * 2.0 * (n_dom - 1) / n_dom * s / g));
  }
}

// The tree variant: the same phases inside the domains, and across them a double binary tree of
// S/G per rail, which on N non-blocking NIC ports takes what allreduce_tree alone takes: its time
// is the ring phases' 2 (G-1) (a_up + S/(G B_up)) plus that tree's, exactly; on 2 domains the
// tree is the ring.
TEST(HierarchicalAllReduce, TheTreeVariantIsTheDomainPhasesPlusTheTree) {
  const BitRate nic = BitRate::gbps(400);
  const Time nic_lat = Time::ns(3000);
  const auto time_of = [&](const std::string& algo, int n, int g, uint64_t bytes,
                           const std::vector<int>* dom, bool all_nic = false) {
    CollectiveCall c = iota_call(n, bytes, 1, dom);
    ExecGraph graph(n);
    add_collective(graph, algo, c);
    graph.finalize();
    // all_nic: one "domain" of every rank at the NICs' rate and latency, the NIC network itself.
    TwoLevelNetwork net(graph, n, g, all_nic ? nic : kUp, all_nic ? nic_lat : kUpLat, false, nic,
                        nic_lat);
    WorkloadEngine e(graph, net);
    const Time t = net.run(e);
    EXPECT_TRUE(e.finished()) << algo;
    return static_cast<double>(t.as_fs());
  };
  const uint64_t s = 9ull * 20 * 8 * 3 * 4096;
  for (const int n_dom : {2, 4, 5}) {
    const int g = 8, n = g * n_dom;
    const std::vector<int> dom = domains_of(n, g);
    const double t = time_of("allreduce_hierarchical_tree", n, g, s, &dom);
    // allreduce_tree alone on N ranks, every message on a NIC network of the same rate.
    const double across = time_of("allreduce_tree", n_dom, n_dom, s / g, nullptr, true);
    const double inside =
        2.0 * (g - 1) * (kUpLat.as_fs() + static_cast<double>(s) / g * kFsPerByteUp);
    EXPECT_NEAR(t, inside + across, 1e-6 * t) << n_dom << " domains";
    if (n_dom == 2) {
      EXPECT_NEAR(t, time_of("allreduce_hierarchical", n, g, s, &dom), 1e-6 * t);
    }
  }
}

TEST(HierarchicalAllReduce, NeedsDomainsOfEqualSize) {
  CollectiveCall c;
  c.name = "ar";
  c.ranks = {0, 1, 2, 3, 4, 5};
  c.bytes = 1 << 20;
  ExecGraph g(6);
  EXPECT_THROW(add_collective(g, "allreduce_hierarchical", c), std::invalid_argument);
  const std::vector<int> uneven = {0, 0, 0, 0, 1, 1};
  c.domain = &uneven;
  try {
    add_collective(g, "allreduce_hierarchical", c);
    ADD_FAILURE() << "unequal domains accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unequal counts (4 and 2)"), std::string::npos)
        << e.what();
  }
}

// --- ring over the rails (coll_allreduce_ring_rails.cpp, rail_rings) -------------------------

// Every channel's ring visits each rank once, a domain's ranks consecutively, crosses from
// domain d to d + 1 on one local rank (rail) but in the one case the rule names (G = 2, N odd:
// the last domain's hop), and with C = G every GPU's NIC sends and receives exactly one
// channel's cross-domain hop (C = 2G: two).
TEST(RailRings, OneRingPerChannelOverEveryRankRailToRail) {
  struct Case {
    int g, n_dom, channels;
  };
  for (const Case k : {Case{8, 2, 8}, Case{8, 3, 8}, Case{4, 4, 4}, Case{4, 5, 4}, Case{2, 3, 2},
                       Case{2, 2, 2}, Case{3, 3, 3}, Case{4, 2, 8}, Case{8, 1, 8}}) {
    const int n = k.g * k.n_dom;
    const std::vector<int> dom = domains_of(n, k.g);
    const CollectiveCall c = iota_call(n, 1 << 20, k.channels, &dom);
    std::string why;
    const auto groups = domain_groups(c, why);
    ASSERT_EQ(groups.size(), static_cast<size_t>(k.n_dom)) << why;
    const auto rings = rail_rings(groups, k.channels);
    ASSERT_EQ(rings.size(), static_cast<size_t>(k.channels));
    const std::string what = fmt::format("G={} N={} C={}", k.g, k.n_dom, k.channels);
    // Per rank (position = host here), channels whose cross-domain hop it sends, receives.
    std::vector<int> nic_out(static_cast<size_t>(n)), nic_in(static_cast<size_t>(n));
    int cross_rail = 0;
    for (int x = 0; x < k.channels; ++x) {
      const std::vector<int>& r = rings[static_cast<size_t>(x)];
      std::vector<int> sorted = r;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int> all(static_cast<size_t>(n));
      std::iota(all.begin(), all.end(), 0);
      ASSERT_EQ(sorted, all) << what << " channel " << x << ": not every rank once";
      int hops_out = 0;
      for (int i = 0; i < n; ++i) {
        const int a = r[static_cast<size_t>(i)], b = r[static_cast<size_t>((i + 1) % n)];
        if (a / k.g == b / k.g) continue;
        ++hops_out;
        EXPECT_EQ(b / k.g, (a / k.g + 1) % k.n_dom) << what << ": domains out of order";
        if (a % k.g != b % k.g) ++cross_rail;
        ++nic_out[static_cast<size_t>(a)];
        ++nic_in[static_cast<size_t>(b)];
      }
      // One hop out of each domain: its ranks are consecutive in the ring.
      EXPECT_EQ(hops_out, k.n_dom > 1 ? k.n_dom : 0) << what << " channel " << x;
    }
    const bool odd_pairs = k.g == 2 && k.n_dom % 2 == 1;
    EXPECT_EQ(cross_rail, odd_pairs ? k.channels : 0) << what << ": hops across rails";
    const int per_nic = k.n_dom > 1 ? k.channels / k.g : 0;
    for (int h = 0; h < n; ++h) {
      EXPECT_EQ(nic_out[static_cast<size_t>(h)], per_nic) << what << " rank " << h << " sends";
      EXPECT_EQ(nic_in[static_cast<size_t>(h)], per_nic) << what << " rank " << h << " receives";
    }
  }
}

// The graph allreduce_ring_rails builds: every rank sends 2 (n - 1)/n S in all, of which its
// NIC carries exactly one channel's 2 (n - 1)/n S/C (C = G), every cross-domain message on
// the rail it leaves on; the collective's done nodes cover every rank. reducescatter_ring_rails
// and allgather_ring_rails move half that.
TEST(RingRails, BytesPerRankAndPerNic) {
  const int g = 8, n_dom = 2, n = g * n_dom, ch = 8;
  const std::vector<int> dom = domains_of(n, g);
  const uint64_t s = uint64_t{n} * ch * 4096 * 3;
  for (const auto& [algo, factor] : {std::pair<std::string, int>{"allreduce_ring_rails", 2},
                                     {"reducescatter_ring_rails", 1},
                                     {"allgather_ring_rails", 1}}) {
    ExecGraph graph(n);
    const RankNodes done = add_collective(graph, algo, iota_call(n, s, ch, &dom));
    ASSERT_EQ(done.size(), static_cast<size_t>(n));
    std::vector<uint64_t> sent(static_cast<size_t>(n)), nic(static_cast<size_t>(n));
    std::vector<std::set<int>> nic_channels(static_cast<size_t>(n));
    for (uint32_t i = 0; i < graph.size(); ++i) {
      const Node x = graph.node(i);
      if (x.kind != NodeKind::kSend) continue;
      sent[static_cast<size_t>(x.rank)] += x.bytes;
      if (x.rank / g != x.peer / g) {
        nic[static_cast<size_t>(x.rank)] += x.bytes;
        nic_channels[static_cast<size_t>(x.rank)].insert(x.channel);
        EXPECT_EQ(x.rank % g, x.peer % g) << algo << ": a NIC hop off its rail";
      }
    }
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(sent[static_cast<size_t>(r)], factor * (n - 1) * s / n) << algo << " rank " << r;
      EXPECT_EQ(nic[static_cast<size_t>(r)], factor * (n - 1) * s / n / ch) << algo << " " << r;
      EXPECT_EQ(nic_channels[static_cast<size_t>(r)].size(), 1u) << algo << " rank " << r;
      EXPECT_FALSE(done[static_cast<size_t>(r)].empty());
    }
  }
}

// On the two-level network (NIC ports at 400G: the NIC is the limit, 8 x 50 < 450 x 8/7), the
// pipelined ring all-reduce over the rails keeps every exit GPU's NIC busy from the start:
//   T = 2 (n - 1)/n S/(C B_nic) + a_nic (the last slice's latency), exactly (measured: 4 fs);
// busbw = C B_nic = 400 GB/s, where allreduce_ring's unrotated channels all leave a domain
// through one GPU's NIC (C times the bytes on it) and allreduce_hierarchical runs its phases
// one after the other (293 GB/s by its closed form).
TEST(RingRails, PipelinedAllReduceRunsEveryNicAtItsRate) {
  const BitRate nic = BitRate::gbps(400);
  const Time nic_lat = Time::ns(3000);
  const int g = 8, n_dom = 2, n = g * n_dom, ch = 8;
  const std::vector<int> dom = domains_of(n, g);
  const uint64_t s = uint64_t{256} << 20;
  const auto run = [&](const std::string& algo) {
    CollectiveCall c = iota_call(n, s, ch, &dom);
    c.chunk_bytes = 512 << 10;
    ExecGraph graph(n);
    add_collective(graph, algo, c);
    graph.finalize();
    TwoLevelNetwork net(graph, n, g, kUp, kUpLat, false, nic, nic_lat);
    WorkloadEngine e(graph, net);
    const Time t = net.run(e);
    EXPECT_TRUE(e.finished()) << algo;
    return static_cast<double>(t.as_fs());
  };
  const double t = run("allreduce_ring_rails");
  const double want =
      2.0 * (n - 1) / n * static_cast<double>(s) / ch * 8e15 / 400e9 + nic_lat.as_fs();
  EXPECT_NEAR(t, want, 1e-6 * want);
  const double busbw = 2.0 * (n - 1) / n * static_cast<double>(s) / (t * 1e-15) / 1e9;
  EXPECT_GT(busbw, 390.0);
  // The flat ring in communicator order: every channel's hop out of a domain on one NIC.
  EXPECT_GT(run("allreduce_ring"), 4 * t) << "the unrotated channels share one NIC";
}

TEST(RingRails, NeedsDomainsOfEqualSize) {
  ExecGraph g(6);
  CollectiveCall c = iota_call(6, 1 << 20, 2, nullptr);
  try {
    add_collective(g, "allreduce_ring_rails", c);
    ADD_FAILURE() << "no domains accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs scale-up domains"), std::string::npos) << e.what();
  }
  const std::vector<int> uneven = {0, 0, 0, 0, 1, 1};
  c.domain = &uneven;
  EXPECT_THROW(add_collective(g, "allgather_ring_rails", c), std::invalid_argument);
}

}  // namespace
}  // namespace fabricsim::workload
