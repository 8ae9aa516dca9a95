#include "models/link/wire_format.h"

#include <stdexcept>

namespace fabricsim::link {

FecCode fec_code(FecType f) {
  switch (f) {
    case FecType::kRs544:
      return {544, 514, 10, 15};
    case FecType::kRs528:
      return {528, 514, 10, 7};
    case FecType::kNone:
      break;
  }
  return {};
}

WireFormat::WireFormat(int lanes, BitRate lane_rate, FecType fec, Framing framing)
    : lanes_(lanes), lane_rate_(lane_rate), fec_(fec), framing_(framing) {
  if (lanes < 1) throw std::invalid_argument("WireFormat: lanes must be >= 1");
  if (lane_rate.as_bps() == 0) throw std::invalid_argument("WireFormat: lane rate is zero");
  const unsigned __int128 line = static_cast<unsigned __int128>(lane_rate.as_bps()) * lanes;
  line_rate_ = BitRate::bps(static_cast<uint64_t>(line));
  unsigned __int128 num = line, den = 1;
  if (fec == FecType::kNone) {
    num *= 64;
    den = 66;
  } else {
    const FecCode c = fec_code(fec);
    num *= static_cast<unsigned>(c.k) * 256u;
    den = static_cast<unsigned>(c.n) * 257u;
  }
  mac_rate_ = BitRate::bps(static_cast<uint64_t>((num + den / 2) / den));
  coding_eff_ = static_cast<double>(num / line) / static_cast<double>(den);
}

Time WireFormat::pause_quantum() const {
  // 512 bits = 64 bytes at the MAC rate.
  return mac_rate_.serialization(Bytes(64));
}

}  // namespace fabricsim::link
