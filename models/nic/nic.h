// An RDMA NIC: one host's network interface as a device of the fabric, from the application's
// message to the completion, over reliable connections.
//
// Hardware: an RDMA NIC (ConnectX-7 class at 400G, PCIe Gen5 x16) between its host's memory and
// the host's network port, as its pipeline runs:
//   send:    doorbell (MMIO write over PCIe) -> WQE fetch (a 64 B DMA read) -> the message cut
//            into packets as it goes out (packetizer.h) -> a payload DMA read per packet, at most
//            nic.max_reads of them ahead of the wire per QP -> the requester (RC with go-back-N,
//            rc_transport.h, or selective repeat, rc_selective.h; or UEC-style RUD,
//            rud_transport.h) -> the QP arbiter with each QP's pacer (qp_scheduler.h;
//            congestion control sets the pacer) -> the MAC;
//   receive: parser -> responder -> payload DMA write, and in parallel ACK/NAK (coalesced:
//            an ACK goes as the packet it acknowledges is accepted, its last bit in, not after
//            its write lands; the write is posted and in host memory a PCIe latency after its
//            last TLP leaves, host memory's own time not added), CNP for ECN-marked data
//            (cnp_generator.h) -> a receive CQE for SEND and WRITE with immediate (a DMA write);
//   ACKs:    free the requester's window; a message's last ACK writes its send CQE.
// RUD answers every data packet at once with a SACK (a trimmed one, switch.trimming, with a NACK
// for its PSN) and completes a message when all its packets are acknowledged, in any order;
// the RC transports take a trimmed packet as lost. ACKs, NAKs and CNPs go out before data.
// Entropy (the UDP source port the network hashes, when a switch hashes it: Packet::id's low
// byte, wire_header.h): per QP for RC (so a pair's QPs take different paths), per packet for
// RUD (cycling through all 256: spraying); 0 when no switch hashes it, so such runs are as
// before. The PCIe link and host memory are the cores of tlm/
// (pcie_link.h, host_memory.h) called directly, so the payload's DMA competes with WQE fetches
// and CQE writes for the link, and a link narrower than the port caps the QP's goodput.
//
// The NIC connects QPs in pairs: QP (peer, index) here talks to QP (this NIC, index) there
// (wire_header.h). Verbs: SEND, RDMA WRITE, RDMA WRITE with immediate, RDMA READ.
//
// RDMA READ (IBA Vol 1 9.4.3, 9.7.4-5): a message with verb read posted at host src reads
// `bytes` of host dst's memory into src's. The requester sends one READ request (BTH + RETH,
// header only) that takes as many PSNs as the READ has responses, at most
// nic.rc.max_reads_outstanding of them unanswered per QP (a READ beyond waits, and the QP's
// later work behind it: IBA's initiator depth). The responder takes it in PSN order and queues
// the READ for its QP's response engine: a payload DMA read per response over its own PCIe link
// (at most nic.max_reads ahead of the wire, as the send side's), then READ responses
// FIRST/MIDDLE/LAST/ONLY (AETH on FIRST, LAST, ONLY) carrying the request's PSNs. They take the
// QP's turns in the arbiter, alternating with the QP's own sends, and its pacer paces them:
// congestion control at the responder governs them (a real NIC's rate limiter applies to read
// responses, and the CNPs for ECN-marked responses come back to the responder). The responder
// sends its later ACKs and NAKs on that QP behind the READ's responses (IBA answers in PSN
// order), never before. The requester places each response by a DMA write; the responses are
// the READ's acknowledgement (and of what precedes it); the READ completes, its send CQE
// written, when its last response's data is in host memory. A responder re-runs a duplicate
// READ request (IBA) from the PSN it names, which is the recovery: go-back-N requests the rest
// of the READ from the first response missing (a gap, or an ACK past the READ, once per gap) or
// after its timer; selective repeat requests again only the missing responses (one request per
// run of at most 255 of them), found as it finds lost data (a response or SACK above them, the
// timer). An ACK never acknowledges a READ's PSNs for it. The READ request's RETH (the address
// and length it reads) is a table the NICs of a run share, the request carrying its index
// (wire_header.h): 40 bits of the packet are free, a RETH is 128; the 16 B are in its size. No
// responder completion: the responder's host is not told. Not modelled for READ: the
// responder's own limit of READs in progress (max_dest_rd_atomic: it runs every one it takes),
// RNR, atomics, RTT samples from responses for delay-based congestion control (TIMELY samples
// only ACKs), and a selective-repeat responder runs a READ request only in order (one behind a
// gap is dropped and recovered as a lost packet).
//
// Inline data (nic.max_inline, mlx5's BlueFlame): a SEND or WRITE no larger writes its WQE and
// data through the BAR in 64 B blocks in place of the doorbell; the NIC fetches neither. The
// NIC's own processing: nic.tx_pipeline from a packet's payload in the NIC to the arbiter,
// nic.rx_pipeline from a packet's last bit in to its processing (both 0 unless set).
//
// Not modelled: receive-queue WQEs (a SEND's buffer is always posted), payload re-read for
// retransmissions (a resent packet goes from the NIC's copy), WQE batching (one fetch per
// message; wqe_fetcher.h batches, not wired here yet), the send pipeline for ACKs, CNPs, READ
// requests and responses (they leave as made).
//
// Integrity: the payload is not materialised. Each packet carries, in place of its bytes, a
// CRC-32 of what identifies them (message id, offset, length: the CRC block of models/link/),
// and a message's checksum is the sum of a 64-bit mix of its packets' CRCs, which the receiver
// adds up over what it places (in any order: selective repeat and RUD place out of order). For a
// READ the data flows back: the responder's responses carry the CRCs of what it read, and the
// requester sums what it places (placed_read()). A packet lost, placed twice or in the wrong
// message changes the receiver's sum; the fabric's end-of-run check compares every delivered
// message's sum with the one its sender works out from the message alone (checksum()):
// NicArray does it as each message arrives, keeping the outcome and the delivery time in the
// sender's record (SentMessage), so that a run holds one record per message, not two.
//
// Work and memory per message are O(1) as it is posted (its record, one entry in its QP's list
// of messages to cut); its packets are cut one at a time as the QP's read-ahead (nic.max_reads)
// and window allow, so a QP holds at most max_reads + its window of packets whatever the
// message's size, and a run stopped by sim.duration or sim.drain_limit ends without cutting
// the rest.
//
// Plain C++, driven with explicit times by NicArray (one process may serve many NICs) or a unit
// test; its state and statistics are its own.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "models/common/fifo.h"
#include "models/common/lane_queue.h"
#include "models/common/packet.h"
#include "models/common/stats.h"
#include "models/link/crc32.h"
#include "models/nic/chunked_records.h"
#include "models/nic/cnp_generator.h"
#include "models/nic/congestion_control.h"
#include "models/nic/message_workload.h"
#include "models/nic/nic_config.h"
#include "models/nic/packetizer.h"
#include "models/nic/qp_scheduler.h"
#include "models/nic/rc_selective.h"
#include "models/nic/rc_transport.h"
#include "models/nic/rud_transport.h"
#include "models/nic/wire_header.h"
#include "tlm/direct_dma.h"
#include "tlm/host_memory.h"
#include "tlm/pcie_link.h"

