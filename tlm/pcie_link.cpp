#include "tlm/pcie_link.h"

#include <stdexcept>

namespace fabricsim::tlm_host {

PcieLink::PcieLink(const PcieConfig& cfg) : cfg_(cfg) {
  if (cfg.generation < 1 || cfg.generation > 6 || cfg.lanes < 1)
    throw std::invalid_argument("pcie: generation or lanes out of range");
  // One byte of TLP stream: 8 bits, stretched by the encoding and by the link layer's share
  // (DLLPs, SKPs: pcie_config.h), at raw_bps: 8 x den x share_den x 10^15 / (num x share_num x
  // raw_bps) fs, kept as a fraction so that long transfers do not accumulate rounding. A common
  // factor is taken out first, so that the denominator stays within 64 bits (one divq).
  unsigned __int128 num = static_cast<unsigned __int128>(8) * cfg.encoding_den() *
                          cfg.link_share_den() * 1000000000000000ull;
  unsigned __int128 den =
      static_cast<unsigned __int128>(cfg.encoding_num()) * cfg.link_share_num() * cfg.raw_bps();
  for (const uint64_t f : {2u, 3u, 5u, 7u, 11u, 13u, 17u, 19u, 23u, 29u, 31u, 37u, 41u, 43u})
    while (num % f == 0 && den % f == 0) {
      num /= f;
      den /= f;
    }
  fs_num_ = num;
  fs_den_ = den;
  request_time_ = exact_tlp_time(0);
}

Time PcieLink::tlp_time(uint64_t payload) const {
  if (payload == 0) return request_time_;
  if (payload == memo_payload_) return memo_time_;
  memo_payload_ = payload;
  memo_time_ = exact_tlp_time(payload);
  return memo_time_;
}

Time PcieLink::exact_tlp_time(uint64_t payload) const {
  const unsigned __int128 bytes = payload + cfg_.tlp_overhead();
  const unsigned __int128 num = bytes * fs_num_ + fs_den_ - 1;
  if (fs_den_ >> 64 == 0)  // every generation and width: one divq (units.h)
    return Time::fs(static_cast<int64_t>(div_u128_u64(num, static_cast<uint64_t>(fs_den_))));
  return Time::fs(static_cast<int64_t>(num / fs_den_));
}

PcieLink::Sent PcieLink::send_tlp(Dir d, Time t, uint64_t payload) {
  const Time start = std::max(t, free_[d]);
  const Time dur = tlp_time(payload);
  free_[d] = start + dur;
  busy_[d] += dur;
  ++tlps_[d];
  payload_[d] += payload;
  return Sent{free_[d], free_[d] + cfg_.latency};
}

}  // namespace fabricsim::tlm_host
