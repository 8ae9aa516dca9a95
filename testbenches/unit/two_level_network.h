// A two-level message network for the workload tests that need scale-up domains beside NICs:
// ranks on hosts 0..n-1, pairs of one domain on a ScaleUpNetwork of `gpus`-GPU domains (`up`
// each way, `up_lat`, the switch reducing if `reduce`), every other pair on a second one of
// one-GPU "domains" wide enough for every host (`nic` each way, `nic_lat`). It records what each
// rank sent on its NIC; and `iota_call`, a call over ranks 0..n-1. Shared by the workload tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "models/workload/collective.h"
#include "models/workload/exec_graph.h"
#include "models/workload/scale_up.h"
#include "models/workload/workload_engine.h"

namespace fabricsim::workload {

class TwoLevelNetwork : public MessageNetwork {
 public:
  TwoLevelNetwork(const ExecGraph& g, int n, int gpus, BitRate up, Time up_lat, bool reduce,
                  BitRate nic, Time nic_lat)
      : g_(g), up_(n, gpus, up, up_lat, reduce), nic_(n, n, nic, nic_lat) {}
  void post(uint32_t token, int src, int dst, uint64_t bytes, int channel, Time now) override {
    if (up_.same_domain(src, dst)) {
      up_.post(token, src, dst, bytes, now, channel, g_.node(token).tag);
    } else {
      nic_.post(token, src, dst, bytes, now);
      nic_bytes_[static_cast<size_t>(src)] += bytes;
    }
  }
  // Runs the engine to its end: the last delivery's time.
  Time run(WorkloadEngine& e) {
    nic_bytes_.assign(static_cast<size_t>(g_.ranks()), 0);
    Time now, last;
    e.start(now);
    for (;;) {
      now = std::min({e.next_event(), up_.next_event(), nic_.next_event()});
      if (now == Time::max()) return last;
      for (ScaleUpNetwork* x : {&up_, &nic_}) {
        uint32_t token = 0;
        Time t;
        while (x->pop_delivered(now, token, t)) {
          e.on_delivered(token, t);
          e.on_sent(token, t);
          last = t;
        }
      }
      e.run(now);
    }
  }
  const ExecGraph& g_;
  ScaleUpNetwork up_, nic_;
  std::vector<uint64_t> nic_bytes_;  // per rank: what it sent on its NIC
};

// Domain r / gpus for each of n hosts.
inline std::vector<int> domains_of(int n, int gpus) {
  std::vector<int> d(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) d[static_cast<size_t>(r)] = r / gpus;
  return d;
}

// A call named "ar" over ranks 0..n-1 in order.
inline CollectiveCall iota_call(int n, uint64_t bytes, int channels = 1,
                                const std::vector<int>* dom = nullptr) {
  CollectiveCall c;
  c.name = "ar";
  c.ranks.resize(static_cast<size_t>(n));
  std::iota(c.ranks.begin(), c.ranks.end(), 0);
  c.bytes = bytes;
  c.channels = channels;
  c.domain = dom;
  return c;
}

}  // namespace fabricsim::workload
