// NSCC, the Ultra Ethernet Consortium's network-signal congestion control (UEC 1.0 CMS) for the
// RUD transport: a window per QP from each ACK's ECN echo and its queuing delay against a target.
//
// Hardware: a UET sender (PDS/CCC) with no switch support beyond ECN marking (and trimming): the
// responder echoes a data packet's CE mark on its ACK and acknowledges every 16 KB (or at once
// on a mark); the sender timestamps each packet. Per ACK, with delay = RTT - base RTT (the
// smallest RTT seen, starting at the fabric's), `bytes` newly acknowledged:
//   no mark, delay >= target:  fair increase           inc += fi x bytes
//   no mark, delay <  target:  proportional increase   inc += alpha x bytes x (target - delay)
//                              (fast increase instead, cwnd += fi_scale x bytes, once a window's
//                              worth of ACKs in a row saw delay < 1 us)
//   mark,    delay >= target:  multiplicative decrease, at most once per base RTT, by the
//                              smoothed delay D: cwnd x max(1 - gamma (D - target) / D, md_floor)
//   mark,    delay <  target:  nothing to the window (htsim moves the flow's next packets to
//                              other paths; FabricSim's RUD sprays every packet on a new entropy
//                              already, so there is no path to leave: see below)
// and every 8 MTUs acknowledged or network RTT: cwnd += inc / cwnd, plus eta once per network
// RTT. Quick adapt: once per base RTT + target, after a NACK (trimmed packet) or a delay above
// 4 x target, a window that delivered less than max_window / 2^qa_gate is set to what it
// delivered. A NACK takes its packet's bytes off the window, a timeout one MTU. The window
// stays within [one MTU, max_window x the base BDP]. D moves by delay_ewma per sample, towards
// a quarter of the base RTT for an unmarked sample above the target (a delay the network did
// not mark is not taken as congestion). Constants scale with the fabric: alpha, fi, eta and
// fi_scale by its BDP over 100 Gb/s x 12 us, alpha also by target / 12 us.
//
// Path change: uet-htsim's load balancers penalise an entropy whose ACK came back marked; RUD
// here cycles every QP's entropy through all 256 values per packet (oblivious spraying, nic.h),
// with no per-path state, so "mark but delay below target" leaves the window alone and the next
// packet takes another path anyway. Profiles below; docs/hardware-facts.md, NSCC.
#include <algorithm>
#include <cmath>
#include <string>

#include "models/nic/congestion_control.h"

namespace fabricsim::nic {

namespace {

struct NsccConfig : config::Configurable {
  std::string profile;
  double target = 0, gamma = 0, md_floor = 0, max_window = 0, init_window = 0, fair_increase = 0,
         prop_increase = 0, eta = 0, fast_scale = 0, qa_threshold = 0, delay_ewma = 0;
  int64_t qa_gate = 0;
  bool quick_adapt = true;
  Time fast_below, ref_rtt, base_rtt;
  BitRate ref_rate;

