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
//
// The named profiles run in double precision (DcqcnHpcc) or, with nic.dcqcn.arithmetic: fixed, on
// the fixed-point datapath of dcqcn_rp.h (DcqcnFixed: Mb/s rates, Q24 alpha), whose
// implementation nic.dcqcn.impl picks: the C++ model or, registered by rtl/, the Verilated RTL.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "models/nic/congestion_control.h"
#include "models/nic/dcqcn_rp.h"

namespace fabricsim::nic {

namespace {

// A named profile sets every parameter from one source, scaled with the line rate as that source
// scales it; `custom` takes the keys below (and nic.cnp.interval) as given.
struct DcqcnProfile {
  Time alpha_period, rate_period, decrease_period;
  int64_t fast_recovery_steps;
  double ai_per_25g_bps, hai_per_25g_bps, min_rate_bps;
  Time np_interval;  // the notification point's CNP spacing (0: every marked packet)
};

// The HPCC work's simulation scripts (alibaba-edu/High-Precision-Congestion-Control,
// simulation/run.py; the rules of its rdma-hw.cc): g 1/256, one fast-recovery step, no byte
// counter, AI 5 and HAI 50 Mb/s per 25G, 1 Gb/s floor, the target not clamped on a decrease
// before the first increase, and a CNP flag on the ACK of every marked packet (ACKs every
// packet). `dcqcn`: its timers for fast reaction; `dcqcn_paper`: the DCQCN paper's timers.
constexpr DcqcnProfile kHpcc{Time::us(1), Time::us(300), Time::us(4), 1, 5e6, 50e6, 1e9, Time()};
constexpr DcqcnProfile kHpccPaper{Time::us(50), Time::us(55), Time::us(50), 1,
                                  5e6,          50e6,         1e9,          Time()};

struct DcqcnConfig : config::Configurable {
  std::string profile, arithmetic, impl;
  double g = 0;
  Time alpha_period, rate_period, decrease_period;
  Bytes byte_counter;
  int64_t fast_recovery_steps = 0;
  BitRate ai, hai, min_rate;

  void visit(config::Visitor& v) override {
    v.choice("profile", profile, "hpcc", {"hpcc", "hpcc_dcqcn_paper", "custom"},
             "Where every parameter comes from, one source at a time: hpcc (the HPCC work's "
             "scripts, run.py `dcqcn`: alpha period 1 us, decrease period 4 us, rate timer 300 "
             "us, g 1/256, 1 fast-recovery step, no byte counter, AI 5 / HAI 50 Mb/s per 25G of "
             "line rate, 1 Gb/s floor, a CNP for every marked packet, the rules of its "
             "rdma-hw.cc) [V]; hpcc_dcqcn_paper (the same scripts' `dcqcn_paper`: alpha 50 us, "
             "decrease 50 us, rate timer 55 us, the rest as hpcc) [V]; custom (the keys below "
             "and nic.cnp.interval, with the DCQCN paper's rules: alpha updated at each CNP, a "
             "byte counter, hyper increase by stage). The other keys apply to custom only.");
    v.choice("arithmetic", arithmetic, "double", {"double", "fixed"},
             "Named profiles: double (double precision, as the HPCC work's rdma-hw.cc) or fixed "
             "(a NIC's fixed-point datapath, models/nic/dcqcn_rp.h: rates in whole Mb/s, alpha "
             "in Q24 [A]; the rate within 0.2 % of double's, docs/cosim.md).");
    const DcqcnRpRegistry& impls = DcqcnRpRegistry::global();
    v.choice("impl", impl, DcqcnRpRegistry::kModel, impls.names(), impls.doc());
    v.param("g", g, 1.0 / 256, 1e-6, 1.0, "",
            "custom: weight of a CNP in alpha (DCQCN paper: 1/256) [V].");
    v.param("alpha_period", alpha_period, Time::us(55), Time::ns(100), Time::us(100000),
            "custom: alpha decays by (1 - g) every period without a CNP (ns-3: 55 us) [V].");
    v.param("rate_period", rate_period, Time::us(50), Time::ns(100), Time::us(100000),
            "custom: rate-increase timer (the DCQCN validation setup: 50 us) [V].");
    v.param("decrease_period", decrease_period, Time::us(4), Time(), Time::us(100000),
            "custom: at most one rate decrease per period, whatever the CNPs (ns-3, NVIDIA "
            "firmware: 4 us) [V].");
    v.param("byte_counter", byte_counter, Bytes(10000000), Bytes(1), Bytes(1ull << 40),
            "custom: rate-increase byte counter (10 MB) [V].");
    v.param("fast_recovery_steps", fast_recovery_steps, 5, 1, 1000, "steps",
            "custom: F, increase events of fast recovery before additive increase [R].");
    v.param("ai", ai, BitRate::bps(5000000), BitRate(), BitRate::gbps(100),
            "custom: additive increase of the target rate per event (5 Mb/s) [V].");
    v.param("hai", hai, BitRate::bps(50000000), BitRate(), BitRate::gbps(100),
            "custom: hyper increase per event and stage (50 Mb/s) [V].");
    v.param("min_rate", min_rate, BitRate::bps(100000000), BitRate::bps(1), BitRate::gbps(1600),
            "custom: floor of the current rate (100 Mb/s) [V].");
  }

