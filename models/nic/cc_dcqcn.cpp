// DCQCN's reaction point (Zhu et al., SIGCOMM 2015; the rules as ns-3's RDMA model of the HPCC
// work implements them, transport-and-collectives-facts.md).
//
// Hardware: the rate limiter a RoCE NIC runs per QP. On a CNP (the receiver saw ECN marks): the
// target rate Rt takes the current rate Rc, Rc drops to Rc (1 - alpha / 2) and alpha moves
// towards 1, alpha <- (1 - g) alpha + g; at most one decrease per `decrease_period`. Without CNPs
// alpha decays, alpha <- (1 - g) alpha every `alpha_period`. Rate increase events come from a
// timer (every `rate_period`, stage T) and a byte counter (every `byte_counter` bytes sent, stage
// BC), both restarted by a decrease; each event does, with F = fast_recovery_steps:
//   fast recovery    (max(T, BC) < F):          Rc <- (Rt + Rc) / 2
//   additive increase (one of them >= F):        Rt <- Rt + ai,         then Rc <- (Rt + Rc) / 2
//   hyper increase   (both >= F):                Rt <- Rt + i x hai,    i = min(T, BC) - F + 1
// Rates stay within [min_rate, line rate]. Before its first CNP a QP runs at line rate; once
// recovered to line rate it arms no timer, while alpha keeps decaying (computed when next needed).
#include <algorithm>
#include <cmath>

#include "models/nic/congestion_control.h"

namespace fabricsim::nic {

namespace {

struct DcqcnConfig : config::Configurable {
  double g = 0;
  Time alpha_period, rate_period, decrease_period;
  Bytes byte_counter;
  int64_t fast_recovery_steps = 0;
  BitRate ai, hai, min_rate;

  void visit(config::Visitor& v) override {
    v.param("g", g, 1.0 / 256, 1e-6, 1.0, "",
            "Weight of a CNP in alpha (DCQCN paper and the HPCC paper's profile: 1/256) [V].");
    v.param("alpha_period", alpha_period, Time::us(55), Time::ns(100), Time::us(100000),
            "Alpha decays by (1 - g) every period without a CNP (ns-3: 55 us) [V].");
    v.param("rate_period", rate_period, Time::us(50), Time::ns(100), Time::us(100000),
            "Rate-increase timer (the DCQCN validation setup: 50 us) [V].");
    v.param("decrease_period", decrease_period, Time::us(4), Time(), Time::us(100000),
            "At most one rate decrease per period, whatever the CNPs (ns-3, NVIDIA firmware: "
            "4 us) [V].");
    v.param("byte_counter", byte_counter, Bytes(10000000), Bytes(1), Bytes(1ull << 40),
            "Rate-increase byte counter (10 MB) [V].");
    v.param("fast_recovery_steps", fast_recovery_steps, 5, 1, 1000, "steps",
            "F: increase events of fast recovery before additive increase [R].");
    v.param("ai", ai, BitRate::bps(5000000), BitRate(), BitRate::gbps(100),
            "Additive increase of the target rate per event (5 Mb/s) [V].");
    v.param("hai", hai, BitRate::bps(50000000), BitRate(), BitRate::gbps(100),
            "Hyper increase per event and stage (50 Mb/s) [V].");
    v.param("min_rate", min_rate, BitRate::bps(100000000), BitRate::bps(1), BitRate::gbps(1600),
            "Floor of the current rate (100 Mb/s) [V].");
  }
};

class Dcqcn : public CongestionControl {
 public:
  Dcqcn(const DcqcnConfig& c, BitRate line)
      : byte_counter_(c.byte_counter.count()),
        rc_(static_cast<double>(line.as_bps())),
        rt_(rc_),
        line_(rc_),
        c_(c) {}

  BitRate rate() const override { return BitRate::bps(static_cast<uint64_t>(std::llround(rc_))); }

  void on_send(Time now, uint64_t bytes) override {
    if (!active_) return;
    bytes_ += bytes;
    while (bytes_ >= byte_counter_) {
      bytes_ -= byte_counter_;
      ++bc_;
      increase(now);
    }
  }

  void on_cnp(Time now) override {
    decay_alpha(now);
    if (active_ && now < last_decrease_ + c_.decrease_period) return;
    active_ = seen_cnp_ = true;
    last_decrease_ = now;
    rt_ = rc_;
    rc_ = std::max(rc_ * (1 - alpha_ / 2), static_cast<double>(c_.min_rate.as_bps()));
    alpha_ = (1 - c_.g) * alpha_ + c_.g;
    alpha_last_ = now;
    t_ = bc_ = 0;
    bytes_ = 0;
    rate_next_ = now + c_.rate_period;
  }

  Time next_timer() const override { return active_ ? rate_next_ : Time::max(); }

  void on_timer(Time now) override {
    while (active_ && rate_next_ <= now) {
      const Time at = rate_next_;
      rate_next_ += c_.rate_period;
      ++t_;
      increase(at);
    }
  }

  std::vector<std::pair<std::string, double>> state(Time now) const override {
    double a = alpha_;
    if (seen_cnp_)
      for (Time t = alpha_last_ + c_.alpha_period; t <= now; t += c_.alpha_period) a *= 1 - c_.g;
    return {{"alpha", a}, {"target_rate_bps", rt_}};
  }

 private:
  void decay_alpha(Time now) {
    if (!seen_cnp_) return;
    while (alpha_last_ + c_.alpha_period <= now) {
      alpha_last_ += c_.alpha_period;
      alpha_ *= 1 - c_.g;
    }
  }
  void increase(Time now) {
    (void)now;
    const int64_t f = c_.fast_recovery_steps;
    if (std::max(t_, bc_) >= f) {
      if (std::min(t_, bc_) >= f)
        rt_ +=
            static_cast<double>(std::min(t_, bc_) - f + 1) * static_cast<double>(c_.hai.as_bps());
      else
        rt_ += static_cast<double>(c_.ai.as_bps());
      rt_ = std::min(rt_, line_);
    }
    rc_ = std::min((rt_ + rc_) / 2, line_);
    if (rc_ >= line_ && rt_ >= line_) active_ = false;  // recovered: no timer until a CNP
  }

  // What every packet sent reads (on_send, rate()) first, in the object's first cache line; the
  // configuration (a copy of 100 B) last.
  bool active_ = false;    // recovering: the rate timer and byte counter run
  bool seen_cnp_ = false;  // alpha decays from the first CNP on
  uint64_t bytes_ = 0;
  uint64_t byte_counter_;  // c_.byte_counter
  double rc_, rt_, line_;
  double alpha_ = 1.0;  // the paper's initial alpha
  Time last_decrease_, alpha_last_, rate_next_;
  int64_t t_ = 0, bc_ = 0;
  DcqcnConfig c_;
};

}  // namespace

FABRICSIM_REGISTER_CC(dcqcn) {
  registry.add("dcqcn",
               CcEntry{"DCQCN reaction point (Zhu et al. 2015): multiplicative decrease on CNPs, "
                       "alpha, fast recovery, additive and hyper increase",
                       [] { return std::make_unique<DcqcnConfig>(); },
                       [](const config::Configurable& c, BitRate line) {
                         return std::make_unique<Dcqcn>(static_cast<const DcqcnConfig&>(c), line);
                       }});
}

}  // namespace fabricsim::nic
