#include "models/link/pfc.h"

#include <algorithm>
#include <cmath>

namespace fabricsim::link {

Bytes headroom_first_principles(double cable_m, double ns_per_m, BitRate speed, Bytes mtu,
                                Time response, Time phy_latency) {
  // Exact integer arithmetic (fs x bit/s) so that round numbers stay round.
  const Time one_way = Time::fs(std::llround(cable_m * ns_per_m * 1e6)) + phy_latency;
  const Time t = one_way * 2 + response;
  const unsigned __int128 bits = static_cast<unsigned __int128>(t.as_fs()) * speed.as_bps();
  const unsigned __int128 den = 8 * 1000000000000000ull;
  const uint64_t in_flight = static_cast<uint64_t>((bits + den - 1) / den);
  return Bytes(2 * (mtu.count() + 20) + (64 + 20) + in_flight);
}

Bytes headroom_mlx5(double cable_m, BitRate speed, Bytes mtu) {
  const double x =
      (301 + 2.16 * cable_m) * speed.as_gbps() + 2.72 * static_cast<double>(mtu.count());
  return Bytes(static_cast<uint64_t>(std::ceil(x)));
}

void PfcConfig::visit(config::Visitor& v) {
  v.param("lossless_mask", lossless_mask, 0x08, 0, 0xff, "bitmask",
          "Priorities with PFC (lossless); default priority 3 as in NVIDIA's RoCE QoS [V].");
  v.choice("threshold", threshold, "dynamic", {"dynamic", "static"},
           "XOFF threshold on a PG's shared use: dynamic (alpha x free shared pool) or static.");
  v.applies_when("alpha", "{threshold}: dynamic", [this] { return threshold == "dynamic"; });
  v.applies_when("xoff_static", "{threshold}: static", [this] { return threshold == "static"; });
  v.param("alpha", alpha, 1.0, 1.0 / 1024, 1024.0, "ratio",
          "Dynamic threshold factor (SONiC dynamic_th 0 = alpha 1 [R]).");
  v.param("xoff_static", xoff_static, Bytes(65536), Bytes(1), Bytes(1ull << 36),
          "Static mode: shared bytes per PG at which XOFF is sent; sweep it.");
  v.param("xon_offset", xon_offset, Bytes(3556), Bytes(0), Bytes(1ull << 36),
          "XON once shared use <= threshold - xon_offset (Tomahawk 5 400G lossless profile [V]).");
  v.param("reserve_per_pg", reserve_per_pg, Bytes(18796), Bytes(0), Bytes(1ull << 36),
          "Guaranteed bytes per (port, PG) (Tomahawk 5 400G lossless profile size [V]).");
  v.param("shared_pool", shared_pool, Bytes(0), Bytes(0), Bytes(1ull << 40),
          "Shared pool the PGs draw on. 0 = the switch buffer less the reserves and the headroom "
          "pool; a larger value than that is an error.");
  v.param("headroom_pool", headroom_pool, Bytes(0), Bytes(0), Bytes(1ull << 40),
          "Headroom pool; 0 = ports x lossless PGs x headroom (no oversubscription).");
  v.choice("headroom_formula", headroom_formula, "first_principles",
           {"first_principles", "mlx5", "fixed"},
           "Headroom per lossless PG: first_principles (802.1Qbb Annex N style [R]), mlx5 "
           "(driver formula [V]) or fixed (headroom_fixed).");
  v.applies_when("headroom_fixed", "{headroom_formula}: fixed",
                 [this] { return headroom_formula == "fixed"; });
  v.param("headroom_fixed", headroom_fixed, Bytes(612140), Bytes(0), Bytes(1ull << 36),
          "Headroom when headroom_formula = fixed (Tomahawk 5 400G profile xoff [V]).");
  v.param("mtu", mtu, Bytes(9216), Bytes(64), Bytes(16384), "Largest frame, for headroom [R].");
  v.param("response_delay", response_delay, Time::ns(2017), Time(), Time::us(100),
          "Upstream reaction time from a PFC frame's arrival to its effect (802.3 Annex 31B: "
          "394 quanta at 100G = 2.02 us [R]); sweep it.");
  v.param("pause_quanta", pause_quanta, 65535, 1, 65535, "quanta",
          "Pause time sent with XOFF, in 512-bit-time quanta.");
  v.param("refresh_fraction", refresh_fraction, 0.5, 0.01, 1.0, "ratio",
          "Re-send the pause after this fraction of its duration while still congested.");
}

void PfcConfig::validate(const config::Checker& c) const {
  // (A dynamic threshold moves with the free space; with a derived pool (0) it is checked
  // against the switch buffer by the run configuration.)
  const uint64_t limit = threshold == "static" ? xoff_static.count() : shared_pool.count();
  c.require(limit == 0 || xon_offset.count() < limit, "xon_offset",
            "must be below the XOFF threshold");
}

Bytes PfcConfig::headroom(double cable_m, double ns_per_m, BitRate speed, Time phy_latency) const {
  if (headroom_formula == "mlx5") return headroom_mlx5(cable_m, speed, mtu);
  if (headroom_formula == "fixed") return headroom_fixed;
  return headroom_first_principles(cable_m, ns_per_m, speed, mtu, response_delay, phy_latency);
}

PfcBuffer::PfcBuffer(const PfcConfig& cfg, int ports, BitRate speed, Bytes headroom_per_pg,
                     int pool_ports)
    : cfg_(cfg),
      dynamic_(cfg.threshold != "static"),
      headroom_(static_cast<int64_t>(headroom_per_pg.count())),
      pgs_(static_cast<size_t>(ports) * kPfcPriorities),
      pending_(static_cast<size_t>(ports), 0),
      pause_sent_(static_cast<size_t>(ports), 0) {
  const int lossless = __builtin_popcount(static_cast<unsigned>(cfg.lossless_mask & 0xff));
  headroom_pool_ = cfg.headroom_pool.count() ? static_cast<int64_t>(cfg.headroom_pool.count())
                                             : headroom_ * std::max(ports, pool_ports) * lossless;
  const Time quantum = speed.serialization(Bytes(64));  // 512 bit times
  pause_duration_ = quantum * cfg.pause_quanta;
  refresh_ =
      Time::fs(std::llround(static_cast<double>(pause_duration_.as_fs()) * cfg.refresh_fraction));
}

int64_t PfcBuffer::shared_threshold(int port, int prio) const {
  (void)port, (void)prio;
  if (!dynamic_) return static_cast<int64_t>(cfg_.xoff_static.count());
  const int64_t free = static_cast<int64_t>(cfg_.shared_pool.count()) - shared_used_;
  return static_cast<int64_t>(cfg_.alpha * static_cast<double>(std::max<int64_t>(free, 0)));
}

void PfcBuffer::go_xoff(Pg& g, Time now) {
  g.xoff = g.changed = true;
  const auto i = static_cast<size_t>(&g - pgs_.data());
  pending_[i / kPfcPriorities] |= static_cast<uint8_t>(1u << (i % kPfcPriorities));
  g.xoff_since = now;
  ++xoff_count_;
  ++g.xoff_events;
}

PfcBuffer::Admit PfcBuffer::admit(int port, int prio, uint32_t bytes, Time now) {
  Pg& g = pg(port, prio);
  const int64_t b = bytes;
  if (g.reserve + b <= static_cast<int64_t>(cfg_.reserve_per_pg.count())) {
    g.reserve += b;
    return Admit::kReserve;
  }
  const bool lossless = cfg_.lossless(prio);
  if (!g.xoff) {
    const bool pool_ok = shared_used_ + b <= static_cast<int64_t>(cfg_.shared_pool.count());
    if (pool_ok && g.shared < shared_threshold(port, prio)) {
      // Admitted below the threshold (it may overshoot by this frame); XOFF once it is reached.
      g.shared += b;
      shared_used_ += b;
      if (lossless && g.shared >= shared_threshold(port, prio)) go_xoff(g, now);
      return Admit::kShared;
    }
    if (!lossless) {
      ++g.drops;
      return Admit::kDropped;
    }
    go_xoff(g, now);
  }
  if (lossless && g.headroom + b <= headroom_ && headroom_used_ + b <= headroom_pool_) {
    g.headroom += b;
    headroom_used_ += b;
    g.headroom_peak = std::max(g.headroom_peak, g.headroom);
    return Admit::kHeadroom;
  }
  ++g.drops;
  return Admit::kDropped;
}

void PfcBuffer::release(int port, int prio, uint32_t bytes, Time now) {
  Pg& g = pg(port, prio);
  int64_t b = bytes;
  const int64_t h = std::min(b, g.headroom);
  g.headroom -= h, headroom_used_ -= h, b -= h;
  const int64_t s = std::min(b, g.shared);
  g.shared -= s, shared_used_ -= s, b -= s;
  g.reserve -= b;
  update_xon(port, prio, now);
}

void PfcBuffer::update_xon(int port, int prio, Time now) {
  Pg& g = pg(port, prio);
  if (!g.xoff || g.headroom > 0) return;
  const int64_t xon = shared_threshold(port, prio) - static_cast<int64_t>(cfg_.xon_offset.count());
  if (g.shared <= std::max<int64_t>(xon, 0)) {
    g.xoff = false;
    --xoff_count_;
    g.changed = true;
    spans_.add(stats::SpanKind::kXoff, port, prio, g.xoff_since, now);
  }
}

bool PfcBuffer::poll_pause(int port, Time now, ControlFrame& out) {
  if (!pending_[port]) return false;  // no PG XOFF, no transition: nothing due
  out = ControlFrame{};
  out.kind = ControlFrame::Kind::kPause;
  out.bytes = 64;  // a minimum-size MAC control frame
  bool due = false;
  for (int p = 0; p < kPfcPriorities; ++p) {
    update_xon(port, p, now);  // the dynamic threshold may have moved with other ports' releases
    const Pg& g = pg(port, p);
    due = due || g.changed || (g.xoff && now >= g.last_sent + refresh_);
  }
  if (!due) return false;
  // One frame announces every transition and refreshes every XOFF priority of the port.
  for (int p = 0; p < kPfcPriorities; ++p) {
    Pg& g = pg(port, p);
    if (!g.changed && !g.xoff) continue;
    out.enable |= static_cast<uint8_t>(1u << p);
    out.quanta[p] = g.xoff ? static_cast<uint16_t>(cfg_.pause_quanta) : 0;
    g.changed = false;
    g.last_sent = now;
    if (!g.xoff) pending_[port] &= static_cast<uint8_t>(~(1u << p));
  }
  ++pause_sent_[port];
  return true;
}

void PfcBuffer::flush_spans(Time now) const {
  for (size_t i = 0; i < pgs_.size(); ++i)
    if (pgs_[i].xoff)
      spans_.add(stats::SpanKind::kXoff, static_cast<int>(i / kPfcPriorities),
                 static_cast<int>(i % kPfcPriorities), pgs_[i].xoff_since, now);
}

Time PfcBuffer::next_refresh(int port) const {
  Time t = Time::max();
  if (!pending_[port]) return t;
  for (int p = 0; p < kPfcPriorities; ++p)
    if (pg(port, p).xoff) t = std::min(t, pg(port, p).last_sent + refresh_);
  return t;
}

void PfcBuffer::check_invariants(std::vector<std::string>& violations) const {
  int64_t shared = 0, headroom = 0;
  for (size_t i = 0; i < pgs_.size(); ++i) {
    const Pg& g = pgs_[i];
    if (g.reserve < 0 || g.shared < 0 || g.headroom < 0 || g.headroom > headroom_)
      violations.push_back("PFC PG " + std::to_string(i) + ": account out of range");
    shared += g.shared;
    headroom += g.headroom;
  }
  if (shared != shared_used_ || shared_used_ > static_cast<int64_t>(cfg_.shared_pool.count()))
    violations.push_back("PFC shared pool use " + std::to_string(shared_used_) +
                         " != sum over PGs " + std::to_string(shared));
  if (headroom != headroom_used_ || headroom_used_ > headroom_pool_)
    violations.push_back("PFC headroom pool use " + std::to_string(headroom_used_) +
                         " != sum over PGs " + std::to_string(headroom));
}

PfcPauseState::PfcPauseState(BitRate speed, Time response_delay)
    : quantum_(speed.serialization(Bytes(64))), delay_(response_delay) {}

void PfcPauseState::effect(Prio& p, Time at, Time duration) {
  if (p.until <= at) {  // not paused at `at`: close the old interval, open a new one
    if (p.until > p.since)
      spans_.add(stats::SpanKind::kPaused, port_, static_cast<int>(&p - prio_.get()), p.since,
                 p.until);
    p.acc += p.until - p.since;
    p.since = at;
  }
  p.until = at + duration;  // extend, or cut short (XON: duration 0)
}

void PfcPauseState::apply(Prio& p, Time now) {
  while (p.n && p.q[p.head].at <= now) {
    effect(p, p.q[p.head].at, p.q[p.head].duration);
    p.head = (p.head + 1) % kPending;
    --p.n;
  }
}

void PfcPauseState::on_pause_frame(const ControlFrame& f, Time now) {
  ++received_;
  stable_until_ = Time();
  Prio* prio = prios();
  for (int i = 0; i < kPfcPriorities; ++i) {
    if (!((f.enable >> i) & 1)) continue;
    Prio& p = prio[i];
    apply(p, now);
    if (p.n == kPending) {  // more than kPending frames within one response delay: merge oldest
      effect(p, p.q[p.head].at, p.q[p.head].duration);
      p.head = (p.head + 1) % kPending;
      --p.n;
    }
    p.q[(p.head + p.n) % kPending] = {now + delay_, quantum_ * f.quanta[i]};
    ++p.n;
  }
}

void PfcPauseState::refresh(Time now) {
  Time t = Time::max();
  uint32_t mask = 0;
  for (int i = 0; prio_ && i < kPfcPriorities; ++i) {
    Prio& p = prio_[i];
    apply(p, now);
    if (p.n) t = std::min(t, p.q[p.head].at);
    if (p.until > now) {
      t = std::min(t, p.until);
      mask |= 1u << i;
    }
  }
  mask_ = mask;
  stable_until_ = t;
}

void PfcPauseState::flush_spans(Time now) {
  for (int i = 0; prio_ && i < kPfcPriorities; ++i) {
    Prio& p = prio_[i];
    apply(p, now);
    const Time end = std::min(now, p.until);
    if (end > p.since) spans_.add(stats::SpanKind::kPaused, port_, i, p.since, end);
  }
}

Time PfcPauseState::paused_time(int prio, Time now) {
  if (!prio_) return Time();  // never paused
  Prio& p = prio_[prio];
  apply(p, now);
  return p.acc + (std::min(now, p.until) - p.since);
}

}  // namespace fabricsim::link
