#include "models/link/flow_control.h"

#include <algorithm>

#include <fmt/format.h>

namespace fabricsim::link {

void FlowControlConfig::visit(config::Visitor& v) {
  v.choice(
      "mode", mode, "none", {"none", "pfc", "credit"},
      "none: lossy (tail drop at the buffer). pfc: Ethernet priority flow control with "
      "headroom (RoCE). credit: credit-based link-level flow control (InfiniBand, or UEC CBFC: "
      "credit.protocol).");
  v.applies_when("pfc", "{mode}: pfc", [this] { return pfc_mode(); });
  v.applies_when("credit", "{mode}: credit", [this] { return credit_mode(); });
  v.begin_section("pfc", "Ethernet PFC (802.1Qbb): thresholds, headroom, pause frames.");
  pfc.visit(v);
  v.end_section();
  v.begin_section(
      "credit",
      "Link-level credits (InfiniBand, or UEC CBFC): per-VL receive buffers, credit updates, "
      "VL arbitration.");
  credit.visit(v);
  v.end_section();
  v.begin_section("ecn", "ECN marking at the egress queues (RED-style, DCQCN convention).");
  ecn.visit(v);
  v.end_section();
}

void FlowControlConfig::validate(const config::Checker& c) const {
  pfc.validate(c.under("pfc"));
  credit.validate(c.under("credit"));
  ecn.validate(c.under("ecn"));
}

FlowControl::FlowControl(const FlowControlConfig& cfg, int ports, BitRate speed,
                         Bytes headroom_per_pg, Bytes shared_pool, uint32_t fc_frame_bytes,
                         const CreditUnitFactory& make_credit_unit, int pool_ports)
    : mode_(cfg.pfc_mode()      ? Mode::kPfc
            : cfg.credit_mode() ? Mode::kCredit
                                : Mode::kNone),
      fc_bytes_(fc_frame_bytes) {
  if (mode_ == Mode::kPfc) {
    PfcConfig pc = cfg.pfc;
    pc.shared_pool = shared_pool;
    pfc_buf_ = std::make_unique<PfcBuffer>(pc, ports, speed, headroom_per_pg, pool_ports);
    pause_.reserve(static_cast<size_t>(ports));
    for (int p = 0; p < ports; ++p) pause_.emplace_back(speed, cfg.pfc.response_delay);
  } else if (mode_ == Mode::kCredit) {
    sl2vl_ = std::make_unique<SlToVl>(cfg.credit);
    credit_shift_ = cfg.credit.unit_shift();
    const auto initial = static_cast<uint16_t>(
        std::min<int64_t>(cfg.credit.buffer_blocks(), CreditUnitModel::kMaxAhead));
    initial_credits_ = initial;
    tx_.reserve(static_cast<size_t>(ports));
    for (int p = 0; p < ports; ++p) tx_.emplace_back(cfg.credit, initial, make_credit_unit);
    rx_.assign(static_cast<size_t>(ports), IbCreditReceiver(cfg.credit));
    fc_pending_.assign(static_cast<size_t>(ports), 0);
  }
}

Bytes FlowControl::pfc_shared_pool(const FlowControlConfig& cfg, Bytes buffer, int ports,
                                   Bytes headroom_per_pg) {
  if (!cfg.pfc_mode()) return buffer;
  const int lossless = __builtin_popcount(static_cast<unsigned>(cfg.pfc.lossless_mask & 0xff));
  const uint64_t reserves =
      cfg.pfc.reserve_per_pg.count() * static_cast<uint64_t>(ports) * kPfcPriorities;
  const uint64_t headroom = cfg.pfc.headroom_pool.count()
                                ? cfg.pfc.headroom_pool.count()
                                : headroom_per_pg.count() * static_cast<uint64_t>(ports) * lossless;
  const uint64_t left =
      buffer.count() > reserves + headroom ? buffer.count() - reserves - headroom : 0;
  // A configured pool is used as given when it fits; 0 means all that is left.
  if (cfg.pfc.shared_pool.count() == 0) return Bytes(left);
  return Bytes(cfg.pfc.shared_pool.count() <= left ? cfg.pfc.shared_pool.count() : 0);
}

bool FlowControl::admit(int port, int prio, uint32_t bytes, Time now) {
  switch (mode_) {
    case Mode::kPfc:
      return pfc_buf_->admit(port, prio, bytes, now) != PfcBuffer::Admit::kDropped;
    case Mode::kCredit:
      return rx_[port].on_packet(vl_of(prio), bytes, now);
    case Mode::kNone:
      break;
  }
  return true;
}

void FlowControl::release(int port, int prio, uint32_t bytes, Time now) {
  if (mode_ == Mode::kPfc) pfc_buf_->release(port, prio, bytes, now);
  if (mode_ == Mode::kCredit) rx_[port].release(vl_of(prio), bytes, now);
}

uint32_t FlowControl::paused(int port, Time now) {
  if (mode_ != Mode::kPfc) return 0;
  return pause_[port].paused_mask(now);
}

int FlowControl::select_class(int port, Time now, const uint64_t* class_head_bytes, int classes) {
  uint32_t vl_head[16] = {};  // per VL (IB has at most 16)
  for (int c = 0; c < classes; ++c)
    if (class_head_bytes[c] && !vl_head[vl_of(c)])
      vl_head[vl_of(c)] = static_cast<uint32_t>(class_head_bytes[c]);
  const int vl = tx_[port].select(now, vl_head);
  for (int c = 0; c < classes && vl >= 0; ++c)
    if (class_head_bytes[c] && vl_of(c) == vl) return c;
  return -1;
}

void FlowControl::on_send(int port, int prio, uint32_t bytes, Time now) {
  if (mode_ == Mode::kCredit) tx_[port].send(vl_of(prio), bytes, now);
}

Time FlowControl::next_unblock(int port, Time now) {
  // PFC: a pause ends or takes effect; credits: only an arriving FC packet unblocks.
  return mode_ == Mode::kPfc ? pause_[port].next_change(now) : Time::max();
}

void FlowControl::on_control_in_wire_order(int port, const ControlFrame& f) {
  // The peer's transmitter count resynchronises our receiver (blocks lost on the wire).
  if (f.kind == ControlFrame::Kind::kCredit && mode_ == Mode::kCredit)
    rx_[port].on_fc_packet(f.vl, f.fctbs);
}

void FlowControl::on_control(int port, const ControlFrame& f, Time arrival) {
  if (f.kind == ControlFrame::Kind::kPause) {
    if (mode_ != Mode::kPfc) return;  // a MAC without PFC ignores PAUSE frames
    pause_[port].on_pause_frame(f, arrival);
  } else if (mode_ == Mode::kCredit) {
    tx_[port].on_fc_packet(f.vl, f.fccl, arrival);  // the peer receiver's limit feeds our sender
  }
}

bool FlowControl::take_control(int port, Time now, ControlFrame& out) {
  if (mode_ == Mode::kPfc) return pfc_buf_->poll_pause(port, now, out);
  if (mode_ != Mode::kCredit) return false;
  uint32_t& due = fc_pending_[port];
  if (!due) due = rx_[port].fc_due(now);
  if (!due) return false;
  const int vl = __builtin_ctz(due);
  due &= due - 1;
  out = ControlFrame{};
  out.kind = ControlFrame::Kind::kCredit;
  out.vl = static_cast<uint8_t>(vl);
  out.fctbs = tx_[port].fctbs(vl);
  out.fccl = rx_[port].fccl(vl);
  out.bytes = fc_bytes_;
  rx_[port].fc_sent(vl, now);
  return true;
}

Time FlowControl::next_control(int port) const {
  if (mode_ == Mode::kPfc) return pfc_buf_->next_refresh(port);
  if (mode_ == Mode::kCredit) return rx_[port].next_fc_timer();
  return Time::max();
}

int64_t FlowControl::ingress_held(int port, int key) const {
  if (mode_ == Mode::kPfc) return pfc_buf_->occupancy(port, key);
  if (mode_ == Mode::kCredit) return rx_[port].used_blocks(key);
  return 0;
}

uint64_t FlowControl::overflow_drops() const {
  uint64_t n = 0;
  for (const auto& r : rx_) n += r.overflow_drops();
  return n;
}

FlowControl::PortStats FlowControl::PortStats::since(const PortStats& start) const {
  PortStats d = *this;
  d.pause_sent -= start.pause_sent;
  d.pause_received -= start.pause_received;
  d.fc_packets_sent -= start.fc_packets_sent;
  d.lossless_drops -= start.lossless_drops;
  d.paused_ns -= start.paused_ns;
  d.credit_stall_ns -= start.credit_stall_ns;
  for (int p = 0; p < kPfcPriorities; ++p) d.paused_ns_by_prio[p] -= start.paused_ns_by_prio[p];
  for (int v = 0; v < CreditUnitModel::kMaxVls; ++v)
    d.credit_stall_ns_by_vl[v] -= start.credit_stall_ns_by_vl[v];
  return d;
}

void FlowControl::PortStats::add(const PortStats& o) {
  pause_sent += o.pause_sent;
  pause_received += o.pause_received;
  fc_packets_sent += o.fc_packets_sent;
  lossless_drops += o.lossless_drops;
  paused_ns += o.paused_ns;
  credit_stall_ns += o.credit_stall_ns;
  headroom_peak_bytes = std::max(headroom_peak_bytes, o.headroom_peak_bytes);
  xoff_pgs += o.xoff_pgs;
  paused_prios += o.paused_prios;
  credits_outstanding += o.credits_outstanding;
  for (int p = 0; p < kPfcPriorities; ++p) paused_ns_by_prio[p] += o.paused_ns_by_prio[p];
  for (int v = 0; v < CreditUnitModel::kMaxVls; ++v)
    credit_stall_ns_by_vl[v] += o.credit_stall_ns_by_vl[v];
}

FlowControl::PortStats FlowControl::port_stats(int port, Time now) {
  PortStats s;
  if (mode_ == Mode::kPfc) {
    s.pause_sent = pfc_buf_->pause_frames_sent(port);
    PfcPauseState& ps = pause_[port];
    s.pause_received = ps.frames_received();
    // A transmitter never paused has nothing to read per priority (its times stay 0).
    const bool paused_ever = ps.ever_paused();
    for (int p = 0; p < kPfcPriorities; ++p) {
      if (paused_ever) {
        s.paused_ns_by_prio[p] = ps.paused_time(p, now).as_ns();
        s.paused_ns += s.paused_ns_by_prio[p];
        if (!ps.can_send(p, now)) ++s.paused_prios;
      }
      s.headroom_peak_bytes = std::max(s.headroom_peak_bytes, pfc_buf_->headroom_peak(port, p));
      if (pfc_buf_->xoff(port, p)) ++s.xoff_pgs;
      if (pfc_buf_->lossless(p)) s.lossless_drops += pfc_buf_->drops(port, p);
    }
  } else if (mode_ == Mode::kCredit) {
    s.fc_packets_sent = rx_[port].fc_packets_sent();
    for (int vl = 0; vl < tx_[port].vls(); ++vl) {
      s.credit_stall_ns_by_vl[vl] = tx_[port].stall_time(vl, now).as_ns();
      s.credit_stall_ns += s.credit_stall_ns_by_vl[vl];
      s.credits_outstanding += initial_credits_ - tx_[port].available(vl);
    }
  }
  return s;
}

void FlowControl::set_span_sink(const stats::SpanSink& sink) {
  if (pfc_buf_) pfc_buf_->set_span_sink(sink);
  for (size_t p = 0; p < pause_.size(); ++p) pause_[p].set_span_sink(sink, static_cast<int>(p));
  for (size_t p = 0; p < tx_.size(); ++p) tx_[p].set_span_sink(sink, static_cast<int>(p));
}

void FlowControl::flush_spans(Time now) {
  if (pfc_buf_) pfc_buf_->flush_spans(now);
  for (auto& p : pause_) p.flush_spans(now);
  for (const auto& t : tx_) t.flush_spans(now);
}

void FlowControl::register_stats(stats::Registry& r, int port, const std::string& prefix) {
  const Time now = r.read_at();
  // Sums over priorities and VLs come from port_stats(), so they match ports.csv's columns.
  if (mode_ == Mode::kPfc) {
    r.counter_fn(prefix + ".pause_frames_sent",
                 [this, port] { return pfc_buf_->pause_frames_sent(port); });
    r.counter_fn(prefix + ".pause_frames_received",
                 [this, port] { return pause_[port].frames_received(); });
    r.value_fn(prefix + ".paused_ns",
               [this, port, now] { return port_stats(port, now).paused_ns; });
    r.counter_fn(prefix + ".headroom_peak_bytes", [this, port, now] {
      return static_cast<uint64_t>(port_stats(port, now).headroom_peak_bytes);
    });
    r.counter_fn(prefix + ".lossless_drops",
                 [this, port, now] { return port_stats(port, now).lossless_drops; });
  } else if (mode_ == Mode::kCredit) {
    r.counter_fn(prefix + ".fc_packets_sent", [this, port] { return rx_[port].fc_packets_sent(); });
    r.value_fn(prefix + ".credit_stall_ns",
               [this, port, now] { return port_stats(port, now).credit_stall_ns; });
  }
}

void FlowControl::check_invariants(std::vector<std::string>& violations) const {
  if (pfc_buf_) pfc_buf_->check_invariants(violations);
  if (overflow_drops())
    violations.push_back(fmt::format("credit flow control: {} packets overflowed a receive buffer",
                                     overflow_drops()));
}

}  // namespace fabricsim::link
