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
//   gradient <= 0: R <- R + N delta   (N = hai_factor after hai_events such events in a row, else
//   1) otherwise:     R <- R (1 - beta gradient)
// within [min_rate, line rate]. The first sample only sets prev_rtt. Defaults: alpha 0.875, beta
// 0.8, t_low 50 us, t_high 500 us (transport-and-collectives-facts.md [V]), min_rtt 20 us and
// delta 10 Mb/s, N = 5 after 5 events (the paper's 10G settings [R]); at 400G an increase of
// 10 Mb/s per ACK is slow: sweep delta with the line rate.
#include <algorithm>

#include "models/nic/congestion_control.h"

namespace fabricsim::nic {

namespace {

struct TimelyConfig : config::Configurable {
  double alpha = 0, beta = 0;
  Time t_low, t_high, min_rtt;
  BitRate delta, min_rate;
  int64_t hai_events = 0, hai_factor = 0;

  void visit(config::Visitor& v) override {
    v.param("alpha", alpha, 0.875, 0.0, 1.0, "",
            "EWMA weight of the newest RTT difference (TIMELY, HPCC code: 0.875) [V].");
    v.param("beta", beta, 0.8, 0.0, 1.0, "", "Multiplicative decrease factor (0.8) [V].");
    v.param("t_low", t_low, Time::us(50), Time(), Time::us(100000),
            "Below this RTT the rate grows by delta whatever the gradient (50 us) [V].");
    v.param("t_high", t_high, Time::us(500), Time::ns(1), Time::us(100000),
            "Above this RTT the rate drops in proportion to the excess (500 us) [V].");
    v.param("min_rtt", min_rtt, Time::us(20), Time::ns(1), Time::us(100000),
            "Normalises the RTT gradient: the path's minimum RTT (the paper's 20 us) [R].");
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
  }
};

class Timely : public CongestionControl {
 public:
  Timely(const TimelyConfig& c, BitRate line)
      : c_(c), line_(static_cast<double>(line.as_bps())), rate_(line_) {}

  BitRate rate() const override { return BitRate::bps(static_cast<uint64_t>(std::llround(rate_))); }

  void on_ack(Time, Time rtt) override {
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
  double prev_ = 0, diff_ = 0;  // fs
  int64_t calm_ = 0;            // events in a row with a non-positive gradient
};

}  // namespace

FABRICSIM_REGISTER_CC(timely) {
  registry.add("timely",
               CcEntry{"TIMELY (Mittal et al. 2015): rate from the RTT gradient of each ACK, "
                       "additive increase below t_low, multiplicative decrease above t_high",
                       [] { return std::make_unique<TimelyConfig>(); },
                       [](const config::Configurable& c, BitRate line) {
                         return std::make_unique<Timely>(static_cast<const TimelyConfig&>(c), line);
                       }});
}

}  // namespace fabricsim::nic
