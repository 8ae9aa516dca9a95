// The Verilated cell allocator (rtl/cell_alloc.sv, CELLS = FABRICSIM_RTL_CELLS) behind
// sw::CellAllocatorIf, plus the two-phase cycle and waveform hooks the co-simulation harness uses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "models/switch/cell_allocator.h"

namespace fabricsim::rtl {

class CellAllocatorRtl : public sw::CellAllocatorIf {
 public:
  static constexpr uint32_t kCells = FABRICSIM_RTL_CELLS;
  // In reset state (reset() already applied).
  static std::unique_ptr<CellAllocatorRtl> create(bool mutant = false, bool traceable = false);

  sw::CellAllocOut tick(const sw::CellAllocIn& in) override {
    const sw::CellAllocOut out = begin(in);
    finish();
    return out;
  }
  uint32_t cells() const override { return kCells; }

  // tick() in two phases: inputs with clk low (outputs and state before the edge readable), then
  // the edge. The harness compares in between and sets the exp_* ports.
  virtual sw::CellAllocOut begin(const sw::CellAllocIn& in) = 0;
  virtual void finish() = 0;
  virtual void set_expected(const sw::CellAllocOut& out, uint32_t free_count, bool mismatch) = 0;
  virtual void open_trace(const std::string& path) = 0;
  virtual void close_trace() = 0;
  virtual uint64_t cycle() const = 0;
};

}  // namespace fabricsim::rtl
