// The `scale_up:` section: each server's (or rack's) GPUs on a scale-up switch (NVLink/NVSwitch
// class) beside their NICs; the network itself is models/workload/scale_up.h.
//
// Off by default (no preset, gpus 0): every GPU then talks through its NIC, as before. A preset
// gives a sourced system (docs/hardware-facts.md, "Scale-up domains"); gpus, bandwidth and
// latency override it (0: the preset's value).
#pragma once

#include <cstdint>
#include <string>

#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::workload {

struct ScaleUpConfig : config::Configurable {
  std::string preset;        // none | h100_nvlink4 | b200_nvlink5 | gb200_nvl72
  int64_t gpus = 0;          // per domain; 0: the preset's (none: no domain)
  BitRate bandwidth;         // per GPU, each way; 0: the preset's
  Time latency;              // a message's last byte sent to delivered; 0: the preset's
  bool reduce = false;       // the switch reduces and multicasts (NVLS; allreduce_nvls)
  BitRate reduce_bandwidth;  // its reduction engine's result rate per domain; 0: ports only

  // Whether there are scale-up domains at all.
  bool on() const { return preset != "none" || gpus > 0; }
  // The values in force: the given ones, else the preset's.
  int64_t domain_gpus() const;
  BitRate port_rate() const;
  Time port_latency() const;

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
};

}  // namespace fabricsim::workload
