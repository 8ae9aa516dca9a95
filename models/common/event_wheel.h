// A calendar of events keyed by clock cycle, for clocked blocks that sleep when idle.
//
// Near events (within `kSlots` cycles) are nodes of one pooled array, linked into per-cycle FIFO
// lists (a slot holds its list's head and tail side by side), with a bitmap of non-empty cycles
// so that finding the next busy cycle is a few word scans. Freed nodes are reused last-in
// first-out, so the memory an event is written to is almost always in cache (per-bucket vectors, by
// contrast, are each touched once per wheel turn). Far events wait in a min-heap and move into the
// wheel as time advances. Events of one cycle come out in the order they were scheduled, which
// keeps runs deterministic. Steady state allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <queue>
#include <stdexcept>
#include <vector>

namespace fabricsim {

// Distance from slot `start` to the next set bit of a ring bitmap of `slots` bits (a power of
// two), wrapping around; -1 if no bit is set. Shared by the calendars below.
inline int64_t ring_distance_to_next(const uint64_t* bitmap, int64_t slots, int64_t start) {
  const int64_t words = slots / 64;
  int64_t wi = start >> 6;
  uint64_t w = bitmap[wi] & (~0ull << (start & 63));
  for (int64_t k = 0; k <= words; ++k) {
    if (w) return (((wi << 6) + __builtin_ctzll(w)) - start) & (slots - 1);
    wi = wi + 1 == words ? 0 : wi + 1;
    w = bitmap[wi];
  }
  return -1;
}

template <class Event>
class EventWheel {
 public:
  static constexpr int64_t kSlots = 1024;  // power of two
  static constexpr int64_t kNone = INT64_MAX;

  EventWheel() : slots_(kSlots) {}

