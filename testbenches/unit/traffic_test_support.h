// Helpers shared by the traffic library's tests (traffic_test.cpp, traffic_trace_replay_test.cpp).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "models/traffic/traffic_source.h"

namespace fabricsim::traffic::test {

inline const BitRate kRate = BitRate::gbps(100);
inline const std::string kSourceDir = FABRICSIM_SOURCE_DIR;

// The documented defaults, set in code (independent of the YAML loader).
inline TrafficConfig base_config() {
  TrafficConfig c;
  c.pattern = "uniform";
  c.load = 0.5;
  c.arrival = "bernoulli";
  c.burst_packets = 8;
  c.size = Bytes(64);
  c.self = true;
  c.hotspot_port = 0;
  c.hotspot_fraction = 0.5;
  c.incast_target = 0;
  c.incast_sources = 0;
  return c;
}

inline std::unique_ptr<TrafficSource> make(const TrafficConfig& c, int endpoints, uint64_t seed = 1,
                                           int tc_count = 8) {
  return make_traffic(c, endpoints, kRate, tc_count, seed, "");
}

inline std::vector<Packet> take(TrafficSource& s, size_t n) {
  std::vector<Packet> v;
  Packet p;
  while (v.size() < n && s.next(p)) v.push_back(p);
  return v;
}

class TempFile {
 public:
  TempFile(const std::string& suffix, const std::string& text) {
    char name[] = "/tmp/fabricsim_traffic_XXXXXX";
    const int fd = mkstemp(name);
    close(fd);
    std::remove(name);
    path_ = std::string(name) + suffix;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace fabricsim::traffic::test
