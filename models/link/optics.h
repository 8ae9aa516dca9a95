// The module at each end of a cable: pluggable optics with a DSP, linear-drive (LPO), near- and
// co-packaged optics (NPO, CPO), copper (DAC, ACC), or none modelled.
//
// Hardware: what a link class's cables are built from, as far as it changes a run: the power the
// module draws (per 800G of port rate: it scales with the rate, a constant energy per bit of
// capacity), the latency it adds to each crossing (a DSP's retiming; linear modules add none), its
// reach, and the pre-FEC bit-error rate its links run at (which the FEC model turns into
// uncorrectable codewords and lost frames). Two link classes: host links (NIC to switch) and
// fabric links (switch to switch); `link.optics.host` and `link.optics.fabric` choose each one's
// module. `none` (the default) models no module: no power, no added latency, and the pre-FEC BER
// of link.phy, as before modules existed. Every preset's values and their tags are in
// docs/hardware-facts.md, "Optics and energy".
#pragma once

#include <string>
#include <vector>

#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::link {

struct OpticsModule {
  const char* name;
  double watts_per_800g;  // one module (one end of a cable), at 800 Gb/s of port rate
  Time added_latency;     // one module, each way (a cable has two)
  double reach_m;         // the longest cable it drives (link.length_m is checked against it)
  double pre_fec_ber;     // the links' pre-FEC BER with this module
  const char* what;       // one line for config-docs
};

// The presets, `none` first.
const std::vector<OpticsModule>& optics_modules();
// The preset called `name` (one of optics_modules(); `none` otherwise).
const OpticsModule& optics_module(const std::string& name);

enum class LinkClass { kHost, kFabric };

// One-way latency of each class's links (one Time: both the same).
struct ClassLatency {
  Time host, fabric;
  ClassLatency(Time both = Time()) : host(both), fabric(both) {}  // NOLINT: a Time is both
  ClassLatency(Time h, Time f) : host(h), fabric(f) {}
};

struct OpticsConfig : config::Configurable {
  std::string host;    // module of host links (NIC to switch)
  std::string fabric;  // module of switch-to-switch links

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
  const OpticsModule& module(LinkClass c) const {
    return optics_module(c == LinkClass::kHost ? host : fabric);
  }
};

// A module's power at a port rate (watts; it scales with the rate).
double module_watts(const OpticsModule& m, BitRate rate);

}  // namespace fabricsim::link
