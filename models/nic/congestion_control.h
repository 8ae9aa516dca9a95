// Congestion control of an RDMA NIC's QPs, behind one interface, with a registry of algorithms.
//
// Hardware: the reaction point of a NIC's congestion control (per QP): it sets the QP's pacer
// rate (qp_scheduler.h) from what comes back from the network (CNPs for ECN marks, ACKs with
// their round-trip times) and from its own timers and byte counters. Each algorithm is one file
// (listed in FABRICSIM_CCS, models/nic/CMakeLists.txt) that registers its name, description, its
// configuration section and its factory with FABRICSIM_REGISTER_CC; `none` keeps line rate.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/common/registry.h"
#include "models/common/telemetry.h"
#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::nic {

// What the fabric knows of a QP's path at zero load, for the algorithms that need it (HPCC's
// base RTT T, Swift's hop count). Zero where unknown (a NIC without a fabric, in tests).
struct CcPath {
  Time base_rtt;      // this QP's path: an MTU data frame to the peer and its ACK back
  Time max_base_rtt;  // the largest over the fabric's paths (HPCC's one T for all flows)
  int hops = 0;       // switches on the way to the peer
  uint32_t mtu = 0;   // payload bytes of a full packet (nic.packet.mtu)
};

class CongestionControl {
 public:
  virtual ~CongestionControl() = default;
  // Once, as the QP is created, before anything else.
  virtual void set_path(const CcPath& path) { (void)path; }
  // The QP's pacer rate now (at most the line rate).
  virtual BitRate rate() const = 0;
  // The QP sent a packet of `bytes` at `now`.
  virtual void on_send(Time now, uint64_t bytes) {
    (void)now;
    (void)bytes;
  }
  // A congestion notification (CNP) for this QP arrived at `now`.
  virtual void on_cnp(Time now) { (void)now; }
  // An ACK that acknowledged new data arrived at `now`; `rtt`: from the newest packet it
  // acknowledges leaving the NIC (its last transmission) to now.
  virtual void on_ack(Time now, Time rtt) {
    (void)now;
    (void)rtt;
  }
  // The QP's retransmit timer expired at `now` (Swift cuts its window).
  virtual void on_timeout(Time now) { (void)now; }
  // An ACK for an algorithm registered with `ecn_echo` (NSCC), before on_ack: `bytes` of payload
  // it newly acknowledged, `ece` whether the data packet that prompted it arrived CE-marked, and
  // `rtt` as on_ack, or Time::max() when it acknowledged nothing new.
  virtual void on_echo(Time now, Time rtt, uint64_t bytes, bool ece) {
    (void)now;
    (void)rtt;
    (void)bytes;
    (void)ece;
  }
  // A NACK (RUD): a packet of `bytes` of payload was trimmed on the way (lost to congestion).
  virtual void on_nack(Time now, uint64_t bytes) {
    (void)now;
    (void)bytes;
  }
  // The QP's congestion window in payload bytes sent and not yet acknowledged (0: none; the
  // pacer's rate alone limits it). Window-based algorithms (HPCC, Swift) set it; the transport
  // then keeps at most ceil(window / mtu) packets outstanding, never more than its own window.
  virtual uint64_t window() const { return 0; }
  // The ACK just taken (on_ack follows) reflects the INT stack `tel` of the data packet that
  // prompted it (algorithms registered with `telemetry`: HPCC); `rtt` as on_ack.
  virtual void on_telemetry(Time now, Time rtt, const IntStack& tel) {
    (void)now;
    (void)rtt;
    (void)tel;
  }
  // When it wants on_timer() next (Time::max(): no timer armed), and the timer.
  virtual Time next_timer() const { return Time::max(); }
  virtual void on_timer(Time now) { (void)now; }
  // Its internal state at `now` by name (DCQCN: alpha, target rate), for traces and tests.
  virtual std::vector<std::pair<std::string, double>> state(Time now) const {
    (void)now;
    return {};
  }
};

