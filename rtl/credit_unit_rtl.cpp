#include "rtl/credit_unit_rtl.h"

#include <stdexcept>
#include <string>

#include "Vcredit_unit.h"
#include "Vcredit_unit_mutant.h"
#include "rtl/verilated_block.h"

namespace fabricsim::rtl {
namespace {

void check_vl(int vl) {
  if (vl < 0 || vl >= CreditUnitRtl::kVls)
    throw std::out_of_range("RTL credit unit: vl " + std::to_string(vl) + " is not in [0, " +
                            std::to_string(CreditUnitRtl::kVls) + ")");
}

void check_initial(uint16_t initial) {
  constexpr uint16_t kMask = link::CreditUnitModel::kMask;  // the 12-bit counters
  if (initial > kMask)
    throw std::invalid_argument("RTL credit unit: initial credits " + std::to_string(initial) +
                                " do not fit the 12-bit counter [0, " + std::to_string(kMask) +
                                "]");
}

template <class V>
class CreditUnitRtlImpl final : public VerilatedAdapter<CreditUnitRtl, V> {
  using VerilatedAdapter<CreditUnitRtl, V>::b_;
  using VerilatedAdapter<CreditUnitRtl, V>::kVls;

 public:
  CreditUnitRtlImpl(uint16_t initial, bool traceable)
      : VerilatedAdapter<CreditUnitRtl, V>(traceable) {
    configure(initial);
  }

  void configure(uint16_t initial) override {
    check_initial(initial);
    b_.top().init_credits = initial;
    reset();
  }

  void reset() override {
    auto& t = b_.top();
    t.send_valid = 0;
    t.upd_valid = 0;
    b_.reset_cycle();
  }
  uint16_t available(int vl) const override {
    check_vl(vl);
    return b_.top().available[vl];
  }
  uint16_t fctbs(int vl) const override {
    check_vl(vl);
    return b_.top().fctbs[vl];
  }
  uint16_t fccl(int vl) const override {
    check_vl(vl);
    return b_.top().fccl[vl];
  }

  link::CreditUnitOut begin(const link::CreditUnitIn& in) override {
    if (in.send_valid) check_vl(in.send_vl);
    if (in.upd_valid) check_vl(in.upd_vl);
    auto& t = b_.top();
    t.send_valid = in.send_valid;
    t.send_vl = in.send_vl;
    t.send_blocks = in.send_blocks;
    t.upd_valid = in.upd_valid;
    t.upd_vl = in.upd_vl;
    t.upd_fccl =
        in.upd_fccl & link::CreditUnitModel::kMask;  // the 12-bit field, as the model uses it
    b_.eval_low();
    return link::CreditUnitOut{static_cast<bool>(t.send_accept), static_cast<bool>(t.send_stall),
                               static_cast<bool>(t.upd_error)};
  }
  void finish() override { b_.edge(); }
  void set_expected(const link::CreditUnitOut& o, const uint16_t* fctbs, const uint16_t* fccl,
                    bool mismatch) override {
    auto& t = b_.top();
    t.exp_send_accept = o.send_accept;
    t.exp_send_stall = o.send_stall;
    t.exp_upd_error = o.upd_error;
    for (int v = 0; v < kVls; ++v) {
      t.exp_fctbs[v] = fctbs[v];
      t.exp_fccl[v] = fccl[v];
      t.exp_available[v] = static_cast<SData>((fccl[v] - fctbs[v]) & link::CreditUnitModel::kMask);
    }
    t.mismatch = mismatch;
  }
};

}  // namespace

std::unique_ptr<CreditUnitRtl> CreditUnitRtl::create(uint16_t initial, bool mutant,
                                                     bool traceable) {
  check_initial(initial);
  if (mutant) return std::make_unique<CreditUnitRtlImpl<Vcredit_unit_mutant>>(initial, traceable);
  return std::make_unique<CreditUnitRtlImpl<Vcredit_unit>>(initial, traceable);
}

}  // namespace fabricsim::rtl