  void visit(config::Visitor& v) override {
    v.choice("profile", profile, "uet_htsim", {"uet_htsim", "custom"},
             "Where the parameters come from: uet_htsim (ultraethernet/uet-htsim sim/uec.cpp "
             "initNsccParams/initNscc and datacenter/main_uec.cpp with trimming on, as it "
             "defaults: target 0.75 network RTT, gamma 0.8, decrease floor 0.5, window 1.5 "
             "BDP starting full, fair increase 5 MSS, proportional 4 MSS, eta 0.15 MSS, fast "
             "increase 0.25 below 1 us, quick adapt gate 2^3 and threshold 4 x target, delay "
             "EWMA 0.0125, scaled from 100 Gb/s x 12 us; base RTT the fabric's largest) [V]; "
             "custom (the keys below, uet_htsim's values by default). The other keys apply to "
             "custom only.");
    v.param("target", target, 0.75, 0.01, 100.0, "network RTTs",
            "Target queuing delay (uet-htsim: 0.75 x the network RTT with trimming, 1.0 "
            "without) [V].");
    v.param("gamma", gamma, 0.8, 0.0, 1.0, "",
            "Multiplicative decrease per unit of relative excess delay (uet-htsim _gamma) [V].");
    v.param("md_floor", md_floor, 0.5, 0.0, 1.0, "",
            "The most one decrease keeps at least (uet-htsim: x 0.5) [V].");
    v.param("max_window", max_window, 1.5, 0.1, 100.0, "BDPs",
            "Window ceiling and start, in base RTT x line rate (uet-htsim 1.5) [V].");
    v.param("init_window", init_window, 0.0, 0.0, 100.0, "BDPs",
            "Window of a new QP; 0: max_window (uet-htsim's -cwnd default 0: the ceiling) [V].");
    v.param("fair_increase", fair_increase, 5.0, 0.0, 1000.0, "MSS",
            "fi: fair increase per byte acknowledged above the target, x the BDP scaling "
            "(uet-htsim 5 MSS) [V].");
    v.param("prop_increase", prop_increase, 4.0, 0.0, 1000.0, "MSS",
            "alpha: proportional increase below the target, 4 MSS x both scalings / target "
            "(uet-htsim) [V].");
    v.param("eta", eta, 0.15, 0.0, 1000.0, "MSS",
            "Added once per network RTT (uet-htsim 0.15 MSS x the BDP scaling) [V].");
    v.param("fast_scale", fast_scale, 0.25, 0.0, 100.0, "",
            "Fast increase: window growth per byte acknowledged, x the BDP scaling (uet-htsim "
            "_fi_scale 0.25) [V].");
    v.param("fast_below", fast_below, Time::us(1), Time(), Time::us(1000),
            "Fast increase once a window of ACKs in a row saw less delay than this (uet-htsim "
            "1 us) [V].");
    v.param("quick_adapt", quick_adapt, true,
            "Quick adapt: after a NACK or a delay above qa_threshold, a window that delivered "
            "less than max_window / 2^qa_gate in a base RTT + target is set to what it did "
            "(uet-htsim on) [V].");
    v.param("qa_gate", qa_gate, 3, 0, 20, "", "Quick adapt gate 2^qa_gate (uet-htsim 3) [V].");
    v.param("qa_threshold", qa_threshold, 4.0, 0.0, 1000.0, "targets",
            "Quick adapt on a delay above this many targets (uet-htsim 4) [V].");
    v.param("delay_ewma", delay_ewma, 0.0125, 1e-6, 1.0, "",
            "Weight of a delay sample in the smoothed delay (uet-htsim _delay_alpha) [V].");
    v.param("ref_rtt", ref_rtt, Time::us(12), Time::ns(1), Time::us(100000),
            "Reference RTT of the scalings (uet-htsim 12 us) [V].");
    v.param("ref_rate", ref_rate, BitRate::gbps(100), BitRate::bps(1), BitRate::gbps(1600),
            "Reference rate of the scalings (uet-htsim 100 Gb/s) [V].");
    v.param("base_rtt", base_rtt, Time(), Time(), Time::us(100000),
            "Network RTT and first base RTT: 0 for the fabric's largest zero-load round trip "
            "of an MTU frame and its ACK (uet-htsim's network_max_unloaded_rtt), else this.");
  }
  void validate(const config::Checker& c) const override {
    if (profile != "custom") refuse_keys_beside_profile(c, *this, "nic.nscc", "NSCC");
  }
};

class Nscc : public CongestionControl {
 public:
  Nscc(const NsccConfig& c, BitRate line)
      : c_(c), line_(static_cast<double>(line.as_bps()) / 8) {}  // bytes per second

  void set_path(const CcPath& path) override {
    mtu_ = path.mtu ? path.mtu : 4096;
    const Time t = c_.base_rtt > Time() ? c_.base_rtt : path.max_base_rtt;
    net_rtt_ = base_rtt_ = t.as_s();
    if (net_rtt_ <= 0) return;  // no fabric known: line rate, no window (a NIC alone in a test)
    target_ = c_.target * net_rtt_;
    const double ref = c_.ref_rtt.as_s();
    const double a = net_rtt_ * line_ / (static_cast<double>(c_.ref_rate.as_bps()) / 8 * ref);
    const double b = target_ / ref;
    alpha_ = c_.prop_increase * mtu_ * a * b / target_;
    fi_ = c_.fair_increase * mtu_ * a;
    eta_ = c_.eta * mtu_ * a;
    fi_scale_ = c_.fast_scale * a;
    max_ = c_.max_window * base_rtt_ * line_;
    cwnd_ = c_.init_window > 0 ? c_.init_window * base_rtt_ * line_ : max_;
    bound();
  }

  BitRate rate() const override { return BitRate::bps(static_cast<uint64_t>(line_ * 8)); }
  // Whole packets: a packet goes when it fits (uet-htsim's can_send), at least one.
  uint64_t window() const override {
    if (net_rtt_ <= 0) return 0;
    return static_cast<uint64_t>(std::max(1.0, std::floor(cwnd_ / mtu_ + 1e-9))) * mtu_;
  }

  void on_echo(Time now, Time rtt, uint64_t bytes, bool ece) override {
    if (net_rtt_ <= 0) return;
    const double t = now.as_s(), acked = static_cast<double>(bytes);
    achieved_ += acked;
    received_ += acked;
    ignored_ += acked;
    double delay = avg_;
    if (rtt != Time::max()) {
      const double raw = rtt.as_s();
      if (raw < base_rtt_) {  // a shorter round trip: the base, and the ceiling with it
        base_rtt_ = raw;
        max_ = c_.max_window * base_rtt_ * line_;
      }
      if (raw >= base_rtt_) {
        delay = raw - base_rtt_;
        smooth(delay, ece);
      }
    }
    law(t, ece, delay, acked);
  }

  void on_nack(Time now, uint64_t bytes) override {
    if (net_rtt_ <= 0) return;
    ignored_ += static_cast<double>(bytes);
    smooth(net_rtt_, true);  // a trim: the queue was at the switch's limit, ~a network RTT
    trigger_qa_ = true;
    if (!quick_adapt(now.as_s(), true, true, 0)) {
      cwnd_ -= static_cast<double>(bytes);
      bound();
    }
  }

