// The reliable connection (RC) transport of an RDMA NIC with go-back-N recovery: the requester's
// send window, ACKs, NAKs and retransmission timer, and the responder's expected PSN, ACK
// coalescing and duplicate handling.
//
// Hardware: the RoCEv2/InfiniBand RC transport as RDMA NICs without selective repeat run it
// (IBA Vol 1 ch. 9.7; ns-3's RDMA model of the HPCC work, which has no timer: a lost last packet
// is never recovered there, here the timer recovers it). Requester: packets go out in PSN order
// while at most `window` packets are unacknowledged; a cumulative ACK frees everything up to its
// PSN and restarts the timer; a NAK (sequence error, carrying the PSN the responder expects)
// rewinds transmission to that PSN; a timeout rewinds to the oldest unacknowledged PSN and counts
// a retry, and after `retry_count` retries in a row without progress the QP fails its outstanding
// messages. The requester sets the BTH's AckReq bit on a message's last packet and on the packet
// that fills the window, so that coalesced ACKs never stall it. Responder: accepts only the
// expected PSN (so each packet is delivered exactly once, in order), ACKs every `ack_every`
// packets and whenever AckReq is set, NAKs once per gap, and
// answers a duplicate with an ACK of what it has. PSNs are 24 bits and wrap. Plain C++, driven
// with explicit times.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "models/common/fifo.h"
#include "models/common/units.h"
#include "models/config/config.h"
#include "models/nic/packetizer.h"
#include "models/nic/psn_tracker.h"

namespace fabricsim::nic {

struct RcConfig : config::Configurable {
  // The windows `window: 0` stands for. Go-back-N: no window but the PSN space (IBA: at most
  // 2^23 PSNs outstanding, so that the responder tells a duplicate from a new PSN). Selective
  // repeat and RUD: the responder's tracking of packets held ahead of a gap [S].
  static constexpr int64_t kPsnWindow = (int64_t{1} << 23) - 1, kTrackingWindow = 256;
  int64_t window = 0;     // packets in flight, unacknowledged (0: the transport's own limit)
  int64_t ack_every = 0;  // responder: ACK after this many packets (and at a message's end)
  int64_t local_ack_timeout = 0;  // IBA's n: the timer is 4.096 us x 2^n
  Time timeout;  // requester: retransmission timer, when set (Time(): from local_ack_timeout)
  int64_t retry_count = 0;            // timeouts in a row before the QP fails (IBA: 0-7)
  int64_t max_reads_outstanding = 0;  // RDMA READs sent and not wholly answered (initiator depth)

  void visit(config::Visitor& v) override;
  // The retransmission timer in effect.
  Time rto() const {
    return timeout > Time() ? timeout : Time::ns(4096) * (int64_t{1} << local_ack_timeout);
  }
  // The window in effect: go-back-N's (`go_back_n`) or a tracking responder's (the others).
  int64_t window_for(bool go_back_n) const {
    return window > 0 ? window : go_back_n ? kPsnWindow : kTrackingWindow;
  }
};

// PSN arithmetic on 24 bits: a - b as a signed distance (|distance| < 2^23).
inline int32_t psn_diff(uint32_t a, uint32_t b) {
  const uint32_t d = (a - b) & Packetizer::kPsnMask;
  return d & (1u << 23) ? static_cast<int32_t>(d) - (1 << 24) : static_cast<int32_t>(d);
}

// The requester's retransmission timer and retry count, as both recoveries (go-back-N here,
// selective repeat in rc_selective.h) use them: armed by a send, restarted by progress, and
// after `retry_count` expiries in a row without progress it gives up.
class RetransmitTimer {
 public:
  RetransmitTimer(Time timeout, int64_t retry_count)
      : timeout_(timeout), retry_count_(retry_count) {}
  void on_send(Time now) {
    if (deadline_ == Time::max()) deadline_ = now + timeout_;
  }
  // Acknowledgement moved on; `outstanding`: packets sent and not yet acknowledged remain.
  void on_progress(Time now, bool outstanding) {
    retries_ = 0;
    deadline_ = outstanding ? now + timeout_ : Time::max();
  }
  enum class Fired { kNo, kRetry, kGiveUp };
  Fired check(Time now) {
    if (deadline_ == Time::max() || now < deadline_) return Fired::kNo;
    ++timeouts_;
    if (++retries_ > retry_count_) {
      deadline_ = Time::max();
      return Fired::kGiveUp;
    }
    deadline_ = now + timeout_;
    return Fired::kRetry;
  }
  Time deadline() const { return deadline_; }
  uint64_t timeouts() const { return timeouts_; }

