// Orders the endpoints' next packet starts by (time, endpoint id), faster than a heap.
//
// Time is cut into buckets no wider than the shortest possible packet, so an endpoint has at most
// one pending start per bucket (its next start is at least one serialisation time later). The
// width is a power of two of femtoseconds, so a start's bucket is a shift, not a 64-bit division.
// A ring of buckets, each a bit set of endpoints, covers the near future; starts beyond it wait in
// a small min-heap. Buckets are handed out whole: a walk over the bits in endpoint order, sorted
// only when the starts in the bucket differ (mixed sizes). When every start lies on a grid no
// finer than the bucket width (one packet size), no bucket ever mixes times and their time range
// is not even tracked. With fixed-size Bernoulli traffic a push is a few bit operations and a pop
// less, instead of a log2(N)-deep heap sift.
#pragma once

#include <algorithm>
#include <cstdint>
#include <queue>
#include <vector>

#include "models/common/units.h"

namespace fabricsim::traffic {

class StartCalendar {
 public:
  // `min_gap`: at most the time between two starts of one endpoint (the serialisation time of the
  // smallest packet it may send). `grid`: if > 0, every start is a whole multiple of it.
  StartCalendar(int endpoints, Time min_gap, Time grid = Time())
      : shift_(63 - __builtin_clzll(static_cast<uint64_t>(std::max<int64_t>(min_gap.as_fs(), 1)))),
        single_time_(grid.as_fs() >= (int64_t{1} << shift_)),
        words_((endpoints + 63) / 64),
        bits_(static_cast<size_t>(words_ * kSlots), 0),
        lo_(single_time_ ? 0 : kSlots, Time::max()),
        hi_(single_time_ ? 0 : kSlots, Time()),
        busy_(kSlots / 64, 0),
        start_of_(single_time_ ? 0 : static_cast<size_t>(endpoints)),
        drain_words_(static_cast<size_t>(words_), 0),
        drain_(static_cast<size_t>(endpoints)) {}

  // Endpoint `src`'s next packet starts at `t`, later than any start popped. kSingleTime: the
  // caller knows that the calendar was built with a grid, which saves a test.
  template <bool kSingleTime = false>
  void push(int32_t src, Time t) {
    const int64_t b = t.as_fs() >> shift_;
    if (__builtin_expect(b - cur_ >= kSlots, 0)) return push_far(src, t);
    const int64_t s = b & (kSlots - 1);
    bits_[(src >> 6) * kSlots + s] |= 1ull << (src & 63);
    if (!kSingleTime && !single_time_) track(src, t, s);
    busy_[s >> 6] |= 1ull << (s & 63);
  }

  // Takes the earliest pending bucket out of the calendar and calls f(src) for its endpoints in
  // (start, id) order; f may push (the next start of an endpoint always falls in a later bucket).
  // False if nothing is pending.
  template <class F>
  __attribute__((always_inline)) bool pop_bucket(F&& f) {
    const int64_t s = next_bucket();
    if (s < 0) return false;
    for (int wi = 0; wi < words_; ++wi) {
      uint64_t& word = bits_[wi * kSlots + s];
      drain_words_[wi] = word;
      word = 0;
    }
    busy_[s >> 6] &= ~(1ull << (s & 63));
    ++cur_;  // pushes from f go to later buckets
    if (!single_time_) {
      const bool mixed = lo_[s] != hi_[s];
      lo_[s] = Time::max();
      hi_[s] = Time();
      if (mixed) {
        size_t n = 0;
        for (int wi = 0; wi < words_; ++wi)
          for (uint64_t w = drain_words_[wi]; w; w &= w - 1)
            drain_[n++] = static_cast<int32_t>(wi * 64 + __builtin_ctzll(w));
        std::sort(drain_.begin(), drain_.begin() + static_cast<int64_t>(n),
                  [&](int32_t a, int32_t b) {
                    return start_of_[a] != start_of_[b] ? start_of_[a] < start_of_[b] : a < b;
                  });
        for (size_t i = 0; i < n; ++i) f(drain_[i]);
        return true;
      }
    }
    for (int wi = 0; wi < words_; ++wi)
      for (uint64_t w = drain_words_[wi]; w; w &= w - 1)
        f(static_cast<int32_t>(wi * 64 + __builtin_ctzll(w)));
    return true;
  }

 private:
  static constexpr int64_t kSlots = 1024;  // power of two
  struct Far {
    Time t;
    int32_t src;
    bool operator>(const Far& o) const { return t != o.t ? t > o.t : src > o.src; }
  };

  __attribute__((noinline)) void push_far(int32_t src, Time t) { far_.push({t, src}); }

  void place(int32_t src, Time t) {
    const int64_t s = (t.as_fs() >> shift_) & (kSlots - 1);
    bits_[(src >> 6) * kSlots + s] |= 1ull << (src & 63);
    if (!single_time_) track(src, t, s);
    busy_[s >> 6] |= 1ull << (s & 63);
  }

  void track(int32_t src, Time t, int64_t s) {
    start_of_[src] = t;
    lo_[s] = std::min(lo_[s], t);
    hi_[s] = std::max(hi_[s], t);
  }

  // Ring slot of the earliest non-empty bucket, with cur_ moved to it; -1 if nothing is pending.
  int64_t next_bucket() {
    for (;;) {
      while (!far_.empty() && (far_.top().t.as_fs() >> shift_) - cur_ < kSlots) {
        place(far_.top().src, far_.top().t);
        far_.pop();
      }
      const int64_t s = cur_ & (kSlots - 1);
      if (busy_[s >> 6] & (1ull << (s & 63))) return s;
      // Skip to the next busy bucket within this ring lap, else to the lap's end; with the ring
      // empty, jump over the empty stretch to the first far start.
      const int64_t next = next_busy(s);
      if (next >= 0) {
        cur_ += next;
      } else if (!ring_empty()) {
        cur_ += kSlots - s;
      } else if (!far_.empty()) {
        cur_ = far_.top().t.as_fs() >> shift_;
      } else {
        return -1;
      }
    }
  }

  // Distance from slot s to the next busy slot at or after it, without wrapping; -1 if none.
  int64_t next_busy(int64_t s) const {
    int64_t wi = s >> 6;
    uint64_t w = busy_[wi] & (~0ull << (s & 63));
    for (;;) {
      if (w) return (wi << 6) + __builtin_ctzll(w) - s;
      if (++wi == kSlots / 64) return -1;
      w = busy_[wi];
    }
  }

  bool ring_empty() const {
    for (uint64_t w : busy_)
      if (w) return false;
    return true;
  }

  int shift_;         // bucket width = 2^shift_ fs <= min_gap
  bool single_time_;  // every bucket holds one start time: no lo_/hi_/start_of_, never sorted
  int words_;         // 64-bit words per endpoint set
  std::vector<uint64_t> bits_;  // endpoint sets: bucket s's word w at w * kSlots + s
  std::vector<Time> lo_, hi_;   // per bucket: earliest and latest start (unless single_time_)
  std::vector<uint64_t> busy_;  // per bucket: non-empty
  std::vector<Time> start_of_;  // pending starts (unless single_time_), for sorting a bucket
  std::priority_queue<Far, std::vector<Far>, std::greater<Far>> far_;
  int64_t cur_ = 0;                    // bucket number next to be popped
  std::vector<uint64_t> drain_words_;  // the bucket being popped ...
  std::vector<int32_t> drain_;         // ... and its endpoints, when sorted
};

}  // namespace fabricsim::traffic
