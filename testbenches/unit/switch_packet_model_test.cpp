// switch.model packet (models/switch/packet_core.h) against the cycle model it abstracts, on the
// shipped chips (configs/switch_51t2.yaml, switch_102t4.yaml): a lone packet leaves both at the
// same femtosecond, which is ZeroLoadLatency's closed form; packets that meet nowhere in the chip
// (distinct outputs) but share admission slots are as late in both; and the packet model works
// at packet events only (a handful of cycles per packet, not one per cell).
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "models/sim/run_config.h"
#include "models/switch/packet_core.h"
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

// PacketTiming's fast form for one whole rate in and out (the largest of the cells' distances past
// their clock edges, each from the one before by a subtraction) against its definition, worked
// cell by cell with a division each: each cell eligible on the first clock edge after its last
// byte plus the ingress pipeline (and any admission lag), at the egress crossbar + egress cycles
// later, and the frame started once no cell can underrun the wire. Random first-bit instants
// (femtoseconds), sizes from one byte to a jumbo frame, two port rates and both shipped chips.
TEST(PacketModel, StartTimeFastFormMatchesTheCellByCellBound) {
  std::mt19937_64 rng(11);
  for (const std::string file : {"switch_51t2.yaml", "switch_102t4.yaml"}) {
    const SwitchConfig cfg = chip(file, {});
    const PacketTiming timing(cfg, FrameOverhead{});
    const int64_t p = cfg.cycle().as_fs(), after = cfg.crossbar_cycles + cfg.egress_cycles;
    const auto cell = static_cast<uint64_t>(cfg.cell_size.count());
    for (const BitRate rate : {cfg.port_speed, BitRate::gbps(400)}) {
      ASSERT_NE(rate.fs_per_byte(), 0u);
      const auto ser = [&](uint64_t b) { return rate.serialization(Bytes(b)).as_fs(); };
      const auto edge = [&](int64_t t) { return (t + p - 1) / p; };
      int64_t cells_decide = 0;
      for (int n = 0; n < 20000; ++n) {
        const int64_t t = static_cast<int64_t>(rng() % 4000000000000ull);
        const uint64_t bytes = 1 + rng() % 9216;
        const int64_t lag = static_cast<int64_t>(rng() % 4), pre = cfg.ingress_cycles + lag;
        const uint64_t cells = (bytes + cell - 1) / cell;
        const int64_t e_last = edge(t + ser(bytes)) + pre;
        const int64_t whole = std::max((e_last + after) * p - ser((cells - 1) * cell), e_last * p);
        int64_t want = whole;
        for (uint64_t k = 0; k + 1 < cells; ++k)
          want = std::max(want, (edge(t + ser((k + 1) * cell)) + pre + after) * p - ser(k * cell));
        if (want > whole) ++cells_decide;
        ASSERT_EQ(timing.ready(Time::fs(t), bytes, rate, rate, lag).as_fs(), want)
            << file << " " << rate.as_bps() << " b/s, " << bytes << " B at " << t << " fs, lag "
            << lag;
      }
      EXPECT_GT(cells_decide, 1000) << "a full cell's bound should decide many starts";
    }
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

// Ports past the wired ones (SwitchCore's `wired`): where they can do nothing, they share one idle
// port's state, and every reading is the one a full core gives. Lossy: an incast into a buffer
// whose reserves are the 64 ports' (a core that counted 5 ports' reserves would drop less), with
// the shipped ingress pipelines' admission limit (16 ports a pipeline: ports 0-4 share one, as in
// the full chip). PFC: XOFFs from the dynamic threshold of the shared pool left by 64 ports'
// reserves and headroom (the senders here do not pause, so the headroom overflows too).
struct Readings {
  std::vector<Departure> out;
  std::vector<std::string> values;  // every per-port reading, of all 64 ports
};

Readings incast(const SwitchConfig& cfg, const MacConfig& mac, int wired) {
  SwitchCore core(cfg, ForwardingTable::identity(static_cast<int>(cfg.ports)), 1, "sw", mac, wired);
  core.set_window(Time::ns(100), Time::us(20));
  core.set_occupancy_interval(Time::ns(200));
  Recorder rec;
  uint64_t id = 0;
  const Time ser = cfg.port_speed.serialization(Bytes(4096));
  for (int k = 0; k < 150; ++k)
    for (int in = 1; in < 5; ++in) {
      const Time t = ser * k + Time::ps(37 * in);
      core.receive(in, test::make(++id, in, 0, 4096, t, 3), t);
    }
  test::run_until_idle(core, rec);
  core.take_occupancy_samples_before(Time::us(20));
  Readings r{rec.out, {}};
  const Time end = core.finalize_window(Time::us(20));
  for (int p = 0; p < static_cast<int>(cfg.ports); ++p) {
    const PortCounters& c = core.port_counters(p);
    const auto fc = core.port_fc(p, end);
    r.values.push_back(fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {}", p, c.rx_packets,
                                   c.tx_packets, c.drops, core.port_peak_bytes(p),
                                   core.port_mean_bytes(p, end), core.port_peak_bytes_run(p),
                                   core.control_frames_sent(p), core.ecn_marked(p), fc.pause_sent,
                                   fc.headroom_peak_bytes, fc.xoff_pgs, fc.lossless_drops));
  }
  r.values.push_back(
      fmt::format("samples {} width {}", core.occupancy_pending(), core.occupancy_row_size()));
  for (size_t k = 0; k < core.occupancy_pending(); ++k)
    for (size_t v = 0; v < core.occupancy_row_size(); ++v)
      r.values.push_back(std::to_string(core.occupancy_row(k)[v]));
  EXPECT_TRUE(core.check_invariants().empty()) << core.check_invariants()[0];
  EXPECT_EQ(core.port_slot(40), wired < 0 ? 40 : wired) << "wired " << wired;
  return r;
}

// Field k of a port's line of readings (its counts are whole numbers).
uint64_t field(const std::string& line, int k) {
  std::istringstream in(line);
  std::string v;
  for (int i = 0; i <= k; ++i) in >> v;
  return static_cast<uint64_t>(std::stod(v));
}

void expect_same(const Readings& a, const Readings& b, const std::string& what) {
  expect_same(a.out, b.out, what);
  EXPECT_EQ(a.values, b.values) << what;
}

TEST(PacketModel, PortsPastTheWiredOnesShareAnIdlePortAndReadTheSame) {
  SwitchConfig cfg = chip("switch_51t2.yaml", {"buffer.size=1600KB", "traffic_classes=4",
                                               "ingress.admissions_per_cycle=1"});
  cfg.model = "packet";
  const Readings full = incast(cfg, {}, -1), five = incast(cfg, {}, 5);
  expect_same(full, five, "lossy");
  uint64_t drops = 0;
  for (int p = 0; p < 5; ++p) drops += field(full.values[p], 3);
  EXPECT_GT(drops, 0u) << "the incast must overflow the 1.6 MB less 64 ports' reserves (1.2 MB)";
  EXPECT_EQ(full.out.size() + drops, 600u);

  link::FlowControlConfig fc;
  config::load(
      fc, "",
      {"mode=pfc", "pfc.lossless_mask=8", "pfc.headroom_formula=fixed", "pfc.headroom_fixed=20KB"});
  MacConfig mac;
  mac.flow_control = &fc;
  mac.headroom_per_pg = Bytes(20000);
  SwitchConfig big = chip("switch_51t2.yaml", {"buffer.size=4MB", "traffic_classes=4"});
  big.model = "packet";
  const Readings pfc_full = incast(big, mac, -1), pfc_five = incast(big, mac, 5);
  expect_same(pfc_full, pfc_five, "pfc");
  uint64_t pauses = 0;
  for (int p = 1; p < 5; ++p) pauses += field(pfc_full.values[p], 9);
  EXPECT_GT(pauses, 0u) << "the PFC incast must pause its senders";
}

// Where the ports past the wired ones are not idle, each keeps its own state: a crossbar's
// arbiters count every port, and IB credits' timers send FC packets on every port.
TEST(PacketModel, PortsPastTheWiredOnesKeepTheirStateWhereTheyAreNotIdle) {
  SwitchConfig voq = chip("switch_51t2.yaml", {"architecture=voq"});
  voq.model = "cycle";
  EXPECT_EQ(SwitchCore(voq, ForwardingTable::identity(64), 1, "sw", {}, 5).port_slot(40), 40);
  SwitchConfig pkt = chip("switch_51t2.yaml", {});
  pkt.model = "packet";
  link::FlowControlConfig credit;
  config::load(credit, "", {"mode=credit"});
  MacConfig mac;
  mac.flow_control = &credit;
  EXPECT_EQ(SwitchCore(pkt, ForwardingTable::identity(64), 1, "sw", mac, 5).port_slot(40), 40);
  EXPECT_EQ(SwitchCore(pkt, ForwardingTable::identity(64), 1, "sw", {}, 5).port_slot(40), 5);
}

}  // namespace
}  // namespace fabricsim::sw
