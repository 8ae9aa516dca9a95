// The reliable transport with selective repeat (IRN style, Mittal et al. 2018): only lost packets
// are sent again, and the responder places packets that arrive out of order.
//
// Hardware: what newer RDMA NICs run instead of go-back-N (ConnectX-6 Dx onwards, AMD Pollara,
// Broadcom Thor Ultra: hardware-facts.md). Requester: at most `window` packets outstanding beyond
// the cumulative acknowledgement; every ACK or NAK carries the responder's cumulative PSN and a
// 64-packet SACK bitmap (bit i: PSN cum + 1 + i received); an unacknowledged packet below the
// highest SACKed PSN is lost and is sent again, once per recovery (it may still be in flight); a
// timeout sends every unacknowledged, unSACKed packet again; after `retry_count` timeouts in a
// row without progress the QP fails its outstanding messages. Responder: places any PSN within
// `window` of the expected one exactly once (all the requester may have outstanding), moves its
// cumulative PSN over what has arrived in order, NAKs (with the bitmap) each out-of-order arrival,
// ACKs as the RC responder does (ack_every, AckReq) and re-ACKs duplicates. Configuration: the RC
// transport's (rc_transport.h). Plain C++.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "models/common/fifo.h"
#include "models/nic/rc_transport.h"
#include "models/nic/send_window.h"

namespace fabricsim::nic {

struct Sack {
  uint32_t cum = 0;     // last PSN received in order
  uint64_t bitmap = 0;  // bit i: PSN cum + 1 + i received
};

// The window, loss list and timer are SendWindow's (shared with RUD).
class SrRequester : public SendWindow {
 public:
  SrRequester(const RcConfig& cfg, uint32_t first_psn);

  void post(uint64_t message, const std::vector<TxPacket>& pkts);
  void post_packet(uint64_t message, const TxPacket& pkt, bool last, uint32_t digest = 0,
                   uint8_t tc = 0) {
    packets_.push_back(SendEntry{RcPacket(pkt, message, last, 0, digest, tc)});
  }
  // An RDMA READ, as RcRequester::post_read. Its responses are placed in any order; a response
  // missing below one that came is lost, and a request for it (and for the lost ones right
  // after it in the READ, up to 255) goes again, as a lost data packet would.
  void post_read(uint64_t message, const TxPacket& request, uint32_t responses) {
    reads_.push_back(request.psn);
    append_read<SendEntry>(packets_, message, request, responses,
                           [](const RcPacket& p) { return SendEntry{p}; });
  }
  // A READ response with `psn`: true if it is the first for its PSN (its READ in `message`);
  // acknowledges what precedes its READ and finds lost responses below it.
  bool on_read_response(uint32_t psn, Time now, std::vector<uint64_t>& done, uint64_t& message);
  uint32_t reads_outstanding() const { return reads_sent_; }
  std::optional<uint32_t> peek() const;
  // The next packet at `now`: a lost one first, then a new one if the window allows.
  std::optional<RcPacket> next(Time now);
  // An ACK or NAK with its SACK information: completes messages into `done`, finds losses.
  void on_reply(const Sack& s, Time now, std::vector<uint64_t>& done);
  // The same with one selectively acknowledged PSN anywhere in the window (IRN's SACK: the PSN
  // of the packet that prompted the reply), as the NIC's wire header carries it.
  void on_sack(uint32_t cum, uint32_t sacked, Time now, std::vector<uint64_t>& done);
  Time on_timer(Time now, std::vector<uint64_t>& failed);
  // (acked_sent(): when the newest packet the last reply acknowledged cumulatively left.)

 private:
  void queue_lost(size_t i);
  void cumulative(uint32_t cum, Time now, std::vector<uint64_t>& done);
  void acknowledge(int32_t n, Time now, std::vector<uint64_t>& done);
  bool new_read_blocked() const {
    return high_ < packets_.size() && packets_[high_].p.read_left &&
           reads_sent_ >= static_cast<uint64_t>(cfg_.max_reads_outstanding);
  }
  RcConfig cfg_;
  Fifo<uint32_t> reads_;     // the first PSN of each READ in packets_
  uint32_t reads_sent_ = 0;  // of those, sent
};

class SrResponder {
 public:
  // It places any PSN within `window` (RcConfig) of the expected one: the requester never has
  // more outstanding, so nothing it sends is beyond (IRN sizes its bitmap to the BDP likewise).
  SrResponder(const RcConfig& cfg, uint32_t first_psn);

  struct Outcome {
    bool placed = false;     // written to memory (first arrival of this PSN)
    uint32_t delivered = 0;  // PSNs that became in order with it
    RcResponder::Reply reply = RcResponder::Reply::kNone;
    Sack sack;
    bool read = false;       // receive_read: the READ request taken, in order
    bool duplicate = false;  // receive_read: a READ request already taken (run it again)
  };
  Outcome receive(uint32_t psn, bool ack_req);
  // An RDMA READ request with `psn` taking `psns` PSNs: taken only in order (a READ is not run
  // ahead of a gap: dropped, it is recovered as a lost packet), then the expected PSN moves past
  // it and over what had arrived beyond (`delivered` of those, ACKed); behind: a duplicate.
  Outcome receive_read(uint32_t psn, uint32_t psns);

  uint32_t expected() const { return epsn_; }
  // Whether any PSN beyond the expected one is placed (held until the gap fills).
  bool holds_ahead() const { return any_placed_ahead(ahead_); }
  uint64_t placed() const { return placed_; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t out_of_order() const { return out_of_order_; }
  uint64_t beyond_window() const { return beyond_; }
  const std::vector<uint64_t>& ahead_bits() const { return ahead_; }
  int64_t unacked() const { return unacked_; }
  // As RcResponder::attach.
  void attach(std::unique_ptr<PsnTrackerIf> hw) { hw_ = std::move(hw); }

 private:
  Outcome via(const PsnTrackerIn& in);
  std::unique_ptr<PsnTrackerIf> hw_;
  Sack sack() const;
  void shift(uint32_t k);  // the bitmap down by k PSNs
  RcConfig cfg_;
  uint32_t epsn_;
  bool ahead(uint32_t i) const { return (ahead_[i >> 6] >> (i & 63)) & 1; }
  uint32_t range_;               // PSNs beyond the expected one it can place
  std::vector<uint64_t> ahead_;  // bit i: PSN epsn + 1 + i placed
  int64_t unacked_ = 0;
  uint64_t placed_ = 0, duplicates_ = 0, out_of_order_ = 0, beyond_ = 0;
};

}  // namespace fabricsim::nic
