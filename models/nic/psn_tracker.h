// The responder's receive tracker of a QP, as one block: expected PSN, the bitmap of PSNs placed
// ahead of it, ACK coalescing, and the ACK / NAK (SACK) each packet draws, for the three
// transports (rc_transport.h go-back-N, rc_selective.h selective repeat, rud_transport.h RUD).
//
// Hardware: the per-QP receive state a NIC's responder pipeline reads and writes per packet. The
// C++ reference is the responders themselves (PsnTrackerModel runs them behind this interface);
// rtl/psn_tracker.sv is its RTL, registered under nic.rx_impl: rtl (rtl/register.cpp), which
// the responders then delegate to (RcResponder::attach and the others), packet by packet.
// tick() is one clock edge, one packet at most: outputs combinational from the state before the
// edge and the packet, the state updated on the edge. PSNs 24 bits (wrapping); the bitmap holds
// up to kMaxRange PSNs ahead of the expected one (an RTL instance's size).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/common/registry.h"

namespace fabricsim::nic {

enum class PsnTrackerMode : uint8_t { kGoBackN = 0, kSelective = 1, kRud = 2 };

struct PsnTrackerParams {
  PsnTrackerMode mode = PsnTrackerMode::kGoBackN;
  uint32_t range = 256;     // PSNs it places beyond the expected one (selective, RUD): 1..256
  uint32_t ack_every = 16;  // go-back-N and selective: ACK after this many in order (1..2^20)
  uint32_t first_psn = 0;
};

struct PsnTrackerIn {
  bool valid = false;
  bool read = false;  // an RDMA READ request taking `psns` PSNs (go-back-N, selective)
  uint32_t psn = 0;
  bool flag = false;  // data: AckReq (go-back-N, selective) or trimmed (RUD)
  uint32_t psns = 1;
};

struct PsnTrackerOut {
  uint8_t reply = 0;    // 0 none, 1 ACK, 2 NAK (RUD: NACK of a trimmed packet)
  uint32_t psn = 0;     // go-back-N: the ACK's or NAK's PSN
  bool placed = false;  // taken (go-back-N: accepted in order; a READ taken counts here too)
  bool read = false;    // a READ request taken in order
  bool duplicate = false;
  bool beyond = false;  // beyond the range: dropped, no reply
  bool out_of_order = false;
  bool trimmed = false;
  uint32_t delivered = 0;  // PSNs that became in order (selective, RUD)
  uint32_t cum = 0;        // SACK: the last PSN in order
  uint64_t bitmap = 0;     // SACK: selective 64 bits (bit i: cum + 1 + i); RUD 32 bits of `block`
  uint32_t block = 0;      // RUD's SACK block
  bool operator==(const PsnTrackerOut& o) const;
};

class PsnTrackerIf {
 public:
  static constexpr uint32_t kMaxRange = 256;
  static constexpr int kWords = kMaxRange / 64;
  virtual ~PsnTrackerIf();
  virtual PsnTrackerOut tick(const PsnTrackerIn& in) = 0;
  // The state (after the last edge).
  virtual uint32_t expected() const = 0;
  virtual uint64_t ahead(int word) const = 0;  // bit i of word w: PSN expected + 1 + 64 w + i
  virtual uint32_t unacked() const = 0;
  virtual bool nak_sent() const = 0;
  virtual void reset(const PsnTrackerParams& p) = 0;
};

// The responders behind the interface: the reference for the RTL.
std::unique_ptr<PsnTrackerIf> make_psn_tracker_model(const PsnTrackerParams& p);
// std::invalid_argument when the parameters do not fit (range, ack_every, mode).
void check_psn_tracker_params(const PsnTrackerParams& p);

struct PsnTrackerImpl {
  std::function<std::unique_ptr<PsnTrackerIf>(const PsnTrackerParams&)> make;
  std::string doc;
};

// nic.rx_impl: "model" (the responders' own code; make() gives PsnTrackerModel for the harness)
// and those registered at start-up.
class PsnTrackerRegistry {
 public:
  static constexpr const char* kModel = "model";
  PsnTrackerRegistry();
  static PsnTrackerRegistry& global();
  void add(const std::string& impl, PsnTrackerImpl e) { impls_.add(impl, std::move(e)); }
  const PsnTrackerImpl& at(const std::string& impl) const { return impls_.at(impl); }
  const std::vector<std::string>& names() const { return impls_.names(); }
  std::string doc() const;

 private:
  Registry<PsnTrackerImpl> impls_{"receive tracker impl"};
};

}  // namespace fabricsim::nic