namespace fabricsim::nic {

// What the NIC knows of a message it received (in order, on a QP).
struct ReceivedMessage {
  int32_t src = 0;
  uint16_t qp_index = 0;
  uint64_t seq = 0;
  uint64_t bytes = 0;
  uint64_t checksum = 0;
  Time delivered;   // its last payload byte in host memory
  Time completion;  // its receive CQE in host memory (SEND, WRITE with immediate), else delivered
};

// What the NIC knows of a message it sent.
struct SentMessage {
  Message m;
  uint32_t qp = 0;    // local QP
  uint32_t reth = 0;  // RDMA READ: its RETH's index (wire_header.h)
  uint64_t seq = 0;   // its position among the QP's messages (the receiver numbers alike)
  Time first_out = Time::max();   // its first packet handed to the MAC
  Time completion = Time::max();  // its send CQE in host memory
  // Its receiver's record, once NicArray matched it (ReceivedMessage is not kept): its last
  // payload byte in host memory, and whether all its bytes came with its sender's checksum.
  Time delivered = Time::max();
  enum class State : uint8_t { kPosted, kDone, kFailed } state = State::kPosted;
  enum class Rx : uint8_t { kNone, kIntact, kShort, kBadSum } rx = Rx::kNone;
  bool inlined = false;   // its data went with its WQE (nic.max_inline): no payload reads
  bool released = false;  // its row written and the record dropped (ChunkedRecords::release)
};

// A READ request's RETH: what it reads (the requester's message, for the payload's CRCs), how
// many bytes, and the READ's first PSN (a later request for the rest names a PSN inside it).
struct Reth {
  uint64_t message = 0;
  uint64_t bytes = 0;
  uint32_t first_psn = 0;
};

class Nic {
 public:
  // `hosts`: how many NICs the fabric has (its peers' ids are below); `ect`: data packets are
  // ECN-capable (congestion control reacts to marks); `entropy`: the switches hash the packets'
  // entropy, which the NIC then writes (per QP for RC, per packet for RUD).
  Nic(int id, int hosts, const NicConfig& cfg, BitRate line_rate, bool ect, bool entropy = false);

