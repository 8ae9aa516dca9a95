// Traffic sources: synthetic generators and trace replay, behind one pull interface.
//
// Models the hosts attached to the fabric: each endpoint e in [0, endpoints) injects packets into
// its own switch port (port e with topology.kind single; the topology maps hosts to ports
// otherwise) at most at line rate (a packet's first bit never starts before the previous packet of
// the same endpoint has been fully serialised). The stream is merged across endpoints in time
// order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/common/packet.h"
#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::traffic {

// Keys under `traffic:` in a run configuration.
struct TrafficConfig : config::Configurable {
  std::string pattern;  // uniform | permutation | hotspot | incast | all_to_all | trace | messages
  double load = 0;      // offered load per endpoint, fraction of line rate
  std::string arrival;  // bernoulli | onoff
  double burst_packets = 0;          // onoff: mean packets per on period (geometric)
  Bytes size;                        // fixed packet size, when `sizes` is empty
  std::vector<double> sizes;         // optional size distribution: packet sizes in bytes ...
  std::vector<double> size_weights;  // ... and their relative weights (same length)
  std::vector<double> tc_weights;    // relative share of each traffic class; empty = all tc 0
  bool ect = false;                  // packets are ECN-capable
  bool self = true;                  // uniform/hotspot: may a source send to its own port
  int64_t hotspot_port = 0;          // hotspot: the hot destination
  double hotspot_fraction = 0;       // hotspot: fraction of each source's packets sent to it
  int64_t incast_target = 0;         // incast: destination port
  int64_t incast_sources = 0;        // incast: number of senders (0 = all other ports)
  std::string trace_file;            // trace: path, relative to the config file's folder
  // NIC runs (models/nic/message_workload.h): the messages the synthetic patterns generate, and
  // pattern messages' workload file (relative to the config file's folder). Initialised to the
  // documented defaults, so that configurations built in code that predate them stay valid.
  Bytes message_size{64 * 1024};
  std::string message_verb = "write";  // send | write | write_imm | read
  std::string messages_file;

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
};

class TrafficSource {
 public:
  virtual ~TrafficSource() = default;
  // Fills `p` with the next packet in non-decreasing inject_time order (ties: lower src first) and
  // returns true, or returns false when the source is exhausted (synthetic sources never are).
  // Packet ids are 0, 1, 2, ... in the order returned.
  virtual bool next(Packet& p) = 0;
  // The next packets of the same stream into out[0, n), 1 <= n <= max, and returns n; 0 when the
  // source is exhausted. One call per batch instead of one per packet, for sources that have
  // several at hand (by default, one packet a call).
  virtual size_t next_batch(Packet* out, size_t /*max*/) { return next(*out) ? 1 : 0; }
  // A finite workload (a trace): how many packets it holds, all of which the run must send
  // (the run drains until they are, and a run that ends with some unsent fails its liveness
  // check; a packet whose host queue is full waits for room instead of being refused, see
  // models/host/hosts_module.h); 0 for an endless source (synthetic: a packet that finds its
  // host queue full is refused, as an open-loop sender's).
  virtual uint64_t workload_packets() const { return 0; }
};

// The largest packet the network can carry (the device's buffer, a credit receive buffer) and the
// configuration key that sets it; by default the 16-bit length field's limit.
struct PacketLimit {
  int64_t bytes = 65535;
  std::string key;
};

// `endpoints`: number of hosts (= switch ports); `port_rate`: their line rate; `seed`: run seed
// (streams are derived per endpoint); `base_dir`: folder that relative trace paths resolve against.
// `tc_count` is the number of traffic classes the device supports (tc_weights must not exceed it).
// Throws InputError for a bad trace (names the file and line) or inconsistent parameters, e.g. a
// packet larger than `limit`.
std::unique_ptr<TrafficSource> make_traffic(const TrafficConfig& cfg, int endpoints,
                                            BitRate port_rate, int tc_count, uint64_t seed,
                                            const std::string& base_dir,
                                            FrameOverhead overhead = {},
                                            const std::vector<uint32_t>& slowdown = {},
                                            const PacketLimit& limit = {});

}  // namespace fabricsim::traffic
