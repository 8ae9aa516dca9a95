// Crossbar schedulers: matching validity, each algorithm against a naive bit-by-bit reference model
// (the executable form of the spec in the headers, which the RTL will also be checked against),
// hand-worked examples, and the statistical / pointer-synchronisation behaviour that tells the
// algorithms apart.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "models/common/port_set.h"
#include "models/common/rng.h"
#include "models/switch/islip.h"
#include "models/switch/pim.h"
#include "models/switch/rr.h"
#include "models/switch/voq_scheduler.h"
#include "models/switch/wavefront.h"

// Counts heap allocations so the tests can check that schedule() makes none. noinline: once GCC
// sees malloc/free inside these it pairs them across calls and warns (-Wmismatched-new-delete).
namespace {
std::atomic<long> g_allocations{0};
}
__attribute__((noinline)) void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void* p) noexcept {
  std::free(p);
}
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace fabricsim::sw {
namespace {

using Matrix = std::vector<PortSet>;

Matrix random_requests(int n, double density, Rng& rng) {
  Matrix m(n, PortSet(n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (rng.bernoulli(density)) m[i].set(j);
  return m;
}

// Incast-like: most inputs request a few hot outputs (and little else), so most outputs are
// idle and the search for the hot ones starts wherever their pointers are.
Matrix hot_columns(int n, int hot, Rng& rng) {
  Matrix m = random_requests(n, 0.02, rng);
  for (int k = 0; k < hot; ++k) {
    const int j = static_cast<int>(rng.below(static_cast<uint64_t>(n)));
    for (int i = 0; i < n; ++i)
      if (rng.bernoulli(0.9)) m[i].set(j);
  }
  return m;
}

Matrix all_ones(int n) {
  Matrix m(n, PortSet(n));
  for (auto& r : m) r.set_all();
  return m;
}

PortSet random_ready(int n, double p, Rng& rng) {
  PortSet s(n);
  for (int j = 0; j < n; ++j)
    if (rng.bernoulli(p)) s.set(j);
  return s;
}

PortSet all_ready(int n) {
  PortSet s(n);
  s.set_all();
  return s;
}

int match_size(const std::vector<int>& m) {
  int c = 0;
  for (int x : m) c += x >= 0;
  return c;
}

// Each input to at most one output and vice versa, only requested and ready pairs.
::testing::AssertionResult valid_matching(const Matrix& req, const PortSet& ready,
                                          const std::vector<int>& match) {
  const int n = static_cast<int>(req.size());
  std::vector<int> used(n, -1);
  for (int i = 0; i < n; ++i) {
    const int j = match[i];
    if (j == -1) continue;
    if (j < 0 || j >= n) return ::testing::AssertionFailure() << "input " << i << " -> " << j;
    if (!req[i].test(j))
      return ::testing::AssertionFailure() << "unrequested pair " << i << "->" << j;
    if (!ready.test(j)) return ::testing::AssertionFailure() << "output " << j << " not ready";
    if (used[j] >= 0)
      return ::testing::AssertionFailure()
             << "output " << j << " used by inputs " << used[j] << " and " << i;
    used[j] = i;
  }
  return ::testing::AssertionSuccess();
}

// No requested, ready pair with both ends unmatched.
::testing::AssertionResult maximal(const Matrix& req, const PortSet& ready,
                                   const std::vector<int>& match) {
  const int n = static_cast<int>(req.size());
  std::vector<bool> out_used(n, false);
  for (int j : match)
    if (j >= 0) out_used[j] = true;
  for (int i = 0; i < n; ++i) {
    if (match[i] >= 0) continue;
    for (int j = 0; j < n; ++j)
      if (req[i].test(j) && ready.test(j) && !out_used[j])
        return ::testing::AssertionFailure() << "could add " << i << "->" << j;
  }
  return ::testing::AssertionSuccess();
}

// ---- Reference models: one test per crosspoint, straight from the header comments. ----

class Reference {
 public:
  virtual ~Reference() = default;
  virtual void schedule(const Matrix& req, const PortSet& ready, std::vector<int>& match) = 0;
};

// iSLIP (rrm = false) and RRM (rrm = true, single iteration).
class RefRoundRobin : public Reference {
 public:
  RefRoundRobin(int n, int k, bool rrm) : n_(n), k_(rrm ? 1 : k), rrm_(rrm), g_(n, 0), a_(n, 0) {}
  void schedule(const Matrix& req, const PortSet& ready, std::vector<int>& match) override {
    std::vector<bool> in_free(n_, true), out_free(n_, true);
    match.assign(n_, -1);
    for (int it = 0; it < k_; ++it) {
      std::vector<int> grant(n_, -1);  // grant[j]: input granted by output j
      for (int j = 0; j < n_; ++j) {
        if (!out_free[j] || !ready.test(j)) continue;
        for (int d = 0; d < n_; ++d) {
          const int i = (g_[j] + d) % n_;
          if (in_free[i] && req[i].test(j)) {
            grant[j] = i;
            break;
          }
        }
        if (rrm_ && grant[j] >= 0) g_[j] = (grant[j] + 1) % n_;
      }
      for (int i = 0; i < n_; ++i) {
        if (!in_free[i]) continue;
        for (int d = 0; d < n_; ++d) {
          const int j = (a_[i] + d) % n_;
          if (grant[j] != i) continue;
          match[i] = j;
          in_free[i] = out_free[j] = false;
          if (it == 0) {
            a_[i] = (j + 1) % n_;
            if (!rrm_) g_[j] = (i + 1) % n_;
          }
          break;
        }
      }
    }
  }

 private:
  int n_, k_;
  bool rrm_;
  std::vector<int> g_, a_;
};

class RefPim : public Reference {
 public:
  RefPim(int n, int k, Rng& rng) : n_(n), k_(k), rng_(rng) {}
  void schedule(const Matrix& req, const PortSet& ready, std::vector<int>& match) override {
    std::vector<bool> in_free(n_, true), out_free(n_, true);
    match.assign(n_, -1);
    for (int it = 0; it < k_; ++it) {
      std::vector<int> grant(n_, -1);
      for (int j = 0; j < n_; ++j) {
        if (!out_free[j] || !ready.test(j)) continue;
        std::vector<int> cand;
        for (int i = 0; i < n_; ++i)
          if (in_free[i] && req[i].test(j)) cand.push_back(i);
        if (!cand.empty()) grant[j] = cand[draw(cand.size())];
      }
      for (int i = 0; i < n_; ++i) {
        std::vector<int> got;
        for (int j = 0; j < n_; ++j)
          if (grant[j] == i) got.push_back(j);
        if (got.empty()) continue;
        const int j = got[draw(got.size())];
        match[i] = j;
        in_free[i] = out_free[j] = false;
      }
    }
  }

 private:
  size_t draw(size_t n) { return n == 1 ? 0 : rng_.below(n); }
  int n_, k_;
  Rng& rng_;
};

class RefWavefront : public Reference {
 public:
  explicit RefWavefront(int n) : n_(n) {}
  void schedule(const Matrix& req, const PortSet& ready, std::vector<int>& match) override {
    std::vector<bool> row_free(n_, true), col_free(n_, true);
    match.assign(n_, -1);
    for (int step = 0; step < n_; ++step) {
      const int d = (p_ + step) % n_;
      for (int i = 0; i < n_; ++i) {
        const int j = (i + d) % n_;
        if (req[i].test(j) && ready.test(j) && row_free[i] && col_free[j]) {
          match[i] = j;
          row_free[i] = col_free[j] = false;
        }
      }
    }
    p_ = (p_ + 1) % n_;
  }

 private:
  int n_, p_ = 0;
};

// ---- PortSet additions ----

TEST(PortSetTest, TransposeMatchesBitByBit) {
  Rng rng(7);
  for (int n : {1, 5, 63, 64, 65, 127, 128, 130, 200}) {
    for (double density : {0.0, 0.03, 0.5, 1.0}) {
      const Matrix rows = random_requests(n, density, rng);
      Matrix cols(n, PortSet(n));
      for (auto& c : cols) c.set_all();  // stale contents must be overwritten
      transpose(rows, cols);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          ASSERT_EQ(cols[j].test(i), rows[i].test(j)) << "n=" << n << " (" << i << "," << j << ")";
    }
  }
  // Non-square: 3 rows of 100 columns.
  Matrix rows(3, PortSet(100)), cols(100, PortSet(3));
  rows[0].set(99);
  rows[2].set(0);
  rows[1].set(64);
  transpose(rows, cols);
  EXPECT_TRUE(cols[99].test(0));
  EXPECT_TRUE(cols[0].test(2));
  EXPECT_TRUE(cols[64].test(1));
  EXPECT_EQ(cols[99].count() + cols[0].count() + cols[64].count(), 3);
}

TEST(PortSetTest, WordAccessAndIteration) {
  PortSet s(130);
  for (int i : {3, 64, 70, 129}) s.set(i);
  std::vector<int> seen;
  s.for_each([&](int i) { seen.push_back(i); });
  EXPECT_EQ(seen, (std::vector<int>{3, 64, 70, 129}));
  EXPECT_EQ(s.num_words(), 3);
  EXPECT_EQ(s.word(1), (1ull << 0) | (1ull << 6));
  s.set_word(0, 1ull << 5);
  EXPECT_TRUE(s.test(5));
  EXPECT_FALSE(s.test(3));
  PortSet full(130);
  full.set_all();
  EXPECT_EQ(full.count(), 130);
  EXPECT_EQ(full.word(2), 3u);  // no bits beyond size()
  PortSet one(64);
  one.set_all();
  EXPECT_EQ(one.word(0), ~0ull);
}

TEST(PortSetTest, TakeEachVisitsInOrderAndLeavesTheSetEmpty) {
  // Inline (2 words) and heap (3 words) storage; members in every word, and an empty word between.
  for (int size : {128, 190}) {
    PortSet s(size);
    const std::vector<int> members =
        size > 128 ? std::vector<int>{0, 63, 64, 127, 150, 189} : std::vector<int>{1, 63, 127};
    for (int i : members) s.set(i);
    std::vector<int> seen;
    s.take_each([&](int i) { seen.push_back(i); });
    EXPECT_EQ(seen, members) << size;
    EXPECT_TRUE(s.empty()) << size;
    s.take_each([&](int i) { ADD_FAILURE() << "visited " << i << " of an empty set"; });
    s.set(size - 1);  // still usable afterwards
    EXPECT_EQ(s.count(), 1) << size;
  }
}

TEST(PortSetTest, CopiesAndMovesOwnTheirWords) {
  // Inline (<= 128 ports) and heap storage: a copy or a moved-to set must read and write its own
  // words, never the source's (the words pointer is re-aimed on every copy and move).
  for (int n : {64, 130}) {
    PortSet a(n);
    a.set(5);
    a.set(n - 1);
    PortSet b(a);
    b.set(7);
    EXPECT_FALSE(a.test(7)) << n;
    EXPECT_TRUE(b.test(5) && b.test(n - 1)) << n;
    PortSet c(std::move(b));
    c.clear(5);
    EXPECT_TRUE(c.test(7) && !c.test(5)) << n;
    EXPECT_EQ(b.size(), 0) << n;  // NOLINT(bugprone-use-after-move): moved-from is empty
    PortSet d(3);
    d = a;
    d.clear(n - 1);
    EXPECT_TRUE(a.test(n - 1)) << n;
    EXPECT_EQ(d.count(), 1) << n;
    std::vector<PortSet> v(4, a);  // then reallocated: each element keeps its own words
    v.resize(64, a);
    for (PortSet& s : v) s.set(1);
    EXPECT_FALSE(a.test(1)) << n;
    v[0].clear(5);
    EXPECT_TRUE(v[1].test(5)) << n;
    d = std::move(v[2]);
    EXPECT_TRUE(d.test(1) && d.test(5)) << n;
    a = a;  // self-assignment keeps the set
    EXPECT_EQ(a.count(), 2) << n;
  }
}
TEST(PortSetTest, Transpose64) {
  Rng rng(3);
  uint64_t b[64], orig[64];
  for (int r = 0; r < 64; ++r) orig[r] = b[r] = rng.next_u64();
  transpose64(b);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) ASSERT_EQ((b[c] >> r) & 1, (orig[r] >> c) & 1);
  transpose64(b);
  for (int r = 0; r < 64; ++r) EXPECT_EQ(b[r], orig[r]);
}

// The no-allocation checks below are only as good as the counter.
std::vector<int>* g_sink;
TEST(AllocationCounter, SeesAllocations) {
  const long before = g_allocations.load();
  g_sink = new std::vector<int>(10);  // escapes via a global, so it cannot be elided
  EXPECT_GE(g_allocations.load(), before + 2);
  delete g_sink;
}

// ---- factory ----

TEST(SchedulerFactory, NamesAndConstruction) {
  EXPECT_EQ(scheduler_names(), (std::vector<std::string>{"islip", "pim", "rr", "wavefront"}));
  Rng rng(1);
  for (const auto& name : scheduler_names()) {
    auto s = make_scheduler(name, 8, 2, rng);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(name, s->name());
  }
  EXPECT_NE(dynamic_cast<IslipScheduler*>(make_scheduler("islip", 4, 3, rng).get()), nullptr);
  EXPECT_EQ(static_cast<IslipScheduler&>(*make_scheduler("islip", 4, 3, rng)).iterations(), 3);
}

TEST(SchedulerFactory, RejectsBadArguments) {
  Rng rng(1);
  try {
    make_scheduler("slip", 8, 1, rng);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("slip"), std::string::npos);
    for (const auto& name : scheduler_names()) EXPECT_NE(msg.find(name), std::string::npos) << msg;
  }
  EXPECT_THROW(make_scheduler("islip", 0, 1, rng), std::invalid_argument);
  EXPECT_THROW(make_scheduler("islip", 8, 0, rng), std::invalid_argument);
  EXPECT_THROW(make_scheduler("wavefront", 8, 0, rng), std::invalid_argument);
}

// ---- every algorithm against its reference, slot by slot, plus validity and maximality ----

std::unique_ptr<Reference> make_reference(const std::string& name, int n, int k, Rng& rng) {
  if (name == "islip") return std::make_unique<RefRoundRobin>(n, k, false);
  if (name == "rr") return std::make_unique<RefRoundRobin>(n, k, true);
  if (name == "pim") return std::make_unique<RefPim>(n, k, rng);
  return std::make_unique<RefWavefront>(n);
}

using RefParam = std::tuple<std::string, int, int>;  // algorithm, ports, iterations

class SchedulerVsReference : public ::testing::TestWithParam<RefParam> {};

TEST_P(SchedulerVsReference, SameMatchEverySlot) {
  const auto& [name, n, k] = GetParam();
  Rng rng_dut(99), rng_ref(99), gen(n * 131 + k);
  auto dut = make_scheduler(name, n, k, rng_dut);
  auto ref = make_reference(name, n, k, rng_ref);
  std::vector<int> got(n), want(n);
  const int slots = n <= 8 ? 400 : n <= 128 ? 120 : 60;
  const double densities[] = {1.0, 0.6, 0.3, 0.05, 0.0};  // slots t % 6 == 5: hot columns
  long matched = 0;
  for (int t = 0; t < slots; ++t) {
    const Matrix req =
        t % 6 == 5 ? hot_columns(n, 1 + t % 3, gen) : random_requests(n, densities[t % 6], gen);
    // Offered outputs: all, a random subset, or (as the switch does) those requested.
    PortSet ready = t % 3 == 2 ? random_ready(n, 0.7, gen) : all_ready(n);
    if (t % 4 == 1) {
      ready = PortSet(n);
      for (const auto& row : req) row.for_each([&](int j) { ready.set(j); });
    }
    const long before = g_allocations.load();
    dut->schedule(req, ready, got);
    EXPECT_EQ(g_allocations.load(), before) << "schedule() allocated";
    ref->schedule(req, ready, want);
    ASSERT_EQ(got, want) << name << " n=" << n << " k=" << k << " slot " << t;
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(dut->matched_inputs().test(i), got[i] >= 0) << "matched_inputs, input " << i;
    ASSERT_TRUE(valid_matching(req, ready, got)) << "slot " << t;
    if (name == "wavefront" || (name == "islip" && k >= n)) {
      ASSERT_TRUE(maximal(req, ready, got)) << "slot " << t;
    }
    matched += match_size(got);
  }
  EXPECT_GT(matched, 0);
}

INSTANTIATE_TEST_SUITE_P(All, SchedulerVsReference,
                         ::testing::Combine(::testing::Values("islip", "pim", "rr", "wavefront"),
                                            ::testing::Values(1, 2, 3, 7, 64, 65, 100, 128, 130,
                                                              200),
                                            ::testing::Values(1, 2, 4)),
                         [](const ::testing::TestParamInfo<RefParam>& info) {
                           return std::get<0>(info.param) + "_n" +
                                  std::to_string(std::get<1>(info.param)) + "_k" +
                                  std::to_string(std::get<2>(info.param));
                         });

TEST(SchedulerMatching, IslipWithNIterationsAndWavefrontAreMaximal) {
  Rng rng(5), gen(6);
  for (int n : {4, 16, 64, 96}) {
    auto islip = make_scheduler("islip", n, n, rng);
    auto wf = make_scheduler("wavefront", n, 1, rng);
    std::vector<int> m(n);
    for (int t = 0; t < 200; ++t) {
      const Matrix req = random_requests(n, 0.02 + 0.1 * (t % 10), gen);
      const PortSet ready = random_ready(n, 0.9, gen);
      islip->schedule(req, ready, m);
      ASSERT_TRUE(valid_matching(req, ready, m));
      ASSERT_TRUE(maximal(req, ready, m)) << "islip n=" << n << " slot " << t;
      wf->schedule(req, ready, m);
      ASSERT_TRUE(valid_matching(req, ready, m));
      ASSERT_TRUE(maximal(req, ready, m)) << "wavefront n=" << n << " slot " << t;
    }
  }
}

// A single iteration is not maximal in general: the checker above must be able to fail.
TEST(SchedulerMatching, OneIterationIslipCanMissMatches) {
  // I0 -> {O0, O1}, I1 -> {O1}. From reset O0 and O1 both grant I0, which accepts O0; O1's grant
  // is refused and I1 got none, so the pair (I1, O1) stays unmatched after one iteration.
  Matrix req(3, PortSet(3));
  req[0].set(0);
  req[0].set(1);
  req[1].set(1);
  IslipScheduler s(3, 1);
  std::vector<int> m(3);
  s.schedule(req, all_ready(3), m);
  EXPECT_EQ(m, (std::vector<int>{0, -1, -1}));
  EXPECT_FALSE(maximal(req, all_ready(3), m));
}

// ---- iSLIP pointer rule, worked by hand ----
//
// 4x4, all pointers 0. Requests: I0 -> {O0, O1}, I1 -> {O0, O2}, I2 -> {O1, O3}, I3 -> {O1}.
// Iteration 1, grant (first requester at or after g[j] = 0):
//   O0 <- {I0, I1}: I0;  O1 <- {I0, I2, I3}: I0;  O2 <- {I1}: I1;  O3 <- {I2}: I2.
// Accept (first granting output at or after a[i] = 0):
//   I0 has {O0, O1}: O0;  I1 has {O2}: O2;  I2 has {O3}: O3.
// Pointers: a0 = 1, g0 = 1;  a1 = 3, g2 = 2;  a2 = 0 (4 mod 4), g3 = 3.  O1's grant to I0 was
// refused, so g1 stays 0 (RRM would move it to 1).
// Iteration 2: free inputs {I3}, free outputs {O1}: O1 grants I3, I3 accepts; no pointer moves
// (updating would give a3 = 2).
// Slot 2, same requests, iSLIP-1, from g = [1,0,2,3], a = [1,3,0,0]:
//   grant: O0 <- {I0, I1} from 1: I1;  O1 <- {I0, I2, I3} from 0: I0;  O2 <- {I1} : I1;
//          O3 <- {I2}: I2.
//   accept: I0 has {O1}: O1 (a0 = 2, g1 = 1);  I1 has {O0, O2} from a1 = 3: O0 (wraps; a1 = 1,
//           g0 = 2);  I2 has {O3}: O3 (a2 = 0, g3 = 3).  I3 gets nothing.
Matrix hand_example() {
  Matrix req(4, PortSet(4));
  for (auto [i, j] : {std::pair{0, 0}, {0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 3}, {3, 1}})
    req[i].set(j);
  return req;
}

void expect_pointers(const IslipScheduler& s, std::vector<int> g, std::vector<int> a) {
  std::vector<int> gg, aa;
  for (int p = 0; p < s.ports(); ++p) {
    gg.push_back(s.grant_pointer(p));
    aa.push_back(s.accept_pointer(p));
  }
  EXPECT_EQ(gg, g) << "grant pointers";
  EXPECT_EQ(aa, a) << "accept pointers";
}

TEST(IslipTest, HandExampleOneIteration) {
  IslipScheduler s(4, 1);
  std::vector<int> m(4);
  const Matrix req = hand_example();
  s.schedule(req, all_ready(4), m);
  EXPECT_EQ(m, (std::vector<int>{0, 2, 3, -1}));
  expect_pointers(s, {1, 0, 2, 3}, {1, 3, 0, 0});
  s.schedule(req, all_ready(4), m);
  EXPECT_EQ(m, (std::vector<int>{1, 0, 3, -1}));
  expect_pointers(s, {2, 1, 2, 3}, {2, 1, 0, 0});
}

TEST(IslipTest, HandExampleSecondIterationLeavesPointers) {
  IslipScheduler s(4, 2);
  std::vector<int> m(4);
  s.schedule(hand_example(), all_ready(4), m);
  EXPECT_EQ(m, (std::vector<int>{0, 2, 3, 1}));
  expect_pointers(s, {1, 0, 2, 3}, {1, 3, 0, 0});
}

TEST(IslipTest, RrmMovesPointerOnRefusedGrant) {
  RrScheduler s(4);
  std::vector<int> m(4);
  s.schedule(hand_example(), all_ready(4), m);
  EXPECT_EQ(m, (std::vector<int>{0, 2, 3, -1}));
  EXPECT_EQ(s.grant_pointer(1), 1);  // granted I0, refused, moved anyway
  EXPECT_EQ(s.grant_pointer(0), 1);
  EXPECT_EQ(s.accept_pointer(1), 3);
}

// Under all-ones requests the grant pointers start synchronised (slot 0 matches one pair) but
// every accepted grant moves one output pointer past a distinct input; within N slots the
// pointers are all distinct and every slot is a perfect match, rotating like a TDM schedule.
TEST(IslipTest, DesynchronisesUnderFullLoad) {
  Rng rng(1);
  for (int n : {2, 3, 4, 5, 16, 33, 64, 100, 128}) {
    IslipScheduler s(n, 1);
    const Matrix req = all_ones(n);
    const PortSet ready = all_ready(n);
    std::vector<int> m(n), prev(n);
    s.schedule(req, ready, m);
    EXPECT_EQ(match_size(m), 1) << "n=" << n;
    for (int t = 1; t < n; ++t) s.schedule(req, ready, m);
    for (int t = n; t < 3 * n; ++t) {
      prev = m;
      s.schedule(req, ready, m);
      ASSERT_EQ(match_size(m), n) << "n=" << n << " slot " << t;
      for (int i = 0; i < n; ++i) ASSERT_EQ(m[i], (prev[i] + 1) % n) << "n=" << n;
    }
  }
}

TEST(IslipTest, NotReadyOutputKeepsItsPointer) {
  IslipScheduler s(4, 1);
  std::vector<int> m(4);
  PortSet ready = all_ready(4);
  ready.clear(0);
  for (int t = 0; t < 10; ++t) {
    s.schedule(all_ones(4), ready, m);
    for (int x : m) EXPECT_NE(x, 0);
    EXPECT_EQ(s.grant_pointer(0), 0);
  }
}

// ---- RRM synchronisation ----

// From reset under all-ones requests every output grants the same input (all pointers equal), the
// input accepts one, and all pointers advance together: slot t matches exactly input t mod N to
// output floor(t / N) mod N, forever. `iterations` is ignored.
TEST(RrTest, PointersStaySynchronisedUnderFullLoad) {
  Rng rng(1);
  for (int n : {2, 4, 7, 64, 128}) {
    for (int k : {1, 4}) {
      auto s = make_scheduler("rr", n, k, rng);
      auto& rr = static_cast<RrScheduler&>(*s);
      const Matrix req = all_ones(n);
      std::vector<int> m(n);
      for (int t = 0; t < 3 * n; ++t) {
        s->schedule(req, all_ready(n), m);
        std::vector<int> want(n, -1);
        want[t % n] = (t / n) % n;
        ASSERT_EQ(m, want) << "n=" << n << " slot " << t;
        for (int j = 0; j < n; ++j) ASSERT_EQ(rr.grant_pointer(j), (t + 1) % n);
      }
    }
  }
}

// ---- PIM ----

// One iteration under all-ones requests: each output grants a uniform input independently, every
// granted input accepts one grant, so the match size is the number of distinct inputs drawn by N
// outputs: E = N (1 - (1 - 1/N)^N). Slots are independent, so the sample mean is checked against
// E within 5 standard errors (SE = sample s.d. / sqrt(slots); a false failure has probability
// ~6e-7 for a correct implementation, and the seed is fixed anyway).
TEST(PimTest, OneIterationMeanMatchSizeUnderFullLoad) {
  for (int n : {8, 64, 128}) {
    Rng rng(2024);
    PimScheduler s(n, 1, rng);
    const Matrix req = all_ones(n);
    const PortSet ready = all_ready(n);
    std::vector<int> m(n);
    const int slots = 20000;
    double sum = 0, sum2 = 0;
    for (int t = 0; t < slots; ++t) {
      s.schedule(req, ready, m);
      const double x = match_size(m);
      sum += x;
      sum2 += x * x;
    }
    const double mean = sum / slots;
    const double sd = std::sqrt((sum2 - slots * mean * mean) / (slots - 1));
    const double se = sd / std::sqrt(static_cast<double>(slots));
    const double expected = n * (1.0 - std::pow(1.0 - 1.0 / n, n));
    EXPECT_NEAR(mean, expected, 5 * se) << "n=" << n << " sd=" << sd;
    EXPECT_GT(sd, 0.5);  // really random
    // Far from both a perfect match and a single one: rules out a round-robin in disguise.
    EXPECT_LT(mean, 0.7 * n);
  }
}

TEST(PimTest, AcceptIsUniformAmongGrants) {
  // Input 0 requests all 4 outputs; nobody else requests, so it receives 4 grants every slot and
  // accepts uniformly. Chi-square with 3 degrees of freedom, 99.9% quantile 16.27.
  Rng rng(77);
  PimScheduler s(4, 1, rng);
  Matrix req(4, PortSet(4));
  req[0].set_all();
  std::vector<int> m(4);
  int hist[4] = {0, 0, 0, 0};
  const int slots = 8000;
  for (int t = 0; t < slots; ++t) {
    s.schedule(req, all_ready(4), m);
    ASSERT_GE(m[0], 0);
    ++hist[m[0]];
  }
  double chi2 = 0;
  for (int h : hist) chi2 += (h - slots / 4.0) * (h - slots / 4.0) / (slots / 4.0);
  EXPECT_LT(chi2, 16.27);
}

TEST(PimTest, SameSeedSameSequence) {
  const int n = 32;
  Rng gen(3);
  std::vector<Matrix> reqs;
  for (int t = 0; t < 100; ++t) reqs.push_back(random_requests(n, 0.5, gen));
  auto run = [&](uint64_t seed) {
    Rng rng(seed);
    PimScheduler s(n, 3, rng);
    std::vector<std::vector<int>> out;
    std::vector<int> m(n);
    for (const auto& r : reqs) {
      s.schedule(r, all_ready(n), m);
      out.push_back(m);
    }
    return out;
  };
  EXPECT_EQ(run(11), run(11));
  EXPECT_NE(run(11), run(12));
}

// ---- output_ready and reset() for every algorithm ----

TEST(SchedulerAll, NotReadyOutputsAreNeverMatched) {
  const int n = 64;
  Rng gen(8);
  for (const auto& name : scheduler_names()) {
    Rng rng(9);
    auto s = make_scheduler(name, n, 3, rng);
    std::vector<int> m(n);
    PortSet none(n);
    s->schedule(all_ones(n), none, m);
    EXPECT_EQ(m, std::vector<int>(n, -1)) << name;
    for (int t = 0; t < 200; ++t) {
      const PortSet ready = random_ready(n, 0.5, gen);
      const Matrix req = t % 2 ? all_ones(n) : random_requests(n, 0.6, gen);
      s->schedule(req, ready, m);
      ASSERT_TRUE(valid_matching(req, ready, m)) << name;
      // Wavefront is maximal, so with all-ones requests it fills every ready output.
      if (t % 2 && name == "wavefront") {
        ASSERT_EQ(match_size(m), ready.count());
      }
    }
  }
}

TEST(SchedulerAll, ResetRestoresPowerOnBehaviour) {
  const int n = 24;
  Rng gen(10);
  std::vector<Matrix> reqs;
  std::vector<PortSet> readies;
  for (int t = 0; t < 60; ++t) {
    reqs.push_back(random_requests(n, 0.4, gen));
    readies.push_back(random_ready(n, 0.8, gen));
  }
  for (const auto& name : scheduler_names()) {
    auto run = [&](VoqScheduler& s) {
      std::vector<std::vector<int>> out;
      std::vector<int> m(n);
      for (size_t t = 0; t < reqs.size(); ++t) {
        s.schedule(reqs[t], readies[t], m);
        out.push_back(m);
      }
      return out;
    };
    Rng rng(5);
    auto s = make_scheduler(name, n, 1, rng);
    const auto first = run(*s);
    const auto second = run(*s);  // state carried over
    s->reset();
    rng = Rng(5);  // PIM's only state is the caller's Rng
    EXPECT_EQ(run(*s), first) << name;
    if (name != "pim") {
      EXPECT_NE(second, first) << name << ": test does not exercise state";
    }
  }
}

// Saturated uniform Bernoulli traffic into per-(input, output) queues: the request matrix is
// "queue non-empty". Known figures: iSLIP-1 and wavefront sustain ~100%, PIM-1 tends to
// 1 - (1 - 1/N)^N (0.644 at N = 16, queues backed up so requests are nearly all-ones), and RRM
// collapses once queues fill because its grant pointers stay synchronised.
TEST(SchedulerAll, VoqThroughputUnderUniformLoad) {
  const int n = 16;
  const long slots = 40000, warmup = 4000;
  const double load = 0.95;
  auto throughput = [&](const std::string& name) {
    Rng rng(1), arrivals(2);
    auto s = make_scheduler(name, n, 1, rng);
    std::vector<std::vector<int>> queue(n, std::vector<int>(n, 0));
    Matrix req(n, PortSet(n));
    const PortSet ready = all_ready(n);
    std::vector<int> m(n);
    long served = 0;
    for (long t = 0; t < slots; ++t) {
      for (int i = 0; i < n; ++i) {
        if (!arrivals.bernoulli(load)) continue;
        const int j = static_cast<int>(arrivals.below(n));
        if (queue[i][j]++ == 0) req[i].set(j);
      }
      s->schedule(req, ready, m);
      for (int i = 0; i < n; ++i) {
        if (m[i] < 0) continue;
        if (--queue[i][m[i]] == 0) req[i].clear(m[i]);
        served += t >= warmup;
      }
    }
    return static_cast<double>(served) / static_cast<double>((slots - warmup) * n);
  };
  EXPECT_GT(throughput("islip"), 0.93);
  EXPECT_GT(throughput("wavefront"), 0.93);
  EXPECT_NEAR(throughput("pim"), 1.0 - std::pow(1.0 - 1.0 / n, n), 0.02);
  EXPECT_LT(throughput("rr"), 0.35);
}

// ---- wavefront ----

TEST(WavefrontTest, PriorityDiagonalRotates) {
  // 3x3, requests I0 -> {O0, O1}, I1 -> {O0}, I2 -> {O0, O1}. Diagonal d = cells (i, i+d mod 3).
  // p=0: d0 takes (0,0); d1: (0,1) row taken, (2,0) column taken; d2: (2,1).    -> [0, -1, 1]
  // p=1: d1 takes (0,1), (2,0); d2: (1,0) column taken; d0: nothing free.       -> [1, -1, 0]
  // p=2: d2 takes (1,0), (2,1); d0: (0,0) column taken; d1: (0,1) column taken. -> [-1, 0, 1]
  Matrix req(3, PortSet(3));
  for (auto [i, j] : {std::pair{0, 0}, {0, 1}, {1, 0}, {2, 0}, {2, 1}}) req[i].set(j);
  WavefrontScheduler s(3);
  std::vector<int> m(3);
  const std::vector<std::vector<int>> want = {{0, -1, 1}, {1, -1, 0}, {-1, 0, 1}, {0, -1, 1}};
  for (size_t t = 0; t < want.size(); ++t) {
    EXPECT_EQ(s.priority_diagonal(), static_cast<int>(t % 3));
    s.schedule(req, all_ready(3), m);
    EXPECT_EQ(m, want[t]) << "call " << t;
  }
}

TEST(WavefrontTest, AllOnesGivesRotatingPermutation) {
  for (int n : {5, 64, 70}) {
    WavefrontScheduler s(n);
    std::vector<int> m(n);
    for (int t = 0; t < 2 * n; ++t) {
      s.schedule(all_ones(n), all_ready(n), m);
      for (int i = 0; i < n; ++i) ASSERT_EQ(m[i], (i + t) % n) << "n=" << n << " call " << t;
    }
  }
}

}  // namespace
}  // namespace fabricsim::sw
