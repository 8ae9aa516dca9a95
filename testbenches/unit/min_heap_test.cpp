// MinHeap must give the records in the order std::priority_queue gives them (the NIC's event
// queues replaced one by the other without changing a result).
#include "models/common/min_heap.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

// (time, sequence): a strict total order, as the NIC's events have.
using Rec = std::pair<uint64_t, uint64_t>;

TEST(MinHeap, PopsInThePriorityQueuesOrderUnderRandomPushesAndPops) {
  std::mt19937_64 gen(7);
  MinHeap<Rec> heap;
  std::priority_queue<Rec, std::vector<Rec>, std::greater<>> ref;
  uint64_t seq = 0;
  for (int step = 0; step < 200000; ++step) {
    // Few distinct times (many ties, broken by the sequence), pushes a little ahead of pops.
    if (ref.empty() || gen() % 100 < 55) {
      const Rec r{gen() % 64, seq++};
      heap.push(r);
      ref.push(r);
    } else {
      ASSERT_EQ(heap.top(), ref.top()) << step;
      heap.pop();
      ref.pop();
    }
    ASSERT_EQ(heap.size(), ref.size());
  }
  while (!ref.empty()) {
    ASSERT_EQ(heap.top(), ref.top());
    heap.pop();
    ref.pop();
  }
  EXPECT_TRUE(heap.empty());
}

TEST(MinHeap, EqualRecordsComeOutTogetherInOrder) {
  // NicArray's wake-ups may hold the same (time, NIC) twice: equal records are the same.
  MinHeap<std::pair<uint64_t, int64_t>> heap;
  const std::vector<std::pair<uint64_t, int64_t>> in = {{5, 1}, {3, 2}, {5, 1}, {3, 2}, {1, 9},
                                                        {9, 0}, {3, 1}, {5, 1}, {0, 4}};
  for (const auto& r : in) heap.push(r);
  std::vector<std::pair<uint64_t, int64_t>> out;
  for (; !heap.empty(); heap.pop()) out.push_back(heap.top());
  std::vector<std::pair<uint64_t, int64_t>> sorted = in;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(out, sorted);
}

}  // namespace
}  // namespace fabricsim
