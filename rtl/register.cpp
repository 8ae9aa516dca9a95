#include "rtl/register.h"

#include <memory>

#include "models/link/credit_unit.h"
#include "models/switch/voq_scheduler.h"
#include "rtl/credit_unit_rtl.h"
#include "rtl/islip_rtl.h"

namespace fabricsim::rtl {

void register_implementations() {
  static bool done = false;
  if (done) return;
  done = true;
  sw::SchedulerRegistry::global().add_impl(
      "islip", "rtl",
      sw::SchedulerImpl{[](int ports, int iterations, Rng&) -> std::unique_ptr<sw::VoqScheduler> {
                          return std::make_unique<RtlIslipScheduler>(ports, iterations);
                        },
                        "the Verilated RTL (rtl/islip_sched.sv) in the loop (docs/cosim.md)",
                        "the RTL iSLIP", IslipRtl::kMaxPorts});
  // The RTL has kVls lanes whatever the configuration asks; RunConfig::validate keeps data_vls
  // within them (max_vls), and the unused lanes are never addressed.
  link::CreditUnitRegistry::global().add(
      "rtl", link::CreditUnitImpl{[](int, uint16_t initial) -> std::unique_ptr<link::CreditUnitIf> {
                                    return CreditUnitRtl::create(initial);
                                  },
                                  "the Verilated RTL credit unit (rtl/credit_unit.sv) in its "
                                  "place, decision for decision",
                                  "the RTL credit unit", CreditUnitRtl::kVls});
}

}  // namespace fabricsim::rtl
