#include "models/link/credit_unit.h"

#include <stdexcept>
#include <string>

namespace fabricsim::link {

CreditUnitIf::~CreditUnitIf() = default;

CreditUnitRegistry::CreditUnitRegistry() {
  add(kModel, CreditUnitImpl{[](int vls, uint16_t initial) -> std::unique_ptr<CreditUnitIf> {
                               return std::make_unique<CreditUnitModel>(vls, initial);
                             },
                             "the C++ model", "the credit unit model", 0});
}

CreditUnitRegistry& CreditUnitRegistry::global() {
  static CreditUnitRegistry registry;
  return registry;
}

std::string CreditUnitRegistry::doc() const {
  std::string doc = "Credit counters of every sender.";
  for (const auto& name : names()) {
    const CreditUnitImpl& e = *find(name);
    doc += " " + name + ": " + e.doc;
    if (e.max_vls > 0) doc += " (up to " + std::to_string(e.max_vls) + " data VLs)";
    doc += ".";
  }
  return doc;
}

CreditUnitModel::CreditUnitModel(int vls, uint16_t initial_credits_per_vl)
    : vls_(vls), initial_(initial_credits_per_vl) {
  if (vls < 1 || vls > kMaxVls)
    throw std::invalid_argument("CreditUnitModel: vls " + std::to_string(vls) +
                                " is out of range [1, 16]");
  if (initial_credits_per_vl > kMask)
    throw std::invalid_argument("CreditUnitModel: initial credits " +
                                std::to_string(initial_credits_per_vl) +
                                " do not fit the 12-bit counter [0, 4095]");
  reset();
}

void CreditUnitModel::reset() {
  for (int v = 0; v < kMaxVls; ++v) {
    fctbs_[v] = 0;
    fccl_[v] = v < vls_ ? initial_ : 0;
  }
}

void CreditUnitModel::check_vl(int vl) const {
  if (vl < 0 || vl >= vls_)
    throw std::out_of_range("CreditUnitModel: vl " + std::to_string(vl) + " is not in [0, " +
                            std::to_string(vls_) + ")");
}

uint16_t CreditUnitModel::available(int vl) const {
  check_vl(vl);
  return static_cast<uint16_t>((fccl_[vl] - fctbs_[vl]) & kMask);
}

uint16_t CreditUnitModel::fctbs(int vl) const {
  check_vl(vl);
  return fctbs_[vl];
}

uint16_t CreditUnitModel::fccl(int vl) const {
  check_vl(vl);
  return fccl_[vl];
}

CreditUnitOut CreditUnitModel::tick(const CreditUnitIn& in) {
  CreditUnitOut out{false, false, false};
  if (in.send_valid) {
    check_vl(in.send_vl);
    out.send_accept = in.send_blocks <= available(in.send_vl);
    out.send_stall = !out.send_accept;
  }
  if (in.upd_valid) check_vl(in.upd_vl);
  // Edge: the send applies first, the update is checked against the FCTBS it leaves.
  if (out.send_accept)
    fctbs_[in.send_vl] = static_cast<uint16_t>((fctbs_[in.send_vl] + in.send_blocks) & kMask);
  if (in.upd_valid) {
    const uint16_t ahead = static_cast<uint16_t>((in.upd_fccl - fctbs_[in.upd_vl]) & kMask);
    if (ahead > kMaxAhead)
      out.upd_error = true;
    else
      fccl_[in.upd_vl] = static_cast<uint16_t>(in.upd_fccl & kMask);
  }
  return out;
}

}  // namespace fabricsim::link
