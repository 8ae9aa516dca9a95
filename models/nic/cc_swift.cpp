// Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
// Datacenter", SIGCOMM 2020): a congestion window per QP from the round-trip delay of each ACK
// against a target delay.
//
// Hardware: a NIC reaction point with no switch support: the NIC timestamps each data packet as
// it leaves and reads the time its ACK returns (every packet asks for one: ack_each_packet). Per
// ACK (the paper's Algorithm 1, cwnd in packets):
//   target = base + base_target + h x hops + clamp(fs_alpha / sqrt(cwnd) + fs_beta, 0, fs_range)
//   delay < target:   cwnd += ai / cwnd  (cwnd >= 1),  cwnd += ai  (cwnd < 1)
//   else, if no decrease within the last RTT:
//                     cwnd *= max(1 - beta (delay - target) / delay, 1 - max_mdf)
//   retransmit timeout: cwnd *= 1 - max_mdf, or cwnd = min_cwnd after retx_reset in a row
// within [min_cwnd, max_cwnd]; fs_alpha and fs_beta put the flow-scaling term at fs_range for
// cwnd = fs_min_cwnd and at 0 for fs_max_cwnd. The QP may have floor(cwnd) packets outstanding;
// below one packet it keeps one and is paced at cwnd x mtu / srtt.
//
// The delay: Swift's fabric delay is the RTT the NIC measures less the remote host's delay (its
// NIC timestamps the ACK's turnaround). Ours is from a packet's (last) transmission to its ACK's
// arrival: the fabric both ways plus the receiving NIC's pipeline and ACK generation, and no host
// software (the NIC answers in hardware), i.e. the paper's fabric delay. `base` is 0 (profile
// htsim: its 20 us count from zero, its path's RTT inside) or this QP's zero-load RTT of an MTU
// frame and its ACK (CcPath::base_rtt), so that base_target is a queueing allowance and a long
// path never sits below its own target. What matters: the target (base_target, h, the flow
// scaling), ai, beta and max_mdf (profiles below).
#include <algorithm>
#include <cmath>
#include <string>

#include "models/nic/congestion_control.h"

namespace fabricsim::nic {

namespace {

struct SwiftConfig : config::Configurable {
  std::string profile, target_from;
  Time base_target, hop_scale, fs_range;
  double fs_min_cwnd = 0, fs_max_cwnd = 0, ai = 0, beta = 0, max_mdf = 0, init_cwnd = 0,
         max_cwnd = 0;
  Bytes min_cwnd;
  int64_t retx_reset = 0;

  void visit(config::Visitor& v) override {
    v.choice("profile", profile, "htsim", {"htsim", "custom"},
             "Where the parameters come from: htsim (Broadcom/csg-htsim sim/swift.cpp and "
             "datacenter/main_swift.cpp, the peer of testbenches/peers: base target 20 us from "
             "zero, h = 20 us / 6.55 per hop, fs_range 100 us over 0.1-100 packets, ai 1, beta "
             "0.8, max_mdf 0.5, cwnd 10 B to 1,000 packets starting at 15, reset after 5 "
             "timeouts) [V]; custom (the keys below; their defaults are htsim's but target_from "
             "base_rtt). The other keys apply to custom only. The paper's production values "
             "are not public in full: no paper profile.");
    v.choice("target_from", target_from, "base_rtt", {"base_rtt", "zero"},
             "What the target adds base_target to: base_rtt (this QP's zero-load round trip of "
             "an MTU frame and its ACK, so that base_target is the queueing allowed) or zero "
             "(base_target is the whole delay, as htsim and the paper configure it) [A].");
    v.param("base_target", base_target, Time::us(20), Time(), Time::us(100000),
            "The target's fixed part (htsim's _base_delay 20 us, 'to be confirmed by "
            "experiment') [V].");
    v.param("hop_scale", hop_scale, Time::ps(3053435), Time(), Time::us(1000),
            "h: target added per switch on the path (htsim's _base_delay / 6.55) [V].");
    v.param("fs_range", fs_range, Time::us(100), Time(), Time::us(100000),
            "Flow scaling: the most it adds, at fs_min_cwnd (htsim: 5 x base target) [V].");
    v.param("fs_min_cwnd", fs_min_cwnd, 0.1, 1e-6, 1e6, "packets",
            "Flow scaling is fs_range at this window and below (htsim 0.1) [V].");
    v.param("fs_max_cwnd", fs_max_cwnd, 100.0, 1e-6, 1e6, "packets",
            "Flow scaling is 0 at this window and above (htsim 100) [V].");
    v.param("ai", ai, 1.0, 0.0, 1000.0, "packets",
            "Additive increase per round trip below the target (htsim 1.0) [V].");
    v.param("beta", beta, 0.8, 0.0, 1.0, "",
            "Multiplicative decrease per unit of relative excess delay (htsim 0.8) [V].");
    v.param("max_mdf", max_mdf, 0.5, 0.0, 1.0, "", "Largest cut per round trip (htsim 0.5) [V].");
    v.param("min_cwnd", min_cwnd, Bytes(10), Bytes(1), Bytes(1 << 30),
            "Smallest window (htsim 10 B: 0.0024 packets at 4 KiB, paced) [V].");
    v.param("max_cwnd", max_cwnd, 1000.0, 1.0, 1e7, "packets",
            "Largest window (htsim 1,000 packets) [V].");
    v.param("init_cwnd", init_cwnd, 15.0, 0.001, 1e7, "packets",
            "Window of a new QP (htsim_swift's -cwnd default 15) [V].");
    v.param("retx_reset", retx_reset, 5, 1, 1000, "timeouts",
            "Retransmit timeouts in a row that reset the window to min_cwnd (htsim 5) [V].");
  }
  void validate(const config::Checker& c) const override {
    c.require(fs_min_cwnd < fs_max_cwnd, "fs_min_cwnd", "must be below fs_max_cwnd");
    if (profile != "custom") refuse_keys_beside_profile(c, *this, "nic.swift", "Swift");
  }
};

class Swift : public CongestionControl {
 public:
  Swift(const SwiftConfig& c, BitRate line)
      : c_(c), line_(static_cast<double>(line.as_bps()) / 8) {  // bytes per second
    if (c_.profile == "htsim") c_.target_from = "zero";
    cwnd_ = c_.init_cwnd;
    // Flow scaling: fs_range at fs_min_cwnd, 0 at fs_max_cwnd, in 1/sqrt(cwnd) between.
    const double range = c_.fs_range.as_s();
    fs_alpha_ = range / (1 / std::sqrt(c_.fs_min_cwnd) - 1 / std::sqrt(c_.fs_max_cwnd));
    fs_beta_ = -fs_alpha_ / std::sqrt(c_.fs_max_cwnd);
  }

