#include "rtl/register.h"

#include <memory>

#include "models/link/credit_unit.h"
#include "models/nic/dcqcn_rp.h"
#include "models/nic/psn_tracker.h"
#include "models/switch/voq_scheduler.h"
#include "rtl/crc32_rtl.h"
#include "rtl/credit_unit_rtl.h"
#include "rtl/dcqcn_rp_rtl.h"
#include "rtl/islip_rtl.h"
#include "rtl/psn_tracker_rtl.h"

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
  nic::DcqcnRpRegistry::global().add(
      "rtl", nic::DcqcnRpImpl{[](const nic::DcqcnRpParams& p) -> std::unique_ptr<nic::DcqcnRpIf> {
                                return DcqcnRpRtl::create(p);
                              },
                              "the Verilated RTL (rtl/dcqcn_rp.sv), one instance per QP, in the "
                              "model's place clock by clock"});
  nic::PsnTrackerRegistry::global().add(
      "rtl",
      nic::PsnTrackerImpl{[](const nic::PsnTrackerParams& p) -> std::unique_ptr<nic::PsnTrackerIf> {
                            return PsnTrackerRtl::create(p);
                          },
                          "the Verilated RTL (rtl/psn_tracker.sv), one instance per QP, "
                          "packet by packet (nic.rc.window up to 256)"});
  link::Crc32Registry::global().add(
      "rtl",
      link::Crc32Impl{[]() -> std::unique_ptr<link::Crc32BlockIf> { return Crc32Rtl::create(); },
                      "the Verilated RTL (rtl/crc32_stream.sv)"});
}

}  // namespace fabricsim::rtl
