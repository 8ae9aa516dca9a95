#include "models/switch/switch_energy.h"

namespace fabricsim::sw {

void SwitchEnergyConfig::visit(config::Visitor& v) {
  // The 51.2T chip: ~500 W at full load [V2]; the split below is assumed [S]: 300 W static,
  // 150 W of switching at 51.2 Tb/s (2.93 pJ/bit), 50 W of buffer at 2 accesses per 254 B cell
  // (50.4 G accesses/s: 0.99 nJ each).
  v.param("idle_w_per_tbps", idle_w_per_tbps, 5.86, 0.0, 100000.0, "W/(Tb/s)",
          "Static power (leakage, SerDes, clocks) per Tb/s of the chip's capacity, ports x "
          "port_speed (51.2T class: 300 of ~500 W at full load [V2 total, S split]).");
  v.param("pj_per_bit", pj_per_bit, 2.93, 0.0, 100000.0, "pJ/bit",
          "Energy per bit switched, ingress to egress, outside the buffer (51.2T class: 150 W at "
          "51.2 Tb/s [S]).");
  v.param("pj_per_cell", pj_per_cell, 990.0, 0.0, 1e9, "pJ",
          "Energy per buffer cell access, a write or a read (51.2T class: 50 W at two accesses "
          "per 254 B cell at 51.2 Tb/s [S]).");
}

double idle_watts(const SwitchEnergyConfig& c, BitRate capacity) {
  return c.idle_w_per_tbps * static_cast<double>(capacity.as_bps()) * 1e-12;
}

SwitchEnergy switch_energy(const SwitchEnergyConfig& c, BitRate capacity, Time span, uint64_t bits,
                           uint64_t cell_accesses) {
  SwitchEnergy e;
  e.idle_j = idle_watts(c, capacity) * span.as_s();
  e.switching_j = c.pj_per_bit * 1e-12 * static_cast<double>(bits);
  e.buffer_j = c.pj_per_cell * 1e-12 * static_cast<double>(cell_accesses);
  return e;
}

}  // namespace fabricsim::sw
