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
// (wire_header.h). Verbs: SEND, RDMA WRITE, RDMA WRITE with immediate. Not modelled: RDMA READ,
// receive-queue WQEs (a SEND's buffer is always posted), payload re-read for retransmissions (a
// resent packet goes from the NIC's copy), WQE batching (one fetch per message; wqe_fetcher.h
// batches, not wired here yet).
//
// Integrity: the payload is not materialised. Each packet carries, in place of its bytes, a
// CRC-32 of what identifies them (message id, offset, length: the CRC block of models/link/),
// and a message's checksum is the sum of a 64-bit mix of its packets' CRCs, which the receiver
// adds up over what it places (in any order: selective repeat and RUD place out of order). A packet
// lost, placed twice or in the wrong message changes the receiver's sum; the fabric's end-of-run
// check compares every message's two sums (nic_array.h).
//
// Plain C++, driven with explicit times by NicArray (one process may serve many NICs) or a unit
// test; its state and statistics are its own.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/common/packet.h"
#include "models/common/stats.h"
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

// What the NIC knows of a message it sent.
struct SentMessage {
  Message m;
  uint32_t qp = 0;        // local QP
  uint64_t seq = 0;       // its position among the QP's messages (the receiver numbers alike)
  uint64_t checksum = 0;  // the sum of its packets' mixes
  Time first_out = Time::max();   // its first packet handed to the MAC
  Time completion = Time::max();  // its send CQE in host memory
  enum class State : uint8_t { kPosted, kDone, kFailed } state = State::kPosted;
};

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

class Nic {
 public:
  // `hosts`: how many NICs the fabric has (its peers' ids are below); `ect`: data packets are
  // ECN-capable (congestion control reacts to marks); `entropy`: the switches hash the packets'
  // entropy, which the NIC then writes (per QP for RC, per packet for RUD).
  Nic(int id, int hosts, const NicConfig& cfg, BitRate line_rate, bool ect, bool entropy = false);

  int id() const { return id_; }

  // The application posts message m at now (m.start).
  void post(const Message& m, Time now);
  // A packet for this NIC, its last bit at `now`.
  void receive(const Packet& p, Time now);
  // The next frame to put on the wire at `now` (the MAC is free), if any may go; otherwise
  // false, with a wake-up queued for when the pacer lets one go.
  bool next_frame(Time now, Packet& out);
  // When the NIC next has something to do (Time::max(): nothing until a packet or a post).
  Time next_event() const { return events_.empty() ? Time::max() : events_.top().t; }
  // Does what is due at `now`.
  void run(Time now);
  // Wake at `t` to look at the wire again (its MAC is busy until then).
  void wake_tx(Time t) {
    if (t >= tx_wake_) return;  // an earlier look is queued: it asks again if need be
    tx_wake_ = t;
    push(t, Ev::kTx, 0);
  }

  const std::vector<SentMessage>& sent() const { return sent_; }
  const std::vector<ReceivedMessage>& received() const { return received_; }
  // Messages posted and neither completed nor failed.
  uint64_t outstanding() const { return stats_.posted - stats_.completed - stats_.failed; }

