// Ethernet Priority-based Flow Control (IEEE 802.1Qbb) with shared-buffer ingress accounting and
// headroom, plus the upstream sender's pause state.
//
// Hardware, receive side (PfcBuffer): the ingress admission of a shared-buffer switch per (port,
// priority group): a per-PG reserve, a shared pool with a dynamic threshold (a PG may grow while
// its shared bytes stay below alpha x free shared bytes, Choudhury & Hahne 1998) or a static xoff
// limit, and a headroom pool that absorbs what is still in flight after XOFF. A lossless PG whose
// shared use reaches its threshold goes XOFF: a PFC frame with `pause_quanta` (1 quantum = 512 bit
// times [V: 802.1Qbb / 802.3 Annex 31B]) is sent and refreshed before it expires; further arrivals
// are charged to headroom; when headroom is empty and shared use falls to threshold - xon_offset,
// an XON (quanta 0) is sent. Releases are charged to headroom first, then shared, then reserve.
// Lossy PGs never pause and drop at the threshold. Send side (PfcPauseState): a received PFC frame
// takes effect response_delay after it arrived (802.3 Annex 31B allows the MAC to finish the frame
// in progress and respond within a delay); a paused priority starts no new frame until quanta x 512
// bit times after the effect time. Headroom sizing: headroom_first_principles() (default) and
// headroom_mlx5(), see below and docs/link-layer.md.
#pragma once

#include <stdexcept>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/common/packet.h"
#include "models/common/span_log.h"
#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::link {

constexpr int kPfcPriorities = 8;

// Headroom per lossless PG (bytes arriving after the XOFF decision), 802.1Qbb-2011 Annex N style
// first-principles bound [R]: while the PFC frame waits behind a frame in progress on the reverse
// link (one MTU), is serialised (64 B), crosses the link (propagation + PHY latency), is acted on
// (response time) and the upstream finishes its own frame in progress (one MTU), and everything on
// the wire drains (propagation + PHY latency), data keeps arriving at line rate:
//   H = 2 x (MTU + 20) + (64 + 20) + speed x (2 x (cable_m x ns_per_m + phy_latency) + response)
// with 20 B of preamble/SFD + IFG per frame. `speed` is the MAC rate.
Bytes headroom_first_principles(double cable_m, double ns_per_m, BitRate speed, Bytes mtu,
                                Time response, Time phy_latency);
// Mellanox/NVIDIA mlx5 driver formula [V: hardware-facts.md, Linux mlx5 port_buffer.c]:
//   xoff = (301 + 2.16 x cable_m) x speed_Gbps + 2.72 x MTU   (bytes)
// The 301 B/Gbps term (~2.4 us at any speed) covers the NIC's response budget; 2.16 B/m/Gbps is
// ~8.6 ns/m each way.
Bytes headroom_mlx5(double cable_m, BitRate speed, Bytes mtu);

struct PfcConfig : config::Configurable {
  int64_t lossless_mask = 0;  // bit p set: priority p is lossless (PFC enabled)
  std::string threshold;      // dynamic | static
  double alpha = 1;
  Bytes xoff_static;  // static: shared bytes per PG at which XOFF is sent
  Bytes xon_offset;   // XON when shared use <= threshold - xon_offset
  Bytes reserve_per_pg;
  Bytes shared_pool;
  Bytes headroom_pool;           // 0: ports x lossless PGs x headroom (no oversubscription)
  std::string headroom_formula;  // first_principles | mlx5 | fixed
  Bytes headroom_fixed;
  Bytes mtu;
  Time response_delay;
  int64_t pause_quanta = 0;
  double refresh_fraction = 0.5;  // refresh the pause after this fraction of its duration

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
  bool lossless(int prio) const { return (lossless_mask >> prio) & 1; }
  // Headroom per lossless PG for a link of `cable_m` metres at `speed` with the given PHY latency.
  Bytes headroom(double cable_m, double ns_per_m, BitRate speed, Time phy_latency) const;
};

class PfcBuffer {
 public:
  enum class Admit : uint8_t { kReserve, kShared, kHeadroom, kDropped };

  // One buffer shared by `ports` ingress ports at `speed` (MAC rate, for the quantum length), with
  // `headroom_per_pg` bytes of headroom for each lossless PG.
  // `pool_ports` (-1: `ports`): the ports a headroom pool of 0 (ports x lossless PGs x headroom)
  // is sized for, when only `ports` of them keep accounts (the others never take any).
  PfcBuffer(const PfcConfig& cfg, int ports, BitRate speed, Bytes headroom_per_pg,
            int pool_ports = -1);

  // A frame of `bytes` arriving at (port, prio) at `now`. Drops are counted (lossless drops are a
  // headroom sizing failure). May turn the PG XOFF: poll_pause() then returns a frame.
  Admit admit(int port, int prio, uint32_t bytes, Time now);
  // A frame's bytes leave the buffer (charged to headroom, then shared, then reserve).
  void release(int port, int prio, uint32_t bytes, Time now);
  // A PFC frame for `port` is due now: XOFF/XON transitions and refreshes. Marks it sent at `now`
  // (the caller hands it to the link at once, ahead of data).
  bool poll_pause(int port, Time now, ControlFrame& out);
  // Earliest refresh due on `port` (Time::max() if no PG is XOFF).
  Time next_refresh(int port) const;
  // No PG of `port` XOFF or with a transition to announce: poll_pause() finds nothing and
  // next_refresh() is Time::max(), whatever the time.
  bool quiet(int port) const { return pending_[static_cast<size_t>(port)] == 0; }

