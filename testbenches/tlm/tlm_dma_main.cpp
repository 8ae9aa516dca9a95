// The host side's TLM-2.0 modules in a user's own sc_main: a device DMAs into host memory over
// a PCIe link and reads it back, a driver rings a doorbell in the device's BAR. Checks the bytes
// and the times against hand-computed figures (Gen5 x16, 256 B payloads, 4096 B read requests,
// 100 ns one way, 200 ns completer, memory 300 GB/s and 100 ns), and that DirectDma (the same
// cores without SystemC) gives the same times. Exits 0 when all hold, 1 with the reason
// otherwise.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "models/config/config.h"
#include "testbenches/unit/loaded_config.h"
#include "tlm/direct_dma.h"
#include "tlm/pcie_tlm.h"

using namespace fabricsim::tlm_host;

namespace {

int failures = 0;
void check(bool ok, const char* what, double got, double want) {
  if (ok) return;
  std::fprintf(stderr, "FAIL %s: got %.6f, expected %.6f\n", what, got, want);
  ++failures;
}
void near(const char* what, double got, double want, double tol) {
  check(std::fabs(got - want) <= tol, what, got, want);
}
// ns of `bytes` of TLP stream on Gen5 x16 (32 GT/s x 16 lanes, 128b/130b).
// Gen5 x16, 128b/130b, less the data link layer's share at MPS 256 (pcie-bench's model: an 8 B
// ACK and an 8 B flow-control update every 168 symbol times, 4 SKP symbols in 1,538).
double wire_ns(double bytes) {
  return bytes * 8.0 * 130.0 / 128.0 / (32.0 * 16) / (1 - 16.0 / 168 - 4.0 / 1538);
}

struct Bar : sc_core::sc_module {
  tlm_utils::simple_target_socket<Bar> socket;
  std::vector<double> doorbells_ns;  // arrival times of writes
  uint64_t last = 0;
  explicit Bar(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") {
    socket.register_b_transport(this, &Bar::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    doorbells_ns.push_back((sc_core::sc_time_stamp() + delay).to_seconds() * 1e9);
    std::memcpy(&last, p.get_data_ptr(), sizeof last);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

SC_MODULE(Device) {
  tlm_utils::simple_initiator_socket<Device> dma;
  double write_start = 0, write_done = 0, read_start = 0, read_done = 0;  // ns
  SC_CTOR(Device) : dma("dma") {
    SC_THREAD(run);
  }
  void transfer(tlm::tlm_command cmd, uint64_t addr, std::vector<uint8_t> & buf, double& done_ns) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(addr);
    p.set_data_ptr(buf.data());
    p.set_data_length(static_cast<unsigned>(buf.size()));
    p.set_streaming_width(static_cast<unsigned>(buf.size()));
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    dma->b_transport(p, d);
    if (!p.is_response_ok()) {
      std::fprintf(stderr, "FAIL: DMA response %s\n", p.get_response_string().c_str());
      ++failures;
    }
    wait(d);
    done_ns = sc_core::sc_time_stamp().to_seconds() * 1e9;
  }
  void run() {
    wait(1, sc_core::SC_US);
    std::vector<uint8_t> out(65536), in(65536, 0);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 13 + 1);
    double t = 0;
    // A 64 KiB posted write: 256 TLPs of 280 B back to back.
    write_start = sc_core::sc_time_stamp().to_seconds() * 1e9;
    transfer(tlm::TLM_WRITE_COMMAND, 0x10000, out, t);
    write_done = t;
    near("64 KiB write leaves", t - 1000, 256 * wire_ns(280), 1e-3);
    // Read it back: 16 requests of 4096 B; the first's data after request, link, completer and
    // memory; then 256 completions back to back (the link, not the memory, is the bottleneck).
    const double start = t;
    read_start = t;
    transfer(tlm::TLM_READ_COMMAND, 0x10000, in, t);
    read_done = t;
    const double first_data = wire_ns(24) + 100 + 200 + 100 + 4096 / 300.0;
    near("64 KiB read completes", t - start, first_data + 256 * wire_ns(280) + 100, 1e-3);
    check(in == out, "bytes read back equal bytes written", 0, 0);
  }
};

SC_MODULE(Driver) {
  tlm_utils::simple_initiator_socket<Driver> mmio;
  SC_CTOR(Driver) : mmio("mmio") {
    SC_THREAD(run);
  }
  void run() {
    wait(500, sc_core::SC_NS);
    uint64_t v = 0x1234;
    tlm::tlm_generic_payload p;
    p.set_command(tlm::TLM_WRITE_COMMAND);
    p.set_address(0x800);
    p.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
    p.set_data_length(8);
    p.set_streaming_width(8);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    mmio->b_transport(p, d);
    near("doorbell write is posted", d.to_seconds() * 1e9, wire_ns(32), 1e-4);
  }
};

}  // namespace

int sc_main(int, char*[]) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  const auto pcfg = fabricsim::test::loaded<PcieConfig>();
  const auto mcfg = fabricsim::test::loaded<HostMemoryConfig>();
  PcieLinkModule link("pcie", pcfg);
  HostMemoryTarget mem("host_memory", mcfg);
  Device dev("device");
  Driver drv("driver");
  Bar bar("bar");
  dev.dma.bind(link.dma_in);
  link.host_out.bind(mem.socket);
  drv.mmio.bind(link.mmio_in);
  link.bar_out.bind(bar.socket);
  sc_core::sc_start();
  if (bar.doorbells_ns.size() != 1 || bar.last != 0x1234) {
    std::fprintf(stderr, "FAIL: the doorbell did not reach the BAR\n");
    ++failures;
  } else {
    near("doorbell reaches the BAR", bar.doorbells_ns[0], 500 + wire_ns(32) + 100, 1e-3);
  }
  // The link carried what was asked of it, and memory saw every byte once each way.
  near("TLPs to host", static_cast<double>(link.link().tlps(PcieLink::kToHost)), 256 + 16, 0);
  near("TLPs to device", static_cast<double>(link.link().tlps(PcieLink::kToDevice)), 256 + 1, 0);
  near("memory bytes", static_cast<double>(mem.memory().bytes()), 2 * 65536, 0);
  // The same DMAs through DirectDma (the cores called without SystemC, as a fabric's NICs will):
  // the same times to the femtosecond, the same bytes.
  {
    PcieLink l2(pcfg);
    HostMemory m2(mcfg);
    DirectDma direct(l2, m2);
    std::vector<uint8_t> out(65536), in(65536, 0);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 13 + 1);
    const auto at = [](double ns) { return fabricsim::Time::fs(std::llround(ns * 1e6)); };
    const fabricsim::Time w = direct.write(at(dev.write_start), 0x10000, out.size(), out.data());
    near("DirectDma write leaves as through TLM", w.as_ns(), dev.write_done, 1e-6);
    const fabricsim::Time r = direct.read(at(dev.read_start), 0x10000, in.size(), in.data());
    near("DirectDma read completes as through TLM", r.as_ns(), dev.read_done, 1e-6);
    check(in == out, "DirectDma reads back what it wrote", 0, 0);
  }
  if (failures) return 1;
  std::printf("tlm_dma: all checks passed\n");
  return 0;
}