  int id() const { return id_; }
  // The RETH table of the run's NICs (NicArray's); by default the NIC's own.
  void share_reths(std::vector<Reth>* t) { reths_ = t; }
  // What the fabric knows of the path to each peer, for the congestion control (set before the
  // run; without it, CcPath{}).
  void set_paths(std::function<CcPath(int32_t peer)> f) { path_ = std::move(f); }

  // The application posts message m at now (m.start).
  void post(const Message& m, Time now);
  // A packet for this NIC, its last bit at `now`.
  void receive(const Packet& p, Time now);
  // The same for a packet with an INT header (an HPCC peer's), with its stack.
  void receive_int(const Packet& p, const IntStack& tel, Time now);
  // Counters of the inline path: WQEs posted with their data.
  uint64_t inline_posts() const { return inline_posts_; }
  // The next frame to put on the wire at `now` (the MAC is free), if any may go; otherwise
  // false, with a wake-up queued for when the pacer lets one go.
  bool next_frame(Time now, Packet& out);
  // The same, and whether the frame has an INT header (`tel` then holds its stack: empty for
  // data, the reflected one for an ACK).
  bool next_frame(Time now, Packet& out, IntStack& tel, bool& has_tel);
  // When the NIC next has something to do (Time::max(): nothing until a packet or a post).
  Time next_event() const { return events_.empty() ? Time::max() : events_.top().t; }
  // Does what is due at `now`.
  void run(Time now);
  // A hint, nothing changes: asks the CPU for the lines of its QP record that packet p (for this
  // NIC, taken soon) will touch. A QP's packets come a thousand NICs' work apart: cold.
  void prefetch_arrival(const Packet& p) const;
  // The same for the NIC's own record (its event queue's fronts, arbiter, counters): asked for
  // while the host before it in a window runs.
  void prefetch_self() const;
  // Wake at `t` to look at the wire again (its MAC is busy until then).
  void wake_tx(Time t) {
    if (t >= tx_wake_) return;  // an earlier look is queued: it asks again if need be
    tx_wake_ = t;
    push(t, Ev::kTx, 0);
  }

