#include "models/traffic/traffic_source.h"

#include <fmt/format.h>

#include "models/common/error.h"
#include "models/traffic/synthetic.h"
#include "models/traffic/trace_replay.h"

namespace fabricsim::traffic {

std::unique_ptr<TrafficSource> make_traffic(const TrafficConfig& cfg, int endpoints,
                                            BitRate port_rate, int tc_count, uint64_t seed,
                                            const std::string& base_dir, FrameOverhead overhead,
                                            const std::vector<uint32_t>& slowdown,
                                            const PacketLimit& limit) {
  const auto fail = [](const std::string& key, const std::string& message) {
    throw InputError(fmt::format("{}: {}", key, message));
  };
  // Repeated here because a TrafficConfig may be built in code, without config::load.
  check_traffic_config(cfg, fail);
  check_traffic_endpoints(cfg, endpoints, tc_count, fail);
  check_packet_limit(cfg, limit, fail);
  if (port_rate.as_bps() == 0) fail("traffic", "port rate must be > 0");

  // Messages drive NICs (models/nic/message_workload.h), not hosts that inject packets.
  if (cfg.pattern == "messages" || cfg.pattern == "workload")
    fail("traffic.pattern", cfg.pattern + " is a NIC workload: it needs nic.enabled");
  if (cfg.pattern == "trace") {
    std::string path = cfg.trace_file;
    if (!base_dir.empty() && path.front() != '/') path = base_dir + "/" + path;
    return std::make_unique<TraceReplay>(path, endpoints, tc_count, limit);
  }

  return std::make_unique<SyntheticSource>(cfg, endpoints, port_rate, seed, overhead, slowdown);
}

}  // namespace fabricsim::traffic
