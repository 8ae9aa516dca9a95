// A 4-ary min-heap of small records, for the event queues of the endpoint models.
//
// Not hardware: what std::priority_queue does, written out so that a push and a pop inline into
// their callers. Through std::priority_queue a record pushed was built on the stack with narrow
// stores and copied with wide loads (a store-forwarding stall on every event), and the heap's
// sift ran in an out-of-line function. The order is T's operator<, which must be strict and
// total over the records queued at once (ties broken by a sequence number): then the records
// come out in the same order as from any other heap, so swapping one for the other changes no
// result.
#pragma once

#include <cstddef>
#include <vector>

namespace fabricsim {

template <class T>
class MinHeap {
 public:
  // Four children a node: half the levels of a binary heap, and a node's children side by side
  // (a pop reads a few cache lines, not one per level of a deeper tree).
  static constexpr size_t kArity = 4;

  bool empty() const { return h_.empty(); }
  size_t size() const { return h_.size(); }
  const T& top() const { return h_.front(); }

  void push(const T v) {
    size_t i = h_.size();
    h_.emplace_back();
    while (i > 0) {  // the hole moves up while its parent comes after v
      const size_t p = (i - 1) / kArity;
      if (!(v < h_[p])) break;
      h_[i] = h_[p];
      i = p;
    }
    h_[i] = v;
  }
  void pop() {
    const T last = h_.back();
    h_.pop_back();
    const size_t n = h_.size();
    if (n == 0) return;
    size_t i = 0;  // the hole at the root moves down while a child comes before `last`
    for (;;) {
      const size_t first = kArity * i + 1;
      if (first >= n) break;
      size_t c = first;
      const size_t end = first + kArity < n ? first + kArity : n;
      for (size_t k = first + 1; k < end; ++k)
        if (h_[k] < h_[c]) c = k;
      if (!(h_[c] < last)) break;
      h_[i] = h_[c];
      i = c;
    }
    h_[i] = last;
  }

 private:
  std::vector<T> h_;
};

}  // namespace fabricsim
