#include "models/nic/wqe_fetcher.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::nic {

void WqeFetchConfig::visit(config::Visitor& v) {
  v.param("max_batch", max_batch, 8, 1, 256, "WQEs",
          "Most WQEs fetched in one DMA read (contiguous in the ring) [S].");
  v.param("max_outstanding", max_outstanding, 16, 1, 4096, "reads",
          "Most WQE reads in flight over all QPs (one per QP) [S].");
  v.param("max_qps", max_qps, 1024, 1, 1 << 24, "QPs",
          "Queue pairs the NIC holds (24-bit QPN [R]).");
  v.param("doorbell_latency", doorbell_latency, Time::ns(20), Time(), Time::us(10),
          "From a doorbell write's arrival at the BAR to its WQE read being issued [S].");
}

WqeFetcher::WqeFetcher(const WqeFetchConfig& cfg) : cfg_(cfg) {}

uint32_t WqeFetcher::create_qp(uint64_t sq_base, uint32_t sq_entries, uint64_t cq_base,
                               uint32_t cq_entries) {
  const auto pow2 = [](uint32_t n) { return n != 0 && (n & (n - 1)) == 0; };
  if (!pow2(sq_entries) || !pow2(cq_entries))
    throw std::invalid_argument("create_qp: ring entries must be a power of two");
  if (static_cast<int64_t>(qps_.size()) >= cfg_.max_qps)
    throw std::invalid_argument("create_qp: the NIC holds at most " + std::to_string(cfg_.max_qps) +
                                " QPs (nic.max_qps)");
  Qp q;
  q.sq = Ring{sq_base, sq_entries, Wqe::kBytes};
  q.cq = Ring{cq_base, cq_entries, Cqe::kBytes};
  qps_.push_back(q);
  return static_cast<uint32_t>(qps_.size() - 1);
}

bool WqeFetcher::doorbell(uint32_t qpn, uint32_t producer) {
  ++doorbells_;
  if (qpn >= qps_.size()) {
    ++bad_doorbells_;
    return false;
  }
  Qp& q = qps_[qpn];
  // Free-running indices: the new one is at or after the last (mod 2^32), and at most a ring
  // ahead of the consumer.
  const uint32_t ahead = producer - q.fetched, moved = producer - q.producer;
  if (ahead > q.sq.entries || moved > q.sq.entries) {
    ++bad_doorbells_;
    return false;
  }
  q.producer = producer;
  make_ready(qpn);
  return true;
}

void WqeFetcher::make_ready(uint32_t qpn) {
  Qp& q = qps_[qpn];
  if (q.ready || q.in_flight || q.producer == q.fetched) return;
  q.ready = true;
  ready_.push_back(qpn);
}

std::optional<WqeFetcher::Fetch> WqeFetcher::next_fetch() {
  if (ready_.empty() || outstanding_ >= cfg_.max_outstanding) return std::nullopt;
  const uint32_t qpn = ready_.front();
  ready_.pop_front();
  Qp& q = qps_[qpn];
  q.ready = false;
  q.in_flight = true;
  ++outstanding_;
  ++fetches_;
  Fetch f;
  f.qpn = qpn;
  f.first = q.fetched;
  f.count = std::min(
      {q.producer - q.fetched, q.sq.until_wrap(q.fetched), static_cast<uint32_t>(cfg_.max_batch)});
  f.address = q.sq.address(q.fetched);
  return f;
}

void WqeFetcher::fetched(const Fetch& f, const uint8_t* bytes, std::vector<Wqe>& out,
                         std::vector<uint32_t>& bad) {
  Qp& q = qps_[f.qpn];
  for (uint32_t k = 0; k < f.count; ++k) {
    Wqe w;
    if (w.decode(bytes + static_cast<size_t>(k) * Wqe::kBytes)) {
      w.qpn = f.qpn;  // the ring's QP, whatever the driver wrote
      out.push_back(w);
    } else {
      ++bad_wqes_;
      bad.push_back(f.first + k);
    }
  }
  q.fetched = f.first + f.count;
  q.in_flight = false;
  --outstanding_;
  wqes_fetched_ += f.count;
  make_ready(f.qpn);  // more rung for meanwhile: back in the round robin
}

WqeFetcher::CqSlot WqeFetcher::next_cqe(uint32_t qpn) {
  Qp& q = qps_.at(qpn);
  const CqSlot s{q.cq.address(q.cq_index), q.cq.owner(q.cq_index)};
  ++q.cq_index;
  ++cqes_;
  return s;
}

uint64_t WqeFetcher::pending() const {
  uint64_t n = 0;
  for (const Qp& q : qps_) n += q.producer - q.fetched;
  return n;
}

}  // namespace fabricsim::nic
