// iSLIP (McKeown, "The iSLIP scheduling algorithm for input-queued switches", IEEE/ACM ToN 1999),
// and the round-robin arbiter array it shares with RRM (rr.h).
//
// Hardware: N grant arbiters (one per output) and N accept arbiters (one per input), each a
// programmable-priority round-robin arbiter with a pointer register; k request/grant/accept
// iterations per crossbar slot. Parameters: ports N >= 1, iterations k >= 1.
//
// One iteration, over the inputs and outputs still unmatched in this slot:
//   request: input i requests every output j with requests[i][j] set and j in output_ready;
//   grant:   output j grants the requesting input i with the smallest (i - g[j]) mod N, i.e. the
//            first at or after g[j] in 0, 1, ..., N-1, 0, ... order;
//   accept:  input i accepts the granting output j with the smallest (j - a[i]) mod N.
// iSLIP pointer rule: pointers move only for accepts made in the FIRST iteration, a[i] = (j + 1)
// mod N and g[j] = (i + 1) mod N. Grants that are not accepted, matches made in later iterations
// and outputs that are not ready leave the pointers alone. Iterating stops early once an iteration
// makes no grant, which cannot change the result (the next one would see the same state).
#pragma once

#include <cstdint>
#include <vector>

#include "models/switch/voq_scheduler.h"

namespace fabricsim::sw {

// The request/grant/accept round-robin arbiter array of iSLIP and RRM, which differ only in when
// the pointers move (see the file comments of islip.h and rr.h).
class RoundRobinMatcher {
 public:
  enum class PointerRule {
    kIslip,  // on first-iteration accepts only
    kRrm,    // g[j] on every grant, a[i] on every accept (single iteration)
  };
  RoundRobinMatcher(int ports, int iterations, PointerRule rule);

  // As VoqScheduler::schedule; `matched` receives the matched inputs. `inputs`: null, or a
  // superset of the inputs with a request (VoqScheduler::set_requesting_inputs).
  void schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                std::vector<int>& match, PortSet& matched, const PortSet* inputs = nullptr);
  void reset();

  int ports() const { return n_; }
  int iterations() const { return k_; }
  int grant_pointer(int output) const { return g_[output]; }
  int accept_pointer(int input) const { return a_[input]; }

 private:
  // W = words per port set when known at compile time (1: <= 64 ports, 2: <= 128), 0 otherwise.
  template <int W>
  void run(const std::vector<PortSet>& requests, const PortSet& output_ready,
           std::vector<int>& match, PortSet& matched, const PortSet* inputs);

  int n_;
  int nw_;  // 64-bit words per port set
  int k_;
  PointerRule rule_;
  std::vector<int> g_;  // grant pointer per output
  std::vector<int> a_;  // accept pointer per input
  // Per-call scratch, sized once here so schedule() never allocates. Port sets are flat arrays of
  // nw_ words; the N x nw_ ones hold one set per port.
  std::vector<uint64_t> at_;      // at_[i]: pending outputs whose grant pointer is i, N x nw_
  std::vector<uint64_t> grants_;  // grants_[i]: outputs granting input i this iteration, N x nw_
  std::vector<uint64_t> free_in_, free_out_, pending_, active_, granted_, accepted_;
};

class IslipScheduler final : public VoqScheduler {
 public:
  IslipScheduler(int ports, int iterations)
      : VoqScheduler(ports), m_(ports, iterations, RoundRobinMatcher::PointerRule::kIslip) {}

  const char* name() const override { return "islip"; }
  void schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                std::vector<int>& match) override {
    m_.schedule(requests, output_ready, match, matched_, requesting_inputs_);
  }
  void reset() override { m_.reset(); }

  int ports() const { return m_.ports(); }
  int iterations() const { return m_.iterations(); }
  // Pointer registers, exposed for tests and for cycle-by-cycle comparison with the RTL.
  int grant_pointer(int output) const { return m_.grant_pointer(output); }
  int accept_pointer(int input) const { return m_.accept_pointer(input); }

 private:
  RoundRobinMatcher m_;
};

}  // namespace fabricsim::sw
