// TIMELY (Mittal et al., SIGCOMM 2015): rate-based congestion control from round-trip times.
//
// Hardware: a NIC's delay-based reaction point, per QP, fed by the RTT of each acknowledged
// segment (the NIC timestamps a packet as it leaves and reads the time when its ACK returns: no
// switch support, unlike DCQCN's ECN marks). Each RTT sample is a completion event of the
// paper's Algorithm 1 (our ACKs come every rc.ack_every packets, 64 KB at the 4 KB MTU: the
// paper's 16-64 KB segments):
//   new_rtt_diff = rtt - prev_rtt;   prev_rtt = rtt
//   rtt_diff     = (1 - alpha) rtt_diff + alpha new_rtt_diff
//   gradient     = rtt_diff / min_rtt
//   rtt < t_low:   R <- R + delta
//   rtt > t_high:  R <- R (1 - beta (1 - t_high / rtt))
//   gradient <= 0: R <- R + N delta   (N: hai_factor after hai_events such events in a row,
//                                      else 1)
//   otherwise:     R <- R (1 - beta gradient)
// within [min_rate, line rate]. The first sample only sets prev_rtt. That is profile custom: an
// update on an ACK at least min_rtt after the last one (the paper's D_minRTT limit on the update
// rate, as Zhu et al., CoNEXT 2016, model it: every max(Seg / R, D_minRTT)); profile hpcc (the
// default) runs the HPCC work's rules and scaling (TimelyHpcc), once a round trip.
#include <algorithm>
#include <string>

#include "models/nic/congestion_control.h"

namespace fabricsim::nic {

namespace {

struct TimelyConfig : config::Configurable {
  std::string profile;
  double alpha = 0, beta = 0;
  Time t_low, t_high, min_rtt;
  BitRate delta, min_rate;
  int64_t hai_events = 0, hai_factor = 0;

  void visit(config::Visitor& v) override {
    v.choice("profile", profile, "hpcc", {"hpcc", "custom"},
             "Where the parameters come from: hpcc (the HPCC work's scripts, run.py `timely`, "
             "and the rules of its rdma-hw.cc: alpha 0.875, beta 0.8, t_low 50 us, t_high 500 "
             "us, min_rtt 20 us; one update per round trip, the ACK of the first packet sent "
             "after the last update; an increase of 10 Mb/s per 10G of line rate, 50 Mb/s per "
             "10G from the sixth increase in a row; a 1 Gb/s floor; an ACK per packet, "
             "L2_ACK_INTERVAL 1) [V]; custom (the keys below, the paper's Algorithm 1 on an ACK "
             "of rc.ack_every packets, at most once every min_rtt). The other keys apply to "
             "custom only.");
    v.param("alpha", alpha, 0.875, 0.0, 1.0, "",
            "EWMA weight of the newest RTT difference (TIMELY, HPCC code: 0.875) [V].");
    v.param("beta", beta, 0.8, 0.0, 1.0, "", "Multiplicative decrease factor (0.8) [V].");
    v.param("t_low", t_low, Time::us(50), Time(), Time::us(100000),
            "Below this RTT the rate grows by delta whatever the gradient (50 us) [V].");
    v.param("t_high", t_high, Time::us(500), Time::ns(1), Time::us(100000),
            "Above this RTT the rate drops in proportion to the excess (500 us) [V].");
    v.param("min_rtt", min_rtt, Time::us(20), Time::ns(1), Time::us(100000),
            "Normalises the RTT gradient, and the least time between two updates: the path's "
            "minimum RTT (the paper's 20 us) [R].");
    v.param("delta", delta, BitRate::bps(10000000), BitRate::bps(1), BitRate::gbps(100),
            "Additive increase per event (the paper's 10 Mb/s at 10G) [R].");
    v.param("min_rate", min_rate, BitRate::bps(100000000), BitRate::bps(1), BitRate::gbps(1600),
            "Floor of the rate (100 Mb/s, as DCQCN's) [S].");
    v.param("hai_events", hai_events, 5, 1, 1000, "events",
            "Events with a non-positive gradient in a row before hyper-active increase (5) [R].");
    v.param("hai_factor", hai_factor, 5, 1, 1000, "",
            "N: the increase in hyper-active mode is N x delta (5) [R].");
  }
  void validate(const config::Checker& c) const override {
    c.require(t_low < t_high, "t_low", "must be below t_high");
    if (profile != "custom") refuse_keys_beside_profile(c, *this, "nic.timely", "TIMELY");
  }
};

class Timely : public CongestionControl {
 public:
  Timely(const TimelyConfig& c, BitRate line)
      : c_(c), line_(static_cast<double>(line.as_bps())), rate_(line_) {}

  BitRate rate() const override { return BitRate::bps(static_cast<uint64_t>(std::llround(rate_))); }