  void set_path(const CcPath& path) override {
    mtu_ = path.mtu ? path.mtu : 4096;
    min_ = std::min(static_cast<double>(c_.min_cwnd.count()) / mtu_, c_.max_cwnd);
    cwnd_ = std::clamp(cwnd_, min_, c_.max_cwnd);
    fixed_ = c_.base_target.as_s() + c_.hop_scale.as_s() * path.hops;
    if (c_.target_from == "base_rtt") fixed_ += path.base_rtt.as_s();
    srtt_ = path.base_rtt.as_s();
  }

  BitRate rate() const override {
    if (cwnd_ >= 1 || srtt_ <= 0) return BitRate::bps(static_cast<uint64_t>(line_ * 8));
    const double r = std::min(line_, cwnd_ * mtu_ / srtt_);  // one packet per srtt / cwnd
    return BitRate::bps(std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(r * 8))));
  }
  // Whole packets, as the paper's sender and htsim's send only a packet that fits; one when
  // paced.
  uint64_t window() const override {
    return static_cast<uint64_t>(std::max(1.0, std::floor(cwnd_ + 1e-9))) * mtu_;
  }

  void on_ack(Time now, Time rtt) override {
    const double delay = rtt.as_s();
    retx_ = 0;
    // At most one decrease per round trip: the smoothed RTT before this sample (htsim's).
    const bool can_decrease = !decreased_ || (now - last_decrease_).as_s() >= srtt_;
    srtt_ = srtt_ > 0 ? 0.875 * srtt_ + 0.125 * delay : delay;
    const double t = target(cwnd_);
    const double before = cwnd_;
    if (delay < t) {
      cwnd_ += cwnd_ >= 1 ? c_.ai / cwnd_ : c_.ai;  // one packet acknowledged per ACK
    } else if (can_decrease) {
      cwnd_ *= std::max(1 - c_.beta * (delay - t) / delay, 1 - c_.max_mdf);
    }
    bound(now, before);
  }

  void on_timeout(Time now) override {
    const double before = cwnd_;
    if (++retx_ >= c_.retx_reset)
      cwnd_ = min_;
    else if (!decreased_ || (now - last_decrease_).as_s() >= srtt_)
      cwnd_ *= 1 - c_.max_mdf;
    bound(now, before);
  }

  std::vector<std::pair<std::string, double>> state(Time) const override {
    return {{"cwnd_packets", cwnd_}, {"target_ns", target(cwnd_) * 1e9}, {"srtt_ns", srtt_ * 1e9}};
  }

 private:
  // The target delay in seconds at a window of `cwnd` packets.
  double target(double cwnd) const {
    const double fs = std::clamp(fs_alpha_ / std::sqrt(cwnd) + fs_beta_, 0.0, c_.fs_range.as_s());
    return fixed_ + fs;
  }
  void bound(Time now, double before) {
    cwnd_ = std::clamp(cwnd_, min_, c_.max_cwnd);
    if (cwnd_ < before) {
      decreased_ = true;
      last_decrease_ = now;
    }
  }

  SwiftConfig c_;
  double line_;  // bytes per second
  double mtu_ = 4096, min_ = 0;
  double fs_alpha_ = 0, fs_beta_ = 0;  // seconds
  double fixed_ = 0;                   // base + base_target + h x hops, seconds
  double cwnd_ = 1;                    // packets
  double srtt_ = 0;                    // smoothed RTT, seconds
  int64_t retx_ = 0;                   // timeouts in a row
  bool decreased_ = false;
  Time last_decrease_;
};

}  // namespace

FABRICSIM_REGISTER_CC(swift) {
  CcEntry e = cc_entry<SwiftConfig, Swift>(
      "Swift (Kumar et al. 2020): a window from each ACK's round-trip delay against a target "
      "scaled with the path's hops and the flow's window; paced below one packet");
  // An RTT sample per packet, as the paper's per-packet ACKs.
  e.ack_each_packet = [](const config::Configurable&) { return true; };
  e.reads_ecn = false;  // delay alone: its packets are not ECN-capable, no CNPs
  registry.add("swift", std::move(e));
}

}  // namespace fabricsim::nic
