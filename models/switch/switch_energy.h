// The switch chip's power: what it draws idle (leakage, SerDes, clocks) and what moving data adds.
//
// Hardware: a chip's energy as an architect budgets it: a static part, an energy per bit
// switched (the packet processing and crossbar a bit crosses, from its ingress to its egress)
// and an energy per access to the shared buffer's memory (a cell written, a cell read). The
// parameters matter in proportion to the load: the static part dominates a lightly loaded fabric,
// the per bit and per cell terms a loaded one. Values and tags: docs/hardware-facts.md, "Optics and
// energy" (the 51.2T chip's total is public, its split is not).
#pragma once

#include <cstdint>

#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::sw {

struct SwitchEnergyConfig : config::Configurable {
  double idle_w_per_tbps = 0;  // static power per Tb/s of the chip's capacity (ports x speed)
  double pj_per_bit = 0;       // per bit switched (transmitted by an egress port)
  double pj_per_cell = 0;      // per buffer cell access (a write or a read)

  void visit(config::Visitor& v) override;
  void validate(const config::Checker&) const override {}
};

// A chip of `capacity` (ports x port speed): its static power, and its energy over `span` having
// switched `bits` and accessed `cell_accesses` buffer cells.
double idle_watts(const SwitchEnergyConfig& c, BitRate capacity);
struct SwitchEnergy {
  double idle_j = 0, switching_j = 0, buffer_j = 0;
  double total_j() const { return idle_j + switching_j + buffer_j; }
};
SwitchEnergy switch_energy(const SwitchEnergyConfig& c, BitRate capacity, Time span, uint64_t bits,
                           uint64_t cell_accesses);

}  // namespace fabricsim::sw
