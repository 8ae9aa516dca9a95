// HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): a window and a
// paced rate per QP from the in-band telemetry the switches stamp into its data packets.
//
// Hardware: a NIC reaction point that reads the INT stack each ACK reflects (telemetry.h; the
// switches' part is switch.int_telemetry), per hop i: queue qlen_i, bytes sent tx_i, time ts_i,
// line rate B_i. Against the stack of the previous ACK (L), per ACK (the paper's Algorithm 1):
//   txRate_i = (tx_i - L.tx_i) / (ts_i - L.ts_i)
//   u_i      = min(qlen_i, L.qlen_i) / (B_i T) + txRate_i / B_i;   u = max_i u_i, tau its dt
//   U        = (1 - tau/T) U + (tau/T) u                             (tau at most T)
//   W        = Wc / (U / eta) + W_AI   if U >= eta or incStage >= maxStage
//            = Wc + W_AI               otherwise
// where Wc and incStage move only once per round trip (the ACK of a packet sent after the last
// update; fast reaction between). The QP may have W bytes outstanding and is paced at W / T.
// T is the base RTT: one for the whole fabric (the largest zero-load round trip of an MTU frame
// and its ACK, CcPath::max_base_rtt) as the HPCC scripts run it (GLOBAL_T 1), or base_rtt.
// What matters: eta, max_stage, the additive increase and T (profiles below).
#include <algorithm>
#include <cmath>
#include <string>

#include "models/nic/congestion_control.h"

namespace fabricsim::nic {

namespace {

struct HpccConfig : config::Configurable {
  std::string profile;
  double eta = 0;
  int64_t max_stage = 0;
  BitRate ai, min_rate;
  Bytes ai_bytes;
  Time base_rtt;

  void visit(config::Visitor& v) override {
    v.choice(
        "profile", profile, "hpcc", {"hpcc", "htsim", "custom"},
        "Where the parameters come from: hpcc (the HPCC work's scripts, run.py `hp`, and its "
        "rdma-hw.cc: eta 0.95, max stage 0 as run.py defaults it (every per-RTT update "
        "multiplicative), an additive increase of 10 Mb/s per 25G of line rate, a 1 Gb/s floor, "
        "one T for all flows: the fabric's largest base RTT) [V]; htsim (Broadcom/csg-htsim "
        "hpcc.cpp, the peer of testbenches/peers: eta 0.95, max stage 5, W_AI one packet, no "
        "floor, the same T) [V]; custom (the keys below). The other keys apply to custom only.");
    v.param("eta", eta, 0.95, 0.01, 1.0, "",
            "Target utilisation of the most loaded link on the path (0.95, the paper's) [R].");
    v.param("max_stage", max_stage, 0, 0, 1000, "updates",
            "Additive increases in a row (per-RTT updates below eta) before a multiplicative "
            "one (the paper's maxStage; run.py's MI_THRESH default 0) [V].");
    v.param("ai", ai, BitRate::bps(0), BitRate::bps(0), BitRate::gbps(100),
            "Additive increase as a rate (W_AI = ai x T); 0: 10 Mb/s per 25G of the line rate, "
            "as the HPCC scripts scale it [V].");
    v.param("ai_bytes", ai_bytes, Bytes(0), Bytes(0), Bytes(1 << 20),
            "Additive increase as a window (W_AI in bytes); replaces ai when above 0.");
    v.param("min_rate", min_rate, BitRate::gbps(1), BitRate::bps(0), BitRate::gbps(1600),
            "Floor of the paced rate (the HPCC scripts' MIN_RATE 1 Gb/s) [V].");
    v.param("base_rtt", base_rtt, Time(), Time(), Time::us(100000),
            "T: 0 for the fabric's largest zero-load round trip of an MTU data frame and its "
            "ACK (what the HPCC scripts' GLOBAL_T 1 uses), else this value for every QP.");
  }
  void validate(const config::Checker& c) const override {
    if (profile != "custom") refuse_keys_beside_profile(c, *this, "nic.hpcc", "HPCC");
  }
};

class Hpcc : public CongestionControl {
 public:
  Hpcc(const HpccConfig& c, BitRate line)
      : c_(c), line_(static_cast<double>(line.as_bps()) / 8) {  // bytes per second
    if (c_.profile == "hpcc") {
      c_.eta = 0.95;
      c_.max_stage = 0;
      c_.min_rate = BitRate::gbps(1);
    } else if (c_.profile == "htsim") {
      c_.eta = 0.95;
      c_.max_stage = 5;
      c_.min_rate = BitRate::bps(0);
    }
  }

