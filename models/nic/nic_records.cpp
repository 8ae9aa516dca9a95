// The NIC's sent records as NicArray matches them with their receivers' (nic.h, "Integrity"):
// each handed out once, found by its QP and its position on it. Apart from nic.cpp by job: the
// NIC's own paths never call it.
#include "models/nic/nic.h"

namespace fabricsim::nic {

SentMessage* Nic::take_unmatched(int32_t peer, uint16_t index, uint64_t seq) {
  uint32_t q = kNoQp;
  if (peer < 0 || index >= cfg_.qps_per_pair) return nullptr;
  if (!dense_.empty()) {
    const size_t slot = static_cast<size_t>(peer) * cfg_.qps_per_pair + index;
    if (slot < dense_.size()) q = dense_[slot];
  } else {
    const auto it = qp_index_.find(static_cast<uint64_t>(peer) << 16 | index);
    if (it != qp_index_.end()) q = it->second;
  }
  if (q == kNoQp) return nullptr;
  Qp& qp = qps_[q];
  if (seq < qp.unmatched_seq || seq - qp.unmatched_seq >= qp.unmatched.size()) return nullptr;
  uint32_t& slot = qp.unmatched[seq - qp.unmatched_seq];
  const uint32_t msg = slot;
  slot = kNoMsg;
  while (!qp.unmatched.empty() && qp.unmatched.front() == kNoMsg) {
    qp.unmatched.pop_front();
    ++qp.unmatched_seq;
  }
  return msg == kNoMsg ? nullptr : &sent_[msg];
}

}  // namespace fabricsim::nic
