// DCQCN's notification point: the receiving NIC turns ECN marks into congestion notification
// packets (CNPs) back to the sender, at most one per QP per `interval`.
//
// Hardware: the NP of a RoCE NIC (Zhu et al. 2015: a CNP when a CE-marked packet arrives and no
// CNP was sent for that flow in the last 50 us [R]; NVIDIA NICs expose the interval as
// min_time_between_cnps; their default is not in the facts file, so sweep it). A CNP is a 0-payload
// RoCEv2 packet (BTH opcode 0x81) of the same header stack as an ACK. Plain C++, driven with
// explicit times.
#pragma once

#include <cstdint>
#include <vector>

#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::nic {

struct CnpConfig : config::Configurable {
  static constexpr Time kDefaultInterval = Time::us(50);  // the DCQCN paper's
  Time interval;

  void visit(config::Visitor& v) override;
};

class CnpGenerator {
 public:
  explicit CnpGenerator(const CnpConfig& cfg) : interval_(cfg.interval) {}
  explicit CnpGenerator(Time interval) : interval_(interval) {}

  // A data packet of QP `qpn` arrived at `now`, CE-marked or not: whether a CNP goes back now.
  bool on_packet(uint32_t qpn, bool ce, Time now);

  uint64_t marked() const { return marked_; }
  uint64_t cnps() const { return cnps_; }

 private:
  Time interval_;
  std::vector<Time> last_;  // per QP: when its last CNP went (Time::max(): never)
  uint64_t marked_ = 0, cnps_ = 0;
};

}  // namespace fabricsim::nic
