#include "models/nic/congestion_control.h"

namespace fabricsim::nic {

// fabricsim_ccs.inc is generated from FABRICSIM_CCS (models/nic/CMakeLists.txt): one
// FABRICSIM_CC(name) line per algorithm file; calling each register function by name keeps every
// algorithm's object file in the link.
#define FABRICSIM_CC(id) FABRICSIM_REGISTER_CC(id);
#include "fabricsim_ccs.inc"
#undef FABRICSIM_CC

const CcRegistry& CcRegistry::global() {
  static const CcRegistry registry = [] {
    CcRegistry r;
#define FABRICSIM_CC(id) register_cc_##id(r);
#include "fabricsim_ccs.inc"
#undef FABRICSIM_CC
    return r;
  }();
  return registry;
}

}  // namespace fabricsim::nic
