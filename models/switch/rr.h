// Basic round-robin matching, "RRM" (McKeown, IEEE/ACM ToN 1999, section III-A): the naive
// arbiter that iSLIP fixes, kept as a baseline.
//
// Hardware: the same grant/accept round-robin arbiters as iSLIP, but every grant arbiter advances
// its pointer whenever it issues a grant. Parameters: ports N >= 1. Always exactly one
// request/grant/accept pass per slot (the paper's RRM is single-iteration; the factory's
// `iterations` is ignored).
//
// One slot:
//   request: input i requests every output j with requests[i][j] set and j in output_ready;
//   grant:   output j grants the requesting input i with the smallest (i - g[j]) mod N and sets
//            g[j] = (i + 1) mod N whether or not the grant is accepted;
//   accept:  input i accepts the granting output j with the smallest (j - a[i]) mod N and sets
//            a[i] = (j + 1) mod N.
// Because outputs move their pointers on unaccepted grants, pointers that point at the same input
// stay together. Under all-ones requests from reset every output grants input t mod N in slot t,
// and exactly one cell crosses per slot (input t mod N to output floor(t / N) mod N): one cell
// per slot for ever, where iSLIP reaches N within N slots. Under uniform Bernoulli traffic RRM is
// stable up to about 63% load (McKeown's figure; a VOQ simulation with this class agrees: N = 64
// carries 0.63 but only 0.51 of an offered 0.66), and past that the VOQs fill, the requests
// approach all-ones and throughput collapses (0.21 at N = 16 under 95% load, vs 0.95 for iSLIP; see
// SchedulerAll.VoqThroughputUnderUniformLoad).
#pragma once

#include <vector>

#include "models/switch/islip.h"
#include "models/switch/voq_scheduler.h"

namespace fabricsim::sw {

class RrScheduler final : public VoqScheduler {
 public:
  explicit RrScheduler(int ports)
      : VoqScheduler(ports), m_(ports, 1, RoundRobinMatcher::PointerRule::kRrm) {}

  const char* name() const override { return "rr"; }
  void schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                std::vector<int>& match) override {
    m_.schedule(requests, output_ready, match, matched_, requesting_inputs_);
  }
  void reset() override { m_.reset(); }

  int ports() const { return m_.ports(); }
  int grant_pointer(int output) const { return m_.grant_pointer(output); }
  int accept_pointer(int input) const { return m_.accept_pointer(input); }

 private:
  RoundRobinMatcher m_;  // same arbiter array as iSLIP, RRM pointer rule
};

}  // namespace fabricsim::sw