 private:
  Time timeout_;
  int64_t retry_count_;
  Time deadline_ = Time::max();
  int64_t retries_ = 0;
  uint64_t timeouts_ = 0;
};

// A packet the requester sends, with what the transport needs to know about it.
struct RcPacket {
  TxPacket pkt;
  uint32_t message = 0;  // the requester's message id (the NIC's index of it)
  // What the NIC carries with the packet and reads back when it goes, so that sending it reads
  // nothing of its message's record (the transports ignore them): the CRC standing for its
  // payload and its message's traffic class (nic.h).
  uint32_t digest = 0;
  bool last = false;     // the last packet of its message
  bool ack_req = false;  // BTH AckReq: the last of its message, or the one that fills the window
  // RDMA READ: a READ takes as many PSNs as its responses. Its first is the request; the others
  // are never sent as such, but one of them is where a request for the rest starts after a loss
  // (pkt is the request's header with that PSN). span (next() only): how many responses the
  // request asks for, 0 for all up to the READ's end; read_left: PSNs of the READ from this one
  // on (0: not a READ). (Packed into what was padding: the requester keeps a window of these.)
  uint8_t span = 0;
  uint8_t tc = 0;  // (the NIC's, as digest)
  uint32_t read_left = 0;
  Time sent;  // its last transmission (the requester keeps it for RTT samples)

  RcPacket() = default;
  RcPacket(const TxPacket& p, uint64_t msg, bool is_last, uint32_t read_psns = 0, uint32_t crc = 0,
           uint8_t cls = 0)
      : pkt(p),
        message(static_cast<uint32_t>(msg)),
        digest(crc),
        last(is_last),
        tc(cls),
        read_left(read_psns) {}
};
static_assert(sizeof(RcPacket) == 48, "a window entry stays 48 B");

// The window entry of the first PSN in `lost` still to send again (`due(entry)`), walking the
// list as a requester's next() does but taking nothing from it; null if none. `una` is the PSN
// of window[0], `high` the entries sent at least once. Selective repeat and RUD peek with it.
template <class Window, class Due>
const typename std::decay_t<decltype(std::declval<Window>()[0])>* first_lost(
    const Fifo<uint32_t>& lost, uint32_t una, size_t high, const Window& window, Due due) {
  for (const uint32_t psn : lost) {
    const int32_t i = psn_diff(psn, una);
    if (i < 0 || static_cast<size_t>(i) >= high) continue;  // acknowledged meanwhile
    const auto& e = window[static_cast<size_t>(i)];
    if (due(e)) return &e;
  }
  return nullptr;
}

// Whether a responder's bitmap of PSNs placed ahead of the expected one (selective repeat, RUD)
// has any bit set: a packet is held until the gap before it fills.
inline bool any_placed_ahead(const std::vector<uint64_t>& ahead) {
  for (const uint64_t w : ahead)
    if (w) return true;
  return false;
}

// The first PSN of the READ that PSN `psn` belongs to, among `reads` (the first PSNs of the READs
// a requester holds, in order; psn belongs to one of them).
inline uint32_t read_start(const Fifo<uint32_t>& reads, uint32_t psn) {
  uint32_t start = psn;
  for (size_t i = 0; i < reads.size(); ++i) {
    if (psn_diff(psn, reads[i]) < 0) break;
    start = reads[i];
  }
  return start;
}

// Appends a READ's entries (its request, then one per further response PSN) to `q`, of entries
// `E` that wrap an RcPacket as `wrap` makes them.
template <class E, class Q, class Wrap>
void append_read(Q& q, uint64_t message, const TxPacket& request, uint32_t responses, Wrap wrap) {
  for (uint32_t k = 0; k < responses; ++k) {
    RcPacket p(request, message, k + 1 == responses, responses - k);
    p.pkt.psn = (request.psn + k) & Packetizer::kPsnMask;
    q.push_back(wrap(p));
  }
}

class RcRequester {
 public:
  RcRequester(const RcConfig& cfg, uint32_t first_psn);

