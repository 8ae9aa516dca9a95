#include "tlm/pcie_tlm.h"

#include <stdexcept>

#include "models/common/packet_port.h"

namespace fabricsim::tlm_host {

namespace {

void require_fs_resolution() {
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_FS))
    throw std::logic_error(
        "fabricsim TLM host models need a SystemC time resolution of 1 fs: call "
        "sc_core::sc_set_time_resolution(1, sc_core::SC_FS) before creating any module");
}

// A payload the models can serve: data in one contiguous block, no byte enables.
bool plain(tlm::tlm_generic_payload& p) {
  if (p.get_byte_enable_ptr() != nullptr) {
    p.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return false;
  }
  if (p.get_streaming_width() < p.get_data_length()) {
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return false;
  }
  if (p.get_command() == tlm::TLM_IGNORE_COMMAND) {
    p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return false;
  }
  return true;
}

}  // namespace

HostMemoryTarget::HostMemoryTarget(sc_core::sc_module_name name, const HostMemoryConfig& cfg)
    : sc_core::sc_module(name), socket("socket"), mem_(cfg) {
  require_fs_resolution();
  socket.register_b_transport(this, &HostMemoryTarget::b_transport);
  socket.register_transport_dbg(this, &HostMemoryTarget::transport_dbg);
}

void HostMemoryTarget::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  if (!plain(p)) return;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const Time done = mem_.access(from_sc(now + delay), p.get_data_length());
  if (p.is_write())
    mem_.write(p.get_address(), p.get_data_ptr(), p.get_data_length());
  else
    mem_.read(p.get_address(), p.get_data_ptr(), p.get_data_length());
  delay = to_sc(done) - now;
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int HostMemoryTarget::transport_dbg(tlm::tlm_generic_payload& p) {
  if (p.is_write())
    mem_.write(p.get_address(), p.get_data_ptr(), p.get_data_length());
  else if (p.is_read())
    mem_.read(p.get_address(), p.get_data_ptr(), p.get_data_length());
  else
    return 0;
  return p.get_data_length();
}

PcieLinkModule::PcieLinkModule(sc_core::sc_module_name name, const PcieConfig& cfg)
    : sc_core::sc_module(name),
      dma_in("dma_in"),
      host_out("host_out"),
      mmio_in("mmio_in"),
      bar_out("bar_out"),
      link_(cfg) {
  require_fs_resolution();
  dma_in.register_b_transport(this, &PcieLinkModule::to_host);
  dma_in.register_transport_dbg(this, &PcieLinkModule::dbg_to_host);
  mmio_in.register_b_transport(this, &PcieLinkModule::to_device);
  mmio_in.register_transport_dbg(this, &PcieLinkModule::dbg_to_device);
}

void PcieLinkModule::to_host(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  forward(PcieLink::kToHost, host_out, link_.config().completer_latency, p, delay);
}

void PcieLinkModule::to_device(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  // The device's BAR target adds its own response time.
  forward(PcieLink::kToDevice, bar_out, Time(), p, delay);
}

void PcieLinkModule::forward(PcieLink::Dir d,
                             tlm_utils::simple_initiator_socket<PcieLinkModule>& out,
                             Time completer, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  if (!plain(p)) return;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const Time t = from_sc(now + delay);
  unsigned char* base = p.get_data_ptr();
  const uint64_t a0 = p.get_address();
  tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
  // A piece of the transaction as the target sees it (one TLP of a write, one request of a
  // read), handed over at `at`; returns when the target is done with it.
  const auto piece = [&](tlm::tlm_command cmd, uint64_t a, uint64_t k, Time at) {
    tlm::tlm_generic_payload sub;
    sub.set_command(cmd);
    sub.set_address(a);
    sub.set_data_ptr(base + (a - a0));
    sub.set_data_length(static_cast<unsigned int>(k));
    sub.set_streaming_width(static_cast<unsigned int>(k));
    sub.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time when = to_sc(at) - now;
    out->b_transport(sub, when);
    if (sub.is_response_error()) status = sub.get_response_status();
    return from_sc(now + when);
  };
  if (p.is_write()) {
    // Posted: each TLP is written at its arrival, the target's time its own; the writer is done
    // when the last has left.
    const PcieLink::Sent s = link_.write(d, t, a0, p.get_data_length(),
                                         [&](const PcieLink::Sent& tlp, uint64_t a, uint64_t k) {
                                           piece(tlm::TLM_WRITE_COMMAND, a, k, tlp.arrived);
                                         });
    delay = to_sc(s.left) - now;
  } else {
    // A read: each request served by the target when it arrives (plus the completer's time),
    // its data coming back into the initiator's buffer.
    const Time last =
        link_.read(d, t, a0, p.get_data_length(), [&](Time arrival, uint64_t a, uint64_t k) {
          return piece(tlm::TLM_READ_COMMAND, a, k, arrival + completer);
        });
    delay = to_sc(last) - now;
  }
  p.set_response_status(status);
}

}  // namespace fabricsim::tlm_host