  bool xoff(int port, int prio) const { return pg(port, prio).xoff; }
  bool lossless(int prio) const { return cfg_.lossless(prio); }
  // Priority groups in XOFF now (all ports).
  int xoff_count() const { return xoff_count_; }
  int64_t shared_threshold(int port, int prio) const;
  int64_t occupancy(int port, int prio) const {
    const Pg& g = pg(port, prio);
    return g.reserve + g.shared + g.headroom;
  }
  int64_t headroom_used(int port, int prio) const { return pg(port, prio).headroom; }
  int64_t headroom_peak(int port, int prio) const { return pg(port, prio).headroom_peak; }
  uint64_t drops(int port, int prio) const { return pg(port, prio).drops; }
  uint64_t pause_frames_sent(int port) const { return pause_sent_[port]; }
  uint64_t xoff_events(int port, int prio) const { return pg(port, prio).xoff_events; }
  // Accounts add up (per PG sums = pool use, nothing negative). Appends a message per violation.
  void check_invariants(std::vector<std::string>& violations) const;
  // XOFF-to-XON intervals of each PG go to `sink` (port = the PG's port); flush_spans() reports
  // those still open at `now`.
  void set_span_sink(const stats::SpanSink& sink) { spans_ = sink; }
  void flush_spans(Time now) const;

 private:
  struct Pg {
    int64_t reserve = 0, shared = 0, headroom = 0, headroom_peak = 0;
    bool xoff = false;
    bool changed = false;  // a transition not yet announced
    Time last_sent;
    Time xoff_since;  // when the PG last went XOFF
    uint64_t drops = 0, xoff_events = 0;
  };
  Pg& pg(int port, int prio) {
    if (prio < 0 || prio >= kPfcPriorities) throw std::out_of_range("PFC priority out of range");
    return pgs_[static_cast<size_t>(port) * kPfcPriorities + prio];
  }
  const Pg& pg(int port, int prio) const {
    return pgs_[static_cast<size_t>(port) * kPfcPriorities + prio];
  }
  void update_xon(int port, int prio, Time now);
  void go_xoff(Pg& g, Time now);

  PfcConfig cfg_;
  bool dynamic_;
  int64_t headroom_;
  int64_t headroom_pool_;
  Time pause_duration_;
  Time refresh_;
  std::vector<Pg> pgs_;
  // Per port, a bit per priority whose PG is XOFF or has a transition to announce: poll_pause
  // runs before every frame a port sends, and a port with none has nothing to look at.
  std::vector<uint8_t> pending_;
  static_assert(kPfcPriorities <= 8, "pending_ holds a bit per priority");
  std::vector<uint64_t> pause_sent_;
  int64_t shared_used_ = 0, headroom_used_ = 0;
  int xoff_count_ = 0;
  stats::SpanSink spans_;
};

// Pause state of one egress port's transmitter (the upstream side of a link).
class PfcPauseState {
 public:
  PfcPauseState(BitRate speed, Time response_delay);
  // A PFC frame that arrived (last bit) at `now`; takes effect at now + response_delay.
  void on_pause_frame(const ControlFrame& f, Time now);
  // May a frame of priority `prio` start at `now`? Times must not decrease from call to call,
  // here and below: the state is cached until its next change.
  bool can_send(int prio, Time now) { return !((paused_mask(now) >> prio) & 1); }
  // The priorities paused at `now`, a bit each.
  uint32_t paused_mask(Time now) {
    if (now >= stable_until_) refresh(now);
    return mask_;
  }
  // The next time any priority's pause state changes (Time::max() if none pending).
  Time next_change(Time now) {
    if (now >= stable_until_) refresh(now);
    return stable_until_;
  }
  Time paused_time(int prio, Time now);  // total time prio was paused up to now
  // False until the first PFC frame arrives: no priority has been paused (most ports of a
  // fabric, whose statistics then need no per-priority reading).
  bool ever_paused() const { return prio_ != nullptr; }
  uint64_t frames_received() const { return received_; }
  Time quantum() const { return quantum_; }
  // Paused intervals of each priority go to `sink` (at `port`); flush_spans() reports those still
  // open at `now`.
  void set_span_sink(const stats::SpanSink& sink, int port) {
    spans_ = sink;
    port_ = port;
  }
  void flush_spans(Time now);

 private:
  static constexpr int kPending = 8;
  struct Pending {
    Time at;
    Time duration;
  };
  struct Prio {
    Pending q[kPending];
    int head = 0, n = 0;
    Time since, until;  // current (or last) paused interval [since, until)
    Time acc;           // paused time of closed intervals
  };
  void apply(Prio& p, Time now);
  void effect(Prio& p, Time at, Time duration);
  // Applies what is due at `now` to every priority, and caches the paused set with the time it
  // next changes: hosts and switch ports ask on every frame, and nothing changes in between
  // unless a frame arrives.
  void refresh(Time now);

  // The priorities' state, made at the port's first PFC frame: ~1.3 KB a port that most ports
  // of a fabric's chips never need (a k = 8 fat tree wires 8 of a 64-port chip's ports), and
  // that first touching cost the run's set-up. Until then no priority has been paused.
  Prio* prios() {
    if (!prio_) prio_.reset(new Prio[kPfcPriorities]);
    return prio_.get();
  }

  Time quantum_;
  Time delay_;
  std::unique_ptr<Prio[]> prio_;
  uint32_t mask_ = 0;
  Time stable_until_;  // mask_ holds until then (Time(): recompute)
  uint64_t received_ = 0;
  stats::SpanSink spans_;
  int port_ = 0;
};

}  // namespace fabricsim::link
