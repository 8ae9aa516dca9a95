// The reliable unordered delivery (RUD) transport, UEC style: packets of a QP may take different
// paths (per-packet entropy, sprayed by the switches' ECMP hash), arrive in any order and are
// placed as they arrive; the requester learns what arrived from selective acknowledgements and
// sends again only what is missing.
//
// Hardware: the Ultra Ethernet transport's RUD service (UEC 1.0, PDS; htsim's UEC model has the
// same parts: a SACK per packet, a reorder allowance before a hole counts as lost, NACKs for
// trimmed packets, an RTO), as AI NICs run it with multipath spraying. The NIC writes a new
// entropy on every packet (Nic: cycling); here only the reliability:
//   Requester: at most `window` (nic.rc.window) packets beyond the oldest unacknowledged one are
//   sent (the responder's placement range, so its bitmap covers all of them). A packet becomes
//   acknowledged by the cumulative PSN or by a SACK bit; a message completes when all its
//   packets are acknowledged, whatever the older messages do (unordered completion). Reordering
//   is normal under spraying, so a hole is not lost at once: a sent, unacknowledged packet is
//   presumed lost when `reorder_threshold` packets posted after it have been acknowledged (the
//   dupack rule of TCP, counted in packets), and is sent again once per recovery. A NACK (the
//   responder got the packet trimmed: header only) sends that PSN again at once. A timeout sends
//   every unacknowledged packet again; after `retry_count` timeouts in a row without progress
//   the QP fails its outstanding messages (RetransmitTimer, rc_transport.h).
//   Responder: places any PSN within `window` of the expected one exactly once, moves its
//   cumulative PSN over what has arrived in order, and answers every data packet at once (no
//   coalescing: the per-packet SACK of UEC; a congestion control may ask for one ACK per
//   CcEntry::ack_bytes, NSCC's 16 KB, which the NIC does: nic_rud.cpp) with the cumulative PSN
//   and the 32-bit SACK block that holds the packet (block b: PSNs cum + 1 + 32 b ... + 31;
//   b < 32, so windows up to 1,024 packets). A trimmed packet gets a NACK for its PSN instead.
// On the wire (wire_header.h): an ACK carries the cumulative PSN in the PSN field, the block
// index in the flags byte's top 5 bits and the bitmap in `aux`; its frame is the RoCE ACK's plus
// kSackBytes (the bitmap and its offset). A NACK: the PSN to resend in the PSN field, the
// cumulative PSN in `aux`. Plain C++, driven with explicit times.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "models/common/fifo.h"
#include "models/config/config.h"
#include "models/nic/rc_transport.h"
#include "models/nic/send_window.h"

namespace fabricsim::nic {

// The `nic.rud` section.
struct RudConfig : config::Configurable {
  int64_t reorder_threshold = 0;  // later packets acknowledged before a hole counts as lost

  void visit(config::Visitor& v) override;
};

// One ACK's selective part: bit i of `bitmap` says PSN base + i is placed.
struct RudSack {
  uint32_t cum = 0;  // the last PSN placed in order
  uint32_t block = 0;
  uint32_t bitmap = 0;
  uint32_t base() const { return (cum + 1 + 32 * block) & Packetizer::kPsnMask; }
};

// The window, loss list and timer are SendWindow's (shared with selective repeat).
class RudRequester : public SendWindow {
 public:
  static constexpr uint32_t kSackBits = 32, kMaxBlocks = 32;
  static constexpr uint32_t kSackBytes = 8;  // on an ACK: the bitmap and its block offset

  RudRequester(const RcConfig& rc, const RudConfig& cfg, uint32_t first_psn);

