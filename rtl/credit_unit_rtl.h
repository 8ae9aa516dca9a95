// The Verilated credit unit (rtl/credit_unit.sv, VLS = FABRICSIM_RTL_VLS virtual lanes) behind
// link::CreditUnitIf, plus the two-phase cycle and waveform hooks the harness uses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "models/link/credit_unit.h"

namespace fabricsim::rtl {

class CreditUnitRtl : public link::CreditUnitIf {
 public:
  static constexpr int kVls = FABRICSIM_RTL_VLS;
  // initial_credits_per_vl in [0, 4095] (std::invalid_argument otherwise); FCCL after reset.
  static std::unique_ptr<CreditUnitRtl> create(uint16_t initial_credits_per_vl, bool mutant = false,
                                               bool traceable = false);

  link::CreditUnitOut tick(const link::CreditUnitIn& in) override {
    const link::CreditUnitOut out = begin(in);
    finish();
    return out;
  }

  // New initial credits (sampled in reset), then reset().
  virtual void configure(uint16_t initial_credits_per_vl) = 0;
  // VLs >= kVls are rejected with std::out_of_range, as by the model.
  virtual link::CreditUnitOut begin(const link::CreditUnitIn& in) = 0;
  virtual void finish() = 0;
  // The model's outputs and its counters before the edge (kVls each) for the exp_* ports.
  virtual void set_expected(const link::CreditUnitOut& out, const uint16_t* fctbs,
                            const uint16_t* fccl, bool mismatch) = 0;
  virtual void open_trace(const std::string& path) = 0;
  virtual void close_trace() = 0;
  virtual uint64_t cycle() const = 0;
};

}  // namespace fabricsim::rtl
