#include "models/common/window_worker.h"

#include <atomic>
#include <chrono>
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
// of the same span of time), and the limit then keeps the first records.
TEST(SpanLog, SpliceInsertsAWindowsRecordsAtItsStartAndKeepsTheLimit) {
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
  // Past the limit: the first five of the one-thread order are kept, the rest counted.
  const size_t mark2 = main.records().size();
  main.add(stats::SpanKind::kXoff, 12, 0, 0, Time(), Time());
  sw.add(stats::SpanKind::kDrop, 3, 0, 0, Time(), Time());
  sw.add(stats::SpanKind::kDrop, 4, 0, 0, Time(), Time());
  main.splice(mark2, sw);
  EXPECT_EQ(rec(main), (std::vector<int>{10, 1, 2, 11, 3}));
  EXPECT_EQ(main.not_recorded(), 2u);
}

}  // namespace
}  // namespace fabricsim
