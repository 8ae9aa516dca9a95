// MinHeap must give the records in the order std::priority_queue gives them, and LaneQueue in
// the order MinHeap gives them (the NIC's event queues replaced one by the other without
// changing a result).
#include "models/common/min_heap.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "models/common/lane_queue.h"

namespace fabricsim {
namespace {

// (time, sequence): a strict total order, as the NIC's events have.
using Rec = std::pair<uint64_t, uint64_t>;

// Pops both queues to the end: the same records in the same order.
template <class Q, class R>
void expect_same_rest(Q& q, R& ref) {
  while (!ref.empty()) {
    ASSERT_FALSE(q.empty());
    ASSERT_EQ(q.top(), ref.top());
    q.pop();
    ref.pop();
  }
  EXPECT_TRUE(q.empty());
}

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
  expect_same_rest(heap, ref);
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

// Records pushed to three lanes and the heap: each lane's times mostly rise (a lane's FIFO
// order) but now and then fall behind its last record (those go to the heap), with many ties
// across lanes broken by the sequence. The pops must be the one heap's, record for record.
TEST(LaneQueue, PopsInTheHeapsOrderWhetherALanesPushesRiseOrNot) {
  std::mt19937_64 gen(11);
  LaneQueue<Rec, 3> q;
  MinHeap<Rec> ref;
  uint64_t seq = 0, now = 0;
  size_t to_heap_lane = 0, popped = 0;
  for (int step = 0; step < 300000; ++step) {
    if (ref.empty() || gen() % 100 < 52) {
      const int lane = static_cast<int>(gen() % 4) - 1;  // -1: straight to the heap
      // Mostly a fixed delay after now (in order within a lane); 1 in 8 sooner than the last.
      const uint64_t t = now + (gen() % 8 == 0 ? gen() % 4 : 4 + gen() % 3);
      const Rec r{t, seq++};
      to_heap_lane += lane < 0;
      q.push(lane, r);
      ref.push(r);
    } else {
      ASSERT_EQ(q.top(), ref.top()) << step;
      now = ref.top().first;
      q.pop();
      ref.pop();
      ++popped;
    }
    ASSERT_EQ(q.size(), ref.size());
    ASSERT_EQ(q.empty(), ref.empty());
  }
  expect_same_rest(q, ref);
  EXPECT_GT(to_heap_lane, 10000u);
  EXPECT_GT(popped, 100000u);
}

TEST(LaneQueue, AFarRecordInALaneDoesNotHoldBackNearerOnes) {
  // A lane's one far deadline (a retransmission timer) and near records in another lane and
  // the heap: the near ones come first, the far one last.
  LaneQueue<Rec, 2> q;
  q.push(1, {1000, 0});
  q.push(0, {5, 1});
  q.push(0, {7, 2});
  q.push(LaneQueue<Rec, 2>::kHeap, {6, 3});
  q.push(0, {6, 4});    // before its lane's last (7): into the heap
  q.push(1, {900, 5});  // before its lane's last (1000): into the heap
  std::vector<Rec> out;
  for (; !q.empty(); q.pop()) out.push_back(q.top());
  EXPECT_EQ(out, (std::vector<Rec>{{5, 1}, {6, 3}, {6, 4}, {7, 2}, {900, 5}, {1000, 0}}));
}

}  // namespace
}  // namespace fabricsim
