// IdleFabric (models/sim/idle_fabric.h): the routes it replays a message over, its reuse of a
// kind's time, and what it says of a pair it cannot route. (That its times are the fabric's own
// for a message alone, to the picosecond, is validation case nic_slowdown.)
#include "models/sim/idle_fabric.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testbenches/unit/loaded_config.h"

namespace fabricsim::sim {
namespace {

struct Line {
  // Three 8-port switches in a line, the 51.2T chip's pipeline (shared memory, 800G).
  Line() {
    topo::TopologyConfig c;
    c.kind = "line";
    c.switches = 3;
    t = topo::build_topology(c, 8, 1);
  }
  IdleFabric idle(const FrameOverhead& o = {}, Time latency = Time()) {
    return IdleFabric(nic, o, latency, false,
                      IdleFabric::topology_routes(
                          t, [this](int) -> const sw::SwitchConfig& { return chip; },
                          [](int, int) { return BitRate::gbps(800); }),
                      [](int) { return BitRate::gbps(800); });
  }
  int host_on(int sw) const {
    for (int h = 0; h < t.hosts; ++h)
      if (t.host_port[h].sw == sw) return h;
    return -1;
  }
  topo::Topology t;
  sw::SwitchConfig chip = test::loaded<sw::SwitchConfig>(
      {"architecture=shared_memory", "core_clock=1.35GHz", "pipeline.ingress_cycles=300",
       "pipeline.crossbar_cycles=20", "pipeline.egress_cycles=300", "egress.start=no_underrun"});
  nic::NicConfig nic = test::loaded<nic::NicConfig>();
};

nic::Message write(int src, int dst, uint64_t bytes, Time start) {
  nic::Message m;
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  m.start = start;
  return m;
}

TEST(IdleFabric, RoutesCrossTheSwitchesBetweenTheHosts) {
  Line l;
  const auto route = IdleFabric::topology_routes(
      l.t, [&l](int) -> const sw::SwitchConfig& { return l.chip; },
      [](int, int) { return BitRate::gbps(800); });
  const int a = l.host_on(0), b = l.host_on(1), c = l.host_on(2);
  EXPECT_EQ(route(a, a + 1).size(), 1u);
  EXPECT_EQ(route(a, b).size(), 2u);
  EXPECT_EQ(route(a, c).size(), 3u);
  EXPECT_EQ(route(c, a).size(), 3u);
  // One closed form per chip and rate, whichever switch it is.
  EXPECT_EQ(route(a, c)[0].chip, route(a, c)[2].chip);
}

TEST(IdleFabric, AFartherHostTakesLongerAndEachKindIsReplayedOnce) {
  Line l;
  const IdleFabric idle = l.idle();
  const int a = l.host_on(0), c = l.host_on(2);
  const Time near = idle.fct(write(a, a + 1, 65536, Time::ns(1)));
  const Time far = idle.fct(write(a, c, 65536, Time::ns(1)));
  ASSERT_NE(near, Time::max());
  ASSERT_NE(far, Time::max());
  // Two more switches each way: at least their pipelines (620 cycles, 459 ns) twice over.
  EXPECT_GT((far - near).as_ns(), 4 * 459.0);
  EXPECT_EQ(idle.replays(), 2u);
  // The same kind from other hosts at another time: the time of the first, no replay.
  EXPECT_EQ(idle.fct(write(a + 1, c + 1, 65536, Time::us(7))), far);
  EXPECT_EQ(idle.replays(), 2u);
  // Another size is another kind.
  EXPECT_LT(idle.fct(write(a, c, 4096, Time::ns(1))), far);
  EXPECT_EQ(idle.replays(), 3u);
}

TEST(IdleFabric, LinksAddTheirLatencyAndFraming) {
  Line l;
  const int a = l.host_on(0), c = l.host_on(2);
  const Time ideal = l.idle().fct(write(a, c, 256, Time()));
  // Ethernet framing and 100 ns links: four links each way, the one packet and its ACK.
  const Time real = l.idle(FrameOverhead{64, 8, 12}, Time::ns(100)).fct(write(a, c, 256, Time()));
  EXPECT_GE((real - ideal).as_ns(), 8 * 100.0);
  EXPECT_LT((real - ideal).as_ns(), 8 * 100.0 + 20.0);
}

// A rail-only network's cross-rail pairs have no route (the fabric refuses such messages before
// the run; the replay says so rather than walk off the table).
TEST(IdleFabric, APairWithoutARouteHasNoIdleTime) {
  Line l;
  topo::TopologyConfig c;
  c.kind = "rail_only";
  c.servers = 8;
  c.gpus_per_server = 4;
  l.t = topo::build_topology(c, 8, 1);
  int a = 0, b = 1;
  while (l.t.routable(a, b)) ++b;
  const IdleFabric idle = l.idle();
  EXPECT_EQ(idle.fct(write(a, b, 4096, Time())), Time::max());
  int d = 1;
  while (!l.t.routable(a, d)) ++d;
  EXPECT_NE(idle.fct(write(a, d, 4096, Time())), Time::max());
}

// Per link class (link.optics): the host links' latency at both ends, the fabric's between
// switches. Across three switches: two host links and two switch-to-switch links.
TEST(IdleFabric, EachLinkClassTakesItsOwnLatency) {
  Line l;
  const auto route = IdleFabric::topology_routes(
      l.t, [&l](int) -> const sw::SwitchConfig& { return l.chip; },
      [](int, int) { return BitRate::gbps(800); });
  const int a = l.host_on(0), c = l.host_on(2);
  const IdleFabric::Route r = route(a, c);
  const FrameOverhead o;
  const Time base = IdleFabric::one_way(r, 4096, BitRate::gbps(800), o, Time());
  const Time host =
      IdleFabric::one_way(r, 4096, BitRate::gbps(800), o, link::ClassLatency(Time::ns(7), Time()));
  const Time fabric = IdleFabric::one_way(r, 4096, BitRate::gbps(800), o,
                                          link::ClassLatency(Time(), Time::ns(100)));
  // Each switch's closed form starts from a clock edge: the difference is the latency added,
  // give or take a cycle (741 ps at 1.35 GHz) per switch.
  EXPECT_NEAR((host - base).as_ns(), 14.0, 3 * 0.75);
  EXPECT_NEAR((fabric - base).as_ns(), 200.0, 3 * 0.75);
}

}  // namespace
}  // namespace fabricsim::sim
