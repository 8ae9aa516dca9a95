// Sender-side InfiniBand link-level credit state of one port (IBTA Vol 1 sec. 7.9.4).
//
// Hardware: the per-VL flow-control counters of an IB transmitter. Credits are counted in 64-byte
// blocks with 12-bit modular counters [R: IBTA Vol 1 7.9.4; V: Wireshark infiniband_link dissector
// carries 12-bit FCTBS/FCCL fields]:
//   FCTBS(vl)  total blocks sent, mod 4096 (sent to the peer in flow-control packets)
//   FCCL(vl)   credit limit last received from the peer's receiver, mod 4096
//   available(vl) = (FCCL - FCTBS) mod 4096
// tick() is one clock edge; outputs come from the state before the edge:
//   send_accept = send_valid && send_blocks <= available(send_vl); then FCTBS += send_blocks
//   send_stall  = send_valid && !send_accept (the sender retries later; state unchanged)
//   an update with (upd_fccl - FCTBS_after_send) mod 4096 > 2048 is a protocol error:
//   upd_error = 1 and FCCL is unchanged; otherwise FCCL = upd_fccl.
// A send and an update in the same cycle both apply, send first.
//
// This is the exact reference for an RTL implementation (rtl/): keep the interface stable.
// Preconditions (std::out_of_range otherwise): vl < vls() for every valid request and accessor.
// Implementations other than the model (flow_control.credit.impl) are registered in
// credit_units() by their own library at start-up (the RTL's: rtl::register_implementations()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "models/common/registry.h"

namespace fabricsim::link {

struct CreditUnitIn {
  bool send_valid;
  uint8_t send_vl;
  uint16_t send_blocks;
  bool upd_valid;
  uint8_t upd_vl;
  uint16_t upd_fccl;
};

struct CreditUnitOut {
  bool send_accept;
  bool send_stall;
  bool upd_error;
};

class CreditUnitIf {
 public:
  virtual ~CreditUnitIf();
  virtual CreditUnitOut tick(const CreditUnitIn&) = 0;
  virtual uint16_t available(int vl) const = 0;
  virtual uint16_t fctbs(int vl) const = 0;
  virtual uint16_t fccl(int vl) const = 0;
  virtual void reset() = 0;
};

class CreditUnitModel final : public CreditUnitIf {
 public:
  static constexpr int kMaxVls = 16;  // VL0-14 data + VL15 management
  static constexpr uint16_t kMod = 4096;
  static constexpr uint16_t kMask = kMod - 1;
  static constexpr uint16_t kMaxAhead = 2048;  // an FCCL further ahead of FCTBS is an error

  // vls in [1, 16], initial_credits_per_vl in [0, 4095] (std::invalid_argument otherwise).
  CreditUnitModel(int vls, uint16_t initial_credits_per_vl);

  CreditUnitOut tick(const CreditUnitIn& in) override;
  uint16_t available(int vl) const override;
  uint16_t fctbs(int vl) const override;
  uint16_t fccl(int vl) const override;
  void reset() override;

  int vls() const { return vls_; }

 private:
  void check_vl(int vl) const;

  int vls_;
  uint16_t initial_;
  uint16_t fctbs_[kMaxVls];
  uint16_t fccl_[kMaxVls];
};

// Makes the credit counters of one sender: the model (CreditUnitModel) or, plugged in through the
// same CreditUnitIf, another implementation (flow_control.credit.impl, e.g. the Verilated RTL).
using CreditUnitFactory =
    std::function<std::unique_ptr<CreditUnitIf>(int vls, uint16_t initial_credits_per_vl)>;

// One implementation of the credit unit, as registered.
struct CreditUnitImpl {
  CreditUnitFactory make;
  std::string doc;    // for the configuration reference: "the C++ model"
  std::string title;  // names it in limit errors: "the RTL credit unit"
  int max_vls = 0;    // data VLs it has (0: as many as the configuration allows)
};

// The implementations of flow_control.credit.impl, by name: "model" (CreditUnitModel) and those
// registered at start-up. names() are its choices; doc() describes them for the reference.
class CreditUnitRegistry {
 public:
  static constexpr const char* kModel = "model";
  CreditUnitRegistry();  // with "model"
  static CreditUnitRegistry& global();

  // std::logic_error on a duplicate name.
  void add(const std::string& impl, CreditUnitImpl entry) { impls_.add(impl, std::move(entry)); }
  // std::invalid_argument "unknown credit unit impl 'x' (valid: model, rtl)".
  const CreditUnitImpl& at(const std::string& impl) const { return impls_.at(impl); }
  const CreditUnitImpl* find(const std::string& impl) const { return impls_.find(impl); }
  const std::vector<std::string>& names() const { return impls_.names(); }  // sorted
  std::string doc() const;

 private:
  Registry<CreditUnitImpl> impls_{"credit unit impl"};
};

}  // namespace fabricsim::link
