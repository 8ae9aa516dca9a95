// Shared buffer: reservation, dynamic threshold, free list and conservation.
#include "models/switch/shared_buffer.h"

#include <set>
#include <vector>

#include "models/switch/cell_free_list.h"

#include <gtest/gtest.h>

namespace fabricsim::sw {
namespace {

// Admit 1-cell packets to one queue until the first refusal; returns how many were admitted.
int fill_queue(SharedBuffer& b, int port, int queue) {
  int n = 0;
  while (b.admit(port, queue, 1).ok) ++n;
  return n;
}

TEST(SharedBuffer, DynamicThresholdSettlesAtAlphaOverOnePlusAlpha) {
  // One queue alone may grow while q + 1 <= alpha * (shared - q): the classic DT fixed point
  // q* = alpha / (1 + alpha) * shared (Choudhury & Hahne 1998).
  for (double alpha : {0.5, 1.0, 2.0, 8.0}) {
    SharedBuffer b(1000, 4, 0, 8, alpha);
    const int n = fill_queue(b, 0, 3);
    const double expected = alpha / (1 + alpha) * 1000;
    EXPECT_NEAR(n, expected, 1.0) << "alpha " << alpha;
    EXPECT_EQ(b.queue_cells(3), n);
  }
}

TEST(SharedBuffer, TwoQueuesShareEqually) {
  SharedBuffer b(900, 2, 0, 2, 1.0);
  // Alternate admissions: both end at alpha * free = q each: 3q = 900 -> 300.
  int n0 = 0, n1 = 0;
  bool any = true;
  while (any) {
    any = false;
    if (b.admit(0, 0, 1).ok) ++n0, any = true;
    if (b.admit(1, 1, 1).ok) ++n1, any = true;
  }
  EXPECT_NEAR(n0, 300, 1);
  EXPECT_NEAR(n1, 300, 1);
}

TEST(SharedBuffer, ReservationIsUsedFirstAndIsPerPort) {
  SharedBuffer b(100, 2, 10, 2, 1.0);  // 20 reserved, 80 shared
  auto a = b.admit(0, 0, 10);
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.reserve_cells, 10);
  EXPECT_EQ(b.shared_used(), 0);
  auto s = b.admit(0, 0, 1);
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.reserve_cells, 0);
  EXPECT_EQ(b.shared_used(), 1);
  auto r1 = b.admit(1, 0, 4);  // port 1 still has its own reservation
  EXPECT_EQ(r1.reserve_cells, 4);
  b.release(0, 0, a, 10);
  EXPECT_EQ(b.admit(0, 1, 10).reserve_cells, 10);  // the reservation came back
}

TEST(SharedBuffer, WholePacketIsRefusedWhenItDoesNotFit) {
  SharedBuffer b(10, 1, 0, 1, 100.0);
  EXPECT_TRUE(b.admit(0, 0, 8).ok);
  EXPECT_FALSE(b.admit(0, 0, 3).ok);  // only 2 free
  EXPECT_EQ(b.used_cells(), 8);
  EXPECT_TRUE(b.admit(0, 0, 2).ok);
}

TEST(SharedBuffer, CellListsAreDistinctAndFreeListIsFifo) {
  SharedBuffer b(16, 1, 0, 1, 100.0);
  auto a = b.admit(0, 0, 5);
  ASSERT_TRUE(a.ok);
  std::set<uint32_t> cells;
  for (uint32_t c = a.first_cell; c != SharedBuffer::kNoCell; c = b.next_cell(c)) cells.insert(c);
  EXPECT_EQ(cells, (std::set<uint32_t>{0, 1, 2, 3, 4}));
  b.release(0, 0, a, 5);
  // Freed cells go to the tail: the next allocation takes cells 5.. first.
  auto n = b.admit(0, 0, 1);
  EXPECT_EQ(n.first_cell, 5u);
}

