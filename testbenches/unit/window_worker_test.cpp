#include "models/common/window_worker.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "models/common/span_log.h"

namespace fabricsim {
namespace {

// Each job reads what the main thread wrote before start() and writes what the main thread
// reads after wait(): the hand-over orders them, so no job is lost, run twice or seen half-done.
TEST(WindowWorker, RunsEachJobOnceOnAnotherThreadAndWaitSeesItsWrites) {
  WindowWorker w;
  const std::thread::id main_id = std::this_thread::get_id();
  std::vector<int> data(64, 0);
  int runs = 0;
  bool other_thread = true;
  for (int k = 1; k <= 2000; ++k) {
    data[k % 64] = k;  // written before the hand-over
    w.start([&, k] {
      ++runs;
      other_thread = other_thread && std::this_thread::get_id() != main_id;
      data[(k + 1) % 64] = data[k % 64] * 2;
    });
    EXPECT_TRUE(w.busy());
    if (k % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(25));  // it sleeps
    w.wait();
    EXPECT_FALSE(w.busy());
    ASSERT_EQ(data[(k + 1) % 64], 2 * k) << k;
  }
  EXPECT_EQ(runs, 2000);
  EXPECT_TRUE(other_thread);
  w.wait();  // nothing running: returns at once
}

TEST(WindowWorker, RethrowsTheJobsExceptionOnWaitAndRunsTheNextJob) {
  WindowWorker w;
  w.start([] { throw std::runtime_error("window failed"); });
  try {
    w.wait();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "window failed");
  }
  int x = 0;
  w.start([&] { x = 7; });
  w.wait();  // the error was taken: this one succeeds
  EXPECT_EQ(x, 7);
}

TEST(WindowWorker, DestroyedWhileAJobRunsWaitsForIt) {
  std::atomic<bool> done{false};
  {
    WindowWorker w;
    w.start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      done = true;
    });
  }
  EXPECT_TRUE(done);
}

// The switches' spans of a window go where a one-thread run puts them (before the hosts' spans
// of the same span of time); past the limit the first records in output order are kept.
TEST(SpanLog, SpliceInsertsAWindowsRecordsAtItsStartAndKeepsTheFirstInOutputOrder) {
  auto rec = [](const stats::SpanLog& l) {
    std::vector<int> v;
    for (const auto& r : l.records()) v.push_back(r.device);
    return v;
  };
  stats::SpanLog main(5), sw(UINT64_MAX);
  main.add(stats::SpanKind::kXoff, 10, 0, 0, Time(), Time());  // before the window
  const size_t mark = main.records().size();
  main.add(stats::SpanKind::kXoff, 11, 0, 0, Time(), Time());  // hosts, during the window
  sw.add(stats::SpanKind::kDrop, 1, 0, 0, Time(), Time());     // switches, in the window
  sw.add(stats::SpanKind::kDrop, 2, 0, 0, Time(), Time());
  main.splice(mark, sw);
  EXPECT_EQ(rec(main), (std::vector<int>{10, 1, 2, 11}));
  EXPECT_TRUE(sw.records().empty());
  EXPECT_EQ(main.not_recorded(), 0u);
  // Past the limit: the five first by (start, device, ...) are kept, the rest counted.
  const size_t mark2 = main.records().size();
  main.add(stats::SpanKind::kXoff, 12, 0, 0, Time::ns(1), Time::ns(1));
  sw.add(stats::SpanKind::kDrop, 3, 0, 0, Time(), Time());
  sw.add(stats::SpanKind::kDrop, 4, 0, 0, Time::ns(2), Time::ns(2));
  main.splice(mark2, sw);
  std::vector<int> kept = rec(main);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<int>{1, 2, 3, 10, 11}));
  EXPECT_EQ(main.not_recorded(), 2u);
}

// The records kept past the limit, and the count of the others, do not depend on the order of
// the adds (the threads and the host windows add in orders of their own). Checked against the
// definition: sort all, keep the first `limit`.
TEST(SpanLog, TheRecordsKeptPastTheLimitAreTheSameInAnyOrderOfAdds) {
  std::mt19937_64 rng(7);
  for (const uint64_t limit : {uint64_t{1}, uint64_t{40}, uint64_t{1500}}) {
    std::vector<stats::SpanRecord> all;
    for (int i = 0; i < 6000; ++i) {
      const Time start = Time::ns(static_cast<int64_t>(rng() % 500));
      all.push_back({start, start + Time::ns(static_cast<int64_t>(rng() % 50)),
                     static_cast<int32_t>(rng() % 20), static_cast<int16_t>(rng() % 4),
                     static_cast<uint8_t>(rng() % 2), stats::SpanKind::kXoff});
    }
    std::vector<stats::SpanRecord> want = all;
    std::sort(want.begin(), want.end(), stats::SpanLog::before);
    want.resize(limit);
    for (int order = 0; order < 3; ++order) {
      std::shuffle(all.begin(), all.end(), rng);
      stats::SpanLog log(limit);
      for (const auto& r : all) log.add(r.kind, r.device, r.port, r.cls, r.start, r.end);
      std::vector<stats::SpanRecord> got = log.records();
      std::sort(got.begin(), got.end(), stats::SpanLog::before);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_FALSE(stats::SpanLog::before(got[i], want[i]) ||
                     stats::SpanLog::before(want[i], got[i]))
            << "limit " << limit << " order " << order << " record " << i;
      EXPECT_EQ(log.not_recorded(), all.size() - limit);
    }
  }
}

}  // namespace
}  // namespace fabricsim
