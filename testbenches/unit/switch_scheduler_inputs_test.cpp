// The requesting-inputs hint (VoqScheduler::set_requesting_inputs): a scheduler given the set of
// inputs with requests visits only those, and must then make exactly the matches and pointer
// moves it makes without the hint, slot after slot, whatever the requests. That includes iSLIP's
// and RRM's shortcut for conflict-free requests (each input one output, no output asked twice).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "models/common/port_set.h"
#include "models/common/rng.h"
#include "models/switch/islip.h"
#include "models/switch/voq_scheduler.h"

namespace fabricsim::sw {
namespace {

class RequestingInputs : public testing::TestWithParam<std::tuple<std::string, int, int>> {};

TEST_P(RequestingInputs, SameMatchesAndPointersAsWithout) {
  const auto [algorithm, ports, iterations] = GetParam();
  Rng rng_a(7), rng_b(7), traffic(11);
  auto plain = make_scheduler(algorithm, ports, iterations, rng_a);
  auto hinted = make_scheduler(algorithm, ports, iterations, rng_b);
  PortSet inputs(ports);
  hinted->set_requesting_inputs(&inputs);
  std::vector<PortSet> requests(static_cast<size_t>(ports), PortSet(ports));
  PortSet ready(ports);
  std::vector<int> m1(static_cast<size_t>(ports)), m2(static_cast<size_t>(ports));
  int matched = 0, conflict_free = 0;
  for (int slot = 0; slot < 3000; ++slot) {
    // Sparse and dense slots alike: a few requesting inputs (a lightly loaded switch) up to all.
    const uint64_t density = 1 + traffic.below(slot % 3 == 0 ? 64 : 4);
    inputs.clear_all();
    ready.clear_all();
    for (int i = 0; i < ports; ++i) {
      requests[i].clear_all();
      if (traffic.below(64) >= density) continue;
      if (slot % 3 == 1)  // one output per input, sometimes the same for two
        requests[i].set(static_cast<int>(traffic.below(static_cast<uint64_t>(ports))));
      else
        for (int j = 0; j < ports; ++j)
          if (traffic.below(8) == 0) requests[i].set(j);
      if (!requests[i].empty()) inputs.set(i);
      for (int j = 0; j < ports; ++j)
        if (requests[i].test(j)) ready.set(j);
    }
    PortSet asked(ports);
    bool clean = true;
    for (int i = 0; i < ports; ++i)
      for (int j = 0; j < ports; ++j)
        if (requests[i].test(j)) {
          clean = clean && requests[i].count() == 1 && !asked.test(j);
          asked.set(j);
        }
    conflict_free += clean && !inputs.empty();
    plain->schedule(requests, ready, m1);
    hinted->schedule(requests, ready, m2);
    ASSERT_EQ(m1, m2) << algorithm << " slot " << slot;
    for (int in = 0; in < ports; ++in) {
      ASSERT_EQ(plain->matched_inputs().test(in), hinted->matched_inputs().test(in));
      matched += m1[in] >= 0;
    }
    if (algorithm == "islip") {
      const auto& a = static_cast<const IslipScheduler&>(*plain);
      const auto& b = static_cast<const IslipScheduler&>(*hinted);
      for (int p = 0; p < ports; ++p) {
        ASSERT_EQ(a.grant_pointer(p), b.grant_pointer(p)) << "slot " << slot << " output " << p;
        ASSERT_EQ(a.accept_pointer(p), b.accept_pointer(p)) << "slot " << slot << " input " << p;
      }
    }
  }
  EXPECT_GT(matched, 1000);      // the comparison saw real matchings, not empty slots
  EXPECT_GT(conflict_free, 50);  // and conflict-free ones
}

INSTANTIATE_TEST_SUITE_P(
    Schedulers, RequestingInputs,
    testing::Values(std::make_tuple("islip", 5, 1), std::make_tuple("islip", 64, 1),
                    std::make_tuple("islip", 64, 4), std::make_tuple("islip", 100, 2),
                    std::make_tuple("islip", 128, 3), std::make_tuple("islip", 200, 2),
                    std::make_tuple("rr", 64, 1), std::make_tuple("rr", 130, 1),
                    std::make_tuple("pim", 64, 2), std::make_tuple("wavefront", 64, 1)));

}  // namespace
}  // namespace fabricsim::sw
