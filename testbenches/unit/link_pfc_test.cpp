// PFC: pause timing at the sender, headroom formulas, and an upstream -> link -> congested ingress
// loop showing no loss with the sized headroom, loss with half of it, and drops for lossy classes.
#include "models/link/pfc.h"

#include <deque>
#include <vector>

#include <gtest/gtest.h>

#include "models/common/span_log.h"
#include "models/link/link.h"

namespace fabricsim::link {
namespace {

ControlFrame pause(int prio, uint16_t quanta) {
  ControlFrame f;
  f.kind = ControlFrame::Kind::kPause;
  f.enable = static_cast<uint8_t>(1u << prio);
  f.quanta[prio] = quanta;
  return f;
}

TEST(PfcPauseState, HonoursPauseAfterResponseDelay) {
  PfcPauseState s(BitRate::gbps(400), Time::ns(100));
  EXPECT_EQ(s.quantum(), Time::ps(1280));  // 512 bit times at 400G
  ControlFrame f = pause(3, 1000);
  f.quanta[4] = 500;  // not enabled: ignored
  s.on_pause_frame(f, Time());
  EXPECT_TRUE(s.can_send(3, Time::ns(99)));
  EXPECT_EQ(s.next_change(Time::ns(99)), Time::ns(100));
  EXPECT_FALSE(s.can_send(3, Time::ns(100)));
  EXPECT_TRUE(s.can_send(4, Time::ns(100)));
  EXPECT_EQ(s.next_change(Time::ns(100)), Time::ns(1380));
  EXPECT_FALSE(s.can_send(3, Time::ns(1379)));
  EXPECT_TRUE(s.can_send(3, Time::ns(1380)));  // 1000 quanta = 1.28 us after the effect
  EXPECT_EQ(s.paused_time(3, Time::us(5)), Time::ns(1280));
  EXPECT_EQ(s.paused_time(4, Time::us(5)), Time());
}

// A port's per-priority state is made at its first PFC frame: before it, nothing is paused or
// reported; a state moved (as a vector of ports grows) keeps what it had.
TEST(PfcPauseState, APortNeverPausedHasNothingPausedAndMovesKeepTheState) {
  PfcPauseState idle(BitRate::gbps(400), Time::ns(100));
  EXPECT_TRUE(idle.can_send(3, Time::us(1)));
  EXPECT_EQ(idle.paused_mask(Time::us(1)), 0u);
  EXPECT_EQ(idle.next_change(Time::us(1)), Time::max());
  for (int p = 0; p < kPfcPriorities; ++p) EXPECT_EQ(idle.paused_time(p, Time::us(2)), Time());
  std::vector<PfcPauseState> ports;
  ports.emplace_back(BitRate::gbps(400), Time::ns(100));
  ports[0].on_pause_frame(pause(3, 1000), Time());
  for (int k = 0; k < 40; ++k) ports.emplace_back(BitRate::gbps(400), Time::ns(100));
  EXPECT_FALSE(ports[0].can_send(3, Time::ns(100)));
  EXPECT_EQ(ports[0].paused_time(3, Time::us(5)), Time::ns(1280));
  EXPECT_TRUE(ports[40].can_send(3, Time::ns(100)));
}

TEST(PfcPauseState, XonAndRefresh) {
  PfcPauseState s(BitRate::gbps(400), Time::ns(100));
  s.on_pause_frame(pause(3, 1000), Time());
  s.on_pause_frame(pause(3, 0), Time::ns(500));  // XON: effect at 600 ns
  EXPECT_FALSE(s.can_send(3, Time::ns(599)));
  EXPECT_TRUE(s.can_send(3, Time::ns(600)));
  EXPECT_EQ(s.paused_time(3, Time::us(2)), Time::ns(500));
  // A refresh before expiry extends the pause without a gap.
  s.on_pause_frame(pause(3, 1000), Time::us(2));     // paused [2.1, 3.38) us
  s.on_pause_frame(pause(3, 1000), Time::ns(3000));  // effect 3.1 us: until 4.38 us
  EXPECT_FALSE(s.can_send(3, Time::ns(3379)));
  EXPECT_FALSE(s.can_send(3, Time::ns(4379)));
  EXPECT_TRUE(s.can_send(3, Time::ns(4380)));
  EXPECT_EQ(s.paused_time(3, Time::us(10)), Time::ns(500 + 2280));
  EXPECT_EQ(s.frames_received(), 4u);
}

TEST(PfcPauseState, PausedSpansAreReportedOnceEachWithTheirExactEnds) {
  // The same frames as XonAndRefresh: paused [100, 600) ns (cut short by XON), then [2.1, 4.38)
  // us (a refresh extends it: one span, not two), reported at port 5 of device 7.
  stats::SpanLog log(10);
  PfcPauseState s(BitRate::gbps(400), Time::ns(100));
  s.set_span_sink({&log, 7}, 5);
  s.on_pause_frame(pause(3, 1000), Time());
  s.on_pause_frame(pause(3, 0), Time::ns(500));
  s.on_pause_frame(pause(3, 1000), Time::us(2));
  s.on_pause_frame(pause(3, 1000), Time::ns(3000));
  ASSERT_EQ(log.records().size(), 1u);  // the second is still open
  s.flush_spans(Time::us(10));
  ASSERT_EQ(log.records().size(), 2u);
  const auto& a = log.records()[0];
  const auto& b = log.records()[1];
  EXPECT_EQ(a.kind, stats::SpanKind::kPaused);
  EXPECT_EQ(a.device, 7);
  EXPECT_EQ(a.port, 5);
  EXPECT_EQ(a.cls, 3);
  EXPECT_EQ(a.start, Time::ns(100));
  EXPECT_EQ(a.end, Time::ns(600));
  EXPECT_EQ(b.start, Time::ns(2100));
  EXPECT_EQ(b.end, Time::ns(4380));
  // Their sum is the paused time the counters report.
  EXPECT_EQ((a.end - a.start) + (b.end - b.start), s.paused_time(3, Time::us(10)));
}

TEST(PfcBuffer, XoffToXonSpansAtTheReceivingPort) {
  // Reported from the admission that crosses the threshold to the release under XON; past the
  // log's limit the rest are counted only.
  PfcConfig cfg;
  config::load(cfg, "",
               {"reserve_per_pg=0B", "shared_pool=10000B", "threshold=static", "xoff_static=3000B",
                "xon_offset=1000B"});
  stats::SpanLog log(1);
  PfcBuffer b(cfg, 2, BitRate::gbps(400), Bytes(20000));
  b.set_span_sink({&log, 0});
  for (int round = 0; round < 2; ++round) {
    const Time t0 = Time::us(10 * round);
    ASSERT_EQ(b.admit(1, 3, 2000, t0), PfcBuffer::Admit::kShared);
    ASSERT_EQ(b.admit(1, 3, 2000, t0 + Time::ns(10)), PfcBuffer::Admit::kShared);  // 4000: XOFF
    b.release(1, 3, 2000, t0 + Time::ns(50));  // 2000 = XON point (3000 - 1000)
    b.release(1, 3, 2000, t0 + Time::ns(60));
  }
  ASSERT_EQ(log.records().size(), 1u);
  EXPECT_EQ(log.records()[0].kind, stats::SpanKind::kXoff);
  EXPECT_EQ(log.records()[0].port, 1);
  EXPECT_EQ(log.records()[0].cls, 3);
  EXPECT_EQ(log.records()[0].start, Time::ns(10));
  EXPECT_EQ(log.records()[0].end, Time::ns(50));
  EXPECT_EQ(log.not_recorded(), 1u);
}

TEST(PfcBuffer, AQuietPortHasNothingToSendNowOrLater) {
  // quiet() lets the switch skip its look for a pause frame (SwitchCore::start_control): it
  // must hold only while poll_pause() finds nothing and next_refresh() is Time::max().
  PfcConfig cfg;
  config::load(cfg, "",
               {"reserve_per_pg=0B", "shared_pool=10000B", "threshold=static", "xoff_static=3000B",
                "xon_offset=1000B"});
  PfcBuffer b(cfg, 2, BitRate::gbps(400), Bytes(20000));
  ControlFrame f;
  auto nothing = [&](Time t) { return !b.poll_pause(1, t, f) && b.next_refresh(1) == Time::max(); };
  EXPECT_TRUE(b.quiet(1));
  EXPECT_TRUE(nothing(Time()));
  b.admit(1, 3, 2000, Time());
  EXPECT_TRUE(b.quiet(1));            // below XOFF
  b.admit(1, 3, 2000, Time::ns(10));  // XOFF: a frame to send, then refreshes
  EXPECT_FALSE(b.quiet(1));
  EXPECT_TRUE(b.poll_pause(1, Time::ns(10), f));
  EXPECT_FALSE(b.quiet(1));  // XOFF held: refreshes due
  EXPECT_NE(b.next_refresh(1), Time::max());
  b.release(1, 3, 2000, Time::ns(50));  // XON: a transition to announce
  EXPECT_FALSE(b.quiet(1));
  EXPECT_TRUE(b.poll_pause(1, Time::ns(50), f));
  EXPECT_TRUE(b.quiet(1));
  EXPECT_TRUE(nothing(Time::ns(60)));
  EXPECT_TRUE(b.quiet(0));  // the other port saw nothing
}

TEST(PfcHeadroom, Formulas) {
  // mlx5: (301 + 2.16 x 7) x 100 + 2.72 x 1500 = 31612 + 4080.
  EXPECT_EQ(headroom_mlx5(7, BitRate::gbps(100), Bytes(1500)).count(), 35692u);
  // First principles at 800G, 100 m x 5 ns/m, 100 ns PHY, 1 us response, 9216 B MTU:
  // 2 x 9236 + 84 + 800e9 x (2 x 600 ns + 1 us) / 8 = 18556 + 220000.
  EXPECT_EQ(
      headroom_first_principles(100, 5, BitRate::gbps(800), Bytes(9216), Time::us(1), Time::ns(100))
          .count(),
      238556u);
  PfcConfig c;
  config::load(c, "", {"headroom_formula=mlx5", "mtu=1500B"});
  EXPECT_EQ(c.headroom(7, 5, BitRate::gbps(100), Time()).count(), 35692u);
}

TEST(PfcBuffer, ThresholdsAndAccounting) {
  PfcConfig c;
  config::load(c, "", {"reserve_per_pg=1000B", "shared_pool=10000B", "xon_offset=1000B"});
  PfcBuffer b(c, 2, BitRate::gbps(400), Bytes(5000));
  EXPECT_EQ(b.admit(0, 3, 1000, Time()), PfcBuffer::Admit::kReserve);
  // Dynamic threshold alpha = 1: shared admits while shared < free pool, i.e. up to ~5000.
  int shared = 0;
  while (!b.xoff(0, 3)) {
    ASSERT_EQ(b.admit(0, 3, 500, Time()), PfcBuffer::Admit::kShared);
    ++shared;
  }
  EXPECT_EQ(shared, 10);  // 5000 >= 10000 - 5000
  ControlFrame f;
  ASSERT_TRUE(b.poll_pause(0, Time(), f));
  EXPECT_EQ(f.enable, 0x08);
  EXPECT_EQ(f.quanta[3], 65535);
  EXPECT_FALSE(b.poll_pause(0, Time::ns(1), f));
  // After XOFF: headroom, up to its size, then drops.
  for (int i = 0; i < 10; ++i) ASSERT_EQ(b.admit(0, 3, 500, Time()), PfcBuffer::Admit::kHeadroom);
  EXPECT_EQ(b.admit(0, 3, 500, Time()), PfcBuffer::Admit::kDropped);
  EXPECT_EQ(b.drops(0, 3), 1u);
  // Refresh: due after half the pause (65535 x 1.28 ns / 2 = 41.94 us).
  EXPECT_EQ(b.next_refresh(0), Time::fs(41942400000));
  // A lossy priority on the other port drops at the threshold and never pauses.
  while (b.admit(1, 0, 500, Time()) != PfcBuffer::Admit::kDropped) {
  }
  EXPECT_FALSE(b.poll_pause(1, Time(), f));
  // Release: headroom first; XON once headroom is empty and shared <= threshold - offset.
  for (int i = 0; i < 10; ++i) b.release(0, 3, 500, Time());
  EXPECT_TRUE(b.xoff(0, 3));
  EXPECT_EQ(b.headroom_used(0, 3), 0);
  while (b.xoff(0, 3)) b.release(0, 3, 500, Time());
  ASSERT_TRUE(b.poll_pause(0, Time::us(1), f));
  EXPECT_EQ(f.enable, 0x08);
  EXPECT_EQ(f.quanta[3], 0);
  // The XON announced, the port has nothing due, not even a refresh, until a PG goes XOFF again.
  EXPECT_FALSE(b.poll_pause(0, Time::us(100), f));
  EXPECT_EQ(b.next_refresh(0), Time::max());
  for (int i = 0; i < 100 && !b.xoff(0, 3); ++i) b.admit(0, 3, 500, Time::us(101));
  ASSERT_TRUE(b.xoff(0, 3));
  ASSERT_TRUE(b.poll_pause(0, Time::us(101), f));
  EXPECT_EQ(f.quanta[3], 65535);
  std::vector<std::string> v;
  b.check_invariants(v);
  EXPECT_TRUE(v.empty());
}

// Upstream U sends saturated MTU frames of one priority to downstream D over a link; D's ingress
// buffer drains at a fraction of line rate (a quarter unless given). D's own saturated MTU traffic
// to U makes each PFC frame wait for a frame in progress, as in the headroom derivation.
struct PfcLoop {
  PfcLoop(const std::vector<std::string>& pfc, double headroom_scale, int prio,
          int drain_divisor = 4)
      : lcfg(make_link()),
        cfg(make_pfc(pfc)),
        link(lcfg, 9, "pfc"),
        rate(lcfg.phy.wire_format().mac_rate()),
        sized(cfg.headroom(lcfg.length_m, lcfg.ns_per_m, rate,
                           lcfg.phy.fec_latency + lcfg.phy.pcs_latency)),
        buf(cfg, 1, rate,
            Bytes(static_cast<uint64_t>(static_cast<double>(sized.count()) * headroom_scale))),
        upstream(rate, cfg.response_delay),
        drain(BitRate::bps(rate.as_bps() / drain_divisor)),
        prio(prio) {}

