// switch.model packet (models/switch/packet_core.h) against the cycle model it abstracts, on the
// shipped chips (configs/switch_51t2.yaml, switch_102t4.yaml): a lone packet leaves both at the
// same femtosecond, which is ZeroLoadLatency's closed form; packets that meet nowhere in the chip
// (distinct outputs) but share admission slots are as late in both; and the packet model works
// at packet events only (a handful of cycles per packet, not one per cell).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/sim/run_config.h"
#include "models/switch/switch_core.h"
#include "models/switch/zero_load.h"
#include "testbenches/unit/switch_test_support.h"

namespace fabricsim::sw {
namespace {

using test::Departure;
using test::Recorder;

SwitchConfig chip(const std::string& file, const std::vector<std::string>& sets) {
  std::vector<std::string> o;
  for (const auto& s : sets) o.push_back("switch." + s);
  return sim::RunConfig::load(std::string(FABRICSIM_SOURCE_DIR) + "/configs/" + file, o).sw;
}

struct Sent {
  int in, dst;
  uint64_t bytes;
  Time t0;
};

// Runs `sent` through a core of `cfg` (ideal links) and returns the departures in order, with
// the cycles that ran.
std::vector<Departure> run(SwitchConfig cfg, const std::string& model,
                           const std::vector<Sent>& sent, int64_t* cycles = nullptr) {
  cfg.model = model;
  const int n = static_cast<int>(cfg.ports);
  SwitchCore core(cfg, ForwardingTable::identity(n), 1, "sw");
  Recorder rec;
  uint64_t id = 0;
  for (const Sent& s : sent) core.receive(s.in, test::make(++id, s.in, s.dst, s.bytes, s.t0), s.t0);
  const int64_t ran = test::run_until_idle(core, rec);
  if (cycles) *cycles = ran;
  EXPECT_TRUE(core.check_invariants().empty()) << model << ": " << core.check_invariants()[0];
  EXPECT_EQ(core.departed(), sent.size());
  return rec.out;
}

void expect_same(const std::vector<Departure>& cyc, const std::vector<Departure>& pkt,
                 const std::string& what) {
  ASSERT_EQ(cyc.size(), pkt.size()) << what;
  for (size_t k = 0; k < cyc.size(); ++k) {
    EXPECT_EQ(cyc[k].p.id, pkt[k].p.id) << what;
    EXPECT_EQ(cyc[k].port, pkt[k].port) << what;
    EXPECT_EQ(cyc[k].first.as_fs(), pkt[k].first.as_fs()) << what << " packet " << k;
    EXPECT_EQ(cyc[k].last.as_fs(), pkt[k].last.as_fs()) << what << " packet " << k;
  }
}

const std::vector<uint64_t> kSizes = {64, 253, 254, 255, 1000, 1500, 4096, 4097, 9000};
const std::vector<int64_t> kPhases = {0, 1, 123457, 740000, 3333333};

// Zero load, as shipped (shared memory, cell allocation, bank limits) and with the other
// datapaths: the packet model starts and ends every lone frame exactly as the cycle model does.
TEST(PacketModel, LonePacketLeavesWhenTheCycleModelsDoes) {
  for (const std::string file : {"switch_51t2.yaml", "switch_102t4.yaml"})
    for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
             {}, {"architecture=output_queued"}, {"forwarding=store_and_forward"}})
      for (const uint64_t bytes : kSizes)
        for (const int64_t phase : kPhases) {
          const SwitchConfig cfg = chip(file, sets);
          const std::vector<Sent> one = {{3, 17, bytes, Time::fs(1000000000 + phase)}};
          const std::string what = file + " " + (sets.empty() ? "" : sets[0]) + " " +
                                   std::to_string(bytes) + " B, phase " + std::to_string(phase);
          const auto cyc = run(cfg, "cycle", one), pkt = run(cfg, "packet", one);
          expect_same(cyc, pkt, what);
          if (sets.empty() && !pkt.empty()) {
            // And the closed form the NICs' idle fabric uses (exact for the shipped chips).
            const ZeroLoadLatency z(cfg, cfg.port_speed);
            EXPECT_EQ(pkt[0].first.as_fs(), z.first_bit(one[0].t0, bytes).as_fs()) << what;
          }
        }
}

// A crossbar chip (the shipped chip made voq, the matching taking 2 cycles): one packet, nothing
// to contend with: the same start as the cycle model.
TEST(PacketModel, LonePacketThroughACrossbar) {
  for (const uint64_t bytes : kSizes) {
    const SwitchConfig cfg = chip("switch_51t2.yaml", {"architecture=voq", "scheduler.iterations=2",
                                                       "scheduler.cycles_per_iteration=1"});
    const std::vector<Sent> one = {{0, 9, bytes, Time::fs(5000000)}};
    expect_same(run(cfg, "cycle", one), run(cfg, "packet", one), std::to_string(bytes) + " B");
  }
}

// Every port sends in the same instant to a distinct output: nothing meets in the output queues,
// but the ingress pipelines (16 ports each) admit 3 packets a cycle here (16 or 32 as shipped:
// never short with one packet per port), so the rest wait for later cycles, oldest first; both
// models delay them alike. Then two frames for one output: the second waits for the first's
// wire in both.
TEST(PacketModel, AdmissionSlotsAndOneOutputAsInTheCycleModel) {
  for (const std::string file : {"switch_51t2.yaml", "switch_102t4.yaml"}) {
    const SwitchConfig cfg = chip(file, {"ingress.admissions_per_cycle=3"});
    const int n = static_cast<int>(cfg.ports);
    std::vector<Sent> burst;
    for (int in = 0; in < n; ++in)
      burst.push_back({in, (in + 7) % n, in % 2 ? 4096u : 700u, Time::fs(2000000)});
    expect_same(run(cfg, "cycle", burst), run(cfg, "packet", burst), file + " burst");
    const std::vector<Sent> two = {{1, 40, 4096, Time::fs(2000000)},
                                   {2, 40, 1500, Time::fs(2100000)}};
    const auto pkt = run(cfg, "packet", two);
    expect_same(run(cfg, "cycle", two), pkt, file + " one output");
    ASSERT_EQ(pkt.size(), 2u);
    EXPECT_EQ(pkt[1].first, pkt[0].last);  // back to back (ideal link: no gap, no preamble)
  }
}

// Packet events only: a lone 9,000 B frame (36 cells) costs the packet model its admission, its
// egress join and its last bit's cycle; the cycle model works per cell.
TEST(PacketModel, WokenOnlyAtPacketEvents) {
  const SwitchConfig cfg = chip("switch_51t2.yaml", {});
  const std::vector<Sent> one = {{0, 1, 9000, Time()}};
  int64_t cyc = 0, pkt = 0;
  run(cfg, "cycle", one, &cyc);
  run(cfg, "packet", one, &pkt);
  EXPECT_LE(pkt, 3);
  EXPECT_GE(cyc, 36);
}

}  // namespace
}  // namespace fabricsim::sw
