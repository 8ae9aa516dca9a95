// summary.json's `energy` section and energy.csv (docs/results.md, "Energy").
#include <fmt/format.h>

#include "models/common/csv.h"
#include "models/sim/summary_sections.h"

namespace fabricsim::sim {

namespace {

double pj_per_bit(double joules, uint64_t bits) {
  return bits ? joules * 1e12 / static_cast<double>(bits) : 0.0;
}

nlohmann::json link_class_json(const EnergyReport::LinkClass& c, double span_s) {
  const double j = c.watts * span_s;
  return {{"module", c.module}, {"cables", c.cables}, {"power_W", c.watts},
          {"energy_J", j},      {"bits_run", c.bits}, {"pJ_per_bit", pj_per_bit(j, c.bits)}};
}

}  // namespace

void write_energy_section(const RunReport& r, nlohmann::json& j) {
  const EnergyReport& e = r.energy;
  double idle = 0, sw = 0, buf = 0;
  uint64_t bits = 0;
  for (const auto& c : e.switches) {
    idle += c.energy.idle_j;
    sw += c.energy.switching_j;
    buf += c.energy.buffer_j;
    bits += c.bits;
  }
  nlohmann::json calls = nlohmann::json::array();
  for (const auto& c : e.collectives)
    calls.push_back({{"name", c.name},
                     {"energy_J", c.joules},
                     {"bits", c.bits},
                     {"pJ_per_bit", pj_per_bit(c.joules, c.bits)}});
  j["energy"] = {{"span_ns", e.span_s * 1e9},
                 {"energy_J", e.total_j()},
                 {"mean_power_W", e.span_s > 0 ? e.total_j() / e.span_s : 0.0},
                 {"window_power_W", e.window_w()},
                 {"idle_power_W", e.static_w()},
                 {"delivered_pJ_per_bit", pj_per_bit(e.total_j(), e.delivered_bits)},
                 {"switches",
                  {{"count", e.switches.size()},
                   {"energy_J", idle + sw + buf},
                   {"idle_J", idle},
                   {"switching_J", sw},
                   {"buffer_J", buf},
                   {"bits_switched", bits},
                   {"pJ_per_bit", pj_per_bit(idle + sw + buf, bits)}}},
                 {"links",
                  {{"host", link_class_json(e.host, e.span_s)},
                   {"fabric", link_class_json(e.fabric, e.span_s)}}},
                 {"collectives", calls}};
}

std::string energy_csv(const RunReport& r) {
  const EnergyReport& e = r.energy;
  std::string s = "kind,name,module,count,power_W,energy_J,bits,pJ_per_bit\n";
  auto row = [&s](const char* kind, const std::string& name, const std::string& module, size_t n,
                  double w, double j, uint64_t bits) {
    s += fmt::format("{},{},{},{},{:.6f},{:.9g},{},{:.4f}\n", kind, csv_field(name), module, n, w,
                     j, bits, pj_per_bit(j, bits));
  };
  for (const auto& c : e.switches)
    row("switch", c.name, "", 1, e.span_s > 0 ? c.energy.total_j() / e.span_s : 0.0,
        c.energy.total_j(), c.bits);
  row("links", "host", e.host.module, static_cast<size_t>(e.host.cables), e.host.watts,
      e.host.watts * e.span_s, e.host.bits);
  row("links", "fabric", e.fabric.module, static_cast<size_t>(e.fabric.cables), e.fabric.watts,
      e.fabric.watts * e.span_s, e.fabric.bits);
  for (const auto& c : e.collectives) row("collective", c.name, "", 1, 0.0, c.joules, c.bits);
  row("fabric", "total", "", e.switches.size(), e.span_s > 0 ? e.total_j() / e.span_s : 0.0,
      e.total_j(), e.delivered_bits);
  return s;
}

}  // namespace fabricsim::sim
