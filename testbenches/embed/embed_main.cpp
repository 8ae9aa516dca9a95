// The fabric embedded in a user's own sc_main, next to another SystemC model: what a user who
// builds a larger virtual platform does. The probe below is that other model: a module of the
// user's that samples the fabric's packet counts every microsecond of simulated time.
//
// Usage: fabricsim_embed CONFIG [--expect-violation] [key=value ...]
// Exits 0 when the run behaved as expected: without the flag, the probe saw traffic grow and
// every end-of-run check held; with it (run under FABRICSIM_FAULT=leak_cell), the checks caught the
// injected fault. Anything else exits 1 with the reason.
#include <cstdio>
#include <string>
#include <vector>

#include <systemc>

#include "models/common/error.h"
#include "models/sim/fabric.h"
#include "models/sim/report.h"

using fabricsim::Time;
using fabricsim::sim::Fabric;

namespace {

SC_MODULE(Probe) {
  const Fabric* fabric = nullptr;
  std::vector<uint64_t> delivered;  // the fabric's delivered count at every sample

  SC_CTOR(Probe) {
    SC_THREAD(sample);
  }

  void sample() {
    for (;;) {
      wait(1, sc_core::SC_US);
      delivered.push_back(fabric->totals().delivered);
    }
  }
};

int fail(const std::string& why) {
  std::fprintf(stderr, "fabricsim_embed: FAILED: %s\n", why.c_str());
  return 1;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  if (argc < 2) return fail("usage: fabricsim_embed CONFIG [--expect-violation] [key=value ...]");
  bool expect_violation = false;
  std::vector<std::string> overrides;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--expect-violation")
      expect_violation = true;
    else
      overrides.push_back(a);
  }
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  try {
    const auto cfg = fabricsim::sim::RunConfig::load(argv[1], overrides);
    Fabric fabric("fabric", cfg);
    Probe probe("probe");
    probe.fabric = &fabric;

    // The user's own schedule: up to the warm-up (where the window's statistics start), then to
    // the end, then a microsecond more for packets on their way out.
    sc_core::sc_start(fabricsim::to_sc(cfg.sim.warmup));
    fabric.open_window();
    sc_core::sc_start(fabricsim::to_sc(cfg.sim.duration - cfg.sim.warmup));
    fabric.stop_traffic();
    sc_core::sc_start(1, sc_core::SC_US);

    const auto end = fabricsim::from_sc(sc_core::sc_time_stamp());
    const auto report = fabricsim::sim::make_report(fabric, "embed", {end, false});
    std::printf(
        "embedded fabric: %d switches, %d hosts; injected %llu delivered %llu dropped %llu "
        "in flight %llu; probe samples %zu; %zu violations\n",
        fabric.switch_count(), fabric.hosts(), static_cast<unsigned long long>(report.injected),
        static_cast<unsigned long long>(report.delivered),
        static_cast<unsigned long long>(report.dropped),
        static_cast<unsigned long long>(report.in_flight), probe.delivered.size(),
        report.violations.size());
    for (const auto& v : report.violations) std::printf("  violation: %s\n", v.c_str());
    if (expect_violation)
      return report.violations.empty() ? fail("the injected fault went unnoticed") : 0;
    if (!report.violations.empty()) return fail("end-of-run checks failed");
    // The probe ran alongside the fabric, once per simulated microsecond before the end (sc_start
    // stops ahead of the events at its end time), and saw it deliver.
    const auto expected = static_cast<size_t>((end.as_fs() - 1) / Time::us(1).as_fs());
    if (probe.delivered.size() != expected)
      return fail("probe sampled " + std::to_string(probe.delivered.size()) + " times, expected " +
                  std::to_string(expected));
    for (size_t i = 1; i < probe.delivered.size(); ++i)
      if (probe.delivered[i] < probe.delivered[i - 1]) return fail("delivered count went down");
    if (probe.delivered.back() == 0 || report.delivered == 0) return fail("nothing delivered");
    if (report.injected != report.delivered + report.dropped + report.in_flight)
      return fail("conservation law broken but not reported");
    return 0;
  } catch (const fabricsim::InputError& e) {
    return fail(e.what());
  }
}