  // Every message posted, by index in posting order (held() tells the records not released).
  const ChunkedRecords<SentMessage>& sent() const { return sent_; }
  // Drops message `msg`'s record (its row written: NicArray::stream_fct): completed, and
  // matched with its delivery, so nothing the NIC does reads it again.
  void release(uint32_t msg) { sent_.release(msg); }
  // What a message's receiver must sum (nic.h, "Integrity"): the mixes of the packets its sender
  // cuts it into, worked out when asked (the end-of-run check, for what was delivered), not as
  // it is posted: posting costs the same for 1 B and 1 TiB.
  uint64_t checksum(const SentMessage& s) const;
  // For a closed-loop workload above the NIC (nic_array.h, MessageDriver): from now on, every
  // message completed (its send CQE written) and every message received whole is noted, and
  // take_notices hands over (and forgets) the indices into sent() and received() noted since the
  // last call. Off by default: open-loop runs pay nothing.
  void notify() { notify_ = true; }
  void take_notices(std::vector<uint32_t>& completed, std::vector<uint32_t>& delivered) {
    completed.swap(completed_);
    delivered.swap(delivered_);
    completed_.clear();
    delivered_.clear();
  }
  // Messages received whole since the last clear_received() (NicArray matches each with its
  // sender's record, then clears: a run keeps no record per message received).
  const std::vector<ReceivedMessage>& received() const { return received_; }
  void clear_received() { received_.clear(); }
  // The sender's record of message `seq` on its QP to (peer, index), handed out once, for its
  // receiver's record; null if there is none (never posted, a READ, or already matched).
  SentMessage* take_unmatched(int32_t peer, uint16_t index, uint64_t seq);
  // An RDMA READ's data as its requester (this NIC) placed it, once it completed (null before,
  // and for other verbs): sent()[msg]'s record, as received() holds a receiver's.
  const ReceivedMessage* placed_read(size_t msg) const {
    const auto it = placed_.find(msg);
    return it != placed_.end() && it->second.done ? &it->second.r : nullptr;
  }
  // Messages posted and neither completed nor failed.
  uint64_t outstanding() const { return stats_.posted - stats_.completed - stats_.failed; }
  // Payload bytes of the WRITEs and SENDs posted here not yet sent once: the NIC needs at least
  // their time at line rate before its last one can complete (NicArray::done_not_before). A
  // READ's data comes from its responder: not counted.
  uint64_t unsent_bytes() const { return unsent_bytes_; }
  uint64_t timeouts_so_far() const { return stats_.timeouts; }
  // Payload bytes that have reached this NIC (data packets and READ responses, duplicates and
  // packets it then drops included), counted as they leave its receive pipeline
  // (nic.rx_pipeline after their arrival).
  uint64_t arrived_payload() const { return arrived_payload_; }
  BitRate line_rate() const { return line_; }
  const NicConfig& config() const { return cfg_; }
  // Packets cut and held now, over all QPs: read ahead of the wire or kept for a resend. At
  // most nic.max_reads + the window per QP, whatever the messages' sizes.
  size_t packets_held() const {
    size_t n = 0;
    for (const Qp& qp : qps_)
      n += qp.reading.size() + (qp.rud()   ? qp.rud()->held()
                                : qp.gbn() ? qp.gbn()->held()
                                           : qp.sr()->held());
    return n;
  }
  // QPs holding a ring of placed packets now (selective repeat, RUD: only while a gap is open).
  size_t rings_held() const {
    size_t n = 0;
    for (const Qp& qp : qps_) n += !qp.placed.empty();
    return n;
  }

  struct Stats {
    uint64_t posted = 0, completed = 0, failed = 0;
    uint64_t bytes_posted = 0, bytes_completed = 0, bytes_delivered = 0;
    uint64_t messages_delivered = 0;
    uint64_t data_packets = 0, retransmitted = 0, control_packets = 0;
    uint64_t acks_sent = 0, naks_sent = 0, acks_received = 0, naks_received = 0;
    uint64_t cnps_sent = 0, cnps_received = 0, timeouts = 0;
    uint64_t out_of_order = 0, duplicates = 0, wqe_fetches = 0;
    // RDMA READ: requests sent (again included), responses sent (in data_packets too),
    // responses the requester dropped (duplicates, or behind a lost one).
    uint64_t read_requests = 0, read_responses = 0, read_responses_dropped = 0;
    uint64_t trimmed_received = 0, nacks_received = 0, presumed_lost = 0;  // rud
  };
  // Counters read from the transport blocks at the time of the call (a pass over every QP).
  Stats stats() const;
  // The NIC's own counters (messages posted, completed, failed and their bytes) without the
  // transport's, which stats() adds up over every QP.
  const Stats& own_counters() const { return stats_; }
  // The QPs' pacer rates at `now` (the rate trace): per QP with a congestion control, its
  // rate and the algorithm's state (DCQCN: alpha, target rate).
  struct QpRate {
    int32_t peer;
    uint16_t index;
    BitRate rate;
    std::vector<std::pair<std::string, double>> state;
  };
  void qp_rates(Time now, std::vector<QpRate>& out) const;
  // Its counters under `prefix` (nic7): messages, packets, PCIe.
  void register_stats(stats::Registry& r, const std::string& prefix) const;
  const tlm_host::PcieLink& pcie() const { return pcie_; }
  // Test-only: the receiver miscounts one placed packet (its third), as a NIC that lost or
  // duplicated data would; the run's integrity check must catch it.
  void inject_payload_fault() { fault_ = true; }