  static LinkConfig make_link() {
    LinkConfig l;
    config::load(l, "", {"phy.lanes=4", "length_m=100"});
    return l;
  }
  static PfcConfig make_pfc(const std::vector<std::string>& o) {
    PfcConfig c;
    std::vector<std::string> all = {"reserve_per_pg=0B", "shared_pool=200KB"};
    all.insert(all.end(), o.begin(), o.end());
    config::load(c, "", all);
    return c;
  }

  void run(Time until) {
    while (now < until) {
      Delivery d;
      while (link.from(0).receive(now, d)) {
        if (buf.admit(0, d.frame.lane, d.frame.bytes, now) != PfcBuffer::Admit::kDropped)
          fifo.push_back(d.frame.bytes);
        else
          ++dropped;
      }
      while (link.from(1).receive(now, d)) {
        if (d.frame.kind != FrameKind::kPause) continue;
        ControlFrame f;
        f.enable = d.frame.lane;
        for (int i = 0; i < kPfcPriorities; ++i) f.quanta[i] = d.frame.ctrl[i];
        upstream.on_pause_frame(f, now);
      }
      if (serving && serve_end <= now) {
        buf.release(0, prio, fifo.front(), now);
        fifo.pop_front();
        serving = false;
      }
      if (!serving && !fifo.empty()) {
        serving = true;
        serve_end = now + drain.serialization(Bytes(fifo.front()));
      }
      ControlFrame p;
      if (buf.poll_pause(0, now, p)) pending = p, have_pending = true;
      if (link.from(1).free_at() <= now) {  // D -> U: PFC frames first, else MTU data
        if (have_pending) {
          link.from(1).send(Link::pause_frame(pending.enable, pending.quanta), now);
          have_pending = false;
        } else {
          LinkFrame f;
          f.bytes = 9216;
          link.from(1).send(f, now);
        }
      }
      if (link.from(0).free_at() <= now && upstream.can_send(prio, now)) {
        LinkFrame f;
        f.bytes = 9216;
        f.lane = static_cast<uint8_t>(prio);
        link.from(0).send(f, now);
      }
      std::vector<std::string> v;
      buf.check_invariants(v);
      ASSERT_TRUE(v.empty()) << v.front();
      Time next = Time::max();
      for (Time t : {link.from(0).next_arrival(), link.from(1).next_arrival(),
                     link.from(0).free_at(), link.from(1).free_at(), upstream.next_change(now),
                     buf.next_refresh(0), serving ? serve_end : Time::max()})
        if (t > now) next = std::min(next, t);
      now = next;
    }
  }

