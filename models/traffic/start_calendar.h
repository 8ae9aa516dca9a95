// Orders the endpoints' next packet starts by (time, endpoint id), faster than a heap.
//
// Time is cut into buckets no wider than the shortest possible packet, so an endpoint has at most
// one pending start per bucket (its next start is at least one serialisation time later). A ring of
// buckets, each a bit set of endpoints, covers the near future; starts beyond it wait in a small
// min-heap. Draining a bucket is a walk over its bits in endpoint order; only when the starts in a
// bucket differ (mixed sizes, unaligned trace-like timing) is it sorted. With fixed-size Bernoulli
// traffic every start in a bucket is the same slot, so the common case is a few bit operations per
// packet instead of a log2(N)-deep heap sift.
#pragma once

#include <algorithm>
#include <cstdint>
#include <queue>
#include <vector>

#include "models/common/port_set.h"
#include "models/common/units.h"

namespace fabricsim::traffic {

class StartCalendar {
 public:
  // `bucket`: at most the serialisation time of the smallest packet an endpoint may send.
  StartCalendar(int endpoints, Time bucket)
      : width_(std::max<int64_t>(bucket.as_fs(), 1)),
        sets_(kSlots, PortSet(endpoints)),
        lo_(kSlots, Time::max()),
        hi_(kSlots, Time()),
        busy_(kSlots / 64, 0),
        start_of_(static_cast<size_t>(endpoints)) {
    drain_.reserve(static_cast<size_t>(endpoints));
  }

  // Endpoint `src`'s next packet starts at `t` (>= the last start popped).
  void push(int32_t src, Time t) {
    start_of_[src] = t;
    const int64_t b = t.as_fs() / width_;
    if (b - cur_ >= kSlots) {
      far_.push({t, src});
      return;
    }
    place(src, t, b);
  }

  bool empty() const { return count_ == 0 && far_.empty() && pos_ == drain_.size(); }

  // The endpoint with the earliest (start, id); -1 if none is pending.
  int32_t pop() {
    if (pos_ == drain_.size() && !refill()) return -1;
    return drain_[pos_++];
  }
  Time start(int32_t src) const { return start_of_[src]; }

 private:
  static constexpr int64_t kSlots = 1024;  // power of two
  struct Far {
    Time t;
    int32_t src;
    bool operator>(const Far& o) const { return t != o.t ? t > o.t : src > o.src; }
  };

  void place(int32_t src, Time t, int64_t b) {
    const int64_t s = b & (kSlots - 1);
    sets_[s].set(src);
    lo_[s] = std::min(lo_[s], t);
    hi_[s] = std::max(hi_[s], t);
    busy_[s >> 6] |= 1ull << (s & 63);
    ++count_;
  }

  // Moves the next non-empty bucket into drain_, in (start, id) order.
  bool refill() {
    drain_.clear();
    pos_ = 0;
    if (count_ == 0) {
      if (far_.empty()) return false;
      cur_ = far_.top().t.as_fs() / width_;  // jump over the empty stretch
    }
    for (;;) {
      while (!far_.empty() && far_.top().t.as_fs() / width_ - cur_ < kSlots) {
        const Far f = far_.top();
        far_.pop();
        place(f.src, f.t, f.t.as_fs() / width_);
      }
      const int64_t s = cur_ & (kSlots - 1);
      if (busy_[s >> 6] & (1ull << (s & 63))) break;
      // Skip to the next busy bucket within this ring lap (or to the lap's end).
      const int64_t next = next_busy(s);
      cur_ += next >= 0 ? next : kSlots - s;
    }
    const int64_t s = cur_ & (kSlots - 1);
    PortSet& set = sets_[s];
    const auto& words = set.words();
    for (size_t wi = 0; wi < words.size(); ++wi)
      for (uint64_t w = words[wi]; w; w &= w - 1)
        drain_.push_back(static_cast<int32_t>(wi * 64 + __builtin_ctzll(w)));
    if (lo_[s] != hi_[s]) {
      std::sort(drain_.begin(), drain_.end(), [&](int32_t a, int32_t b) {
        return start_of_[a] != start_of_[b] ? start_of_[a] < start_of_[b] : a < b;
      });
    }
    count_ -= static_cast<int64_t>(drain_.size());
    set.clear_all();
    lo_[s] = Time::max();
    hi_[s] = Time();
    busy_[s >> 6] &= ~(1ull << (s & 63));
    ++cur_;  // later pushes go to later buckets
    return true;
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

  int64_t width_;
  std::vector<PortSet> sets_;
  std::vector<Time> lo_, hi_;
  std::vector<uint64_t> busy_;
  std::vector<Time> start_of_;
  std::priority_queue<Far, std::vector<Far>, std::greater<Far>> far_;
  std::vector<int32_t> drain_;
  size_t pos_ = 0;
  int64_t cur_ = 0;  // bucket number being (or next to be) drained
  int64_t count_ = 0;
};

}  // namespace fabricsim::traffic
