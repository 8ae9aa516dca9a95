#include "models/nic/cnp_generator.h"

namespace fabricsim::nic {

void CnpConfig::visit(config::Visitor& v) {
  v.param("interval", interval, kDefaultInterval, Time(), Time::us(100000),
          "At most one CNP per QP per interval (DCQCN paper: 50 us [R]; NICs make it "
          "configurable, sweep it).");
}

bool CnpGenerator::on_packet(uint32_t qpn, bool ce, Time now) {
  if (!ce) return false;
  ++marked_;
  if (qpn >= last_.size()) last_.resize(qpn + 1, Time::max());
  Time& last = last_[qpn];
  if (last != Time::max() && now < last + interval_) return false;
  last = now;
  ++cnps_;
  return true;
}

}  // namespace fabricsim::nic