  // Schedule `e` at `cycle` >= now() (the cycle being processed, or later).
  void schedule(int64_t cycle, const Event& e) {
    if (!near(cycle)) {
      far_.push(Far{cycle, seq_++, e});
      return;
    }
    uint32_t n = free_;
    if (n != kNil) {
      free_ = nodes_[n].next;
    } else {
      n = static_cast<uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[n].e = e;
    nodes_[n].next = kNil;
    nodes_[n].order = order_++;
    const int64_t s = cycle & (kSlots - 1);
    Slot& sl = slots_[s];
    if (sl.tail == kNil)
      sl.head = n;
    else
      nodes_[sl.tail].next = n;
    sl.tail = n;
    bitmap_[s >> 6] |= 1ull << (s & 63);
    ++near_count_;
  }

  // Move the wheel to `cycle` (>= now()); events at earlier cycles must have been taken.
  void advance(int64_t cycle) {
    now_ = cycle;
    while (!far_.empty() && far_.top().cycle - now_ < kSlots) {
      const Far f = far_.top();
      far_.pop();
      schedule(f.cycle, f.e);
    }
  }

  // Takes the next event of cycle now(), in scheduling order; events scheduled for now() while
  // the cycle is being processed come out too. False when the cycle has none left.
  bool pop(Event& e) {
    const int64_t s = now_ & (kSlots - 1);
    // The bitmap (in the wheel object) first: most cycles have no event, and the lists are
    // memory the owner's other state has pushed out of the cache since.
    if (!(bitmap_[s >> 6] >> (s & 63) & 1)) return false;
    Slot& sl = slots_[s];
    const uint32_t n = sl.head;
    if (n == kNil) return false;
    e = nodes_[n].e;
    sl.head = nodes_[n].next;
    if (sl.head == kNil) {
      sl.tail = kNil;
      bitmap_[s >> 6] &= ~(1ull << (s & 63));
    }
    nodes_[n].next = free_;
    free_ = n;
    --near_count_;
    return true;
  }

  // The event pop() would take next (without taking it), if the cycle has one: an owner may
  // ask the CPU for what it will touch while it handles the one before.
  const Event* peek() const {
    const int64_t s = now_ & (kSlots - 1);
    if (!(bitmap_[s >> 6] >> (s & 63) & 1)) return nullptr;
    const uint32_t n = slots_[s].head;
    return n == kNil ? nullptr : &nodes_[n].e;
  }
  // Order: each event entering the wheel's lists takes the next number of a counter (an event
  // from the far heap when it moves in), and pop() gives a cycle's events in that order. An
  // owner that keeps some of its events in a queue of its own (due in the order they are
  // queued) takes numbers from the same counter for them, and merges the two by number: the
  // order is exactly as if they had been in the wheel. Numbers wrap (compare with before()).
  uint32_t take_order() { return order_++; }
  // Whether an event at `cycle` goes straight into the lists (else to the far heap, and takes its
  // number when it moves in).
  bool near(int64_t cycle) const { return cycle - now_ < kSlots; }
  // The number of the event peek() shows (there is one).
  uint32_t peek_order() const { return nodes_[slots_[now_ & (kSlots - 1)].head].order; }
  // Whether number a was taken before b (both of events not yet taken: within 2^31 of each other).
  static bool before(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }

  // Earliest cycle >= now() holding an event, or kNone.
  int64_t next_cycle() const {
    if (near_count_ > 0) {
      const int64_t d = ring_distance_to_next(bitmap_.data(), kSlots, now_ & (kSlots - 1));
      if (d >= 0) return now_ + d;
    }
    return far_.empty() ? kNone : far_.top().cycle;
  }

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  struct Node {
    Event e;
    uint32_t next;
    uint32_t order;
  };
  struct Far {
    int64_t cycle;
    uint64_t seq;
    Event e;
    bool operator>(const Far& o) const { return cycle != o.cycle ? cycle > o.cycle : seq > o.seq; }
  };
  std::vector<Node> nodes_;
  uint32_t free_ = kNil;
  // Per slot, the first and last node of its list, side by side: one cache line per schedule
  // or pop (the slots are walked by time, and with a fabric's many switches each is a miss).
  struct Slot {
    uint32_t head = kNil, tail = kNil;
  };
  std::vector<Slot> slots_;
  std::array<uint64_t, kSlots / 64> bitmap_{};  // in the object: read every cycle
  std::priority_queue<Far, std::vector<Far>, std::greater<Far>> far_;
  int64_t now_ = 0;
  int64_t near_count_ = 0;
  uint64_t seq_ = 0;
  uint32_t order_ = 0;
};

}  // namespace fabricsim

namespace fabricsim {

// A fixed-latency pipeline: items enter in (nearly always) non-decreasing due cycle (now +
// constant latency), so a FIFO ring replaces a calendar (an item due before the one ahead of it
// leaves with it): push and pop are a store and a load in sequential memory. The
// ring starts small and doubles when full, so it spans only what the pipeline holds at its
// fullest: a larger one would walk a new cache line every few items (with the 80 switches of a
// fat tree, each line a miss).
template <class Item>
class DelayLine {
 public:
  static constexpr int64_t kNone = INT64_MAX;

  void push(int64_t due, const Item& item) {
    if (__builtin_expect(count_ == ring_.size(), 0)) grow();
    if (count_ == 0) {
      // An empty line starts again at its first slot: a lightly loaded pipeline (most of a
      // fabric's switches) then reuses the same cache lines instead of walking its whole ring.
      head_ = 0;
      head_due_ = due;
    } else if (__builtin_expect(  // |due - tail_due_| <= INT32_MAX, in one comparison
                   static_cast<uint64_t>(due - tail_due_ + INT32_MAX) > uint64_t{2} * INT32_MAX,
                   0)) {
      throw std::logic_error("DelayLine: an item due 2^31 cycles from the one before it");
    }
    tail_due_ = due;
    ring_[(head_ + count_) & mask_] = Entry{static_cast<uint32_t>(due), item};
    ++count_;
  }
  // The head's due cycle is kept in the object: the owner asks every cycle, and the ring is
  // memory its other state has pushed out of the cache since.
  int64_t next_cycle() const { return head_due_; }
  bool due(int64_t cycle) const { return head_due_ <= cycle; }
  // The item after the head (the one pop() returns after the next), if there is one: for the
  // owner to prefetch what it touches.
  const Item* second() const { return peek(1); }
  // The item k places behind the head (0: the head), if there is one.
  const Item* peek(size_t k) const {
    return k < count_ ? &ring_[(head_ + k) & mask_].item : nullptr;
  }
  // The head (the line is not empty); and the last pushed item's due cycle (0 if none yet).
  const Item& front() const { return ring_[head_].item; }
  int64_t tail_due() const { return tail_due_; }
  Item pop() {
    const Item item = ring_[head_].item;
    head_ = (head_ + 1) & mask_;
    // The next due cycle from its low 32 bits and its distance to this one's (push checks it
    // is below 2^31; an item may be due before the one ahead of it, which it then waits for).
    head_due_ = --count_ ? head_due_ + static_cast<int32_t>(ring_[head_].due_lo -
                                                            static_cast<uint32_t>(head_due_))
                         : kNone;
    return item;
  }

