// The Verilated CRC-32 datapath (rtl/crc32_stream.sv, W = FABRICSIM_RTL_CRC_W bytes per cycle)
// behind link::Crc32BlockIf, plus the two-phase cycle and waveform hooks the harness uses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "models/link/crc32.h"

namespace fabricsim::rtl {

class Crc32Rtl : public link::Crc32BlockIf {
 public:
  static constexpr int kBytes = FABRICSIM_RTL_CRC_W;
  static constexpr int kMutants = 3;
  // mutant 0: the block; 1..kMutants its mutants (docs/cosim.md).
  static std::unique_ptr<Crc32Rtl> create(int mutant = 0, bool traceable = false);

  link::Crc32BeatOut tick(const link::Crc32BeatIn& in) override {
    const link::Crc32BeatOut out = begin(in);
    finish();
    return out;
  }
  int bytes_per_cycle() const override { return kBytes; }

  virtual link::Crc32BeatOut begin(const link::Crc32BeatIn& in) = 0;
  virtual void finish() = 0;
  virtual void set_expected(const link::Crc32BeatOut& out, uint32_t state, bool mismatch) = 0;
  virtual void open_trace(const std::string& path) = 0;
  virtual void close_trace() = 0;
  virtual uint64_t cycle() const = 0;
};

}  // namespace fabricsim::rtl
