#include "models/nic/qp_scheduler.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::nic {

void QpSchedulerConfig::visit(config::Visitor& v) {
  v.choice("policy", policy, "round_robin", {"round_robin", "weighted"},
           "round_robin: one packet per QP per turn; weighted: deficit round robin on bytes, "
           "shares in proportion to the QPs' weights.");
  v.applies_when("quantum", "{policy}: weighted", [this] { return policy == "weighted"; });
  v.param("quantum", quantum, Bytes(4096), Bytes(64), Bytes(1 << 20),
          "weighted: bytes of credit per turn per unit of weight (at least the largest frame "
          "keeps every turn productive).");
}

QpScheduler::QpScheduler(const QpSchedulerConfig& cfg)
    : weighted_(cfg.policy == "weighted"), quantum_(static_cast<int64_t>(cfg.quantum.count())) {
  if (cfg.policy != "weighted" && cfg.policy != "round_robin")
    throw std::invalid_argument("qp scheduler: unknown policy " + cfg.policy);
}

void QpScheduler::add_qp(uint32_t qpn, uint32_t weight) {
  if (qpn != qps_.size()) throw std::invalid_argument("qp scheduler: QPs must be added in order");
  if (weight < 1) throw std::invalid_argument("qp scheduler: weight must be at least 1");
  qps_.emplace_back();
  qps_.back().weight = weight;
}

void QpScheduler::set_rate(uint32_t qpn, BitRate rate) {
  Qp& q = qps_.at(qpn);
  if (rate == q.rate) return;
  q.rate = rate;
  q.memo_bytes = 0;  // the memoized gap was at the old rate
}

void QpScheduler::enqueue(uint32_t qpn, uint32_t frame_bytes) {
  Qp& q = qps_.at(qpn);
  idle_until_ = Time();
  if (q.n++ == 0) {
    q.head = frame_bytes;
    q.deficit = 0;  // DRR: a QP that was idle starts its turn afresh
    active_.push_back({q.allowed, qpn});
  } else {
    q.rest.push_back(frame_bytes);
  }
}

void QpScheduler::charge(uint32_t id, uint32_t bytes, Time now) {
  Qp& q = qps_[id];
  ++q.sent;
  q.sent_bytes += bytes;
  if (q.rate.as_bps() == 0) return;
  if (bytes != q.memo_bytes) {
    q.memo_bytes = bytes;
    q.memo_gap = q.rate.serialization(Bytes(bytes));
  }
  q.allowed = std::max(now, q.allowed) + q.memo_gap;
}

uint32_t QpScheduler::pick_id(Time now, Time& next) {
  if (now < idle_until_) {
    next = idle_until_;
    return kNone;
  }
  next = Time::max();
  bool credited = false;  // weighted: a QP short of credit got some (not a pass without effect)
  // One pass over the active QPs from the current turn: the first allowed one sends. Weighted:
  // a QP whose credit is short of its head packet gets its quantum and yields its turn, as in DRR;
  // a second pass can then serve it, so a pick never fails while some QP is allowed.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t n = active_.size(); n > 0; --n) {
      const Turn t = active_.front();
      if (t.allowed > now) {
        next = std::min(next, t.allowed);
        active_.pop_front();
        active_.push_back(t);  // paced: passed over, keeps its credit
        continue;
      }
      const uint32_t id = t.id;
      Qp& q = qps_[id];
      const uint32_t head = q.head;
      if (weighted_ && q.deficit < head) {
        q.deficit += quantum_ * q.weight;
        credited = true;
        if (q.deficit < head) {  // still short (a frame above weight x quantum): next turn
          active_.pop_front();
          active_.push_back(t);
          continue;
        }
      }
      if (--q.n > 0) {
        q.head = q.rest.front();
        q.rest.pop_front();
      }
      charge(id, head, now);
      if (weighted_) q.deficit -= head;
      // Round robin: one packet a turn. Weighted: the turn lasts while the credit covers the
      // next packet.
      if (q.n == 0) {
        active_.pop_front();
      } else if (!weighted_ || q.deficit < q.head) {
        active_.pop_front();
        active_.push_back({q.allowed, id});
      } else {
        active_.front().allowed = q.allowed;
      }
      return id;
    }
  }
  if (!credited) idle_until_ = next;
  return kNone;
}

}  // namespace fabricsim::nic
