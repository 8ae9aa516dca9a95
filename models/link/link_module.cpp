#include "models/link/link_module.h"

#include <stdexcept>
#include <string>

namespace fabricsim::link {

LinkModule::LinkModule(sc_core::sc_module_name name, Time latency)
    : sc_core::sc_module(name),
      from_a("from_a"),
      from_b("from_b"),
      to_a("to_a"),
      to_b("to_b"),
      latency_(latency) {
  ab_.latency = ba_.latency = latency;
  from_a.bind(ab_);
  from_b.bind(ba_);
}

void LinkModule::end_of_elaboration() {
  ab_.far = to_b.operator->();
  ba_.far = to_a.operator->();
}

UnconnectedPort::UnconnectedPort(sc_core::sc_module_name name)
    : sc_core::sc_module(name), in("in") {
  in.bind(*this);
}

void UnconnectedPort::transfer(const Packet& p, Time, Time) {
  throw std::logic_error(std::string(name()) + ": packet " + std::to_string(p.id) +
                         " sent to a port with nothing attached");
}

}  // namespace fabricsim::link