  LinkConfig lcfg;
  PfcConfig cfg;
  Link link;
  BitRate rate;
  Bytes sized;
  PfcBuffer buf;
  PfcPauseState upstream;
  BitRate drain;
  int prio;
  std::deque<uint32_t> fifo;
  bool serving = false, have_pending = false;
  Time serve_end, now;
  ControlFrame pending;
  uint64_t dropped = 0;
};

TEST(PfcLoop, SizedHeadroomIsLossless) {
  PfcLoop l({}, 1.0, 3);
  // 400G, 100 m, 100 ns FEC, 2.017 us response, 9216 B MTU.
  EXPECT_EQ(l.sized.count(), 2 * 9236u + 84 + 160850);
  l.run(Time::us(600));
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_GT(l.buf.xoff_events(0, 3), 10u);  // many XOFF/XON cycles
  EXPECT_EQ(l.dropped, 0u);
  EXPECT_EQ(l.buf.drops(0, 3), 0u);
  EXPECT_LE(l.buf.headroom_peak(0, 3), static_cast<int64_t>(l.sized.count()));
  // The upstream is paused whenever the buffer is full: about 3/4 of the time at a 1/4 drain.
  const double paused = l.upstream.paused_time(3, l.now).as_s() / l.now.as_s();
  EXPECT_GT(paused, 0.6);
  EXPECT_LT(paused, 0.8);
  EXPECT_GE(l.buf.pause_frames_sent(0), 2 * l.buf.xoff_events(0, 3) - 1);  // XOFF and XON each
}

TEST(PfcLoop, SizedHeadroomIsTight) {
  // With a slow drain (1/16 of line rate) little leaves the headroom during the window, so the
  // worst XOFF cycle fills close to the bound: the formula is not grossly oversized.
  PfcLoop l({}, 1.0, 3, 16);
  l.run(Time::us(1200));
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_GT(l.buf.xoff_events(0, 3), 5u);
  EXPECT_EQ(l.dropped, 0u);
  EXPECT_LE(l.buf.headroom_peak(0, 3), static_cast<int64_t>(l.sized.count()));
  EXPECT_GE(l.buf.headroom_peak(0, 3), static_cast<int64_t>(0.85 * l.sized.count()));
}

TEST(PfcLoop, HalfHeadroomLoses) {
  PfcLoop l({}, 0.5, 3);
  l.run(Time::us(600));
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_GT(l.dropped, 0u);
  EXPECT_EQ(l.dropped, l.buf.drops(0, 3));
}

TEST(PfcLoop, Mlx5HeadroomAlsoLosslessHere) {
  // At 400G the mlx5 formula's 301 B/Gbps (~2.4 us) covers the 2.017 us response used here.
  PfcLoop l({"headroom_formula=mlx5"}, 1.0, 3);
  EXPECT_GT(l.sized.count(), 2 * 9236u + 84 + 160850);
  l.run(Time::us(300));
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_EQ(l.dropped, 0u);
}

TEST(PfcLoop, ShortPausesAreRefreshed) {
  // 2000 quanta = 2.56 us pauses refreshed every 1.28 us: XOFF periods (~tens of us) need many
  // refreshes, and the upstream never resumes early, so nothing is lost.
  PfcLoop l({"pause_quanta=2000"}, 1.0, 3);
  l.run(Time::us(300));
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_EQ(l.dropped, 0u);
  EXPECT_GT(l.buf.pause_frames_sent(0), 5 * l.buf.xoff_events(0, 3));
}

TEST(PfcLoop, LossyClassDrops) {
  PfcLoop l({}, 1.0, 0);  // priority 0 is not in the lossless mask
  l.run(Time::us(200));
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_GT(l.dropped, 100u);
  EXPECT_EQ(l.buf.pause_frames_sent(0), 0u);
  EXPECT_EQ(l.upstream.frames_received(), 0u);
}

}  // namespace
}  // namespace fabricsim::link