TEST(SharedBuffer, InvariantsHoldThroughChurnAndCatchCorruption) {
  SharedBuffer b(64, 4, 2, 8, 1.0);
  std::vector<std::tuple<int, int, SharedBuffer::Allocation, uint32_t>> live;
  uint64_t x = 12345;
  for (int step = 0; step < 5000; ++step) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    if ((x >> 33) % 3 != 0 || live.empty()) {
      const int port = static_cast<int>((x >> 40) % 4), q = static_cast<int>((x >> 44) % 8);
      const auto cells = static_cast<uint32_t>(1 + (x >> 50) % 4);
      auto a = b.admit(port, q, cells);
      if (a.ok) live.emplace_back(port, q, a, cells);
    } else {
      const size_t k = (x >> 20) % live.size();
      auto [port, q, a, cells] = live[k];
      b.release(port, q, a, cells);
      live.erase(live.begin() + static_cast<long>(k));
    }
    std::vector<std::string> v;
    b.check_invariants(v);
    ASSERT_TRUE(v.empty()) << v.front();
  }
  EXPECT_EQ(b.allocated_total(), b.freed_total() + static_cast<uint64_t>(b.used_cells()));
}

TEST(SharedBuffer, HandsOutCellsInTheOrderOfTheFreeListRing) {
  // The buffer keeps its free list linked through the cell pointer memory; the allocator block
  // co-simulated with RTL keeps a ring (CellFreeList). Under churn of packets of 1-5 cells,
  // taken whole (admit) or one by one (take_cell) and released in random order, including the
  // buffer running dry, every cell the buffer hands out is the ring's next.
  const uint32_t kCells = 40;
  SharedBuffer b(kCells, 2, 0, 2, 100.0);
  CellFreeList ring(kCells);
  struct Live {
    int port;
    SharedBuffer::Allocation a;
    uint32_t cells, last;
  };
  std::vector<Live> live;
  uint64_t x = 777;
  auto next = [&x] { return x = x * 6364136223846793005ull + 1442695040888963407ull; };
  uint64_t checked = 0;
  for (int step = 0; step < 20000; ++step) {
    next();
    if ((x >> 33) % 2 == 0 || live.empty()) {
      const auto cells = static_cast<uint32_t>(1 + (x >> 50) % 5);
      const int port = static_cast<int>((x >> 40) % 2);  // 0: whole packets, 1: cell by cell
      SharedBuffer::Allocation a;
      uint32_t got = 0;
      if (port == 0) {
        a = b.admit(0, 0, cells);
        if (a.ok) got = cells;
      } else {
        uint32_t tail = SharedBuffer::kNoCell;
        while (got < cells && b.take_cell(1, 1, a, tail, false)) ++got;
      }
      if (got == 0) {
        EXPECT_LT(ring.size(), port == 0 ? cells : 1u);  // refused only when the ring is short
        continue;
      }
      for (uint32_t c = a.first_cell, k = 0; k < got; c = b.next_cell(c), ++k) {
        ASSERT_EQ(c, ring.pop()) << "step " << step;
        ++checked;
      }
      uint32_t last = a.first_cell;
      for (uint32_t k = 1; k < got; ++k) last = b.next_cell(last);
      EXPECT_EQ(b.next_cell(last), SharedBuffer::kNoCell);
      live.push_back({port, a, got, last});
    } else {
      const size_t k = (x >> 20) % live.size();
      const Live l = live[k];
      for (uint32_t c = l.a.first_cell, n = 0; n < l.cells; c = b.next_cell(c), ++n) ring.push(c);
      // (Cell by cell, the caller names the list's last cell, as the switch core does; whole
      // packets leave it to the buffer.)
      b.release(l.port, l.port, l.a, l.cells, l.port == 1 ? l.last : SharedBuffer::kNoCell);
      live.erase(live.begin() + static_cast<long>(k));
    }
    ASSERT_EQ(static_cast<uint32_t>(kCells - b.used_cells()), ring.size());
  }
  EXPECT_GT(checked, 10u * kCells);  // the cells went round the buffer many times
}

}  // namespace
}  // namespace fabricsim::sw
