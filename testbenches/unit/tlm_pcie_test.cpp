// The host side's timing cores against hand-computed figures: the PCIe link's TLP rate per
// generation, how DMA writes and reads split into TLPs and when they finish, host memory's
// booking and bytes, and the configuration's checks.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/config/config.h"
#include "testbenches/unit/loaded_config.h"
#include "tlm/host_memory.h"
#include "tlm/pcie_link.h"

namespace fabricsim::tlm_host {
namespace {

PcieConfig pcie(const std::vector<std::string>& overrides = {}) {
  return test::loaded<PcieConfig>(overrides);
}
// The link's TLP timing from first principles below leaves the DLLPs and SKPs out (their share
// is checked on its own above).
PcieConfig tlps_only(std::vector<std::string> overrides = {}) {
  overrides.push_back("link_overheads=none");
  return pcie(overrides);
}

// Time of `bytes` on a link of `gts` GT/s x `lanes` with encoding num/den, from first principles.
double wire_ns(double bytes, double gts, int lanes, double num, double den) {
  return bytes * 8.0 * den / num / (gts * lanes);  // GT/s = bits per ns per lane
}

TEST(PcieConfig, TlpRatesPerGenerationAreTheSpecsTransferRatesAfterEncoding) {
  // Without the data link layer's share: Gen5 x16: 32 GT/s x 16 x 128/130 / 8 = 63.0 GB/s.
  const std::string none = "link_overheads=none";
  EXPECT_NEAR(pcie({none}).tlp_bytes_per_s() / 1e9, 63.015, 0.001);
  EXPECT_NEAR(pcie({none, "generation=3", "lanes=8"}).tlp_bytes_per_s() / 1e9, 7.877, 0.001);
  EXPECT_NEAR(pcie({none, "generation=1", "lanes=1"}).tlp_bytes_per_s() / 1e9, 0.25, 1e-9);
  // Gen6 x16 in FLIT mode: 64 x 16 / 8 x 236/256 = 118.0 GB/s of TLPs, DLLPs in the flits.
  EXPECT_NEAR(pcie({"generation=6"}).tlp_bytes_per_s() / 1e9, 118.0, 0.001);
  // With it (pcie-bench's model, PCIe Base Spec 5.0's recommended rates): an 8 B ACK and an
  // 8 B flow-control update every 168 symbol times (x16, MPS 256) and 4 SKP symbols in 1,538:
  // 63.015 x (1 - 16/168 - 4/1538) = 56.85 GB/s; x8 at MPS 512 every 182; Gen1 x1 at MPS 128
  // every 237.
  EXPECT_NEAR(pcie().tlp_bytes_per_s() / 1e9, 63.015385 * (1 - 16.0 / 168 - 4.0 / 1538), 1e-6);
  EXPECT_NEAR(pcie({"lanes=8", "max_payload=512B"}).tlp_bytes_per_s() / 1e9,
              31.507692 * (1 - 16.0 / 182 - 4.0 / 1538), 1e-6);
  EXPECT_NEAR(pcie({"generation=1", "lanes=1", "max_payload=128B"}).tlp_bytes_per_s() / 1e9,
              0.25 * (1 - 16.0 / 237 - 4.0 / 1538), 1e-9);
  // The two entries where the spec's flow-control interval differs from its ACK limit.
  EXPECT_NEAR(pcie({"generation=1", "lanes=32", "max_payload=2048B"}).tlp_bytes_per_s() / 1e9,
              8.0 * (1 - 8.0 / 148 - 8.0 / 248 - 4.0 / 1538), 1e-9);
  // A TLP's time on the link is its bytes at that rate: 280 B at 56.85 GB/s.
  tlm_host::PcieLink link_share(pcie());
  EXPECT_NEAR(link_share.tlp_time(256).as_ns(), 280 / (63.015385 * (1 - 16.0 / 168 - 4.0 / 1538)),
              1e-3);
  EXPECT_EQ(pcie().tlp_overhead(), 24u);  // 4 DW header + framing token + LCRC
  EXPECT_EQ(pcie({"generation=6"}).tlp_overhead(), 16u);
  EXPECT_EQ(pcie({"header_bytes=12", "ecrc=true"}).tlp_overhead(), 24u);
}

TEST(PcieConfig, BadValuesNameTheKeyAndTheProblem) {
  const auto error = [](std::vector<std::string> o) {
    try {
      pcie(std::move(o));
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error({"lanes=3"}).find("lanes"), std::string::npos);
  EXPECT_NE(error({"lanes=3"}).find("not a PCIe link width"), std::string::npos);
  EXPECT_NE(error({"max_payload=384B"}).find("not a power of two"), std::string::npos);
  EXPECT_NE(error({"generation=7"}).find("generation"), std::string::npos);
  EXPECT_NE(error({"header_bytes=14"}).find("header_bytes"), std::string::npos);
  EXPECT_NE(error({"max_paylod=256B"}).find("max_paylod"), std::string::npos);
  EXPECT_EQ(error({}), "");
}

TEST(PcieLink, AWriteSplitsAtPayloadBoundariesAndLeavesAfterItsTlps) {
  PcieLink link(tlps_only());
  // 1000 B from address 200 with 256 B payloads: 56 + 256 + 256 + 256 + 176.
  const PcieLink::Sent s = link.write(PcieLink::kToHost, Time::ns(10), 200, 1000);
  EXPECT_EQ(link.tlps(PcieLink::kToHost), 5u);
  EXPECT_EQ(link.payload_bytes(PcieLink::kToHost), 1000u);
  const double ns = 10 + wire_ns(1000 + 5 * 24, 32, 16, 128, 130);
  EXPECT_NEAR(s.left.as_ns(), ns, 1e-5);
  EXPECT_NEAR(s.arrived.as_ns(), ns + 100, 1e-5);
  EXPECT_EQ(link.tlps(PcieLink::kToDevice), 0u);
}

TEST(PcieLink, ALargeWriteRunsAtTheTlpRateTimesPayloadEfficiency) {
  for (const char* mps : {"128B", "256B", "512B"}) {
    PcieLink link(tlps_only({std::string("max_payload=") + mps}));
    const double p = static_cast<double>(link.config().max_payload.count());
    const uint64_t n = 1 << 24;
    const PcieLink::Sent s = link.write(PcieLink::kToHost, Time(), 0, n);
    const double gbytes = static_cast<double>(n) / s.left.as_ns();
    // Gen5 x16, 24 B per TLP: 63.015 x p / (p + 24) (57.6 GB/s at 256 B).
    EXPECT_NEAR(gbytes, 63.0154 * p / (p + 24), 0.001) << mps;
  }
}

TEST(PcieLink, AReadTakesARequestTheCompleterAndItsCompletions) {
  PcieLink link(tlps_only());
  const Time completer = Time::ns(300);
  std::vector<std::pair<uint64_t, uint64_t>> asked;
  const Time done =
      link.read(PcieLink::kToHost, Time(), 4096, 256, [&](Time at, uint64_t a, uint64_t k) {
        asked.emplace_back(a, k);
        return at + completer;
      });
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0], (std::pair<uint64_t, uint64_t>{4096, 256}));
  // Request (24 B), latency, completer, completion (24 + 256 B), latency.
  const double ns =
      wire_ns(24, 32, 16, 128, 130) + 100 + 300 + wire_ns(280, 32, 16, 128, 130) + 100;
  EXPECT_NEAR(done.as_ns(), ns, 1e-5);
  EXPECT_EQ(link.tlps(PcieLink::kToHost), 1u);
  EXPECT_EQ(link.tlps(PcieLink::kToDevice), 1u);
  EXPECT_EQ(link.payload_bytes(PcieLink::kToDevice), 256u);
}

TEST(PcieLink, ReadRequestsSplitAtTheMaxReadRequestAndCompletionsQueueOnTheLink) {
  PcieLink link(tlps_only({"max_read_request=4096B", "latency=50ns"}));
  std::vector<Time> arrivals;
  const Time done = link.read(PcieLink::kToHost, Time(), 0, 8192, [&](Time at, uint64_t, uint64_t) {
    arrivals.push_back(at);
    return at;  // an instant completer: the completions' link is the bottleneck
  });
  ASSERT_EQ(arrivals.size(), 2u);
  const double req = wire_ns(24, 32, 16, 128, 130), cpl = wire_ns(280, 32, 16, 128, 130);
  EXPECT_NEAR(arrivals[0].as_ns(), req + 50, 1e-5);
  EXPECT_NEAR(arrivals[1].as_ns(), 2 * req + 50, 1e-5);
  // The second request's 16 completions wait behind the first's: 32 back to back.
  EXPECT_NEAR(done.as_ns(), req + 50 + 32 * cpl + 50, 1e-4);
  EXPECT_EQ(link.tlps(PcieLink::kToDevice), 32u);
}

TEST(PcieLink, CompletionsAtTheReadCompletionBoundaryCostAHeaderEach) {
  // A large read through an instant completer runs at the completions' rate: payload pieces of
  // 256 B (MPS) or 128 / 64 B (RCB), each with its 24 B of TLP overhead (pcie-bench's 256/276,
  // 128/148, 64/84 with its 20 B completion header; this model charges the 24 B of a 4 DW one):
  // 57.6, 53.1 and 45.8 GB/s before the DLLPs.
  for (const auto& [rcb, piece] :
       {std::pair<const char*, double>{"0B", 256}, {"128B", 128}, {"64B", 64}}) {
    PcieLink link(tlps_only({std::string("read_completion=") + rcb}));
    const uint64_t n = 1 << 22;
    const Time done =
        link.read(PcieLink::kToHost, Time(), 0, n, [](Time at, uint64_t, uint64_t) { return at; });
    // The first request and the two latencies, then every completion back to back: the
    // completions' rate is 63.015 x piece / (piece + 24) GB/s.
    const double ns = wire_ns(24, 32, 16, 128, 130) + 100 +
                      static_cast<double>(n) / piece * wire_ns(piece + 24, 32, 16, 128, 130) + 100;
    EXPECT_NEAR(done.as_ns(), ns, 1e-3 * ns) << rcb;
    EXPECT_EQ(link.tlps(PcieLink::kToDevice), n / static_cast<uint64_t>(piece)) << rcb;
  }
  EXPECT_THROW(pcie({"read_completion=32B"}), std::exception);
  EXPECT_THROW(pcie({"read_completion=512B"}), std::exception);  // above max_payload 256 B
}

TEST(HostMemory, AccessesShareTheBandwidthAndOverlapTheirLatency) {
  HostMemory m(test::loaded<HostMemoryConfig>({"bandwidth=100", "latency=50ns"}));
  EXPECT_EQ(m.access(Time(), 1000), Time::ns(60));  // 1000 B at 100 B/ns, after 50 ns
  EXPECT_EQ(m.access(Time(), 1000), Time::ns(70));  // waits for the first's transfer only
  EXPECT_EQ(m.access(Time::ns(100), 500), Time::ns(155));
  EXPECT_EQ(m.busy(), Time::ns(25));
  EXPECT_EQ(m.bytes(), 2500u);
}

TEST(HostMemory, ARunOfAccessesBooksWhatTheAccessesOneByOneWould) {
  // The memory faster than the arrivals, slower, equal; idle, or busy from before the run.
  for (const char* bw : {"bandwidth=100", "bandwidth=10", "bandwidth=25.6"})
    for (const Time busy_until : {Time(), Time::ns(30), Time::ns(5000)})
      for (const uint64_t k : {1, 2, 16}) {
        const auto cfg = test::loaded<HostMemoryConfig>({bw, "latency=50ns"});
        HostMemory one(cfg), run(cfg);
        one.access(Time(), static_cast<uint64_t>(busy_until.as_ns() * 10));
        run.access(Time(), static_cast<uint64_t>(busy_until.as_ns() * 10));
        const Time first = Time::ns(7), step = Time::ps(10240);  // a 256 B TLP at Gen5 x16
        Time last;
        for (uint64_t i = 0; i < k; ++i)
          last = one.access(first + step * static_cast<int64_t>(i), 256);
        EXPECT_EQ(run.access_run(first, step, k, 256), last) << bw << " " << k;
        // and the next access sees the same memory
        EXPECT_EQ(run.access(Time::ns(1), 64), one.access(Time::ns(1), 64)) << bw << " " << k;
        EXPECT_EQ(run.busy(), one.busy());
        EXPECT_EQ(run.accesses(), one.accesses());
        EXPECT_EQ(run.bytes(), one.bytes());
      }
}

TEST(PcieLink, AWriteInRunsBooksTheLinkAndTheTargetAsTlpByTlp) {
  HostMemoryConfig mc = test::loaded<HostMemoryConfig>({"bandwidth=20", "latency=80ns"});
  for (const uint64_t addr : {uint64_t{0}, uint64_t{100}, uint64_t{4096}})
    for (const uint64_t n :
         {uint64_t{1}, uint64_t{256}, uint64_t{300}, uint64_t{4096}, uint64_t{9000}}) {
      PcieLink a(pcie()), b(pcie());
      HostMemory ma(mc), mb(mc);
      const Time t = Time::ns(3);
      a.send_tlp(PcieLink::kToHost, Time(), 512);  // the link busy at t
      b.send_tlp(PcieLink::kToHost, Time(), 512);
      const PcieLink::Sent one =
          a.write(PcieLink::kToHost, t, addr, n,
                  [&](const PcieLink::Sent& s, uint64_t, uint64_t k) { ma.access(s.arrived, k); });
      const PcieLink::Sent run = b.write_runs(
          PcieLink::kToHost, t, addr, n, [&](Time first, Time step, uint64_t k, uint64_t bytes) {
            mb.access_run(first, step, k, bytes);
          });
      EXPECT_EQ(run.left, one.left) << addr << " " << n;
      EXPECT_EQ(run.arrived, one.arrived) << addr << " " << n;
      EXPECT_EQ(b.tlps(PcieLink::kToHost), a.tlps(PcieLink::kToHost));
      EXPECT_EQ(b.busy(PcieLink::kToHost), a.busy(PcieLink::kToHost));
      EXPECT_EQ(b.payload_bytes(PcieLink::kToHost), a.payload_bytes(PcieLink::kToHost));
      EXPECT_EQ(mb.access(Time(), 8), ma.access(Time(), 8)) << addr << " " << n;
      EXPECT_EQ(mb.accesses(), ma.accesses());
    }
}

TEST(HostMemory, BytesWrittenAcrossPagesReadBackAndTheRestReadsZero) {
  HostMemory m(test::loaded<HostMemoryConfig>());
  std::vector<uint8_t> in(10000), out(12000, 0xff);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7 + 3);
  const uint64_t base = (1ull << 40) + 4000;  // crosses three page boundaries
  m.write(base, in.data(), in.size());
  m.read(base - 1000, out.data(), out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const bool written = i >= 1000 && i < 11000;
    ASSERT_EQ(out[i], written ? in[i - 1000] : 0) << i;
  }
}

}  // namespace
}  // namespace fabricsim::tlm_host
