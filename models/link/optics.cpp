#include "models/link/optics.h"

namespace fabricsim::link {

namespace {

constexpr double kNoLimit = 1e9;

}  // namespace

const std::vector<OpticsModule>& optics_modules() {
  // Tags and sources: docs/hardware-facts.md, "Optics and energy". pre_fec_ber < 0: link.phy's.
  static const std::vector<OpticsModule> m = {
      {"none", 0.0, Time(), kNoLimit, -1.0,
       "no module modelled: no power, no added latency, link.phy.pre_fec_ber"},
      {"dac", 0.0, Time(), 2.0, 1e-8, "passive copper: no power [I], 2 m at 100G a lane [R]"},
      {"acc", 1.5, Time(), 5.0, 1e-7, "active copper (linear redrivers): 1.5 W per 800G end [S]"},
      {"dsp", 15.0, Time::ns(50), 500.0, 1e-7,
       "pluggable optics with a DSP: 14-16 W per 800G [V2], 50 ns of retiming a module [I]"},
      {"lpo", 8.5, Time(), 500.0, 1e-6,
       "linear-drive pluggable: 8-9 W per 800G [V2], no retiming, a worse BER margin [S]"},
      {"npo", 7.0, Time(), 500.0, 1e-7, "near-packaged optics: 7 W per 800G [S]"},
      {"cpo", 5.5, Time(), 500.0, 1e-7, "co-packaged optics: 5.5 W per 800G [V2]"},
  };
  return m;
}

const OpticsModule& optics_module(const std::string& name) {
  for (const OpticsModule& m : optics_modules())
    if (name == m.name) return m;
  return optics_modules().front();
}

double module_watts(const OpticsModule& m, BitRate rate) {
  return m.watts_per_800g * static_cast<double>(rate.as_bps()) / 800e9;
}

void OpticsConfig::visit(config::Visitor& v) {
  std::vector<std::string> names;
  std::string doc;
  for (const OpticsModule& m : optics_modules()) {
    names.emplace_back(m.name);
    doc += std::string(doc.empty() ? "" : "; ") + m.name + ": " + m.what;
  }
  v.choice("host", host, "none", names,
           "Module at each end of a host link (NIC to switch): its power, added latency and "
           "pre-FEC BER (docs/hardware-facts.md, \"Optics and energy\"). " +
               doc + ".");
  v.choice("fabric", fabric, "none", names,
           "Module at each end of a switch-to-switch link (the choices of link.optics.host).");
}

void OpticsConfig::validate(const config::Checker&) const {}

}  // namespace fabricsim::link