// A registered algorithm: its configuration section (defaults, keys, checks) and its factory.
struct CcEntry {
  std::string description;
  std::function<std::unique_ptr<config::Configurable>()> make_config;
  std::function<std::unique_ptr<CongestionControl>(const config::Configurable&, BitRate line)> make;
  // The CNP spacing at the receiver's notification point the configuration implies (a DCQCN
  // profile's), or Time::max(): nic.cnp.interval applies. Null: the same as Time::max().
  std::function<Time(const config::Configurable&)> np_interval;
  // It reads in-band telemetry: the NIC's data packets carry an INT header (its bytes in their
  // size), ask for an ACK each, and the ACKs reflect the switches' stacks (on_telemetry). Its
  // data packets are not ECN-capable (HPCC reacts to INT alone).
  bool telemetry = false;
  // Whether the configuration has every data packet ask for an ACK (AckReq), for an RTT sample
  // per packet (Swift; TIMELY's profile hpcc, whose source ACKs every packet); implied by
  // `telemetry`. Null: no (the responder's rc.ack_every applies).
  std::function<bool(const config::Configurable&)> ack_each_packet = nullptr;
  // It reads ECN marks (its data packets are ECN-capable, the receivers send CNPs). False for
  // the schemes that read delay (Swift) or INT (HPCC) alone.
  bool reads_ecn = true;
  // It reacts to CNPs (on_cnp): only then does the notification point's spacing (nic.cnp) act
  // on a rate. TIMELY's packets are ECN-capable and draw CNPs, which it ignores.
  bool reacts_to_cnp = false;
  // The responder echoes each data packet's CE mark on the ACK it prompts (on_echo) instead of
  // sending CNPs (NSCC). With `ack_bytes` > 0 it acknowledges one ACK per that many payload
  // bytes placed in order, and at once a CE-marked, out-of-order or repeated packet and one
  // asking (AckReq: a message's last, a retransmission, one that fills the window). Both need
  // the rud transport (its SACKs make coalesced ACKs safe); other transports are refused.
  bool ecn_echo = false;
  uint32_t ack_bytes = 0;
};

// The entry of an algorithm with one configuration section `Config` and one class `Algorithm`
// built from it and the line rate (the usual case; the flags set after).
template <class Config, class Algorithm>
CcEntry cc_entry(std::string description) {
  return CcEntry{
      std::move(description), [] { return std::make_unique<Config>(); },
      [](const config::Configurable& c, BitRate line) -> std::unique_ptr<CongestionControl> {
        return std::make_unique<Algorithm>(static_cast<const Config&>(c), line);
      },
      nullptr};
}

class CcRegistry {
 public:
  // Every algorithm of this library (FABRICSIM_CCS).
  static const CcRegistry& global();
  void add(const std::string& name, CcEntry e) { entries_.add(name, std::move(e)); }
  const CcEntry& at(const std::string& name) const { return entries_.at(name); }
  const std::vector<std::string>& names() const { return entries_.names(); }

 private:
  Registry<CcEntry> entries_{"congestion control"};
};

// A named profile sets every parameter from its source, so a key set beside it would do
// nothing: each such key fails `c` (`section`: "nic.hpcc", `what`: "HPCC"). `cfg` is a copy,
// since keys_off_default visits it; its profile is named (not custom). `also`: keys that choose
// how the profile is computed rather than a parameter (DCQCN's arithmetic and impl).
template <class Config>
void refuse_keys_beside_profile(const config::Checker& c, Config cfg, const std::string& section,
                                const std::string& what,
                                const std::vector<std::string>& also = {}) {
  for (const std::string& key : config::keys_off_default(cfg))
    if (key != "profile" && std::find(also.begin(), also.end(), key) == also.end())
      c.fail(key, "applies only with " + section + ".profile: custom (profile " + cfg.profile +
                      " sets every " + what + " parameter from its source)");
}

// In each algorithm's .cpp:  FABRICSIM_REGISTER_CC(dcqcn) { registry.add("dcqcn", {...}); }
#define FABRICSIM_REGISTER_CC(id) void register_cc_##id(CcRegistry& registry)

}  // namespace fabricsim::nic
