// Link-level flow control of all ports of one device (a switch, or the hosts): none, Ethernet
// PFC (802.1Qbb) or InfiniBand credits, behind one interface that the switch core and the host
// MACs share.
//
// Per port, for the frames the port receives from its peer (ingress):
//   pfc    - PfcBuffer admission per (port, priority) with headroom; XOFF/XON/refresh PAUSE frames
//            to send back to the peer;
//   credit - IbCreditReceiver per VL (priority -> VL through the SL2VL table): blocks occupied on
//            arrival, freed on departure; FC packets (FCTBS of our transmitter, FCCL of our
//            receiver) on the timer and on release.
// and for the frames it sends to its peer (egress):
//   pfc    - PfcPauseState: paused priorities start no new frame;
//   credit - IbCreditSender: VL arbitration among VLs with enough credit.
// Control frames (ControlFrame) to send are polled with take_control() and go out ahead of data
// at the next frame boundary; control frames that arrive are applied with on_control().
// Parameters that matter: mode, the PFC thresholds/headroom and pause quanta, the IB buffer per
// VL, FC period and release threshold, VL arbitration tables.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/common/packet.h"
#include "models/common/stats.h"
#include "models/config/config.h"
#include "models/link/ecn_marker.h"
#include "models/link/ib_credit.h"
#include "models/link/pfc.h"

namespace fabricsim::link {

struct FlowControlConfig : config::Configurable {
  std::string mode;  // none | pfc | credit
  PfcConfig pfc;
  IbCreditConfig credit;
  EcnConfig ecn;

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;
  bool pfc_mode() const { return mode == "pfc"; }
  bool credit_mode() const { return mode == "credit"; }
};

class FlowControl {
 public:
  // `ports` ports at MAC rate `speed`; `headroom_per_pg` (PFC) sized by the caller for its links;
  // `shared_pool` (PFC) the bytes of the device's buffer the PGs share; `fc_frame_bytes` (credit)
  // the size of an FC packet without framing.
  // `make_credit_unit` builds the credit senders' counters (null: the model).
  // `pool_ports` (-1: `ports`): the ports PFC's headroom pool is sized for, when the device has
  // more than the `ports` with state of their own (sw::SwitchCore's idle port).
  FlowControl(const FlowControlConfig& cfg, int ports, BitRate speed, Bytes headroom_per_pg,
              Bytes shared_pool, uint32_t fc_frame_bytes,
              const CreditUnitFactory& make_credit_unit = nullptr, int pool_ports = -1);

  // PFC: the bytes of a `buffer` that the PGs share once reserves (per port and priority) and
  // headroom (per lossless PG) are set aside; 0 if they do not fit. Other modes: the buffer.
  static Bytes pfc_shared_pool(const FlowControlConfig& cfg, Bytes buffer, int ports,
                               Bytes headroom_per_pg);

  bool enabled() const { return mode_ != Mode::kNone; }
  bool pfc() const { return mode_ == Mode::kPfc; }
  bool credit() const { return mode_ == Mode::kCredit; }
  int vl_of(int prio) const { return sl2vl_ ? sl2vl_->vl(prio) : prio; }
  // Credits a packet of `bytes` takes (credit mode; the protocol's unit).
  uint32_t credits_of(uint32_t bytes) const { return credit_blocks(bytes, credit_shift_); }

  // --- ingress ---
  // PFC: admission of `bytes` on (port, prio) at `now` (false: dropped; lossless drops mean the
  // headroom was too small). Credit: the blocks are taken on arrival; false would be an overflow
  // (impossible with credits, counted). None: true.
  bool admit(int port, int prio, uint32_t bytes, Time now);
  void release(int port, int prio, uint32_t bytes, Time now);

  // --- egress ---
  // Priorities that may not start a frame on `port` at `now` (PFC), as a bit mask.
  uint32_t paused(int port, Time now);
  // Credit: the class to send on `port`, given each class's head packet size (0 = empty), or -1.
  // VL arbitration among the VLs whose head packet (that of the VL's first non-empty class) has
  // the credits it needs.
  int select_class(int port, Time now, const uint64_t* class_head_bytes, int classes);
  // A frame of `bytes` of priority `prio` starts on `port` (credit: consumes credit).
  void on_send(int port, int prio, uint32_t bytes, Time now);
  // When a port blocked by flow control should look again (Time::max(): only when a control
  // frame arrives).
  Time next_unblock(int port, Time now);

