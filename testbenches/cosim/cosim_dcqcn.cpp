// Co-simulation of the NIC's DCQCN reaction point: nic::DcqcnRpModel against the Verilated
// dcqcn_rp, every register compared every cycle. Each phase resets both with its constants.
// Directed phases first: the hpcc profile at 400G with its real timers (the rate timer lands on
// the decrease-check grid: ties), cuts down to the rate floor, hyper increase back to line rate,
// long silences (many alpha and check periods caught up, alpha at its floor), the stage
// saturating, and a 24-bit line rate; then random phases (random constants, g, F and periods
// short enough for dense events). Commands: CNPs at random times, timers at their due time or
// later, both at once, and commands raised while the block is busy (which it must ignore).
#include <algorithm>
#include <memory>

#include "models/nic/dcqcn_rp.h"
#include "rtl/dcqcn_rp_rtl.h"
#include "testbenches/cosim/benches.h"

namespace fabricsim::cosim {
namespace {

using nic::DcqcnRpIn;
using nic::DcqcnRpModel;
using nic::DcqcnRpParams;
using nic::DcqcnRpRegs;
using nic::DcqcnRpState;

struct Phase {
  DcqcnRpParams p;
  double cmd;        // probability of a command in an idle cycle
  double cnp;        // of which CNPs
  uint64_t gap_max;  // time between commands: 0 .. gap_max fs, or (long_p) up to 200 periods
  double long_p;
  uint64_t cycles;
};

constexpr uint64_t kUs = 1000000000;  // fs

Phase hpcc400() {
  Phase ph{};
  ph.p = DcqcnRpParams{400000, 80, 800, 1000, 1 * kUs, 4 * kUs, 300 * kUs, 1000000, 1, 8};
  ph.cmd = 0.5;
  ph.cnp = 0.3;
  ph.gap_max = 3 * kUs;
  ph.long_p = 0.002;
  ph.cycles = 60000;
  return ph;
}

Phase directed(int i) {
  Phase ph = hpcc400();
  switch (i) {
    case 0:
      return ph;
    case 1:  // dense CNPs, a high floor: cuts stop at min_rate
      ph.p.min = 150000;
      ph.p.decrease_period = 1000;
      ph.p.alpha_period = 700;
      ph.p.rate_period = 50000;
      ph.gap_max = 500;
      ph.cnp = 0.9;
      ph.cycles = 20000;
      return ph;
    case 2:  // rare CNPs, big hyper steps: back to line rate, the rate timer stops
      ph.p.hai = 40000;
      ph.p.ai = 20000;
      ph.p.f = 3;
      ph.p.rate_period = 5000;
      ph.cnp = 0.02;
      ph.gap_max = 20000;
      ph.cycles = 20000;
      return ph;
    case 3:  // long silences: catch-up over hundreds of periods; alpha decays to its floor
      ph.p.alpha_period = 100;
      ph.p.decrease_period = 400;
      ph.gap_max = 100000;
      ph.long_p = 0.2;
      ph.cycles = 60000;
      return ph;
    case 4:  // +1 Mb/s per step from a target far below the line: the stage saturates at 255
      ph.p.ai = 1;
      ph.p.hai = 1;
      ph.p.min = 1;
      ph.p.alpha_period = 100;
      ph.p.rate_period = 100;
      ph.p.decrease_period = 300;
      ph.p.check_offset = 0;
      ph.cmd = 1.0;
      ph.cnp = 0.004;
      ph.gap_max = 50;
      ph.long_p = 0;
      ph.cycles = 60000;
      return ph;
    case 5:  // the largest line rate the 24-bit registers hold, big steps
      ph.p.line = DcqcnRpModel::kRateMax;
      ph.p.ai = DcqcnRpModel::kRateMax / 2;
      ph.p.hai = DcqcnRpModel::kRateMax;
      ph.p.min = 1;
      ph.p.rate_period = 3000;
      ph.p.decrease_period = 2000;
      ph.gap_max = 3000;
      ph.cycles = 20000;
      return ph;
    default:
      return ph;
  }
}
constexpr int kDirected = 6;

Phase random_phase(Rng& rng) {
  Phase ph{};
  DcqcnRpParams& p = ph.p;
  const uint64_t r = rng.below(4);
  p.line = r == 0   ? 400000
           : r == 1 ? 100000
                    : static_cast<uint32_t>(1 + rng.below(DcqcnRpModel::kRateMax));
  p.ai = static_cast<uint32_t>(rng.below(p.line / 50 + 1));
  p.hai = static_cast<uint32_t>(rng.below(p.line / 10 + 1));
  p.min = static_cast<uint32_t>(1 + rng.below(p.line / 2 + 1));
  p.alpha_period = 1 + rng.below(2000);
  p.decrease_period = 1 + rng.below(4000);
  // Often a multiple of the check period (ties), else anything.
  p.rate_period =
      rng.bernoulli(0.5) ? p.decrease_period * (1 + rng.below(20)) : 1 + rng.below(20000);
  p.check_offset = rng.below(p.decrease_period + 1);
  p.f = static_cast<uint8_t>(rng.bernoulli(0.5) ? 1 : 1 + rng.below(8));
  p.g_shift = static_cast<uint8_t>(rng.bernoulli(0.6) ? 8 : 1 + rng.below(16));
  ph.cmd = 0.2 + 0.8 * rng.uniform();
  ph.cnp = rng.uniform();
  ph.gap_max = 1 + rng.below(p.decrease_period * 3);
  ph.long_p = rng.bernoulli(0.5) ? 0.01 : 0.0;
  ph.cycles = 2000 + rng.below(30000);
  return ph;
}

// Every register, model against RTL.
bool compare(Checker& ck, uint64_t c, const DcqcnRpRegs& e, const DcqcnRpRegs& g) {
  bool ok = true;
  ok &= ck.check(c, "state", -1, static_cast<uint64_t>(e.state), static_cast<uint64_t>(g.state));
  ok &= ck.check(c, "started", -1, e.started, g.started);
  ok &= ck.check(c, "alpha_cnp", -1, e.alpha_cnp, g.alpha_cnp);
  ok &= ck.check(c, "check_armed", -1, e.check_armed, g.check_armed);
  ok &= ck.check(c, "rate_armed", -1, e.rate_armed, g.rate_armed);
  ok &= ck.check(c, "rc", -1, e.rc, g.rc);
  ok &= ck.check(c, "rt", -1, e.rt, g.rt);
  ok &= ck.check(c, "alpha", -1, e.alpha, g.alpha);
  ok &= ck.check(c, "stage", -1, e.stage, g.stage);
  ok &= ck.check(c, "tnow", -1, e.tnow, g.tnow);
  ok &= ck.check(c, "alpha_next", -1, e.alpha_next, g.alpha_next);
  ok &= ck.check(c, "check_at", -1, e.check_at, g.check_at);
  ok &= ck.check(c, "rate_next", -1, e.rate_next, g.rate_next);
  return ok;
}

struct Bins {
  int start, cnp_armed, check_catchup, alpha_catchup, cut_alpha1, floor, cut_stage0, fast, add,
      hyper, clamp, line, tie, sat, timer_none, busy_ignored, both, alpha_floor, g_other, rate_max;
  explicit Bins(Coverage& cov)
      : start(cov.add("first CNP (start)")),
        cnp_armed(cov.add("CNP with the check armed")),
        check_catchup(cov.add("CNP: check caught up >= 2 periods")),
        alpha_catchup(cov.add("alpha caught up >= 2 periods")),
        cut_alpha1(cov.add("cut with alpha = 1.0")),
        floor(cov.add("cut to the floor (rate at minimum)")),
        cut_stage0(cov.add("cut with stage 0 (target kept)")),
        fast(cov.add("fast-recovery increase")),
        add(cov.add("additive increase")),
        hyper(cov.add("hyper increase")),
        clamp(cov.add("target clamped at line rate")),
        line(cov.add("back at line rate (rate timer off)")),
        tie(cov.add("rate timer and check due together")),
        sat(cov.add("stage saturated at 255")),
        timer_none(cov.add("timer command with nothing due")),
        busy_ignored(cov.add("command while busy (ignored)")),
        both(cov.add("CNP and timer together (CNP first)")),
        alpha_floor(cov.add("alpha at its floor (a step changes nothing)")),
        g_other(cov.add("g other than 1/256")),
        rate_max(cov.add("24-bit maximum line rate")) {}
};

// Coverage of one edge, from the registers before (b) and after (a) it.
void cover(Coverage& cov, const Bins& k, const DcqcnRpParams& p, const DcqcnRpIn& in,
           const DcqcnRpRegs& b, const DcqcnRpRegs& a, int& steps) {
  const bool cmd = in.cnp || in.timer;
  switch (b.state) {
    case DcqcnRpState::kIdle:
      steps = 0;
      if (in.cnp && !b.started) cov.hit(k.start);
      if (in.cnp && in.timer) cov.hit(k.both);
      if (in.timer && !in.cnp && b.next_timer() > in.now) cov.hit(k.timer_none);
      break;
    case DcqcnRpState::kCnpAlpha:
    case DcqcnRpState::kDecAlpha:
      if (a.alpha_next != b.alpha_next) {
        if (++steps == 2) cov.hit(k.alpha_catchup);
        if (!b.alpha_cnp && a.alpha == b.alpha && b.alpha < DcqcnRpModel::kOne)
          cov.hit(k.alpha_floor);
      } else if (b.state == DcqcnRpState::kCnpAlpha) {
        steps = 0;
        if (a.state == DcqcnRpState::kIdle) cov.hit(k.cnp_armed);
      } else {  // the cut
        if (b.alpha == DcqcnRpModel::kOne) cov.hit(k.cut_alpha1);
        if (a.rc == p.min) cov.hit(k.floor);
        if (b.stage == 0) cov.hit(k.cut_stage0);
      }
      break;
    case DcqcnRpState::kCnpCheck:
      if (a.check_at != b.check_at && ++steps == 2) cov.hit(k.check_catchup);
      break;
    case DcqcnRpState::kTimer:
      if (a.state == DcqcnRpState::kTimer) {  // an increase
        cov.hit(b.stage < p.f ? k.fast : b.stage == p.f ? k.add : k.hyper);
        if (b.check_armed && b.check_at == b.rate_next) cov.hit(k.tie);
        if (b.stage >= p.f && a.rt == p.line &&
            uint64_t{b.rt} + (b.stage == p.f ? p.ai : p.hai) > p.line)
          cov.hit(k.clamp);
        if (!a.rate_armed) cov.hit(k.line);
        if (a.stage == 255) cov.hit(k.sat);
      } else if (a.state == DcqcnRpState::kDecAlpha && b.check_at == b.rate_next && b.rate_armed) {
        cov.hit(k.tie);
      }
      break;
  }
  if (b.busy() && cmd) cov.hit(k.busy_ignored);
  if (p.g_shift != 8 && a.alpha != b.alpha) cov.hit(k.g_other);
  if (p.line == DcqcnRpModel::kRateMax && a.rc != b.rc) cov.hit(k.rate_max);
}

// Every input port of the cycle (the constants too: they are sampled in reset, held after it).
void log_inputs(Checker& ck, uint64_t c, const DcqcnRpParams& p, const DcqcnRpIn& in) {
  ck.input(c, "cnp", in.cnp);
  ck.input(c, "timer", in.timer);
  ck.input(c, "now", in.now);
  ck.input(c, "line_rate", p.line);
  ck.input(c, "ai_rate", p.ai);
  ck.input(c, "hai_rate", p.hai);
  ck.input(c, "min_rate", p.min);
  ck.input(c, "alpha_period", p.alpha_period);
  ck.input(c, "decrease_period", p.decrease_period);
  ck.input(c, "rate_period", p.rate_period);
  ck.input(c, "check_offset", p.check_offset);
  ck.input(c, "f_steps", p.f);
  ck.input(c, "g_shift", p.g_shift);
}

}  // namespace

RunStats run_dcqcn(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov) {
  const int mutant = opt.mutant ? opt.variant : 0;
  return run_dcqcn_on(
      [mutant](const DcqcnRpParams& p, bool traceable) {
        return rtl::DcqcnRpRtl::create(p, mutant, traceable);
      },
      opt, trace, ck, cov);
}

RunStats run_dcqcn_on(const DcqcnFactory& make, const Options& opt, const TraceSpec& trace,
                      Checker& ck, Coverage& cov) {
  Rng rng = Rng::derive(opt.seed, "cosim.dcqcn");
  TraceWindow tw(trace);
  auto rtl = make(hpcc400().p, tw.enabled());
  const Bins k(cov);
  RunStats st;
  int phase_index = 0;
  while (rtl->cycle() < opt.cycles) {
    const Phase ph = phase_index < kDirected ? directed(phase_index) : random_phase(rng);
    ++phase_index;
    tw.at(rtl->cycle(), *rtl);
    rtl->reset(ph.p);
    DcqcnRpModel model(ph.p);
    uint64_t now = rng.below(ph.p.decrease_period + 1);
    int steps = 0;
    const uint64_t end = rtl->cycle() + ph.cycles;
    while (rtl->cycle() < end && rtl->cycle() < opt.cycles) {
      const uint64_t c = rtl->cycle();
      tw.at(c, *rtl);
      const DcqcnRpRegs& m = model.regs();
      DcqcnRpIn in;
      if (!m.busy()) {
        if (rng.bernoulli(ph.cmd)) {
          const uint64_t nt = m.next_timer();
          if (rng.bernoulli(ph.cnp)) {
            in.cnp = true;
            in.timer = rng.below(50) == 0;
            const uint64_t gap =
                rng.bernoulli(ph.long_p)
                    ? rng.below(200 * std::max(ph.p.alpha_period, ph.p.decrease_period))
                    : rng.below(ph.gap_max + 1);
            // Before the timer that is due (the CC runs timers first), or anywhere.
            now += gap;
            if (nt != UINT64_MAX && now > nt && rng.bernoulli(0.8)) now = std::max(now - gap, nt);
          } else {
            in.timer = true;
            if (nt != UINT64_MAX && nt >= now && rng.bernoulli(0.8))
              now = nt;  // at the due time, as the NIC runs it
            else
              now += rng.below(ph.gap_max + 1);
          }
          in.now = now;
        }
      } else if (rng.below(8) == 0) {  // noise the block must ignore while busy
        in.cnp = rng.bernoulli(0.5);
        in.timer = !in.cnp;
        in.now = rng.next_u64();
      }
      if (!m.busy() && (in.cnp || in.timer)) ++st.transactions;
      log_inputs(ck, c, ph.p, in);
      const DcqcnRpRegs before = model.regs();
      const DcqcnRpRegs exp = model.tick(in);
      const DcqcnRpRegs got = rtl->begin(in);
      const bool ok = compare(ck, c, exp, got);
      if (tw.open()) rtl->set_expected(exp, !ok);
      rtl->finish();
      cover(cov, k, ph.p, in, before, model.regs(), steps);
    }
  }
  st.cycles = rtl->cycle();
  return st;
}

}  // namespace fabricsim::cosim
