// The cell allocator model: FIFO order of the free list (as SharedBuffer's free ring), the
// per-cycle timing (outputs from the state before the edge), rejected frees, and a long random
// run against an independent reference (std::deque free list + std::set of allocated ids).
#include <gtest/gtest.h>

#include <deque>
#include <set>

#include "models/common/rng.h"
#include "models/switch/cell_allocator.h"

namespace fabricsim::sw {
namespace {

CellAllocOut alloc(CellAllocator& a) {
  return a.tick({true, false, 0});
}
CellAllocOut release(CellAllocator& a, uint32_t id) {
  return a.tick({false, true, id});
}

TEST(CellAllocator, InitialOrderThenFifoReuse) {
  CellAllocator a(4);
  for (uint32_t i = 0; i < 4; ++i) {
    const auto o = alloc(a);
    EXPECT_TRUE(o.alloc_ok);
    EXPECT_EQ(o.alloc_id, i);
  }
  EXPECT_FALSE(alloc(a).alloc_ok);
  EXPECT_EQ(a.occupancy(), 4u);
  EXPECT_FALSE(release(a, 2).free_err);
  EXPECT_FALSE(release(a, 0).free_err);
  EXPECT_EQ(alloc(a).alloc_id, 2u);  // freed first, allocated first
  EXPECT_EQ(alloc(a).alloc_id, 0u);
}

TEST(CellAllocator, FreedIdAllocatableOnlyFromTheNextCycle) {
  CellAllocator a(1);
  EXPECT_EQ(alloc(a).alloc_id, 0u);
  const auto o = a.tick({true, true, 0});  // empty list: the free lands at the edge
  EXPECT_FALSE(o.alloc_ok);
  EXPECT_FALSE(o.free_err);
  EXPECT_EQ(a.free_count(), 1u);
  EXPECT_TRUE(alloc(a).alloc_ok);
}

TEST(CellAllocator, RejectsDoubleFreeAndUnknownIds) {
  CellAllocator a(8);
  EXPECT_TRUE(release(a, 3).free_err);  // never allocated
  EXPECT_TRUE(release(a, 8).free_err);  // out of range
  const uint32_t id = alloc(a).alloc_id;
  EXPECT_FALSE(release(a, id).free_err);
  EXPECT_TRUE(release(a, id).free_err);
  EXPECT_EQ(a.free_count(), 8u);
}

TEST(CellAllocator, RandomRunMatchesReference) {
  const uint32_t cells = 37;
  CellAllocator a(cells);
  std::deque<uint32_t> free_list;
  for (uint32_t i = 0; i < cells; ++i) free_list.push_back(i);
  std::set<uint32_t> held;
  Rng rng(11);
  for (int t = 0; t < 200000; ++t) {
    CellAllocIn in;
    in.alloc_req = rng.bernoulli(0.5);
    in.free_req = rng.bernoulli(0.5);
    in.free_id = static_cast<uint32_t>(rng.below(cells + 2));
    const bool exp_ok = in.alloc_req && !free_list.empty();
    const uint32_t exp_id = exp_ok ? free_list.front() : 0;
    const bool exp_err = in.free_req && !held.count(in.free_id);
    const auto o = a.tick(in);
    ASSERT_EQ(o.alloc_ok, exp_ok) << t;
    if (exp_ok) {
      ASSERT_EQ(o.alloc_id, exp_id) << t;
    }
    ASSERT_EQ(o.free_err, exp_err) << t;
    if (exp_ok) {
      free_list.pop_front();
      held.insert(exp_id);
    }
    if (in.free_req && !exp_err) {
      held.erase(in.free_id);
      free_list.push_back(in.free_id);
    }
    ASSERT_EQ(a.free_count(), free_list.size());
    ASSERT_EQ(a.occupancy(), held.size());
  }
}

}  // namespace
}  // namespace fabricsim::sw
