// The QP scheduler: turns, byte shares by weight (deficit round robin), pacing that keeps the
// arbiter work-conserving, and when it says the next QP will be allowed.
#include <algorithm>
#include <deque>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "models/config/config.h"
#include "models/nic/qp_scheduler.h"
#include "testbenches/unit/loaded_config.h"

namespace fabricsim::nic {
namespace {

QpScheduler make(const std::vector<std::string>& o = {}) {
  return QpScheduler(test::loaded<QpSchedulerConfig>(o));
}

TEST(QpScheduler, RoundRobinSendsOnePacketPerQpPerTurn) {
  QpScheduler s = make();
  for (uint32_t q = 0; q < 3; ++q) {
    s.add_qp(q);
    for (int k = 0; k < 3; ++k) s.enqueue(q, q == 1 ? 100 : 4000);
  }
  std::vector<uint32_t> order;
  Time next;
  while (auto q = s.pick(Time(), next)) order.push_back(*q);
  EXPECT_EQ(order, (std::vector<uint32_t>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(next, Time::max());
}

TEST(QpScheduler, WeightedSharesBytesInProportionWhateverThePacketSizes) {
  QpScheduler s = make({"policy=weighted", "quantum=4096B"});
  s.add_qp(0, 1);
  s.add_qp(1, 3);
  s.add_qp(2, 1);
  // QP 0 sends 256 B packets, QPs 1 and 2 4158 B ones; all stay backlogged (10 MB of 50 for
  // QP 0 needs 39,063 packets; QP 1 needs 7,215).
  for (int k = 0; k < 60000; ++k) s.enqueue(0, 256);
  for (int k = 0; k < 10000; ++k) {
    s.enqueue(1, 4158);
    s.enqueue(2, 4158);
  }
  Time next;
  uint64_t total = 0;
  while (total < 50000000) {
    const auto q = s.pick(Time(), next);
    ASSERT_TRUE(q);
    total += *q == 0 ? 256 : 4158;
  }
  const double b0 = static_cast<double>(s.bytes(0)), b1 = static_cast<double>(s.bytes(1)),
               b2 = static_cast<double>(s.bytes(2));
  // 1 : 3 : 1, within a frame per turn over ~2,400 turns.
  EXPECT_NEAR(b1 / b0, 3.0, 0.01);
  EXPECT_NEAR(b2 / b0, 1.0, 0.01);
}

TEST(QpScheduler, APacedQpIsPassedOverAndSendsAtItsRate) {
  QpScheduler s = make();
  s.add_qp(0);
  s.add_qp(1);
  s.set_rate(0, BitRate::gbps(100));
  const uint32_t frame = 4158;
  const Time gap = BitRate::gbps(100).serialization(Bytes(frame));  // 332.64 ns
  EXPECT_EQ(gap, Time::ps(332640));
  for (int k = 0; k < 4; ++k) s.enqueue(0, frame);
  for (int k = 0; k < 200; ++k) s.enqueue(1, frame);
  // Every 10 ns a pick: QP 0 goes whenever its pacer allows (0, 332.6, 665.3, 997.9 ns at the
  // earliest), QP 1 takes every other slot.
  std::vector<Time> qp0_sent;
  Time next;
  for (Time t; t < Time::ns(1200); t += Time::ns(10)) {
    const auto q = s.pick(t, next);
    ASSERT_TRUE(q) << t.str();  // QP 1 always has work: never idle
    if (*q == 0) qp0_sent.push_back(t);
  }
  ASSERT_EQ(qp0_sent.size(), 4u);
  EXPECT_EQ(qp0_sent[0], Time());
  for (size_t k = 1; k < qp0_sent.size(); ++k) {
    // The first 10 ns slot at or after its pacer allows it.
    const Time allowed = qp0_sent[k - 1] + gap;
    EXPECT_GE(qp0_sent[k], allowed);
    EXPECT_LT(qp0_sent[k], allowed + Time::ns(10));
  }
}

TEST(QpScheduler, APacerRateChangeTakesEffectOnTheNextPacketOfTheSameSize) {
  // The gap of a frame size is kept from one packet to the next; a new rate must not reuse it.
  QpScheduler s = make();
  s.add_qp(0);
  const uint32_t frame = 4158;
  for (int k = 0; k < 4; ++k) s.enqueue(0, frame);
  Time next;
  s.set_rate(0, BitRate::gbps(100));
  ASSERT_EQ(s.pick(Time(), next), std::optional<uint32_t>(0));
  const Time gap100 = BitRate::gbps(100).serialization(Bytes(frame));
  EXPECT_FALSE(s.pick(Time(), next));
  EXPECT_EQ(next, gap100);
  ASSERT_EQ(s.pick(gap100, next), std::optional<uint32_t>(0));
  // A rate that is not a whole number of fs per byte (DCQCN's): the exact, rounded-up gap.
  const BitRate odd = BitRate::bps(37123456789ull);
  s.set_rate(0, odd);
  EXPECT_FALSE(s.pick(gap100, next));
  EXPECT_EQ(next, gap100 + gap100);  // the packet sent at 100G still paces this one
  ASSERT_EQ(s.pick(next, next), std::optional<uint32_t>(0));
  EXPECT_FALSE(s.pick(gap100 + gap100, next));
  EXPECT_EQ(next, gap100 + gap100 + odd.serialization(Bytes(frame)));
}

TEST(QpScheduler, WhenOnlyPacedQpsHaveWorkItSaysWhenTheFirstIsAllowed) {
  QpScheduler s = make();
  s.add_qp(0);
  s.add_qp(1);
  s.set_rate(0, BitRate::gbps(100));
  s.set_rate(1, BitRate::gbps(200));
  s.enqueue(0, 1000);
  s.enqueue(0, 1000);
  s.enqueue(1, 1000);
  s.enqueue(1, 1000);
  Time next;
  ASSERT_EQ(s.pick(Time(), next), 0u);
  ASSERT_EQ(s.pick(Time(), next), 1u);
  EXPECT_FALSE(s.pick(Time(), next));
  EXPECT_EQ(next, Time::ns(40));  // QP 1: 1000 B at 200 Gb/s
  EXPECT_EQ(s.pick(next, next), 1u);
  EXPECT_FALSE(s.pick(Time::ns(40), next));
  EXPECT_EQ(next, Time::ns(80));  // QP 0: 1000 B at 100 Gb/s
  EXPECT_EQ(s.pick(next, next), 0u);
  EXPECT_FALSE(s.pick(Time::ns(80), next));
  EXPECT_EQ(next, Time::max());
  EXPECT_EQ(s.packets(0), 2u);
  EXPECT_EQ(s.packets(1), 2u);
}

TEST(QpScheduler, APickThatFoundAllPacedIsAnsweredAgainUntilAPacketIsQueued) {
  // A pick that finds every QP paced is remembered until the soonest is allowed; a packet queued
  // meanwhile (a QP without a pacer wait) must go at once, and the turns stay in order.
  QpScheduler s = make();
  for (uint32_t q = 0; q < 3; ++q) {
    s.add_qp(q);
    s.set_rate(q, BitRate::gbps(100));  // 1000 B: 80 ns
  }
  s.add_qp(3);
  for (uint32_t q = 0; q < 3; ++q)
    for (int k = 0; k < 2; ++k) s.enqueue(q, 1000);
  Time next;
  for (uint32_t q = 0; q < 3; ++q) ASSERT_EQ(s.pick(Time(), next), q);
  EXPECT_FALSE(s.pick(Time::ns(10), next));
  EXPECT_EQ(next, Time::ns(80));
  EXPECT_FALSE(s.pick(Time::ns(79), next));  // remembered: the same answer
  EXPECT_EQ(next, Time::ns(80));
  s.enqueue(3, 500);  // no pacer: it goes now, ahead of the paced ones
  EXPECT_EQ(s.pick(Time::ns(79), next), 3u);
  EXPECT_FALSE(s.pick(Time::ns(79), next));
  EXPECT_EQ(next, Time::ns(80));
  // At 80 ns all three are allowed: the turns resume where they were (0, 1, 2).
  for (uint32_t q = 0; q < 3; ++q) EXPECT_EQ(s.pick(Time::ns(80), next), q);
  EXPECT_FALSE(s.pick(Time::ns(80), next));
  EXPECT_EQ(next, Time::max());
}

// The arbiter as first written (each QP's pacer time in its own record, the turn order a queue
// of QP numbers), for the test below: the scheduler keeps the pacer times in its ring of turns,
// which must change nothing of what it picks, when, or what it says of the next.
struct Reference {
  bool weighted;
  int64_t quantum;
  struct Q {
    uint32_t head = 0, n = 0, weight = 1;
    int64_t deficit = 0;
    BitRate rate;
    Time allowed;
    std::deque<uint32_t> rest;
  };
  std::vector<Q> q;
  std::deque<uint32_t> active;

  void enqueue(uint32_t id, uint32_t bytes) {
    Q& x = q[id];
    if (x.n++ == 0) {
      x.head = bytes;
      x.deficit = 0;
      active.push_back(id);
    } else {
      x.rest.push_back(bytes);
    }
  }
  uint32_t pick(Time now, Time& next) {
    next = Time::max();
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t n = active.size(); n > 0; --n) {
        const uint32_t id = active.front();
        Q& x = q[id];
        if (x.allowed > now) {
          next = std::min(next, x.allowed);
          active.pop_front();
          active.push_back(id);
          continue;
        }
        const uint32_t head = x.head;
        if (weighted && x.deficit < head) {
          x.deficit += quantum * x.weight;
          if (x.deficit < head) {
            active.pop_front();
            active.push_back(id);
            continue;
          }
        }
        if (--x.n > 0) {
          x.head = x.rest.front();
          x.rest.pop_front();
        }
        if (x.rate.as_bps() != 0)
          x.allowed = std::max(now, x.allowed) + x.rate.serialization(Bytes(head));
        if (weighted) x.deficit -= head;
        if (x.n == 0) {
          active.pop_front();
        } else if (!weighted || x.deficit < x.head) {
          active.pop_front();
          active.push_back(id);
        }
        return id;
      }
    }
    return UINT32_MAX;
  }
};

TEST(QpScheduler, PicksAsTheArbiterWithPacerTimesInEachRecordDoes) {
  for (const bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "round_robin");
    QpScheduler s = weighted ? make({"policy=weighted", "quantum=1024B"}) : make();
    Reference r{weighted, 1024, {}, {}};
    constexpr uint32_t kQps = 24;
    std::mt19937_64 rng(weighted ? 7 : 3);
    const BitRate rates[] = {BitRate(), BitRate::bps(100000000000ull), BitRate::bps(37000000000ull),
                             BitRate::bps(400000000000ull)};
    for (uint32_t id = 0; id < kQps; ++id) {
      const uint32_t w = 1 + static_cast<uint32_t>(rng() % 3);
      s.add_qp(id, w);
      r.q.emplace_back().weight = w;
    }
    Time now;
    uint64_t picked = 0, paced = 0;
    for (int step = 0; step < 200000; ++step) {
      const uint64_t op = rng() % 10;
      if (op < 4) {
        const auto id = static_cast<uint32_t>(rng() % kQps);
        const auto bytes = static_cast<uint32_t>(64 + rng() % 4096);
        s.enqueue(id, bytes);
        r.enqueue(id, bytes);
      } else if (op == 4) {
        const auto id = static_cast<uint32_t>(rng() % kQps);
        const BitRate rate = rates[rng() % 4];
        s.set_rate(id, rate);
        r.q[id].rate = rate;
      } else {
        if (rng() % 2) now = now + Time::ns(static_cast<int64_t>(rng() % 200));
        Time next_s, next_r;
        const std::optional<uint32_t> got = s.pick(now, next_s);
        const uint32_t want = r.pick(now, next_r);
        ASSERT_EQ(got.value_or(UINT32_MAX), want) << "step " << step;
        if (!got) {
          ASSERT_EQ(next_s, next_r) << "step " << step;
          paced += next_r != Time::max();
        }
        picked += got.has_value();
      }
    }
    // Both kinds of answer were exercised, many times.
    EXPECT_GT(picked, 50000u);
    EXPECT_GT(paced, 1000u);
  }
}

}  // namespace
}  // namespace fabricsim::nic