  void on_timeout(Time) override {
    if (net_rtt_ <= 0) return;
    cwnd_ -= mtu_;  // the packet marked for retransmission leaves the window
    bound();
  }

  std::vector<std::pair<std::string, double>> state(Time) const override {
    return {{"cwnd_bytes", cwnd_},
            {"avg_delay_ns", avg_ * 1e9},
            {"target_ns", target_ * 1e9},
            {"base_rtt_ns", base_rtt_ * 1e9}};
  }

 private:
  void law(double now, bool ece, double delay, double acked) {
    if (quick_adapt(now, false, ece, delay)) return;
    if (!ece && delay >= target_) {
      inc_ += fi_ * acked;  // fair increase
    } else if (!ece) {
      if (!fast_increase(acked, delay)) inc_ += alpha_ * acked * (target_ - delay);
    } else if (delay >= target_) {
      decrease(now);
    }  // marked below the target: the window stays
    bound();
    if (received_ > 8.0 * mtu_ || now - last_adjust_ > net_rtt_) fulfill(now);
    bound();
  }

  // Whether it grew the window fast (a window's worth of ACKs in a row below fast_below).
  bool fast_increase(double acked, double delay) {
    if (delay < c_.fast_below.as_s()) {
      fi_count_ += acked;
      if (fi_count_ > cwnd_ || increasing_) {
        cwnd_ += acked * fi_scale_;
        increasing_ = true;
        return true;
      }
    } else {
      fi_count_ = 0;
    }
    increasing_ = false;
    return false;
  }

  void decrease(double now) {
    increasing_ = false;
    fi_count_ = 0;
    if (avg_ > target_ && now - last_decrease_ > base_rtt_) {
      cwnd_ *= std::max(1 - c_.gamma * (avg_ - target_) / avg_, c_.md_floor);
      last_decrease_ = now;
    }
  }

  // The increases gathered since the last adjustment, and eta once per network RTT.
  void fulfill(double now) {
    cwnd_ += inc_ / cwnd_;
    if (now - last_adjust_ >= net_rtt_) {
      cwnd_ += eta_;
      last_adjust_ = now;
    }
    inc_ = received_ = 0;
  }

  // Whether quick adapt took this ACK (it cut the window, or ignores marks for the window of
  // bytes in flight after a cut).
  bool quick_adapt(double now, bool loss, bool ece, double delay) {
    if (!c_.quick_adapt) return false;
    bool took = false;
    if (ignored_ < to_ignore_ && ece) {
      took = true;
    } else if (now > qa_end_) {
      if (qa_armed_ && (trigger_qa_ || loss || delay > c_.qa_threshold * target_) &&
          achieved_ < max_ / std::ldexp(1.0, static_cast<int>(c_.qa_gate))) {
        // What is in flight is about the window before the cut (uet-htsim counts it).
        to_ignore_ = cwnd_;
        cwnd_ = std::max(achieved_, static_cast<double>(mtu_));
        ignored_ = 0;
        trigger_qa_ = false;
        took = true;
      }
      achieved_ = 0;
      qa_end_ = now + base_rtt_ + target_;
      qa_armed_ = true;
    }
    if (took) inc_ = received_ = 0;
    return took;
  }

  void smooth(double delay, bool ece) {
    const double a = c_.delay_ewma;
    avg_ = (1 - a) * avg_ + a * (!ece && delay > target_ ? base_rtt_ * 0.25 : delay);
  }

  void bound() { cwnd_ = std::clamp(cwnd_, static_cast<double>(mtu_), std::max(max_, 1.0 * mtu_)); }

  NsccConfig c_;
  double line_;  // bytes per second
  double mtu_ = 4096;
  double net_rtt_ = 0, base_rtt_ = 0, target_ = 0;  // seconds
  double alpha_ = 0, fi_ = 0, eta_ = 0, fi_scale_ = 0;
  double max_ = 0, cwnd_ = 0;  // bytes
  double avg_ = 0;             // smoothed delay, seconds
  double inc_ = 0;             // increases gathered (bytes^2) until the next adjustment
  double achieved_ = 0, received_ = 0, ignored_ = 0, to_ignore_ = 0, fi_count_ = 0;  // bytes
  double last_adjust_ = 0, last_decrease_ = 0, qa_end_ = 0;                          // seconds
  bool qa_armed_ = false, trigger_qa_ = false, increasing_ = false;
};

}  // namespace

FABRICSIM_REGISTER_CC(nscc) {
  CcEntry e = cc_entry<NsccConfig, Nscc>(
      "NSCC (UEC 1.0, uet-htsim): a window from each ACK's ECN echo and queuing delay against "
      "a target of 0.75 network RTT; rud transport only");
  e.ecn_echo = true;    // ECN echoed on the ACKs, no CNPs
  e.ack_bytes = 16384;  // uet-htsim's UecSink::_bytes_unacked_threshold
  registry.add("nscc", std::move(e));
}

}  // namespace fabricsim::nic