 private:
  enum class Ev : uint8_t { kTx, kDoorbell, kWqe, kPayload, kRto, kCc, kResp, kReadCqe, kRx };
  struct Event {
    Time t;
    uint64_t seq;
    Ev kind;
    uint32_t arg;  // message (kDoorbell, kWqe) or local QP
    bool operator<(const Event& o) const { return t != o.t ? t < o.t : seq < o.seq; }
  };
  // A packet whose payload is being read (or has been, waiting to be posted in order).
  struct Reading {
    TxPacket pkt;
    uint32_t msg;     // into sent_
    uint32_t digest;  // the CRC standing for its payload, and its message's class (RcPacket)
    bool last;
    uint8_t tc;
    Time ready;
  };
  // A message whose WQE arrived, to cut: what cutting it and sending its packets need of its
  // record in sent_, copied here once (not read from sent_ on each of its packets).
  struct Cut {
    uint32_t msg;  // into sent_
    Verb verb;
    uint8_t tc;
    uint64_t bytes;
    uint64_t id;
    bool inlined;  // its data came with the WQE: no payload reads
  };
  // A packet in the receive pipeline (nic.rx_pipeline), taken at `t`.
  struct Arriving {
    Time t;
    Packet p;
    IntStack tel;  // its INT stack, when tel.hops != kNoStack
  };
  static constexpr uint8_t kNoStack = 0xff;
  // A packet (and its INT stack, or null) into the receive pipeline.
  void arrive(const Packet& p, const IntStack* tel, Time now);
  // receive() once the receive pipeline is through; `tel`: its INT stack, or null.
  void take(const Packet& p, const IntStack* tel, Time now);
  // What the responder keeps of a placed packet until it is in order.
  struct Placed {
    uint32_t payload = 0;
    uint32_t digest = 0;
    bool last = false;
    BthOpcode op = BthOpcode::kSendOnly;
    Time written;
  };
  // The responder's side of READs on a QP (made at its first READ request): the READs to
  // answer (and ACKs/NAKs that must follow their responses), responses whose payload is being
  // read, responses ready for the wire.
  struct ReadJob {
    bool control = false;  // an ACK or NAK in line (pkt), not a READ
    uint8_t tc = 0;
    uint32_t reth = 0;
    uint32_t psn = 0;    // of its next response
    uint32_t left = 0;   // responses still to read
    uint64_t index = 0;  // its next response's place in the READ
    Packet pkt;
  };
  struct Responding {
    std::deque<ReadJob> jobs;
    std::deque<std::pair<Packet, Time>> reading;  // a packet, when its payload is read
    std::deque<Packet> ready;
    uint32_t ahead = 0;  // responses read or reading, not sent
    bool turn = false;   // the next turn of the QP is the responder's, if it has a response
    bool busy() const { return !jobs.empty() || !reading.empty() || !ready.empty(); }
  };
  struct alignas(64) Qp {
    // The fields every turn of the arbiter and every packet touch first, together in the record's
    // first cache line (the record is line-aligned); then the send side's queues and transport,
    // then the receive side's message and transport (each side's hot fields adjacent), then what
    // is rarely touched. In the QP's own record (not behind pointers): a turn of the arbiter
    // visits thousands of QPs between two of one QP's packets, so each of its scattered pieces
    // would be a cache miss.
    int32_t peer = 0;
    uint16_t index = 0;
    uint8_t entropy = 0;     // RC: the QP's (its UDP source port); RUD: the next packet's
    bool token = false;      // a turn queued in the arbiter
    bool read_wait = false;  // in read_waiters_ (nic.max_reads_nic)
    // Which transport req and resp hold (their variants' index), here with the hot fields: a
    // variant keeps its own index after its largest alternative, a cache line away from the
    // alternative's first fields.
    uint8_t req_kind = 0, resp_kind = 0;
    uint32_t next_psn = 0;
    uint32_t first_unsent_psn = 0;  // posted to the requester, never sent: from here on
    uint32_t ahead = 0;             // read or reading, never sent
    uint64_t cut_index = 0;         // the packet cursor in `cut`
    // READs it answers (rare: behind a pointer, but tested on every turn and packet: here).
    std::unique_ptr<Responding> rd;
    Time rto_at = Time::max(), cc_at = Time::max();
    std::unique_ptr<CongestionControl> cc;
    // Send side: messages whose WQE arrived, to cut (`cuts` of them: the first, being cut, here
    // and the others in cuts_after, at the record's end); payload reads in flight or landed.
    Cut cut;
    uint32_t cuts = 0;
    Fifo<Reading> reading;
    // The QP's transport, one of three (nic.transport): a variant each side, not an optional of
    // every kind (1,032 B a QP of which 600 never used: 1,024 NICs all-to-all hold 1 M QPs).
    std::variant<std::monostate, RcRequester, SrRequester, RudRequester> req;
    // Receive side: the message being received, then the transport.
    uint64_t rx_bytes = 0, rx_sum = 0, rx_messages = 0;
    uint32_t rx_unacked = 0;  // payload placed since the last ACK (nic ack_bytes_)
    Time rx_written;
    std::variant<std::monostate, RcResponder, SrResponder, RudResponder> resp;
    RcRequester* gbn() { return req_kind == 1 ? known<1>(req) : nullptr; }
    SrRequester* sr() { return req_kind == 2 ? known<2>(req) : nullptr; }
    RudRequester* rud() { return req_kind == 3 ? known<3>(req) : nullptr; }
    RcResponder* gbn_rx() { return resp_kind == 1 ? known<1>(resp) : nullptr; }
    SrResponder* sr_rx() { return resp_kind == 2 ? known<2>(resp) : nullptr; }
    RudResponder* rud_rx() { return resp_kind == 3 ? known<3>(resp) : nullptr; }
    const RcRequester* gbn() const { return req_kind == 1 ? known<1>(req) : nullptr; }
    const SrRequester* sr() const { return req_kind == 2 ? known<2>(req) : nullptr; }
    const RudRequester* rud() const { return req_kind == 3 ? known<3>(req) : nullptr; }
    const RcResponder* gbn_rx() const { return resp_kind == 1 ? known<1>(resp) : nullptr; }
    const SrResponder* sr_rx() const { return resp_kind == 2 ? known<2>(resp) : nullptr; }
    const RudResponder* rud_rx() const { return resp_kind == 3 ? known<3>(resp) : nullptr; }
    // Alternative I of v, which holds it (req_kind, resp_kind say so): the compiler is told, so
    // that it does not load the variant's own index to check.
    template <size_t I, class V>
    static std::variant_alternative_t<I, V>* known(V& v) {
      if (v.index() != I) __builtin_unreachable();
      return std::get_if<I>(&v);
    }
    // Placed packets not yet in order (selective repeat, RUD), by PSN mod the ring; empty
    // while none is held (place()).
    std::vector<Placed> placed;
    uint64_t messages = 0;  // posted on it (their seq)
    // Its messages not yet matched with a delivery (take_unmatched), from seq unmatched_seq on;
    // READs and those matched are kNoMsg, dropped from the front. In order on RC: a few.
    Fifo<uint32_t> unmatched;  // (not a deque: 600 B a QP before its first message)
    uint64_t unmatched_seq = 0;
    Fifo<Cut> cuts_after;  // the messages to cut after `cut`
  };
  // The next message to cut, if any, takes the first's place.
  static void next_cut(Qp& qp) {
    if (--qp.cuts == 0) return;
    qp.cut = qp.cuts_after.front();
    qp.cuts_after.pop_front();
  }