  const DcqcnProfile* named() const {
    return profile == "hpcc" ? &kHpcc : profile == "hpcc_dcqcn_paper" ? &kHpccPaper : nullptr;
  }

  // A key set beside a named profile would do nothing: refused.
  void validate(const config::Checker& c) const override {
    if (named()) refuse_keys_beside_profile(c, *this, "nic.dcqcn", "DCQCN", {"arithmetic", "impl"});
    c.require(arithmetic == "double" || named(), "arithmetic",
              "fixed computes the named profiles (the rules of rdma-hw.cc), not profile custom");
    c.require(impl == DcqcnRpRegistry::kModel || arithmetic == "fixed", "impl",
              impl + " implements the fixed-point datapath: it needs nic.dcqcn.arithmetic: fixed");
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

// DCQCN by the rules of the HPCC work's rdma-hw.cc (its "Mellanox version"), for the named
// profiles. From the first CNP on, three clocks: alpha every alpha_period, (1 - g) alpha plus g
// when a CNP came in the period; a decrease check every decrease_period (phase: the first CNP +
// 1 ns, after alpha's), which cuts Rc to Rc (1 - alpha / 2) when a CNP came since the last
// check, the target taking Rc unless no increase has run since the last cut, and restarts the
// rate timer; the rate timer (rate_period) runs fast recovery for the first F events, then one
// additive increase, then hyper increases (+hai each). Alpha is brought up to date when read;
// the timer is not armed at line rate (an increase there changes nothing), which is exact.
class DcqcnHpcc : public CongestionControl {
 public:
  DcqcnHpcc(const DcqcnProfile& p, double g, BitRate line)
      : p_(p),
        g_(g),
        line_(static_cast<double>(line.as_bps())),
        ai_(p.ai_per_25g_bps * line_ / 25e9),
        hai_(p.hai_per_25g_bps * line_ / 25e9),
        rc_(line_),
        rt_(line_) {}

  BitRate rate() const override { return BitRate::bps(static_cast<uint64_t>(std::llround(rc_))); }

  void on_cnp(Time now) override {
    if (!started_) {
      started_ = true;  // alpha starts at 1; this CNP counts for the first decrease check only
      alpha_ = 1;
      alpha_next_ = now + p_.alpha_period;
      check_phase_ = now + Time::ns(1);
      check_at_ = check_phase_ + p_.decrease_period;
      return;
    }
    advance_alpha(now);
    alpha_cnp_ = true;
    if (check_at_ == Time::max()) {
      // The next check strictly after now (a check at this instant ran before the CNP).
      const int64_t k = (now - check_phase_).as_fs() / p_.decrease_period.as_fs() + 1;
      check_at_ = check_phase_ + p_.decrease_period * k;
    }
  }

  Time next_timer() const override { return std::min(check_at_, rate_next_); }

  void on_timer(Time now) override {
    for (;;) {
      const Time t = std::min(check_at_, rate_next_);
      if (t > now || t == Time::max()) return;
      // At a tie the rate timer goes first: in rdma-hw.cc it was scheduled earlier (300 us is a
      // multiple of the 4 us check period), so the cut that follows clamps the target.
      if (rate_next_ <= check_at_)
        increase(rate_next_);
      else
        decrease(check_at_);
    }
  }

  std::vector<std::pair<std::string, double>> state(Time now) const override {
    return {{"alpha", started_ ? alpha_at(now).first : alpha_}, {"target_rate_bps", rt_}};
  }

 private:
  // Alpha with the updates due up to `now` applied, and the next update's time.
  std::pair<double, Time> alpha_at(Time now) const {
    double a = alpha_;
    bool cnp = alpha_cnp_;
    Time t = alpha_next_;
    for (; t <= now; t += p_.alpha_period, cnp = false) a = (1 - g_) * a + (cnp ? g_ : 0);
    return {a, t};
  }
  void advance_alpha(Time now) {
    if (alpha_next_ > now) return;
    std::tie(alpha_, alpha_next_) = alpha_at(now);
    alpha_cnp_ = false;
  }
  void decrease(Time t) {
    advance_alpha(t);
    check_at_ = Time::max();  // the next check that matters follows the next CNP
    if (stage_ != 0) rt_ = rc_;
    rc_ = std::max(p_.min_rate_bps, rc_ * (1 - alpha_ / 2));
    stage_ = 0;
    rate_next_ = t + p_.rate_period;
  }
  void increase(Time t) {
    if (stage_ >= p_.fast_recovery_steps)
      rt_ = std::min(line_, rt_ + (stage_ == p_.fast_recovery_steps ? ai_ : hai_));
    rc_ = rc_ / 2 + rt_ / 2;
    ++stage_;
    // At line rate an increase changes nothing: no timer until the next cut (stage_ > 0 keeps
    // the clamp the running timer would have allowed).
    rate_next_ = rc_ >= line_ && rt_ >= line_ ? Time::max() : t + p_.rate_period;
  }

  DcqcnProfile p_;
  double g_, line_, ai_, hai_;
  double rc_, rt_;
  double alpha_ = 1;
  bool started_ = false, alpha_cnp_ = false;
  int64_t stage_ = 0;
  Time alpha_next_, check_phase_;
  Time check_at_ = Time::max(), rate_next_ = Time::max();
};

// The named profiles on the fixed-point datapath (dcqcn_rp.h), one block per QP: each call runs
// the block's command to its end (a few clocks; one per alpha or check period caught up).
class DcqcnFixed : public CongestionControl {
 public:
  DcqcnFixed(const DcqcnProfile& p, BitRate line, const std::string& impl)
      : p_(params(p, line)), rp_(DcqcnRpRegistry::global().at(impl).make(p_)) {}

  BitRate rate() const override { return BitRate::bps(uint64_t{rp_->regs().rc} * kMbps); }
  void on_cnp(Time now) override { run(DcqcnRpIn{true, false, fs(now)}); }
  Time next_timer() const override {
    const uint64_t t = rp_->regs().next_timer();
    return t == UINT64_MAX ? Time::max() : Time::fs(static_cast<int64_t>(t));
  }
  void on_timer(Time now) override { run(DcqcnRpIn{false, true, fs(now)}); }

  std::vector<std::pair<std::string, double>> state(Time now) const override {
    const DcqcnRpRegs& r = rp_->regs();
    uint32_t a = r.alpha;  // brought to `now` as the block will when it next reads it
    if (r.started) {
      bool cnp = r.alpha_cnp;
      for (uint64_t t = r.alpha_next; t <= fs(now); t += p_.alpha_period, cnp = false)
        a = DcqcnRpModel::alpha_step(a, cnp, p_.g_shift);
    }
    return {{"alpha", a / static_cast<double>(DcqcnRpModel::kOne)},
            {"target_rate_bps", static_cast<double>(r.rt) * kMbps}};
  }

 private:
  static constexpr uint64_t kMbps = 1000000;
  static uint64_t fs(Time t) { return static_cast<uint64_t>(t.as_fs()); }
  // The profile in the block's units: the line rate in whole Mb/s (rounded down, so the rate
  // never exceeds it), ai / hai / min to the nearest Mb/s, g = 1/256 as a shift.
  static DcqcnRpParams params(const DcqcnProfile& p, BitRate line) {
    const double l = static_cast<double>(line.as_bps());
    DcqcnRpParams r;
    r.line = static_cast<uint32_t>(line.as_bps() / kMbps);
    r.ai = static_cast<uint32_t>(std::llround(p.ai_per_25g_bps * l / 25e9 / 1e6));
    r.hai = static_cast<uint32_t>(std::llround(p.hai_per_25g_bps * l / 25e9 / 1e6));
    r.min = static_cast<uint32_t>(std::llround(p.min_rate_bps / 1e6));
    r.alpha_period = fs(p.alpha_period);
    r.decrease_period = fs(p.decrease_period);
    r.rate_period = fs(p.rate_period);
    r.check_offset = fs(Time::ns(1));
    r.f = static_cast<uint8_t>(p.fast_recovery_steps);
    r.g_shift = 8;
    return r;
  }
  void run(const DcqcnRpIn& in) {
    rp_->tick(in);
    while (rp_->regs().busy()) rp_->tick(DcqcnRpIn{});
  }

  DcqcnRpParams p_;
  std::unique_ptr<DcqcnRpIf> rp_;
};

}  // namespace

FABRICSIM_REGISTER_CC(dcqcn) {
  CcEntry e{
      "DCQCN reaction point (Zhu et al. 2015): multiplicative decrease on CNPs, "
      "alpha, fast recovery, additive and hyper increase",
      [] { return std::make_unique<DcqcnConfig>(); },
      [](const config::Configurable& c, BitRate line) -> std::unique_ptr<CongestionControl> {
        const auto& d = static_cast<const DcqcnConfig&>(c);
        if (const DcqcnProfile* p = d.named()) {
          if (d.arithmetic == "fixed") return std::make_unique<DcqcnFixed>(*p, line, d.impl);
          return std::make_unique<DcqcnHpcc>(*p, 1.0 / 256, line);
        }
        return std::make_unique<Dcqcn>(d, line);
      },
      [](const config::Configurable& c) {
        const DcqcnProfile* p = static_cast<const DcqcnConfig&>(c).named();
        return p ? p->np_interval : Time::max();
      }};
  e.reacts_to_cnp = true;
  registry.add("dcqcn", std::move(e));
}

}  // namespace fabricsim::nic
