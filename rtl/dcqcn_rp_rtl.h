// The Verilated DCQCN reaction point (rtl/dcqcn_rp.sv) behind nic::DcqcnRpIf, plus the two-phase
// cycle and waveform hooks the harness uses. Mutants 1..kMutants (docs/cosim.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "models/nic/dcqcn_rp.h"

namespace fabricsim::rtl {

class DcqcnRpRtl : public nic::DcqcnRpIf {
 public:
  static constexpr int kMutants = 4;
  // mutant 0: the block; 1..kMutants: its mutants. Constants checked as by the model
  // (std::invalid_argument).
  static std::unique_ptr<DcqcnRpRtl> create(const nic::DcqcnRpParams& p, int mutant = 0,
                                            bool traceable = false);

  nic::DcqcnRpRegs tick(const nic::DcqcnRpIn& in) override {
    const nic::DcqcnRpRegs out = begin(in);
    finish();
    return out;
  }
  const nic::DcqcnRpRegs& regs() const override { return regs_; }

  // Applies `in` with the clock low; returns the registers (before the edge).
  virtual nic::DcqcnRpRegs begin(const nic::DcqcnRpIn& in) = 0;
  virtual void finish() = 0;
  // The model's registers for the exp_* ports.
  virtual void set_expected(const nic::DcqcnRpRegs& exp, bool mismatch) = 0;
  virtual void open_trace(const std::string& path) = 0;
  virtual void close_trace() = 0;
  virtual uint64_t cycle() const = 0;

 protected:
  nic::DcqcnRpRegs regs_;  // read back after every edge
};

}  // namespace fabricsim::rtl
