#include "models/switch/ingress_admission.h"

#include <stdexcept>

namespace fabricsim::sw {

IngressAdmission::IngressAdmission(int ports, int pipelines, int per_cycle)
    : per_cycle_(per_cycle), pipe_of_(static_cast<size_t>(ports > 0 ? ports : 0)) {
  if (ports < 1 || pipelines < 1)
    throw std::invalid_argument("IngressAdmission: ports and pipelines must be >= 1");
  if (per_cycle < 0) throw std::invalid_argument("IngressAdmission: per_cycle must be >= 0");
  for (int p = 0; p < ports; ++p)
    pipe_of_[static_cast<size_t>(p)] =
        static_cast<int32_t>(static_cast<int64_t>(p) * pipelines / ports);
  slots_.resize(static_cast<size_t>(pipelines));
  queues_.resize(static_cast<size_t>(pipelines));
}

}  // namespace fabricsim::sw