  // Posts one packet (in PSN order); `last`: its message's last.
  void post_packet(uint64_t message, const TxPacket& pkt, bool last, uint32_t digest = 0,
                   uint8_t tc = 0);
  // The frame bytes of the packet next(now) would return, if any.
  std::optional<uint32_t> peek() const;
  // The next packet at `now`: a lost one first, then a new one if the window allows.
  std::optional<RcPacket> next(Time now);
  // An ACK: completes messages into `done` (in the order their last packet was acknowledged),
  // finds holes past the reorder allowance.
  void on_sack(const RudSack& s, Time now, std::vector<uint64_t>& done);
  // A NACK for `psn` (trimmed on the way), with the responder's cumulative PSN `cum`.
  void on_nack(uint32_t psn, uint32_t cum, Time now, std::vector<uint64_t>& done);
  Time on_timer(Time now, std::vector<uint64_t>& failed);
  // Payload bytes the last reply newly acknowledged; the payload of the packet the last NACK
  // named (0: none in the window).
  uint64_t acked_bytes() const { return acked_bytes_; }
  uint32_t nacked_bytes() const { return nacked_bytes_; }
  // No new packet may go until an ACK comes (the window is full).
  bool window_full() const { return high_ >= window_; }

  uint64_t presumed_lost() const { return presumed_lost_; }  // by the reorder allowance
  uint64_t nacked() const { return nacked_; }
  // Packets sent and neither acknowledged nor given up on.
  size_t in_flight() const { return high_; }

 private:
  struct Progress {
    uint32_t outstanding = 0;  // packets posted, not acknowledged
    bool all_posted = false;
  };
  // Completes, in posting order, the messages at the front of order_ that are wholly
  // acknowledged.
  void complete_in_order(std::vector<uint64_t>& done);
  void queue_lost(size_t i, bool force);
  bool acknowledge(size_t i, std::vector<uint64_t>& done);
  void settle(bool any, Time now);
  RudConfig cfg_;
  std::unordered_map<uint64_t, Progress> messages_;
  // Messages in posting order, until completed. A message wholly acknowledged waits behind an
  // earlier one: the responder hands messages to its host in PSN order (the CQE order), so a
  // message behind one that never arrives is never delivered, and must not complete here.
  Fifo<uint64_t> order_;
  uint64_t presumed_lost_ = 0, nacked_ = 0;
  uint64_t acked_bytes_ = 0;
  uint32_t nacked_bytes_ = 0;
};

class RudResponder {
 public:
  // It places any PSN within `window` (nic.rc.window) of the expected one.
  RudResponder(const RcConfig& rc, uint32_t first_psn);

  struct Outcome {
    bool placed = false;     // written to memory (first arrival of this PSN)
    uint32_t delivered = 0;  // PSNs that became in order with it
    bool reply = false;      // an ACK (or, for a trimmed packet, a NACK) goes back
    bool nack = false;
    RudSack sack;
  };
  // A data packet with `psn`; `trimmed`: only its header arrived (a switch cut it).
  Outcome receive(uint32_t psn, bool trimmed);

  uint32_t expected() const { return epsn_; }
  // Whether any PSN beyond the expected one is placed (held until the gap fills).
  bool holds_ahead() const { return any_placed_ahead(ahead_); }
  uint64_t placed() const { return placed_; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t out_of_order() const { return out_of_order_; }
  uint64_t trimmed() const { return trimmed_; }
  const std::vector<uint64_t>& ahead_bits() const { return ahead_; }
  // As RcResponder::attach.
  void attach(std::unique_ptr<PsnTrackerIf> hw) { hw_ = std::move(hw); }

 private:
  Outcome via(const PsnTrackerIn& in);
  std::unique_ptr<PsnTrackerIf> hw_;
  // PSN epsn + k placed (k >= 1; k = 0, the expected one, never is).
  bool placed_at(uint32_t k) const {
    return k > 0 && k <= range_ && ((ahead_[(k - 1) >> 6] >> ((k - 1) & 63)) & 1);
  }
  RudSack sack(uint32_t psn) const;
  uint32_t epsn_;
  uint32_t range_;
  std::vector<uint64_t> ahead_;  // bit i: PSN epsn + 1 + i placed
  uint64_t placed_ = 0, duplicates_ = 0, out_of_order_ = 0, trimmed_ = 0;
};

}  // namespace fabricsim::nic