 private:
  struct Entry {
    uint32_t due_lo;  // the due cycle's low 32 bits (an entry of 8 bytes for a 4-byte item)
    Item item;
  };
  [[gnu::noinline, gnu::cold]] void grow() {
    std::vector<Entry> bigger(ring_.empty() ? 16 : ring_.size() * 2);
    for (size_t k = 0; k < count_; ++k) bigger[k] = ring_[(head_ + k) & (ring_.size() - 1)];
    ring_.swap(bigger);
    head_ = 0;
    mask_ = ring_.size() - 1;
  }
  std::vector<Entry> ring_;
  size_t mask_ = 0;  // ring_.size() - 1 (a power of two)
  size_t head_ = 0, count_ = 0;
  int64_t head_due_ = kNone;  // the head's due cycle, or kNone when empty
  int64_t tail_due_ = 0;      // the last pushed item's due cycle
};

}  // namespace fabricsim

namespace fabricsim {

// Per-cycle sets of ports, for events a port has at most one of at a time (e.g. "the packet on
// this egress wire finishes"): setting a bit is cheaper than queueing an event, and a cycle's
// ports come out in port order. Events further than `kSlots` cycles ahead must go elsewhere.
class PortCalendar {
 public:
  static constexpr int64_t kSlots = 1024;  // power of two
  static constexpr int64_t kNone = INT64_MAX;

  explicit PortCalendar(int ports)
      : words_((ports + 63) / 64), bits_(static_cast<size_t>(kSlots * words_), 0) {}

  bool fits(int64_t cycle, int64_t now) const { return cycle - now < kSlots; }
  [[gnu::always_inline]] void set(int64_t cycle, int port) {
    const int64_t s = cycle & (kSlots - 1);
    uint64_t& w = bits_[static_cast<size_t>(s * words_ + (port >> 6))];
    if (!(w >> (port & 63) & 1)) ++count_;
    w |= 1ull << (port & 63);
    busy_[s >> 6] |= 1ull << (s & 63);
  }
  // Takes the lowest port set for `cycle`, or -1 (ports set meanwhile for `cycle` come out too).
  int take(int64_t cycle) {
    const int64_t s = cycle & (kSlots - 1);
    if (!(busy_[s >> 6] >> (s & 63) & 1)) return -1;
    uint64_t* row = &bits_[static_cast<size_t>(s * words_)];
    for (int64_t w = 0; w < words_; ++w)
      if (row[w]) {
        const int port = static_cast<int>(w * 64 + __builtin_ctzll(row[w]));
        row[w] &= row[w] - 1;
        --count_;
        return port;
      }
    busy_[s >> 6] &= ~(1ull << (s & 63));
    return -1;
  }
  // Unsets `port` for `cycle` if it is set.
  void clear(int64_t cycle, int port) {
    const int64_t s = cycle & (kSlots - 1);
    uint64_t& w = bits_[static_cast<size_t>(s * words_ + (port >> 6))];
    if (!(w >> (port & 63) & 1)) return;
    --count_;
    w &= ~(1ull << (port & 63));
    const uint64_t* row = &bits_[static_cast<size_t>(s * words_)];
    for (int64_t k = 0; k < words_; ++k)
      if (row[k]) return;
    busy_[s >> 6] &= ~(1ull << (s & 63));  // so that next_cycle() does not stop here
  }
  // Earliest cycle >= now with a port set, or kNone.
  int64_t next_cycle(int64_t now) const {
    if (count_ == 0) return kNone;
    const int64_t d = ring_distance_to_next(busy_.data(), kSlots, now & (kSlots - 1));
    return d >= 0 ? now + d : kNone;
  }

 private:
  int64_t words_;
  std::vector<uint64_t> bits_;
  std::array<uint64_t, kSlots / 64> busy_{};  // slots that may hold ports (cleared lazily by take)
  int64_t count_ = 0;
};

}  // namespace fabricsim
