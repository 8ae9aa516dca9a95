// The calendars of models/common/event_wheel.h: DelayLine keeps only the low 32 bits of each due
// cycle, grows from a small ring and restarts it when empty; EventWheel keeps each cycle's events
// in a list whose head and tail share a slot. None of that may change what comes out when.
#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "models/common/event_wheel.h"
#include "models/common/rng.h"

namespace fabricsim {
namespace {

TEST(DelayLine, ItemsLeaveInOrderAtTheirDueCyclesBeyond32BitsAndAcrossGrowth) {
  DelayLine<uint32_t> line;
  EXPECT_EQ(line.next_cycle(), DelayLine<uint32_t>::kNone);
  // Start past 2^32 and cross the next multiple of 2^32 with 100 items (the ring grows from 16).
  const int64_t base = (int64_t{1} << 33) - 37;
  for (uint32_t k = 0; k < 100; ++k) line.push(base + 3 * k, k);
  for (uint32_t k = 0; k < 100; ++k) {
    ASSERT_EQ(line.next_cycle(), base + 3 * k) << k;
    EXPECT_FALSE(line.due(base + 3 * k - 1));
    EXPECT_TRUE(line.due(base + 3 * k));
    EXPECT_EQ(line.pop(), k);
  }
  EXPECT_EQ(line.next_cycle(), DelayLine<uint32_t>::kNone);
  // Empty again: the next push may be due anywhere.
  line.push(7, 1);
  EXPECT_EQ(line.next_cycle(), 7);
}

TEST(DelayLine, AnItemDueBeforeTheOneAheadWaitsForItAndKeepsItsOwnDueCycle) {
  DelayLine<uint32_t> line;
  line.push(1000, 1);
  line.push(990, 2);                       // due earlier, behind: a FIFO
  line.push(990 + int64_t{INT32_MAX}, 3);  // the most a next item may be due after
  EXPECT_EQ(line.next_cycle(), 1000);
  EXPECT_EQ(line.pop(), 1u);
  EXPECT_EQ(line.next_cycle(), 990);
  EXPECT_EQ(line.pop(), 2u);
  EXPECT_EQ(line.next_cycle(), 990 + int64_t{INT32_MAX});
  EXPECT_EQ(line.pop(), 3u);
}

TEST(DelayLine, AnItemDue2To31CyclesFromTheOneBeforeIsRefused) {
  DelayLine<uint32_t> line;
  line.push(5, 1);
  EXPECT_THROW(line.push(5 + int64_t{INT32_MAX} + 1, 2), std::logic_error);
  line.push(5 + int64_t{INT32_MAX}, 2);
  EXPECT_THROW(line.push(4, 3), std::logic_error);  // 2^31 before the tail
}

TEST(EventWheel, EventsComeOutByCycleThenInScheduleOrderAsAReferenceSays) {
  // Against a reference (a map from cycle to the events in scheduling order): random events near
  // and far (beyond the wheel's 1,024 slots), some added to the cycle being processed while its
  // events are popped, several per cycle so that the per-cycle lists hold one, two and more.
  EventWheel<uint32_t> wheel;
  std::map<int64_t, std::vector<uint32_t>> ref;
  Rng rng(3);
  uint32_t id = 0;
  auto add = [&](int64_t at) {
    wheel.schedule(at, id);
    ref[at].push_back(id++);
  };
  for (int k = 0; k < 200; ++k) add(static_cast<int64_t>(rng.below(3000)));
  int64_t now = 0;
  size_t popped = 0;
  while (!ref.empty()) {
    const int64_t next = wheel.next_cycle();
    ASSERT_EQ(next, ref.begin()->first);
    now = next;
    wheel.advance(now);
    uint32_t e = 0;
    while (wheel.pop(e)) {
      auto& want = ref.begin()->second;
      ASSERT_EQ(ref.begin()->first, now);
      ASSERT_EQ(e, want.front()) << "cycle " << now;
      want.erase(want.begin());
      ++popped;
      if (rng.below(4) == 0) add(now);  // handlers add to the cycle being processed
      if (want.empty()) ref.erase(ref.begin());
      if (popped < 5000 && rng.below(2) == 0) add(now + static_cast<int64_t>(rng.below(2500)));
    }
    ASSERT_TRUE(ref.empty() || ref.begin()->first > now) << "cycle " << now << " left events";
  }
  EXPECT_EQ(wheel.next_cycle(), EventWheel<uint32_t>::kNone);
  EXPECT_GT(popped, 500u);
}

TEST(EventWheel, EventsKeptInAQueueOfTheirOwnMergeBackByOrderNumber) {
  // The switch core keeps its in-order egress joins in a DelayLine beside its wheel, each with a
  // number from the wheel's counter (take_order), and takes each cycle's events from the two by
  // number. What comes out must be what one wheel holding every event gives: random events
  // near and far (the far ones move into the wheel later, and take their numbers then), some
  // for the cycle being processed, with the in-order near ones in the line.
  EventWheel<uint32_t> ref, wheel;
  struct Item {
    uint32_t id, order;
  };
  DelayLine<Item> line;
  Rng rng(11);
  uint32_t id = 0;
  int64_t now = 0;
  size_t in_line = 0;
  auto add = [&](int64_t at, bool pipeline = false) {
    ref.schedule(at, id);
    const bool near = at - now < EventWheel<uint32_t>::kSlots;
    if (pipeline && near &&
        (line.next_cycle() == DelayLine<Item>::kNone || at >= line.tail_due())) {
      line.push(at, Item{id, wheel.take_order()});
      ++in_line;
    } else {
      wheel.schedule(at, id);
    }
    ++id;
  };
  auto take = [&](uint32_t& e) {
    if (!line.due(now)) return wheel.pop(e);
    if (wheel.peek() && EventWheel<uint32_t>::before(wheel.peek_order(), line.front().order))
      return wheel.pop(e);
    e = line.pop().id;
    return true;
  };
  for (int k = 0; k < 300; ++k) add(static_cast<int64_t>(rng.below(3000)));
  size_t popped = 0;
  for (;;) {
    const int64_t next =
        std::min(ref.next_cycle(), std::min(wheel.next_cycle(), line.next_cycle()));
    ASSERT_EQ(next, ref.next_cycle());
    if (next == EventWheel<uint32_t>::kNone) break;
    now = next;
    ref.advance(now);
    wheel.advance(now);
    uint32_t want = 0, got = 0;
    while (ref.pop(want)) {
      ASSERT_TRUE(take(got)) << "cycle " << now;
      ASSERT_EQ(got, want) << "cycle " << now;
      ++popped;
      if (rng.below(4) == 0) add(now);
      if (popped < 20000) {
        add(now + 1 + static_cast<int64_t>(rng.below(rng.below(3) ? 700 : 2500)));
        // A pipeline's (nearly in order: those out of order go to the wheel), or beyond the
        // wheel's slots (to its far heap).
        if (rng.below(2)) add(now + 600 + static_cast<int64_t>(rng.below(40)), true);
        if (rng.below(64) == 0) add(now + 1100 + static_cast<int64_t>(rng.below(100)), true);
      }
    }
    ASSERT_FALSE(take(got)) << "cycle " << now;
  }
  EXPECT_GT(popped, 20000u);
  EXPECT_GT(in_line, 1000u);
}

TEST(DelayLine, AnEmptiedLineStartsAgainAndKeepsItsOrder) {
  // Emptied and refilled many times at varying depths (the ring restarts at its first slot when
  // empty, and grows while full): items still leave in order at their due cycles.
  DelayLine<uint32_t> line;
  Rng rng(5);
  int64_t c = 0;
  uint32_t in = 0, out = 0;
  for (int round = 0; round < 200; ++round) {
    const auto n = static_cast<int64_t>(1 + rng.below(40));
    for (int64_t k = 0; k < n; ++k) line.push(c + 10 + k, in++);
    EXPECT_FALSE(line.due(c + 9));
    for (int64_t k = 0; k < n; ++k) {
      ASSERT_EQ(line.next_cycle(), c + 10 + k);
      ASSERT_EQ(line.pop(), out++);
    }
    EXPECT_EQ(line.next_cycle(), DelayLine<uint32_t>::kNone);
    c += 10 + n;
  }
  EXPECT_EQ(in, out);
}

}  // namespace
}  // namespace fabricsim