  void push(Time t, Ev kind, uint32_t arg) { events_.push(lane(kind), {t, seq_++, kind, arg}); }
  // The event queue's FIFO lanes: the kinds that come due in the order they are queued (wire
  // wake-ups, payload reads, retransmission and rate timers); the others are few at a time.
  static int lane(Ev kind) {
    switch (kind) {
      case Ev::kTx:
        return 0;
      case Ev::kPayload:
        return 1;
      case Ev::kRto:
        return 2;
      case Ev::kCc:
        return 3;
      default:
        return LaneQueue<Event, 4>::kHeap;
    }
  }
  uint32_t qp_for(int32_t peer, uint16_t index);
  // The QP table's entry for (peer, index) (dense_: up to 8,192 pairs a NIC).
  size_t dense_slot(int32_t peer, uint16_t index) const {
    return static_cast<size_t>(peer) * cfg_.qps_per_pair + index;
  }
  // Hints: the lines a packet sent on QP `qp` touches; those of the QP in turn after `q`, and
  // of the QP of the next event due.
  static void prefetch_send_side(const Qp& qp);
  void prefetch_next_turn(uint32_t q) const;
  void prefetch_next_event() const;
  void on_wqe(uint32_t msg, Time now);
  // nic.rx_impl other than model: the QP's responder hands every packet to that tracker.
  void attach_tracker(Qp& qp);
  void fill_reads(uint32_t q, Time now);
  // A read slot freed (nic.max_reads_nic): the waiting QPs take it first, in turn.
  void serve_read_waiters(Time now);
  void land_reads(uint32_t q, Time now);
  void offer_turn(uint32_t q);
  void arm_timers(uint32_t q);
  void on_rto(uint32_t q, Time now);
  void fail_qp(uint32_t q, Time now);
  void on_cc_timer(uint32_t q, Time now);
  void update_rate(uint32_t q);
  void complete(uint64_t message, bool ok, Time now);
  void receive_data(Qp& qp, uint32_t q, const Packet& p, const WireHeader& h, const IntStack* tel,
                    Time now);
  void deliver(Qp& qp, const Placed& pl, Time now);
  // Selective repeat and RUD: the packet with `psn` (`placed`: written now, as `pl`) and the
  // `delivered` PSNs from `from` on that became in order with it go to the receive side in PSN
  // order. Only a packet that arrives ahead of a gap is held in the QP's ring, made at the first
  // one and given back once the responder `rx` holds nothing ahead (asked only while there is a
  // ring): a ring is ~12 KB a QP, and a NIC of a 1,024-rank all-to-all has 1,023 QPs.
  template <class Rx>
  void place(Qp& qp, const Rx& rx, bool placed, uint32_t psn, const Placed& pl, uint32_t from,
             uint32_t delivered, Time now);
  void receive_ack(Qp& qp, uint32_t q, const WireHeader& h, const IntStack* tel, Time now);
  // The RUD transport's parts (rud_transport.h).
  void receive_rud_data(Qp& qp, const Packet& p, const WireHeader& h, Placed pl,
                        const IntStack* tel, Time now);
  void receive_rud_ack(Qp& qp, const WireHeader& h, Time now);
  // An ACK or NACK's news for a congestion control with CcEntry::ecn_echo (NSCC): the bytes it
  // acknowledged or the trimmed packet's, the ECN echo, the RTT of `sent`.
  void echo_to_cc(Qp& qp, const WireHeader& h, Time sent, Time now);
  // Whether the RUD responder answers this data packet now (CcEntry::ack_bytes coalescing).
  bool rud_ack_now(Qp& qp, const RudResponder::Outcome& o, const WireHeader& h, const Placed& pl,
                   bool ce);
  bool req_failed(const Qp& qp) const {
    return qp.rud() ? qp.rud()->failed() : qp.gbn() ? qp.gbn()->failed() : qp.sr()->failed();
  }
  uint64_t req_timeouts(const Qp& qp) const {
    return qp.rud() ? qp.rud()->timeouts() : qp.gbn() ? qp.gbn()->timeouts() : qp.sr()->timeouts();
  }
  // `in_line`: an ACK/NAK of this QP's responder, which goes behind its READ responses.
  void queue_control(int32_t dst, uint8_t tc, uint8_t opcode, uint16_t index, uint32_t psn,
                     bool nak, bool sacked, uint32_t aux, Qp* in_line = nullptr, Time now = Time(),
                     const IntStack* tel = nullptr);
  // A control packet into control_, with the INT stack it reflects (or none).
  void push_control(const Packet& p, const IntStack* tel);
  Time dma_write(Time now, uint64_t bytes);
  // RDMA READ (nic.cpp, after the rest).
  void cut_read(Qp& qp, uint32_t msg, Time now);
  void receive_read_request(Qp& qp, uint32_t q, const Packet& p, const WireHeader& h, Time now);
  void fill_responses(uint32_t q, Time now);
  void land_responses(uint32_t q, Time now);
  bool response_turn(Qp& qp) const;
  void send_response(uint32_t q, Time now, Packet& out);
  void receive_read_response(Qp& qp, uint32_t q, const Packet& p, const WireHeader& h, Time now);
  void complete_read(uint32_t msg, Time now);
  void reply_in_line(Qp& qp, const Packet& control, Time now);
  void ecn_feedback(uint32_t q, const Packet& p, Time now);

