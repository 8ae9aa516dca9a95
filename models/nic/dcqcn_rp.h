// DCQCN's reaction point in fixed point, one QP, clock by clock: the datapath a NIC runs per QP
// for the rules of the HPCC work's rdma-hw.cc (the named profiles of cc_dcqcn.cpp), and the exact
// reference of rtl/dcqcn_rp.sv (keep the two in step; docs/cosim.md).
//
// Hardware: the rate and alpha registers of a QP's rate limiter with its three timers, kept as
// due times on the NIC's clock instead of counters (a real NIC keeps them in a timer wheel [A]).
// Units [A] (no public figure for a NIC's register widths; NVIDIA's firmware parameters are in
// Mb/s and its alpha is a binary fraction, transport-and-collectives-facts.md):
//   rates     24-bit unsigned, Mb/s (a 400G line is 400000; up to 16.7 Tb/s)
//   alpha     25-bit unsigned Q24: 2^24 = 1.0; g = 2^-g_shift (1/256: g_shift 8). Q16 left the
//             rate up to 4 % off the double model's (alpha's rounding floor, 2e-3, compounded
//             over a burst of cuts); Q24 keeps it within 0.2 % (nic_dcqcn_fixed_test)
//   times     64-bit fs, the simulator's clock (periods and the decrease-check offset as well)
// Arithmetic (the double model's, cc_dcqcn.cpp DcqcnHpcc, with these roundings):
//   alpha period  a <- a - round(a / 2^g_shift) + (CNP in the period ? 2^(24 - g_shift) : 0)
//   decrease      Rt <- Rc unless no increase ran since the last cut (stage 0);
//                 Rc <- max(min, Rc - round(Rc a / 2^25)); stage 0; rate timer restarted
//   increase      stage >= F: Rt <- min(line, Rt + (stage == F ? ai : hai));
//                 Rc <- ceil((Rc + Rt) / 2) (rounding up reaches Rt: the timer stops at line rate)
//                 stage + 1 (saturates at 255: only stage == 0, == F and >= F matter, F < 255)
// Sequencing (one step per clock edge; `busy` while a command runs, commands then ignored):
//   cnp at now  before the first CNP: alpha 1.0, alpha due now + alpha_period, the decrease check
//               armed at now + check_offset + decrease_period; one cycle. Later: one cycle per
//               alpha period due at or before now, then the period's CNP flag is set and, if the
//               check is not armed, it steps one decrease_period per cycle from the last check
//               to the first after now, and is armed.
//   timer at now  repeatedly the earliest due event at or before now: the rate timer's increase
//               (also at a tie with the check) in one cycle, or a decrease check: alpha brought
//               to the check's time (one cycle per period) and then the cut in one cycle, which
//               disarms the check until the next CNP. The rate timer is disarmed at line rate.
//   cnp has priority over timer when both are raised in an idle cycle.
// tick() is one clock edge and returns the registers before it (every output is a register).
// Implementations other than the model (nic.dcqcn.impl) register in DcqcnRpRegistry at start-up
// (the RTL's: rtl::register_implementations()); this file includes none of them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/common/registry.h"

namespace fabricsim::nic {

// Constants of a QP's reaction point (sampled in reset). Rates in Mb/s, times in fs.
struct DcqcnRpParams {
  uint32_t line = 0, ai = 0, hai = 0, min = 0;
  uint64_t alpha_period = 0, decrease_period = 0, rate_period = 0, check_offset = 0;
  uint8_t f = 1;        // fast-recovery steps, 1..254
  uint8_t g_shift = 8;  // g = 2^-g_shift, 1..16
};

struct DcqcnRpIn {
  bool cnp = false;    // a CNP arrived at `now`
  bool timer = false;  // run the events due at or before `now`
  uint64_t now = 0;    // fs, never less than a previous command's
};

enum class DcqcnRpState : uint8_t { kIdle = 0, kCnpAlpha, kCnpCheck, kTimer, kDecAlpha };

// Every register of the block (its outputs).
struct DcqcnRpRegs {
  DcqcnRpState state = DcqcnRpState::kIdle;
  bool started = false, alpha_cnp = false, check_armed = false, rate_armed = false;
  uint32_t rc = 0, rt = 0;  // current and target rate, Mb/s
  uint32_t alpha = 0;       // Q24
  uint8_t stage = 0;
  uint64_t tnow = 0;        // the running command's time
  uint64_t alpha_next = 0;  // the next alpha period's end
  uint64_t check_at = 0;    // armed: the next decrease check; else the last one
  uint64_t rate_next = 0;   // the rate timer (armed)
  bool busy() const { return state != DcqcnRpState::kIdle; }
  // The earliest armed timer (UINT64_MAX: none).
  uint64_t next_timer() const {
    uint64_t t = UINT64_MAX;
    if (check_armed) t = check_at;
    if (rate_armed && rate_next < t) t = rate_next;
    return t;
  }
  bool operator==(const DcqcnRpRegs& o) const;
};

class DcqcnRpIf {
 public:
  virtual ~DcqcnRpIf();
  // One clock edge; returns the registers before it.
  virtual DcqcnRpRegs tick(const DcqcnRpIn& in) = 0;
  virtual const DcqcnRpRegs& regs() const = 0;
  // New constants, then one reset cycle: idle, not started, Rc = Rt = line.
  virtual void reset(const DcqcnRpParams& p) = 0;
};

// The C++ model of the block (the reference of rtl/dcqcn_rp.sv).
class DcqcnRpModel final : public DcqcnRpIf {
 public:
  static constexpr int kAlphaFrac = 24;               // alpha's fraction bits
  static constexpr uint32_t kOne = 1u << kAlphaFrac;  // alpha 1.0
  static constexpr uint32_t kRateMax = (1u << 24) - 1;
  // std::invalid_argument when a constant does not fit its register (or F, g_shift out of range).
  explicit DcqcnRpModel(const DcqcnRpParams& p);
  DcqcnRpRegs tick(const DcqcnRpIn& in) override;
  const DcqcnRpRegs& regs() const override { return r_; }
  void reset(const DcqcnRpParams& p) override;

  // One alpha period, as the block computes it.
  static uint32_t alpha_step(uint32_t a, bool cnp, int g_shift);
  static void check(const DcqcnRpParams& p);

 private:
  void increase();
  void decrease();
  DcqcnRpParams p_;
  DcqcnRpRegs r_;
};

// One implementation of the block, as registered (nic.dcqcn.impl).
struct DcqcnRpImpl {
  std::function<std::unique_ptr<DcqcnRpIf>(const DcqcnRpParams&)> make;
  std::string doc;  // for the configuration reference
};

// The implementations of nic.dcqcn.impl: "model" (DcqcnRpModel) and those registered at start-up.
class DcqcnRpRegistry {
 public:
  static constexpr const char* kModel = "model";
  DcqcnRpRegistry();
  static DcqcnRpRegistry& global();
  void add(const std::string& impl, DcqcnRpImpl e) { impls_.add(impl, std::move(e)); }
  const DcqcnRpImpl& at(const std::string& impl) const { return impls_.at(impl); }
  const std::vector<std::string>& names() const { return impls_.names(); }
  std::string doc() const;

 private:
  Registry<DcqcnRpImpl> impls_{"DCQCN reaction point impl"};
};

}  // namespace fabricsim::nic
