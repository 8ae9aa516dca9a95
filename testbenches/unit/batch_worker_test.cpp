#include "models/common/batch_worker.h"

#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

// Records every value in the order applied; batches of 7 so that pushes straddle batches.
struct Log {
  std::vector<int> seen;
  std::vector<size_t> batch_sizes;
};

std::vector<int> run(bool threaded, int n, Log& log) {
  BatchWorker<int> w(
      [&](const std::vector<int>& b) {
        log.batch_sizes.push_back(b.size());
        for (int v : b) log.seen.push_back(v);
      },
      threaded, 7);
  for (int i = 0; i < n; ++i) w.push(i * 3);
  w.drain();
  return log.seen;
}

TEST(BatchWorker, AppliesEveryRecordInOrderWithOrWithoutAThread) {
  for (bool threaded : {false, true}) {
    Log log;
    const std::vector<int> seen = run(threaded, 1000, log);
    ASSERT_EQ(seen.size(), 1000u) << threaded;
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(seen[i], i * 3) << threaded;
    // Full batches of 7, then the partial one drain() handed over.
    ASSERT_EQ(log.batch_sizes.size(), 143u);
    EXPECT_EQ(log.batch_sizes.back(), 1000u - 142 * 7);
  }
}

TEST(BatchWorker, DrainSeesEverythingPushedSoFarAndCanBeRepeated) {
  std::vector<int> seen;
  BatchWorker<int> w(
      [&](const std::vector<int>& b) { seen.insert(seen.end(), b.begin(), b.end()); }, true, 4);
  w.push(1);
  w.drain();
  EXPECT_EQ(seen, (std::vector<int>{1}));
  for (int i = 2; i <= 9; ++i) w.push(i);
  w.drain();
  EXPECT_EQ(seen.size(), 9u);
  EXPECT_EQ(seen.back(), 9);
  w.drain();  // nothing new
  EXPECT_EQ(seen.size(), 9u);
}

TEST(BatchWorker, AnExceptionInApplyIsRethrownByDrain) {
  for (bool threaded : {false, true}) {
    BatchWorker<int> w(
        [](const std::vector<int>& b) {
          for (int v : b)
            if (v == 5) throw std::runtime_error("bad record");
        },
        threaded, 2);
    // Inline, the batch holding 5 throws from push(); on a thread, from the next drain().
    try {
      for (int i = 0; i < 10; ++i) w.push(i);
      w.drain();
      ADD_FAILURE() << "no exception, threaded=" << threaded;
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "bad record");
    }
  }
}

}  // namespace
}  // namespace fabricsim
