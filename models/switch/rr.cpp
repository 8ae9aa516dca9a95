// RrScheduler is header-only: it is RoundRobinMatcher (islip.cpp) with the RRM pointer rule. This
// file registers it.
#include "models/switch/rr.h"

#include <memory>

namespace fabricsim::sw {

FABRICSIM_REGISTER_SCHEDULER(rr) {
  registry.add("rr",
               "round robin (RRM), one pass of round-robin grant and accept whose pointers "
               "advance on every grant",
               [](int ports, int, Rng&) { return std::make_unique<RrScheduler>(ports); });
}

}  // namespace fabricsim::sw
