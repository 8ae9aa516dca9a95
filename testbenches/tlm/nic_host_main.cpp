// The NIC's host interface on the host side's TLM-2.0 models, from a user's own sc_main: a driver
// posts WQEs into send rings in host memory and rings doorbells through the PCIe link; the NIC
// fetches them by DMA, and a stand-in for the later pipeline stages completes each at once, so
// the NIC writes CQEs back. Checks: every WQE reaches the next stage once, in ring order, intact;
// the first at the hand-computed time; the CQ ring holds the right entries with the owner bit of
// their pass; a doorbell to a QP that does not exist is refused and counted; nothing is left in
// flight. Exits 0 when all hold, 1 with the reason otherwise.
#include <cmath>
#include <cstdio>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "models/config/config.h"
#include "models/nic/nic_host_interface.h"
#include "testbenches/unit/loaded_config.h"
#include "tlm/pcie_tlm.h"

using fabricsim::Time;
using namespace fabricsim::nic;
using fabricsim::tlm_host::HostMemoryConfig;
using fabricsim::tlm_host::HostMemoryTarget;
using fabricsim::tlm_host::PcieConfig;
using fabricsim::tlm_host::PcieLinkModule;

namespace {

int failures = 0;
void fail(const std::string& what) {
  std::fprintf(stderr, "FAIL %s\n", what.c_str());
  ++failures;
}
// Gen5 x16, 128b/130b, less the data link layer's share at MPS 256 (pcie-bench's model: an 8 B
// ACK and an 8 B flow-control update every 168 symbol times, 4 SKP symbols in 1,538).
double wire_ns(double bytes) {
  return bytes * 8.0 * 130.0 / 128.0 / (32.0 * 16) / (1 - 16.0 / 168 - 4.0 / 1538);
}

constexpr uint64_t kSq0 = 0x100000, kCq0 = 0x200000, kSq1 = 0x300000, kCq1 = 0x400000;
constexpr uint32_t kEntries = 16;

SC_MODULE(Driver) {
  tlm_utils::simple_initiator_socket<Driver> mmio;
  HostMemoryTarget* mem = nullptr;
  SC_CTOR(Driver) : mmio("mmio") {
    SC_THREAD(run);
  }

  void post(uint64_t sq, uint32_t qpn, uint32_t first, uint32_t n) {
    // The CPU's stores into the ring: untimed (the driver's cost is not the NIC's).
    for (uint32_t k = first; k < first + n; ++k) {
      Wqe w;
      w.opcode = Opcode::kRdmaWrite;
      w.qpn = qpn;
      w.wr_id = 1000 * qpn + k;
      w.length = 4096;
      uint8_t b[Wqe::kBytes];
      w.encode(b);
      mem->memory().write(sq + static_cast<uint64_t>(k % kEntries) * Wqe::kBytes, b, sizeof b);
    }
  }
  void ring(uint32_t qpn, uint32_t producer) {
    uint64_t v = producer;
    tlm::tlm_generic_payload p;
    p.set_command(tlm::TLM_WRITE_COMMAND);
    p.set_address(qpn * NicHostInterface::kDoorbellStride);
    p.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
    p.set_data_length(8);
    p.set_streaming_width(8);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    mmio->b_transport(p, d);
    wait(d);
  }
  void run() {
    wait(1, sc_core::SC_US);
    post(kSq0, 0, 0, 10);
    ring(0, 10);
    wait(5, sc_core::SC_US);
    post(kSq0, 0, 10, 10);  // wraps the 16-entry ring
    post(kSq1, 1, 0, 3);
    ring(0, 20);
    ring(1, 3);
    ring(7, 1);  // no QP 7
  }
};

}  // namespace

int sc_main(int, char*[]) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  using fabricsim::test::loaded;
  PcieLinkModule link("pcie", loaded<PcieConfig>());
  HostMemoryTarget mem("host_memory", loaded<HostMemoryConfig>());
  NicHostInterface nic("nic", loaded<WqeFetchConfig>());
  Driver drv("driver");
  drv.mem = &mem;
  nic.dma.bind(link.dma_in);
  link.host_out.bind(mem.socket);
  drv.mmio.bind(link.mmio_in);
  link.bar_out.bind(nic.bar);
  nic.fetcher().create_qp(kSq0, kEntries, kCq0, kEntries);
  nic.fetcher().create_qp(kSq1, kEntries, kCq1, kEntries);

  std::vector<std::pair<Wqe, double>> seen;
  nic.on_wqe([&](const Wqe& w, Time t) {
    seen.emplace_back(w, t.as_ns());
    Cqe c;
    c.wr_id = w.wr_id;
    c.qpn = w.qpn;
    c.byte_len = w.length;
    c.opcode = w.opcode;
    nic.complete(c);
  });
  sc_core::sc_start(20, sc_core::SC_US);

  // Every WQE once, in ring order per QP.
  std::vector<uint64_t> q0, q1;
  for (const auto& [w, t] : seen) (w.qpn == 0 ? q0 : q1).push_back(w.wr_id);
  std::vector<uint64_t> want0, want1;
  for (uint32_t k = 0; k < 20; ++k) want0.push_back(k);
  for (uint32_t k = 0; k < 3; ++k) want1.push_back(1000 + k);
  if (q0 != want0 || q1 != want1) fail("WQEs reached the next stage out of order or not once");
  if (!seen.empty() && (seen[0].first.length != 4096 || seen[0].first.opcode != Opcode::kRdmaWrite))
    fail("a fetched WQE differs from the one posted");
  // The first read (8 WQEs, 512 B): doorbell TLP (8 B payload) + 100 ns, doorbell_latency 20 ns,
  // read request + 100 ns + completer 200 ns + memory 100 ns + 512 B at 300 GB/s, two
  // completions of 256 B + 100 ns.
  const double first = 1000 + wire_ns(32) + 100 + 20 + wire_ns(24) + 100 + 200 + 100 + 512 / 300.0 +
                       2 * wire_ns(280) + 100;
  if (seen.empty() || std::fabs(seen[0].second - first) > 1e-3)
    fail("first WQE at " + std::to_string(seen.empty() ? 0 : seen[0].second) + " ns, expected " +
         std::to_string(first));
  // QP 0's CQ ring after 20 CQEs in 16 slots: slots 0-3 from the second pass (owner 1).
  for (uint32_t slot = 0; slot < kEntries; ++slot) {
    uint8_t b[Cqe::kBytes];
    mem.memory().read(kCq0 + slot * Cqe::kBytes, b, sizeof b);
    Cqe c;
    c.decode(b);
    const uint32_t index = slot < 4 ? slot + 16 : slot;
    if (c.wr_id != index || c.owner != (index / kEntries) % 2 || c.byte_len != 4096 ||
        c.status != Cqe::kOk)
      fail("CQ slot " + std::to_string(slot) + " holds wr_id " + std::to_string(c.wr_id) +
           " owner " + std::to_string(c.owner));
  }
  const WqeFetcher& f = nic.fetcher();
  if (f.bad_doorbells() != 1 || f.doorbells() != 4) fail("doorbell counts");
  if (f.cqes() != 23 || f.wqes_fetched() != 23) fail("CQE or WQE counts");
  if (nic.dma_errors() != 0 || nic.bar_errors() != 0) fail("DMA or BAR errors");
  for (const std::string& v : nic.check_idle()) fail(v);
  if (failures) return 1;
  std::printf("nic_host: all checks passed\n");
  return 0;
}
