#include "models/sim/energy_report.h"

#include "models/link/optics.h"
#include "models/switch/switch_energy.h"

namespace fabricsim::sim {

double EnergyReport::switch_j() const {
  double j = 0;
  for (const Chip& c : switches) j += c.energy.total_j();
  return j;
}

double EnergyReport::window_w() const {
  double w = host.watts + fabric.watts;
  for (const Chip& c : switches) w += c.window_w;
  return w;
}

double EnergyReport::static_w() const {
  double w = host.watts + fabric.watts;
  for (const Chip& c : switches) w += span_s > 0 ? c.energy.idle_j / span_s : 0.0;
  return w;
}

EnergyReport energy_report(const Fabric& f, const RunReport& r) {
  EnergyReport e;
  const Time span = r.end_time;
  e.span_s = span.as_s();
  e.window_s = (r.window_end - r.window_start).as_s();
  for (int s = 0; s < f.switch_count(); ++s) {
    const SwitchReport& sr = r.switches[static_cast<size_t>(s)];
    const sw::SwitchEnergyConfig& c = f.switch_config(s).energy;
    EnergyReport::Chip chip;
    chip.name = sr.name;
    chip.kind = sr.kind;
    double window_bits = 0;
    for (int p = 0; p < f.ports(s); ++p) {
      const PortReport& pr = sr.ports[static_cast<size_t>(p)];
      chip.bits += pr.tx_bytes * 8;
      window_bits +=
          pr.accepted_load * static_cast<double>(f.port_rate(s, p).as_bps()) * e.window_s;
    }
    // A cell is written once and read once.
    chip.cell_accesses = 2 * sr.cells_switched;
    const sw::SwitchConfig& sc = f.switch_config(s);
    const BitRate capacity = BitRate::bps(sc.port_speed.as_bps() * static_cast<uint64_t>(sc.ports));
    chip.energy = sw::switch_energy(c, capacity, span, chip.bits, chip.cell_accesses);
    // At the window's load: its bits a second, with the run's cells per bit.
    if (e.window_s > 0) {
      const double cells_per_bit =
          chip.bits ? static_cast<double>(chip.cell_accesses) / static_cast<double>(chip.bits)
                    : 0.0;
      const double bps = window_bits / e.window_s;
      chip.window_w = sw::idle_watts(c, capacity) +
                      (c.pj_per_bit + c.pj_per_cell * cells_per_bit) * 1e-12 * bps;
    }
    e.switches.push_back(std::move(chip));
  }
  const link::OpticsConfig& optics = f.config().link.optics;
  e.host.module = optics.host;
  e.fabric.module = optics.fabric;
  const auto& wires = f.wires();
  for (size_t i = 0; i < wires.size(); ++i) {
    const FabricWire& w = wires[i];
    const bool host = w.a.kind == WireEnd::Kind::kHost;
    EnergyReport::LinkClass& cls = host ? e.host : e.fabric;
    const BitRate rate = host ? f.host_rate(w.a.index) : f.port_rate(w.a.index, w.a.port);
    ++cls.cables;
    // What hosts received: their switch ports' egress (a host link's end b).
    if (host)
      e.delivered_bits +=
          r.switches[static_cast<size_t>(w.b.index)].ports[static_cast<size_t>(w.b.port)].tx_bytes *
          8;
    cls.watts +=
        2 * link::module_watts(
                optics.module(host ? link::LinkClass::kHost : link::LinkClass::kFabric), rate);
  }
  for (const LinkReport& l : r.links)
    (wires[static_cast<size_t>(l.wire)].a.kind == WireEnd::Kind::kHost ? e.host : e.fabric).bits +=
        l.bytes * 8;
  // A call's share: what the fabric draws idle over its span, and the run's energy per bit
  // moved beyond that (switching, buffer) for the bits it sent. Overlapping calls each count the
  // idle power of their overlap (docs/results.md).
  double dynamic_j = 0;
  for (const auto& c : e.switches) dynamic_j += c.energy.switching_j + c.energy.buffer_j;
  const double host_bits = static_cast<double>(e.host.bits - e.delivered_bits);
  for (const auto& x : r.workload.collectives) {
    EnergyReport::Call call;
    call.name = x.name;
    call.bits = static_cast<uint64_t>(static_cast<double>(x.bytes) * 8.0 * x.ranks * x.bus_factor);
    const double t = x.finished ? x.time().as_s() : 0.0;
    call.joules = e.static_w() * t +
                  (host_bits > 0 ? dynamic_j * static_cast<double>(call.bits) / host_bits : 0.0);
    e.collectives.push_back(std::move(call));
  }
  return e;
}

}  // namespace fabricsim::sim