  void on_ack(Time now, Time rtt) override {
    // At most one update every min_rtt (TIMELY section 5, as the CoNEXT 2016 model reads it: an
    // update every max(Seg / R, D_minRTT)); the samples in between change nothing. At 400G a
    // 64 KB completion comes every 1.3 us: a cut on each, ~40 a round trip reading one queue.
    if (have_prev_ && now - last_update_ < c_.min_rtt) return;
    last_update_ = now;
    const double r = static_cast<double>(rtt.as_fs());
    if (!have_prev_) {  // the first sample: nothing to compare with yet
      have_prev_ = true;
      prev_ = r;
      return;
    }
    diff_ = (1 - c_.alpha) * diff_ + c_.alpha * (r - prev_);
    prev_ = r;
    const double gradient = diff_ / static_cast<double>(c_.min_rtt.as_fs());
    const double delta = static_cast<double>(c_.delta.as_bps());
    if (rtt < c_.t_low) {
      rate_ += delta;
      calm_ = 0;
    } else if (rtt > c_.t_high) {
      rate_ *= 1 - c_.beta * (1 - static_cast<double>(c_.t_high.as_fs()) / r);
      calm_ = 0;
    } else if (gradient <= 0) {
      ++calm_;
      rate_ += (calm_ >= c_.hai_events ? static_cast<double>(c_.hai_factor) : 1.0) * delta;
    } else {
      rate_ *= 1 - c_.beta * gradient;
      calm_ = 0;
    }
    rate_ = std::clamp(rate_, static_cast<double>(c_.min_rate.as_bps()), line_);
  }

  std::vector<std::pair<std::string, double>> state(Time) const override {
    return {{"rtt_ns", prev_ * 1e-6},
            {"gradient", diff_ / static_cast<double>(c_.min_rtt.as_fs())}};
  }

 private:
  TimelyConfig c_;
  double line_, rate_;
  bool have_prev_ = false;
  Time last_update_;
  double prev_ = 0, diff_ = 0;  // fs
  int64_t calm_ = 0;            // events in a row with a non-positive gradient
};

// TIMELY by the rules of the HPCC work's rdma-hw.cc (profile hpcc): one update per round trip
// (an ACK of a packet sent after the last update; the others change nothing), the gradient from
// the RTT of that ACK against the last update's, an increase of rai (rhai from the sixth in a
// row), a cut to the current rate times c, a 1 Gb/s floor. The first such ACK only records.
class TimelyHpcc : public CongestionControl {
 public:
  explicit TimelyHpcc(BitRate line)
      : line_(static_cast<double>(line.as_bps())),
        rai_(10e6 * line_ / 10e9),
        rhai_(50e6 * line_ / 10e9),
        rate_(line_) {}

  BitRate rate() const override { return BitRate::bps(static_cast<uint64_t>(std::llround(rate_))); }

  void on_ack(Time now, Time rtt) override {
    // HPCC's test: ack_seq > the next PSN at the last update, i.e. the packet went after it.
    if (updated_ && now - rtt <= last_update_) return;
    const double r = static_cast<double>(rtt.as_fs());
    if (updated_) {
      const double diff = (1 - kAlpha) * diff_ + kAlpha * (r - prev_);
      const double gradient = diff / static_cast<double>(kMinRtt.as_fs());
      const double high = static_cast<double>(kTHigh.as_fs());
      if (rtt < kTLow || (rtt <= kTHigh && gradient <= 0)) {
        rate_ = std::min(line_, rate_ + (stage_ < 5 ? rai_ : rhai_));
        ++stage_;
      } else {
        const double c =
            rtt > kTHigh ? 1 - kBeta * (1 - high / r) : std::max(0.0, 1 - kBeta * gradient);
        rate_ = std::max(kMinRate, rate_ * c);
        stage_ = 0;
      }
      diff_ = diff;
    }
    updated_ = true;
    last_update_ = now;
    prev_ = r;
  }

  std::vector<std::pair<std::string, double>> state(Time) const override {
    return {{"rtt_ns", prev_ * 1e-6}, {"gradient", diff_ / static_cast<double>(kMinRtt.as_fs())}};
  }

 private:
  static constexpr double kAlpha = 0.875, kBeta = 0.8, kMinRate = 1e9;
  static constexpr Time kTLow = Time::us(50), kTHigh = Time::us(500), kMinRtt = Time::us(20);
  double line_, rai_, rhai_, rate_;
  bool updated_ = false;
  Time last_update_;
  double prev_ = 0, diff_ = 0;  // fs
  int64_t stage_ = 0;           // increases in a row
};

}  // namespace

FABRICSIM_REGISTER_CC(timely) {
  CcEntry e{
      "TIMELY (Mittal et al. 2015): rate from the RTT gradient of each ACK, additive "
      "increase below t_low, multiplicative decrease above t_high",
      [] { return std::make_unique<TimelyConfig>(); },
      [](const config::Configurable& c, BitRate line) -> std::unique_ptr<CongestionControl> {
        const auto& t = static_cast<const TimelyConfig&>(c);
        if (t.profile == "hpcc") return std::make_unique<TimelyHpcc>(line);
        return std::make_unique<Timely>(t, line);
      },
      nullptr};
  // Profile hpcc: its source ACKs every packet (run.py's L2_ACK_INTERVAL 1), so the update a
  // round trip reads the first packet sent after the last one; with rc.ack_every packets a
  // sample instead, a QP at the 1 Gb/s floor would wait 16 x 33 us for it. Profile custom: the
  // paper's completion events, an ACK every rc.ack_every packets.
  e.ack_each_packet = [](const config::Configurable& c) {
    return static_cast<const TimelyConfig&>(c).profile == "hpcc";
  };
  registry.add("timely", std::move(e));
}

}  // namespace fabricsim::nic