  // Posts a message's packets (in PSN order, continuing the QP's sequence).
  void post(uint64_t message, const std::vector<TxPacket>& pkts);
  // Posts one packet (the NIC posts each as its payload arrives); `last`: its message's last;
  // `digest`, `tc`: the NIC's, handed back by next() (RcPacket).
  void post_packet(uint64_t message, const TxPacket& pkt, bool last, uint32_t digest = 0,
                   uint8_t tc = 0) {
    packets_.push_back(RcPacket(pkt, message, last, 0, digest, tc));
  }
  // Posts an RDMA READ: its request packet (PSN p), which takes PSNs p .. p + responses - 1.
  void post_read(uint64_t message, const TxPacket& request, uint32_t responses) {
    reads_.push_back(request.psn);
    append_read<RcPacket>(packets_, message, request, responses,
                          [](const RcPacket& p) { return p; });
  }
  // A READ response with `psn` arrived. It acknowledges what precedes its READ; if it is the
  // next PSN expected it is taken (true, its READ's id in `message`; done: the messages it
  // completes), else it is a duplicate (dropped) or follows a lost response (dropped, and the
  // requester goes back to request the rest again from the first missing PSN, once per gap).
  bool on_read_response(uint32_t psn, Time now, std::vector<uint64_t>& done, uint64_t& message);
  // READs sent and not wholly answered.
  uint32_t reads_outstanding() const { return reads_sent_; }
  uint64_t read_rewinds() const { return read_rewinds_; }
  // The frame bytes of the packet next(now) would return, if any.
  std::optional<uint32_t> peek() const;
  // The next packet to put on the wire at `now` (a retransmission first), if the window allows;
  // arms the timer.
  std::optional<RcPacket> next(Time now);
  // A cumulative ACK up to and including `psn`: appends the messages it completes to `done`.
  void on_ack(uint32_t psn, Time now, std::vector<uint64_t>& done);
  // A NAK (sequence error): the responder expects `psn`; everything before it is acknowledged.
  void on_nak(uint32_t psn, Time now, std::vector<uint64_t>& done);
  // The timer: if it has expired at `now`, rewinds (or, after retry_count retries, fails every
  // outstanding message into `failed`). Returns the timer's deadline (Time::max(): not armed).
  Time on_timer(Time now, std::vector<uint64_t>& failed);
  Time deadline() const { return timer_.deadline(); }

  bool idle() const { return packets_.empty(); }
  // Packets cut and not yet acknowledged (held for a resend), sent or not.
  size_t held() const { return packets_.size(); }
  // The congestion control's window in packets (0: none): at most that many outstanding.
  void limit_window(uint64_t packets) {
    window_ = packets == 0 ? own_window_
                           : static_cast<uint32_t>(std::min<uint64_t>(own_window_, packets));
  }
  bool failed() const { return failed_; }
  uint64_t sent() const { return sent_; }
  uint64_t retransmitted() const { return retransmitted_; }
  uint64_t timeouts() const { return timer_.timeouts(); }
  uint64_t naks() const { return naks_; }
  // When the newest packet the last ACK or NAK acknowledged left (Time::max(): it acknowledged
  // nothing new).
  Time acked_sent() const { return acked_sent_; }

