// The crossbar scheduler interface: one bipartite matching of inputs to outputs per crossbar slot.
//
// Hardware: the arbiter of an input-queued (VOQ) switch, which sees one request bit per
// (input, output) pair and returns a conflict-free match (each input to at most one output and each
// output from at most one input). Implementations are chosen by name
// (`switch.scheduler.algorithm`):
//   islip     - McKeown 1999: round-robin grant and accept pointers, moved only on first-iteration
//               accepts; k iterations.
//   pim       - Anderson et al. 1993 parallel iterative matching: random grant and accept; k
//   iterations. rr        - one pass of round-robin grant/accept whose pointers advance on every
//   grant (no
//               iSLIP pointer rule), i.e. the naive RRM arbiter that iSLIP improves on.
//   wavefront - Tamir/Chi wavefront arbiter: a maximal match in one pass over N diagonals, with the
//               starting diagonal rotating every slot for fairness.
// The same interface is what a Verilated RTL scheduler plugs into (switch.scheduler.impl).
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "models/common/port_set.h"
#include "models/common/rng.h"

namespace fabricsim::sw {

class VoqScheduler {
 public:
  explicit VoqScheduler(int ports) : matched_(ports) {}
  virtual ~VoqScheduler() = default;
  virtual const char* name() const = 0;

  // requests[i]: outputs for which input i has at least one eligible cell. Only outputs in
  // `output_ready` may be matched. On return match[i] is input i's output, or -1, and
  // matched_inputs() holds the inputs with an output (so that the caller visits those only).
  // Both vectors have `ports` elements and are owned by the caller (no allocation here).
  virtual void schedule(const std::vector<PortSet>& requests, const PortSet& output_ready,
                        std::vector<int>& match) = 0;
  const PortSet& matched_inputs() const { return matched_; }

  // A hint the owner may give once: a set it keeps up to date holding (at least) every input
  // with a request bit. Schedulers that use it visit only those inputs, so that a matching costs
  // what its requests cost, not what the port count costs (a lightly loaded switch of a large
  // fabric matches one or two inputs at a time). Null (the default): every input.
  void set_requesting_inputs(const PortSet* inputs) { requesting_inputs_ = inputs; }

  // Back to the power-on state (pointers at 0).
  virtual void reset() = 0;

 protected:
  PortSet matched_;  // filled by schedule()
  const PortSet* requesting_inputs_ = nullptr;
};

// For implementations: calls f(std::integral_constant<int, W>{}) with W = the number of 64-bit
// words per port set when it is 1 or 2 (so that hot loops over words unroll), else W = 0 (any).
template <class F>
void dispatch_words(int words, F&& f) {
  if (words == 1)
    f(std::integral_constant<int, 1>{});
  else if (words == 2)
    f(std::integral_constant<int, 2>{});
  else
    f(std::integral_constant<int, 0>{});
}

// `algorithm` is one of scheduler_names(). `iterations` >= 1 (ignored by wavefront).
// `rng` feeds the randomised algorithms (pim); it is owned by the caller and must outlive the
// scheduler. `impl`: "model" (the C++ model) or "rtl" (the Verilated RTL, rtl/islip_rtl.h; islip
// only, up to rtl::IslipRtl::kMaxPorts ports). Throws std::invalid_argument on an unknown name or
// an unsupported combination.
std::unique_ptr<VoqScheduler> make_scheduler(const std::string& algorithm, int ports,
                                             int iterations, Rng& rng,
                                             const std::string& impl = "model");
const std::vector<std::string>& scheduler_names();

}  // namespace fabricsim::sw
