#include "models/traffic/traffic_source.h"

#include <fmt/format.h>

#include "models/common/error.h"
#include "models/traffic/synthetic.h"
#include "models/traffic/trace_replay.h"

namespace fabricsim::traffic {

std::unique_ptr<TrafficSource> make_traffic(const TrafficConfig& cfg, int endpoints,
                                            BitRate port_rate, int tc_count, uint64_t seed,
                                            const std::string& base_dir, FrameOverhead overhead,
                                            const std::vector<uint32_t>& slowdown) {
  const auto fail = [](const std::string& key, const std::string& message) {
    throw InputError(fmt::format("{}: {}", key, message));
  };
  // Repeated here because a TrafficConfig may be built in code, without config::load.
  check_traffic_config(cfg, fail);
  if (endpoints < 1) fail("traffic", fmt::format("need at least 1 endpoint, got {}", endpoints));
  if (port_rate.as_bps() == 0) fail("traffic", "port rate must be > 0");
  if (tc_count < 1) fail("traffic", fmt::format("need at least 1 traffic class, got {}", tc_count));

  if (cfg.pattern == "trace") {
    std::string path = cfg.trace_file;
    if (!base_dir.empty() && path.front() != '/') path = base_dir + "/" + path;
    return std::make_unique<TraceReplay>(path, endpoints, tc_count);
  }

  if (cfg.tc_weights.size() > static_cast<size_t>(tc_count))
    fail("traffic.tc_weights", fmt::format("{} weights given but the device has {} traffic "
                                           "class(es)",
                                           cfg.tc_weights.size(), tc_count));
  if (cfg.pattern == "hotspot" && cfg.hotspot_port >= endpoints)
    fail("traffic.hotspot.port", fmt::format("{} is out of range [0, {}) for {} endpoints",
                                             cfg.hotspot_port, endpoints, endpoints));
  if (cfg.pattern == "incast") {
    if (cfg.incast_target >= endpoints)
      fail("traffic.incast.target", fmt::format("{} is out of range [0, {}) for {} endpoints",
                                                cfg.incast_target, endpoints, endpoints));
    if (cfg.incast_sources > endpoints - 1)
      fail("traffic.incast.sources",
           fmt::format("{} exceeds the {} endpoints other than the target", cfg.incast_sources,
                       endpoints - 1));
  }
  if ((cfg.pattern == "uniform" || cfg.pattern == "hotspot") && !cfg.self && endpoints == 1)
    fail("traffic.self", "false leaves the only endpoint no destination");
  return std::make_unique<SyntheticSource>(cfg, endpoints, port_rate, seed, overhead, slowdown);
}

}  // namespace fabricsim::traffic