  void set_path(const CcPath& path) override {
    const Time t = c_.base_rtt > Time() ? c_.base_rtt : path.max_base_rtt;
    t_ = static_cast<double>(t.as_fs()) * 1e-15;
    if (t_ <= 0) return;  // no T known: line rate, no window (a NIC alone in a test)
    if (c_.profile == "htsim" || c_.ai_bytes.count() > 0)
      w_ai_ = c_.profile == "htsim" ? path.mtu : static_cast<double>(c_.ai_bytes.count());
    else
      w_ai_ = (c_.ai.as_bps() > 0 ? static_cast<double>(c_.ai.as_bps()) / 8 : line_ * 0.4e-3) * t_;
    w_max_ = line_ * t_;
    w_min_ = std::max(1.0, static_cast<double>(c_.min_rate.as_bps()) / 8 * t_);
    wc_ = w_ = w_max_;
  }

  BitRate rate() const override {
    if (t_ <= 0) return BitRate::bps(static_cast<uint64_t>(line_ * 8));
    return BitRate::bps(static_cast<uint64_t>(std::llround(w_ / t_ * 8)));
  }
  uint64_t window() const override {
    return t_ > 0 ? static_cast<uint64_t>(std::max(1.0, std::floor(w_))) : 0;
  }

  void on_telemetry(Time now, Time rtt, const IntStack& tel) override {
    if (t_ <= 0) return;
    if (!have_ || tel.hops != last_.hops) {  // the first stack, or a new path: a reference
      last_ = tel;
      if (!have_) last_update_ = now;
      have_ = true;
      return;
    }
    const double u = measure(tel);
    // A new round trip: the acknowledged packet left after the last per-RTT update.
    const bool update = now - rtt >= last_update_;
    double w;
    if (u >= c_.eta || stage_ >= c_.max_stage) {
      w = wc_ / (u / c_.eta) + w_ai_;
      if (update) stage_ = 0;
    } else {
      w = wc_ + w_ai_;
      if (update) ++stage_;
    }
    w_ = std::clamp(w, w_min_, w_max_);
    if (update) {
      wc_ = w_;
      last_update_ = now;
    }
  }

  std::vector<std::pair<std::string, double>> state(Time) const override {
    return {{"u", u_}, {"window_bytes", w_}, {"stage", static_cast<double>(stage_)}};
  }

 private:
  // U: the most loaded hop's utilisation, smoothed over T; updates last_.
  double measure(const IntStack& tel) {
    double u = 0, tau = t_;
    for (int i = 0; i < tel.hops; ++i) {
      const IntHop& h = tel.hop[i];
      const IntHop& l = last_.hop[i];
      if (h.ts_ps <= l.ts_ps || h.rate_mbps == 0) continue;  // no time between the two
      const double dt = static_cast<double>(h.ts_ps - l.ts_ps) * 1e-12;
      const double b = static_cast<double>(h.rate_mbps) * 1e6 / 8;  // bytes per second
      const double tx = static_cast<double>(h.tx_bytes - l.tx_bytes) / dt;
      const double ui = static_cast<double>(std::min(h.qlen, l.qlen)) / (b * t_) + tx / b;
      if (ui > u) {
        u = ui;
        tau = dt;
      }
    }
    last_ = tel;
    tau = std::min(tau, t_);
    u_ = (1 - tau / t_) * u_ + tau / t_ * u;
    return u_;
  }

  HpccConfig c_;
  double line_;   // bytes per second
  double t_ = 0;  // T, seconds
  double w_ai_ = 0, w_max_ = 0, w_min_ = 1;
  double w_ = 0, wc_ = 0;  // bytes
  double u_ = 0;           // U
  int64_t stage_ = 0;      // incStage
  bool have_ = false;
  IntStack last_;  // L: the previous ACK's stack
  Time last_update_;
};

}  // namespace

FABRICSIM_REGISTER_CC(hpcc) {
  CcEntry e = cc_entry<HpccConfig, Hpcc>(
      "HPCC (Li et al. 2019): a window and a paced rate from the in-band telemetry of "
      "the switches on the path (switch.int_telemetry), aiming the most loaded link at "
      "eta of its capacity");
  e.telemetry = true;
  e.reads_ecn = false;
  registry.add("hpcc", std::move(e));
}

}  // namespace fabricsim::nic