  struct Stats {
    uint64_t posted = 0, completed = 0, failed = 0;
    uint64_t bytes_posted = 0, bytes_completed = 0, bytes_delivered = 0;
    uint64_t messages_delivered = 0;
    uint64_t data_packets = 0, retransmitted = 0, control_packets = 0;
    uint64_t acks_sent = 0, naks_sent = 0, acks_received = 0, naks_received = 0;
    uint64_t cnps_sent = 0, cnps_received = 0, timeouts = 0;
    uint64_t out_of_order = 0, duplicates = 0, wqe_fetches = 0;
    uint64_t trimmed_received = 0, nacks_received = 0, presumed_lost = 0;  // rud
  };
  // Counters read from the transport blocks at the time of the call.
  Stats stats() const;
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
  enum class Ev : uint8_t { kTx, kDoorbell, kWqe, kPayload, kRto, kCc };
  struct Event {
    Time t;
    uint64_t seq;
    Ev kind;
    uint32_t arg;  // message (kDoorbell, kWqe) or local QP
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  // A packet whose payload is being read (or has been, waiting to be posted in order).
  struct Reading {
    TxPacket pkt;
    uint32_t msg;  // into sent_
    bool last;
    Time ready;
  };
  // What the responder keeps of a placed packet until it is in order.
  struct Placed {
    uint32_t payload = 0;
    uint32_t digest = 0;
    bool last = false;
    BthOpcode op = BthOpcode::kSendOnly;
    Time written;
  };
  struct Qp {
    int32_t peer = 0;
    uint16_t index = 0;
    // In the QP's own record (not behind pointers): a turn of the arbiter visits thousands of
    // QPs between two of one QP's packets, so each of its scattered pieces would be a cache miss.
    std::optional<RcRequester> gbn;
    std::optional<SrRequester> sr;
    std::optional<RcResponder> gbn_rx;
    std::optional<SrResponder> sr_rx;
    std::optional<RudRequester> rud;
    std::optional<RudResponder> rud_rx;
    uint8_t entropy = 0;  // RC: the QP's (its UDP source port); RUD: the next packet's
    std::unique_ptr<CongestionControl> cc;
    // Send side: messages whose WQE arrived, being cut; the packet cursor in the front one.
    std::deque<uint32_t> to_cut;
    uint64_t cut_index = 0;
    uint32_t next_psn = 0;
    std::deque<Reading> reading;
    uint32_t first_unsent_psn = 0;  // posted to the requester, never sent: from here on
    uint32_t ahead = 0;             // read or reading, never sent
    bool token = false;             // a turn queued in the arbiter
    uint64_t messages = 0;          // posted on it (their seq)
    Time rto_at = Time::max(), cc_at = Time::max();
    // Receive side: placed packets not yet in order (selective repeat), by PSN mod 64; the
    // message being received.
    std::vector<Placed> placed;
    uint64_t rx_bytes = 0, rx_sum = 0, rx_messages = 0;
    Time rx_written;
  };

  void push(Time t, Ev kind, uint32_t arg) { events_.push({t, seq_++, kind, arg}); }
  uint32_t qp_for(int32_t peer, uint16_t index);
  void on_wqe(uint32_t msg, Time now);
  void fill_reads(uint32_t q, Time now);
  void land_reads(uint32_t q, Time now);
  void offer_turn(uint32_t q);
  void arm_timers(uint32_t q);
  void on_rto(uint32_t q, Time now);
  void fail_qp(uint32_t q, Time now);
  void on_cc_timer(uint32_t q, Time now);
  void update_rate(uint32_t q);
  void complete(uint64_t message, bool ok, Time now);
  void receive_data(Qp& qp, uint32_t q, const Packet& p, const WireHeader& h, Time now);
  void deliver(Qp& qp, const Placed& pl, Time now);
  void cnp_check(uint32_t q, const Packet& p, Time now);
  void receive_ack(Qp& qp, uint32_t q, const WireHeader& h, Time now);
  // The RUD transport's parts (rud_transport.h).
  void receive_rud_data(Qp& qp, const Packet& p, const WireHeader& h, Placed pl, Time now);
  void receive_rud_ack(Qp& qp, const WireHeader& h, Time now);
  bool req_failed(const Qp& qp) const {
    return qp.rud ? qp.rud->failed() : qp.gbn ? qp.gbn->failed() : qp.sr->failed();
  }
  uint64_t req_timeouts(const Qp& qp) const {
    return qp.rud ? qp.rud->timeouts() : qp.gbn ? qp.gbn->timeouts() : qp.sr->timeouts();
  }
  void queue_control(int32_t dst, uint8_t tc, uint8_t opcode, uint16_t index, uint32_t psn,
                     bool nak, bool sacked, uint32_t aux);
  Time dma_write(Time now, uint64_t bytes);

  int id_;
  const NicConfig& cfg_;
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
  static constexpr uint32_t kNoQp = UINT32_MAX;
  std::vector<uint32_t> dense_;                      // [peer * qps_per_pair + index] -> local QP
  std::unordered_map<uint64_t, uint32_t> qp_index_;  // (peer << 16 | index) -> local QP
  std::vector<SentMessage> sent_;
  std::vector<ReceivedMessage> received_;
  std::deque<Packet> control_;  // ACK, NAK, CNP: before data
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t seq_ = 0;
  Time tx_wake_ = Time::max();  // the earliest wire look queued
  bool fault_ = false;
  uint64_t fault_count_ = 0;
  Stats stats_;
  std::vector<uint64_t> done_;  // scratch: messages an ACK completed
};

}  // namespace fabricsim::nic