  int id_;
  const NicConfig& cfg_;
  uint64_t unsent_bytes_ = 0;     // unsent_bytes()
  uint64_t arrived_payload_ = 0;  // arrived_payload()
  BitRate line_;
  bool ect_;
  bool selective_;
  bool rud_;
  bool entropy_;
  Packetizer packetizer_;
  QpScheduler scheduler_;
  CnpGenerator cnp_;
  const CcEntry* cc_entry_ = nullptr;  // null: none (line rate, no pacer)
  tlm_host::PcieLink pcie_;
  tlm_host::HostMemory memory_;
  tlm_host::DirectDma dma_;
  std::vector<Qp> qps_;
  // nic.max_reads_nic: the QPs' `ahead` summed, and the QPs waiting for the NIC-wide limit to
  // let them read, in the order they came.
  uint64_t ahead_total_ = 0;
  Fifo<uint32_t> read_waiters_;
  static constexpr uint32_t kNoQp = UINT32_MAX;
  static constexpr uint32_t kNoMsg = UINT32_MAX;     // (Qp::unmatched)
  std::vector<uint32_t> dense_;                      // [peer * qps_per_pair + index] -> local QP
  std::unordered_map<uint64_t, uint32_t> qp_index_;  // (peer << 16 | index) -> local QP
  std::vector<Reth> own_reths_;
  std::vector<Reth>* reths_ = &own_reths_;
  ChunkedRecords<SentMessage> sent_;
  // What the requester placed of each READ (bytes, the sum of the mixes, its last byte in host
  // memory): apart from sent_, which every message has.
  struct PlacedRead {
    ReceivedMessage r;
    bool done = false;
  };
  std::unordered_map<uint64_t, PlacedRead> placed_;
  std::vector<ReceivedMessage> received_;
  std::deque<Packet> control_;  // ACK, NAK, CNP: before data
  // The congestion control reads in-band telemetry (HPCC): data packets carry an INT header,
  // ask for an ACK each (AckReq), and the ACKs reflect their stacks, kept beside control_.
  bool int_header_ = false;
  bool ack_each_ = false;   // AckReq on every data packet (NicConfig::ack_each_packet)
  bool ecn_echo_ = false;   // RUD ACKs echo CE marks, no CNPs (CcEntry::ecn_echo)
  uint32_t ack_bytes_ = 0;  // RUD ACKs coalesced per this many payload bytes (0: every packet)
  std::function<CcPath(int32_t)> path_;
  std::deque<IntStack> control_tel_;
  LaneQueue<Event, 4> events_;
  Fifo<Arriving> rx_pipe_;  // packets in the receive pipeline, in arrival order
  uint64_t inline_posts_ = 0;
  uint64_t seq_ = 0;
  Time tx_wake_ = Time::max();  // the earliest wire look queued
  bool fault_ = false;
  std::unique_ptr<link::Crc32BlockIf> crc_;  // nic.crc_impl other than model: the sender's CRC
  uint64_t fault_count_ = 0;
  bool notify_ = false;
  std::vector<uint32_t> completed_, delivered_;  // notices (notify())
  Stats stats_;
  std::vector<uint64_t> done_;  // scratch: messages an ACK completed
};

}  // namespace fabricsim::nic
