// Puts the Verilated blocks that can run in the loop behind the model's registries, so that the
// model selects them by name without including or linking the RTL:
//   switch.scheduler.impl: rtl     - RtlIslipScheduler for algorithm islip (up to
//                                    IslipRtl::kMaxPorts ports), sw::SchedulerRegistry
//   flow_control.credit.impl: rtl  - CreditUnitRtl (CreditUnitRtl::kVls data VLs),
//                                    link::CreditUnitRegistry
//   nic.dcqcn.impl: rtl            - DcqcnRpRtl for each QP's fixed-point DCQCN reaction point
//                                    (nic.dcqcn.arithmetic: fixed), nic::DcqcnRpRegistry
//   nic.rx_impl: rtl               - PsnTrackerRtl as every QP's responder receive tracker,
//                                    nic::PsnTrackerRegistry
//   nic.crc_impl: rtl              - Crc32Rtl as each NIC's sender payload CRC, link::Crc32Registry
// The cell allocator has no in-the-loop use (the switch model keeps its own free list): only the
// co-simulation harness drives it.
//
// An explicit call and not static initialisers: a static library's object file that nothing
// references is left out of the link, and its initialisers with it.
#pragma once

namespace fabricsim::rtl {

// Call once at start-up, before any configuration is loaded (the fabricsim CLI does, and so must
// a test that asks for impl: rtl); later calls do nothing. Not thread-safe against concurrent use
// of the registries.
void register_implementations();

}  // namespace fabricsim::rtl
