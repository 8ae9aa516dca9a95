#include "rtl/dcqcn_rp_rtl.h"

#include <stdexcept>
#include <string>

#include "Vdcqcn_rp.h"
#include "Vdcqcn_rp_mutant.h"
#include "Vdcqcn_rp_mutant2.h"
#include "Vdcqcn_rp_mutant3.h"
#include "Vdcqcn_rp_mutant4.h"
#include "rtl/verilated_block.h"

namespace fabricsim::rtl {
namespace {

template <class V>
nic::DcqcnRpRegs read(const V& t) {
  nic::DcqcnRpRegs r;
  r.state = static_cast<nic::DcqcnRpState>(t.state);
  r.started = t.started;
  r.alpha_cnp = t.alpha_cnp;
  r.check_armed = t.check_armed;
  r.rate_armed = t.rate_armed;
  r.rc = t.rc;
  r.rt = t.rt;
  r.alpha = t.alpha;
  r.stage = t.stage;
  r.tnow = t.tnow;
  r.alpha_next = t.alpha_next;
  r.check_at = t.check_at;
  r.rate_next = t.rate_next;
  return r;
}

template <class V>
class DcqcnRpRtlImpl final : public VerilatedAdapter<DcqcnRpRtl, V> {
  using VerilatedAdapter<DcqcnRpRtl, V>::b_;
  using DcqcnRpRtl::regs_;

 public:
  DcqcnRpRtlImpl(const nic::DcqcnRpParams& p, bool traceable)
      : VerilatedAdapter<DcqcnRpRtl, V>(traceable) {
    reset(p);
  }

  void reset(const nic::DcqcnRpParams& p) override {
    nic::DcqcnRpModel::check(p);
    auto& t = b_.top();
    t.line_rate = p.line;
    t.ai_rate = p.ai;
    t.hai_rate = p.hai;
    t.min_rate = p.min;
    t.alpha_period = p.alpha_period;
    t.decrease_period = p.decrease_period;
    t.rate_period = p.rate_period;
    t.check_offset = p.check_offset;
    t.f_steps = p.f;
    t.g_shift = p.g_shift;
    t.cnp = 0;
    t.timer = 0;
    t.now = 0;
    b_.reset_cycle();
    regs_ = read(t);
  }

  nic::DcqcnRpRegs begin(const nic::DcqcnRpIn& in) override {
    auto& t = b_.top();
    t.cnp = in.cnp;
    t.timer = in.timer;
    t.now = in.now;
    b_.eval_low();
    return read(t);
  }
  void finish() override {
    b_.edge();
    regs_ = read(b_.top());
  }
  void set_expected(const nic::DcqcnRpRegs& e, bool mismatch) override {
    auto& t = b_.top();
    t.exp_state = static_cast<CData>(e.state);
    t.exp_started = e.started;
    t.exp_alpha_cnp = e.alpha_cnp;
    t.exp_check_armed = e.check_armed;
    t.exp_rate_armed = e.rate_armed;
    t.exp_rc = e.rc;
    t.exp_rt = e.rt;
    t.exp_alpha = e.alpha;
    t.exp_stage = e.stage;
    t.exp_tnow = e.tnow;
    t.exp_alpha_next = e.alpha_next;
    t.exp_check_at = e.check_at;
    t.exp_rate_next = e.rate_next;
    t.mismatch = mismatch;
  }
};

}  // namespace

std::unique_ptr<DcqcnRpRtl> DcqcnRpRtl::create(const nic::DcqcnRpParams& p, int mutant,
                                               bool traceable) {
  nic::DcqcnRpModel::check(p);
  switch (mutant) {
    case 0:
      return std::make_unique<DcqcnRpRtlImpl<Vdcqcn_rp>>(p, traceable);
    case 1:
      return std::make_unique<DcqcnRpRtlImpl<Vdcqcn_rp_mutant>>(p, traceable);
    case 2:
      return std::make_unique<DcqcnRpRtlImpl<Vdcqcn_rp_mutant2>>(p, traceable);
    case 3:
      return std::make_unique<DcqcnRpRtlImpl<Vdcqcn_rp_mutant3>>(p, traceable);
    case 4:
      return std::make_unique<DcqcnRpRtlImpl<Vdcqcn_rp_mutant4>>(p, traceable);
    default:
      throw std::invalid_argument("DCQCN RTL: mutant " + std::to_string(mutant) +
                                  " is not in [0, " + std::to_string(kMutants) + "]");
  }
}

}  // namespace fabricsim::rtl
