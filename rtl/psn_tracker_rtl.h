// The Verilated receive tracker (rtl/psn_tracker.sv) behind nic::PsnTrackerIf, plus the
// two-phase cycle and waveform hooks the harness uses. Mutants 1..kMutants (docs/cosim.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "models/nic/psn_tracker.h"

namespace fabricsim::rtl {

class PsnTrackerRtl : public nic::PsnTrackerIf {
 public:
  static constexpr int kMutants = 4;
  // mutant 0: the block; 1..kMutants: its mutants. Parameters checked as by the model.
  static std::unique_ptr<PsnTrackerRtl> create(const nic::PsnTrackerParams& p, int mutant = 0,
                                               bool traceable = false);

  nic::PsnTrackerOut tick(const nic::PsnTrackerIn& in) override {
    const nic::PsnTrackerOut out = begin(in);
    finish();
    return out;
  }
  virtual nic::PsnTrackerOut begin(const nic::PsnTrackerIn& in) = 0;
  virtual void finish() = 0;
  // The model's outputs and its state before the edge, for the exp_* ports.
  virtual void set_expected(const nic::PsnTrackerOut& out, uint32_t epsn, const uint64_t* ahead,
                            uint32_t unacked, bool nak_sent, bool mismatch) = 0;
  virtual void open_trace(const std::string& path) = 0;
  virtual void close_trace() = 0;
  virtual uint64_t cycle() const = 0;
};

}  // namespace fabricsim::rtl
