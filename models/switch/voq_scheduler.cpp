#include "models/switch/voq_scheduler.h"

#include <stdexcept>

#include "models/switch/islip.h"
#include "models/switch/pim.h"
#include "models/switch/rr.h"
#include "models/switch/wavefront.h"
#include "rtl/islip_rtl.h"

namespace fabricsim::sw {

const std::vector<std::string>& scheduler_names() {
  static const std::vector<std::string> names = {"islip", "pim", "rr", "wavefront"};
  return names;
}

std::unique_ptr<VoqScheduler> make_scheduler(const std::string& algorithm, int ports,
                                             int iterations, Rng& rng, const std::string& impl) {
  if (ports < 1)
    throw std::invalid_argument("scheduler: ports must be >= 1, got " + std::to_string(ports));
  // Checked for every algorithm, even those that ignore it, so a bad config fails the same way
  // whichever scheduler it names.
  if (iterations < 1)
    throw std::invalid_argument("scheduler: iterations must be >= 1, got " +
                                std::to_string(iterations));
  if (impl == "rtl") {
    if (algorithm != "islip")
      throw std::invalid_argument("scheduler: impl 'rtl' exists only for islip, not '" + algorithm +
                                  "'");
    return std::make_unique<rtl::RtlIslipScheduler>(ports, iterations);
  }
  if (impl != "model")
    throw std::invalid_argument("scheduler: unknown impl '" + impl + "' (valid: model, rtl)");
  if (algorithm == "islip") return std::make_unique<IslipScheduler>(ports, iterations);
  if (algorithm == "pim") return std::make_unique<PimScheduler>(ports, iterations, rng);
  if (algorithm == "rr") return std::make_unique<RrScheduler>(ports);
  if (algorithm == "wavefront") return std::make_unique<WavefrontScheduler>(ports);
  std::string valid;
  for (const auto& n : scheduler_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown scheduler algorithm '" + algorithm + "' (valid: " + valid +
                              ")");
}

}  // namespace fabricsim::sw
