// The crossbar scheduler interface: one bipartite matching of inputs to outputs per crossbar slot.
//
// Hardware: the arbiter of an input-queued (VOQ) switch, which sees one request bit per
// (input, output) pair and returns a conflict-free match (each input to at most one output and each
// output from at most one input). Implementations are chosen by name
// (`switch.scheduler.algorithm`) from the SchedulerRegistry; each scheduler's own file registers
// it (FABRICSIM_REGISTER_SCHEDULER), with a one-line description for the configuration reference:
//   islip     - McKeown 1999: round-robin grant and accept pointers, moved only on first-iteration
//               accepts; k iterations.
//   pim       - Anderson et al. 1993 parallel iterative matching: random grant and accept; k
//               iterations.
//   rr        - one pass of round-robin grant/accept whose pointers advance on every grant (no
//               iSLIP pointer rule), i.e. the naive RRM arbiter that iSLIP improves on.
//   wavefront - Tamir/Chi wavefront arbiter: a maximal match in one pass over N diagonals, with the
//               starting diagonal rotating every slot for fairness.
// The same interface is what a Verilated RTL scheduler plugs into (switch.scheduler.impl): the RTL
// library registers it as another implementation of an algorithm (SchedulerRegistry::add_impl),
// so this library neither includes nor links the RTL.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "models/common/port_set.h"
#include "models/common/registry.h"
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

  // A matching that takes time (switch.scheduler.cycles_per_iteration > 0, one at a time): begin()
  // takes the requests of cycle `c`; poll(c') is true from the cycle its grant is available, and
  // `match` and matched_inputs() then hold it (the caller leaves `match` alone meanwhile). The
  // model computes the matching at once and makes it available `cycles` later; a clocked block
  // (the RTL in the loop) is clocked one edge per cycle by poll() instead and read when it says
  // it is done, so it takes exactly the cycles it takes.
  virtual void begin(const std::vector<PortSet>& requests, const PortSet& output_ready,
                     std::vector<int>& match, int64_t c, int64_t cycles) {
    schedule(requests, output_ready, match);
    grant_cycle_ = c + cycles;
  }
  virtual bool poll(int64_t c, std::vector<int>& /*match*/) { return c >= grant_cycle_; }
  // The first cycle at or after `next` in which poll() may return true.
  virtual int64_t grant_cycle(int64_t next) const {
    return grant_cycle_ > next ? grant_cycle_ : next;
  }
  // True while begin()'s matching needs poll() in every cycle (a clocked block not yet done).
  virtual bool clocking() const { return false; }

 protected:
  PortSet matched_;  // filled by schedule()
  const PortSet* requesting_inputs_ = nullptr;
  int64_t grant_cycle_ = 0;  // begin()'s matching is available from this cycle
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

// Makes a scheduler for `ports` ports and `iterations` iterations (ignored by those that have
// none). `rng` feeds the randomised algorithms (pim); it is owned by the caller and must outlive
// the scheduler. Arguments are already checked (ports, iterations >= 1; within the limits the
// implementation declared).
using SchedulerFactory =
    std::function<std::unique_ptr<VoqScheduler>(int ports, int iterations, Rng& rng)>;

// One implementation of an algorithm: the model ("model") or one plugged in from outside.
struct SchedulerImpl {
  SchedulerFactory make;
  std::string doc;    // for the configuration reference: "the Verilated RTL (...) in the loop"
  std::string title;  // names it in limit errors: "the RTL iSLIP"
  int max_ports = 0;  // its own port limit (0: none)
};

// The algorithms (switch.scheduler.algorithm) and their implementations (switch.scheduler.impl).
// Every algorithm has the implementation "model"; others are added with add_impl().
class SchedulerRegistry {
 public:
  static constexpr const char* kModel = "model";

  SchedulerRegistry() = default;
  // The registry the switch uses: every scheduler of this library (the FABRICSIM_SCHEDULERS list
  // in models/switch/CMakeLists.txt), plus whatever other libraries added at start-up.
  static SchedulerRegistry& global();

  // A new algorithm with its model. std::logic_error if the name is taken.
  void add(const std::string& algorithm, const std::string& description, SchedulerFactory model);
  // Another implementation of a registered algorithm. std::logic_error if the algorithm is unknown
  // or already has an implementation of that name.
  void add_impl(const std::string& algorithm, const std::string& impl, SchedulerImpl entry);

  const std::vector<std::string>& names() const { return algorithms_.names(); }  // sorted
  // "model" and every implementation name registered for some algorithm, sorted.
  const std::vector<std::string>& impl_names() const { return impl_names_; }
  // The algorithms that have implementation `impl`, sorted.
  std::vector<std::string> algorithms_with(const std::string& impl) const;
  const std::string& description(const std::string& algorithm) const;
  // std::invalid_argument naming the valid algorithms, implementations or algorithms with `impl`.
  const SchedulerImpl& impl(const std::string& algorithm, const std::string& impl) const;

  // Checks the arguments (std::invalid_argument) and calls the implementation's factory.
  std::unique_ptr<VoqScheduler> make(const std::string& algorithm, int ports, int iterations,
                                     Rng& rng, const std::string& impl = kModel) const;

  // The configuration reference's descriptions of switch.scheduler.algorithm and .impl.
  std::string algorithm_doc() const;
  std::string impl_doc() const;

 private:
  struct Algorithm {
    std::string description;
    Registry<SchedulerImpl> impls{"impl"};
  };
  Registry<Algorithm> algorithms_{"scheduler algorithm"};
  std::vector<std::string> impl_names_{kModel};
};

// In each scheduler's .cpp (listed in FABRICSIM_SCHEDULERS), followed by the body that adds it:
//   FABRICSIM_REGISTER_SCHEDULER(islip) { registry.add("islip", "...", factory); }
// voq_scheduler.cpp calls every listed function by name, so none can be dropped by the linker.
#define FABRICSIM_REGISTER_SCHEDULER(id) void register_scheduler_##id(SchedulerRegistry& registry)

// Adds this library's schedulers (the FABRICSIM_SCHEDULERS list) to `registry`.
void register_model_schedulers(SchedulerRegistry& registry);

// SchedulerRegistry::global().make(...). Throws std::invalid_argument on an unknown algorithm or
// implementation, an unsupported combination or arguments out of range.
std::unique_ptr<VoqScheduler> make_scheduler(const std::string& algorithm, int ports,
                                             int iterations, Rng& rng,
                                             const std::string& impl = SchedulerRegistry::kModel);
// SchedulerRegistry::global().names()
const std::vector<std::string>& scheduler_names();

}  // namespace fabricsim::sw