 private:
  void acknowledge(uint32_t psn, Time now, std::vector<uint64_t>& done);
  bool clip(uint32_t& psn) const;
  bool blocked() const;
  // What every packet sent or acknowledged reads first, together (a NIC's QPs are many and
  // each is out of cache by its next packet: every line of the record it touches is a miss);
  // of the configuration, only the two limits it uses (not a copy of the whole RcConfig).
  Fifo<RcPacket> packets_;   // from the oldest unacknowledged on, in PSN order
  size_t cursor_ = 0;        // index in packets_ of the next to send
  size_t high_ = 0;          // packets_ below this index have been sent at least once
  uint32_t una_;             // PSN of packets_.front()
  uint32_t reads_sent_ = 0;  // READs (reads_) sent
  uint32_t window_;          // RcConfig::window (at most 2^22)
  uint32_t own_window_;      // window_ without the congestion control's limit
  bool failed_ = false;
  bool rewound_ = false;  // went back for a READ's lost response: until progress
  RetransmitTimer timer_;
  uint64_t sent_ = 0;
  Time acked_sent_ = Time::max();
  uint64_t retransmitted_ = 0;
  Fifo<uint32_t> reads_;  // the first PSN of each READ in packets_
  int64_t max_reads_;     // RcConfig::max_reads_outstanding
  uint64_t naks_ = 0, read_rewinds_ = 0;
};

// (Inline: the NIC asks on every turn, and an optional returned from a call went through the
// stack, narrow stores read back wide: a store-forwarding stall each time.)
inline bool RcRequester::blocked() const {
  if (failed_ || cursor_ >= packets_.size() || cursor_ >= static_cast<size_t>(window_)) return true;
  // A new READ request waits while max_reads_outstanding READs are unanswered.
  return cursor_ >= high_ && packets_[cursor_].read_left &&
         reads_sent_ >= static_cast<uint64_t>(max_reads_);
}

inline std::optional<uint32_t> RcRequester::peek() const {
  if (blocked()) return std::nullopt;
  return packets_[cursor_].pkt.frame();
}

class RcResponder {
 public:
  RcResponder(const RcConfig& cfg, uint32_t first_psn);

  enum class Reply { kNone, kAck, kNak };
  struct Outcome {
    bool accepted = false;   // delivered (in order, first time)
    bool duplicate = false;  // receive_read: a READ request already executed (IBA: run it again)
    Reply reply = Reply::kNone;
    uint32_t psn = 0;  // ACK: the last PSN received in order; NAK: the PSN expected
  };
  // A packet with `psn` arrived; `ack_req`: its BTH asks for an ACK (RcPacket::ack_req).
  Outcome receive(uint32_t psn, bool ack_req);
  // An RDMA READ request with `psn` that takes `psns` PSNs (to its READ's end). In order: taken,
  // the expected PSN moves past it (its responses are its acknowledgement: no ACK); behind the
  // expected PSN: a duplicate, to execute again; beyond: a gap, NAKed as a data packet's.
  Outcome receive_read(uint32_t psn, uint32_t psns);

  uint32_t expected() const { return epsn_; }
  uint64_t accepted() const { return accepted_; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t out_of_order() const { return out_of_order_; }
  bool nak_sent() const { return nak_sent_; }
  int64_t unacked() const { return unacked_; }
  // From now on every packet goes through `hw` (nic.rx_impl other than model: the RTL), which
  // starts from this responder's state; its outcomes and state are mirrored here.
  void attach(std::unique_ptr<PsnTrackerIf> hw) { hw_ = std::move(hw); }

 private:
  Outcome via(const PsnTrackerIn& in);
  std::unique_ptr<PsnTrackerIf> hw_;
  uint32_t epsn_;
  bool nak_sent_ = false;  // a NAK for this gap already went out
  int64_t unacked_ = 0;    // accepted since the last ACK
  int64_t ack_every_;      // RcConfig::ack_every (not a copy of the whole RcConfig)
  uint64_t accepted_ = 0, duplicates_ = 0, out_of_order_ = 0;
};

}  // namespace fabricsim::nic