  // --- control frames ---
  // A control frame from the peer on `port`. Its effects on the receive side (IB: the ABR resync
  // from the peer's FCTBS) must follow wire order with the data frames the port receives: call
  // on_control_in_wire_order() when frames are handed over, in order. The rest (PFC pause state,
  // the IB sender's new credit limit) happens at `now` >= its arrival, in time order:
  // on_control(). Callers that apply everything in arrival order call both, in that order.
  void on_control_in_wire_order(int port, const ControlFrame& f);
  void on_control(int port, const ControlFrame& f, Time now);
  // The next control frame `port` must send at `now`, if any.
  bool take_control(int port, Time now, ControlFrame& out);
  // When `port` next has a control frame due by a timer (Time::max() if none).
  Time next_control(int port) const;
  // take_control() would find nothing and change nothing, and next_control() is Time::max():
  // no flow control, or PFC with nothing to announce on `port` (most looks at a lossless port,
  // one after every admission and departure).
  bool control_quiet(int port) const {
    return mode_ == Mode::kNone || (mode_ == Mode::kPfc && pfc_buf_->quiet(port));
  }

  // --- statistics and checks ---
  // What the ingress accounts hold for `port`: PFC bytes of priority `key`, or credit blocks of
  // VL `key` (0 otherwise). Conservation checks compare it with the packets actually resident.
  int64_t ingress_held(int port, int key) const;
  const PfcBuffer* pfc_buffer() const { return pfc_buf_.get(); }
  uint64_t overflow_drops() const;
  void check_invariants(std::vector<std::string>& violations) const;

  // Per-port figures for results (0 where the mode does not apply).
  struct PortStats {
    uint64_t pause_sent = 0, pause_received = 0, fc_packets_sent = 0, lossless_drops = 0;
    double paused_ns = 0, credit_stall_ns = 0;  // summed over priorities / VLs
    int64_t headroom_peak_bytes = 0;            // largest over the port's priorities
    int xoff_pgs = 0;                           // priorities in XOFF now
    int paused_prios = 0;                       // priorities paused now at this transmitter
    int64_t credits_outstanding = 0;  // blocks not (yet) returned by the peer: initial - available
    double paused_ns_by_prio[kPfcPriorities] = {};                // PFC, per priority
    double credit_stall_ns_by_vl[CreditUnitModel::kMaxVls] = {};  // credits, per VL
    // The counts and times accumulated since `start` (peaks and end-of-run states kept).
    PortStats since(const PortStats& start) const;
    // Adds another port's figures: counts, times and end-of-run states summed, peaks maxed.
    void add(const PortStats& o);
  };
  PortStats port_stats(int port, Time now);
  // The counters of `port` as `<prefix>.<counter>` over the whole run (times up to
  // r.read_at()), only those of the mode in effect: PFC pause_frames_sent / _received,
  // paused_ns, headroom_peak_bytes, lossless_drops; credits fc_packets_sent, credit_stall_ns;
  // nothing without flow control. Not const: reading a pause time brings the port's pause state
  // up to the read time.
  void register_stats(stats::Registry& r, int port, const std::string& prefix);
  // XOFF-to-XON (PFC, at the ports that receive), paused (PFC) and credit-stall (IB) intervals
  // go to `sink`, port by port; flush_spans() reports those still open at `now`.
  void set_span_sink(const stats::SpanSink& sink);
  void flush_spans(Time now);

 private:
  enum class Mode { kNone, kPfc, kCredit };
  Mode mode_;
  uint32_t fc_bytes_;
  std::unique_ptr<PfcBuffer> pfc_buf_;
  std::vector<PfcPauseState> pause_;
  std::unique_ptr<SlToVl> sl2vl_;
  std::vector<IbCreditSender> tx_;
  std::vector<IbCreditReceiver> rx_;
  std::vector<uint32_t> fc_pending_;  // credit: VLs whose FC packet is due now, per port
  int64_t initial_credits_ = 0;
  int credit_shift_ = 6;  // log2 of the credit unit
};

}  // namespace fabricsim::link
