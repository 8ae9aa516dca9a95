// The crossbar's timing in SwitchCore, driven cycle by cycle without the SystemC kernel: matchings
// on core clock edges (speedup as cells per cycle per port), the time a matching takes
// (switch.scheduler.cycles_per_iteration, one at a time or pipelined) and packet-mode scheduling.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "models/switch/switch_core.h"
#include "testbenches/unit/switch_test_support.h"

namespace fabricsim::sw {
namespace {

using test::Departure;
using test::make;
using test::Recorder;
using test::run_until_idle;

// 800G ports, 250 B cells: a cell time is 2.5 ns = 5 cycles at 2 GHz; with speedup 1 a slot is
// 5 cycles. No pipeline latency but the cut-through elastic cycle.
SwitchConfig config(std::vector<std::string> extra = {}) {
  return test::small_chip({"traffic_classes=1"}, extra);
}

// The cycle the egress starts a store-and-forward packet with egress.start all_cells, from its
// first bit: the cycle its last cell reached the egress (no pipeline latency: the cycle it crossed,
// or with a pipelined matching, its matching's cycles later).
int64_t egress_cycle(const SwitchConfig& cfg, const Departure& d) {
  return d.first.as_fs() / cfg.cycle().as_fs();
}

TEST(SwitchCrossbar, MatchingsRunOnClockEdgesAtMostOnePerCycle) {
  // Speedup 8: a slot is 5/8 cycle. The crossbar runs at most one matching per cycle and is
  // ceil(8/5) = 2 cells wide per port, paced at 2 slots (1.25 cycles) per matching. Before,
  // matchings ran on a fractional timer, 1.6 per cycle, 36 of them for a 36-cell packet.
  const auto cfg =
      config({"crossbar.speedup=8", "forwarding=store_and_forward", "egress.start=all_cells"});
  EXPECT_EQ(cfg.crossbar_width(), 2);
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  core.receive(0, make(0, 0, 1, 9000, Time()), Time());  // 36 cells, all eligible at once
  run_until_idle(core, rec);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(core.cells_switched(), 36u);
  EXPECT_EQ(core.matchings(), 18u);  // two cells per matching
  // Seen at cycle 180 (ser(9000 B) = 90 ns); matchings at 180 + ceil(1.25 k), k = 0..17: the last
  // at 180 + ceil(21.25) = 202.
  EXPECT_EQ(egress_cycle(cfg, rec.out[0]), 202);
  EXPECT_TRUE(core.check_invariants().empty());
}

TEST(SwitchCrossbar, FractionalSlotsAreTakenOnTheNextEdge) {
  // Speedup 1.5: a slot is 10/3 cycles. Matchings happen at the first edge at or after each slot,
  // 3 or 4 cycles apart: the 36th cell crosses at 180 + ceil(35 x 10/3) = 297 (the fractional
  // timer let it cross at 296, inside the cycle before its slot).
  const auto cfg =
      config({"crossbar.speedup=1.5", "forwarding=store_and_forward", "egress.start=all_cells"});
  EXPECT_EQ(cfg.crossbar_width(), 1);
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  core.receive(0, make(0, 0, 1, 9000, Time()), Time());
  run_until_idle(core, rec);
  ASSERT_EQ(rec.out.size(), 1u);
  EXPECT_EQ(core.matchings(), 36u);
  EXPECT_EQ(egress_cycle(cfg, rec.out[0]), 297);
}

// Zero-load latency of an isolated packet with the scheduler's matching time, against the same
// packet with free matchings.
Time zero_load(const std::vector<std::string>& o, uint64_t size) {
  const auto cfg = config(o);
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  const Time t0 = Time::ps(1234);
  core.receive(2, make(0, 2, 3, size, t0), t0);
  run_until_idle(core, rec);
  EXPECT_EQ(rec.out.size(), 1u);
  EXPECT_TRUE(core.check_invariants().empty());
  return rec.out.empty() ? Time() : rec.out[0].last - t0;
}

TEST(SwitchCrossbar, AMatchingAddsItsCyclesAtZeroLoad) {
  // k iterations x c cycles per iteration from the request snapshot to the grant: every cell
  // crosses k x c cycles later than with free matchings (k x c <= the 5-cycle slot, so one
  // matching at a time keeps up with the cells), pipelined or not. Cut-through (one cell
  // per 5 cycles as it arrives) and store-and-forward (a cell per slot), 1 to 37 cells.
  const Time cycle = Time::ps(500);
  for (const char* fwd : {"forwarding=cut_through", "forwarding=store_and_forward"})
    for (const uint64_t size : {64u, 1000u, 9000u})
      for (const auto& [k, cpi] : std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {4, 1}, {1, 5}})
        for (const char* pipe : {"scheduler.pipelined=false", "scheduler.pipelined=true"}) {
          const std::string it = "scheduler.iterations=" + std::to_string(k);
          const Time free = zero_load({fwd, it}, size);
          const Time timed = zero_load(
              {fwd, it, "scheduler.cycles_per_iteration=" + std::to_string(cpi), pipe}, size);
          EXPECT_EQ((timed - free).as_fs(), (cycle * (k * cpi)).as_fs())
              << fwd << " " << size << " B, k " << k << ", " << pipe;
        }
}

// A packet of 36 cells from input 0 to output 1, store-and-forward, alone: the cycle its last
// cell crosses.
int64_t crossing_time(const std::vector<std::string>& extra) {
  std::vector<std::string> o = {"forwarding=store_and_forward", "egress.start=all_cells"};
  o.insert(o.end(), extra.begin(), extra.end());
  const auto cfg = config(o);
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  core.receive(0, make(0, 0, 1, 9000, Time()), Time());
  run_until_idle(core, rec);
  EXPECT_EQ(rec.out.size(), 1u);
  return rec.out.empty() ? 0 : egress_cycle(cfg, rec.out[0]);
}

TEST(SwitchCrossbar, OneMatchingAtATimeCapsTheRatePipeliningRestoresIt) {
  // 4 iterations x 2 cycles = 8 cycles per matching, more than the 5-cycle slot. One at a time,
  // a pair gets a cell every 8 cycles: the 36th crosses at 180 + 8 + 35 x 8. Pipelined, a
  // matching starts every slot and the cells cross every 5 cycles, 8 cycles late:
  // 180 + 8 + 35 x 5. Free: 180 + 35 x 5.
  EXPECT_EQ(crossing_time({}), 180 + 35 * 5);
  EXPECT_EQ(crossing_time({"scheduler.iterations=4", "scheduler.cycles_per_iteration=2"}),
            180 + 8 + 35 * 8);
  EXPECT_EQ(crossing_time({"scheduler.iterations=4", "scheduler.cycles_per_iteration=2",
                           "scheduler.pipelined=true"}),
            180 + 8 + 35 * 5);
  // Packet mode, one matching at a time: once granted, the held pair moves a cell every slot
  // whatever the matchings do.
  EXPECT_EQ(crossing_time({"scheduler.iterations=4", "scheduler.cycles_per_iteration=2",
                           "scheduler.mode=packet"}),
            180 + 8 + 35 * 5);
}

TEST(SwitchCrossbar, PipelinedMatchingsDoNotGrantACellTwice) {
  // Pipelined with 8 cycles per matching and 5-cycle slots, two matchings are in flight at once;
  // each sees the requests less the cells the earlier ones granted. Two one-cell packets from
  // input 0 (to outputs 1 and 2) and three to output 3 from inputs 1..3: every cell crosses
  // exactly once and leaves, and the counts add up.
  const auto cfg = config({"forwarding=store_and_forward", "scheduler.iterations=4",
                           "scheduler.cycles_per_iteration=2", "scheduler.pipelined=true"});
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  core.receive(0, make(0, 0, 1, 250, Time()), Time());
  core.receive(1, make(1, 1, 3, 250, Time()), Time());
  core.receive(2, make(2, 2, 3, 250, Time()), Time());
  core.receive(3, make(3, 3, 3, 250, Time()), Time());
  core.receive(0, make(4, 0, 2, 250, Time::ps(2500)), Time::ps(2500));
  run_until_idle(core, rec);
  ASSERT_EQ(rec.out.size(), 5u);
  EXPECT_EQ(core.cells_switched(), 5u);
  EXPECT_TRUE(core.check_invariants().empty());
  // Output 3's three cells cross one per slot (5 cycles apart) and leave back to back.
  std::vector<Time> at3;
  for (const auto& d : rec.out)
    if (d.port == 3) at3.push_back(d.first);
  ASSERT_EQ(at3.size(), 3u);
  EXPECT_EQ(at3[1] - at3[0], Time::ps(2500));
  EXPECT_EQ(at3[2] - at3[1], Time::ps(2500));
}

TEST(SwitchCrossbar, PacketModeHoldsThePairUntilTheLastCell) {
  // Three inputs send a 36-cell packet each to output 3 at once. In cell mode iSLIP interleaves
  // them cell by cell and the frames on the wire stall (underruns). In packet mode the crossbar
  // holds each pair for its packet's 36 cells: they cross in consecutive slots (one per 5-cycle
  // slot, exactly the wire's rate at speedup 1, so the frame never waits for a cell) and the
  // frames leave back to back, whole.
  const uint64_t size = 9000;
  for (const char* mode : {"cell", "packet"}) {
    for (const char* fwd : {"cut_through", "store_and_forward"}) {
      const auto cfg =
          config({std::string("scheduler.mode=") + mode, std::string("forwarding=") + fwd});
      const Time ser = cfg.port_speed.serialization(Bytes(size));
      SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
      Recorder rec;
      for (int in = 0; in < 3; ++in) core.receive(in, make(in, in, 3, size, Time()), Time());
      run_until_idle(core, rec);
      ASSERT_EQ(rec.out.size(), 3u);
      EXPECT_TRUE(core.check_invariants().empty());
      const PortCounters& pc = core.port_counters(3);
      if (std::string(mode) == "cell") {
        EXPECT_GT(pc.underruns, 30u) << fwd;
      } else {
        EXPECT_EQ(pc.underruns, 0u) << fwd;
        for (const auto& d : rec.out) EXPECT_EQ(d.last - d.first, ser) << fwd;
        for (int k = 1; k < 3; ++k) EXPECT_EQ(rec.out[k].first, rec.out[k - 1].last) << fwd;
      }
    }
  }
}

TEST(SwitchCrossbar, PacketModeLetsOtherPairsMatchAroundAHeldOne) {
  // Input 0 holds output 1 for a 36-cell packet; input 2's one-cell packet to output 1 waits for
  // it, but input 2's cell to output 3 and input 3's to output 2 cross at once (the held input
  // and output are out of the matching, the rest are not).
  const auto cfg = config({"scheduler.mode=packet", "forwarding=store_and_forward"});
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  core.receive(0, make(0, 0, 1, 9000, Time()), Time());
  const Time t1 = Time::ns(100);  // after the big packet started crossing at 90 ns
  core.receive(2, make(1, 2, 1, 250, t1), t1);
  core.receive(3, make(2, 3, 2, 250, t1), t1);
  run_until_idle(core, rec);
  ASSERT_EQ(rec.out.size(), 3u);
  Time big_last, small_first, other_first;
  for (const auto& d : rec.out) {
    if (d.p.id == 0) big_last = d.last;
    if (d.p.id == 1) small_first = d.first;
    if (d.p.id == 2) other_first = d.first;
  }
  EXPECT_EQ(small_first, big_last);  // output 1 was held: right after the big packet
  // The cell to output 2 is seen at 102.5 ns (cycle 205) and crosses then: no wait for the hold.
  EXPECT_EQ(other_first, Time::ps(102500));
  EXPECT_TRUE(core.check_invariants().empty());
}

TEST(SwitchCrossbar, RandomTrafficIsConservedInEveryCrossbarMode) {
  // Random packets of 1-13 cells in two classes, DWRR egress, through every combination the
  // crossbar now has: widths 1 and 2, free / one-at-a-time / pipelined matchings (4 x 2 cycles,
  // more than a slot), cell and packet mode, VOQ and input FIFO, cut-through. Everything leaves,
  // per flow in order, one packet per destination port, and the end-of-run checks hold.
  const std::vector<std::vector<std::string>> modes = {
      {},
      {"crossbar.speedup=8"},
      {"scheduler.cycles_per_iteration=2"},
      {"scheduler.cycles_per_iteration=2", "scheduler.pipelined=true"},
      {"scheduler.mode=packet"},
      {"scheduler.mode=packet", "crossbar.speedup=8"},
      {"scheduler.mode=packet", "scheduler.cycles_per_iteration=2"},
      {"scheduler.mode=packet", "scheduler.cycles_per_iteration=2", "scheduler.pipelined=true"},
      {"scheduler.mode=packet", "architecture=input_fifo"},
      {"scheduler.cycles_per_iteration=1", "architecture=input_fifo", "crossbar.speedup=8"}};
  for (const auto& mode : modes) {
    std::vector<std::string> o = {"traffic_classes=2", "egress.scheduler=dwrr",
                                  "crossbar.speedup=1.5", "scheduler.iterations=4"};
    o.insert(o.end(), mode.begin(), mode.end());
    std::string name;
    for (const auto& m : mode) name += m + " ";
    const auto cfg = config(o);
    SwitchCore core(cfg, ForwardingTable::identity(4), 7, "sw");
    Recorder rec;
    Rng rng(5);
    std::vector<Time> port_free(4);
    uint64_t id = 0;
    for (int k = 0; k < 3000; ++k) {
      const int in = static_cast<int>(rng.below(4));
      const uint64_t size = 64 + rng.below(3200);
      const Time t = port_free[in] + Time::ps(static_cast<int64_t>(rng.below(20000)));
      port_free[in] = t + cfg.port_speed.serialization(Bytes(size));
      Packet p = make(id++, in, static_cast<int>(rng.below(4)), size, t);
      p.tc = static_cast<int>(rng.below(2));
      core.receive(in, p, t);
    }
    run_until_idle(core, rec);
    EXPECT_EQ(rec.out.size(), id) << name;
    const auto v = core.check_invariants();
    EXPECT_TRUE(v.empty()) << name << ": " << (v.empty() ? "" : v.front());
    std::vector<uint64_t> last(4 * 4 * 2, 0);
    std::vector<bool> seen(4 * 4 * 2, false);
    for (const auto& d : rec.out) {
      const size_t f = static_cast<size_t>((d.p.src * 4 + d.p.dst) * 2 + d.p.tc);
      if (seen[f]) {
        EXPECT_LT(last[f], d.p.id) << name;
      }
      seen[f] = true;
      last[f] = d.p.id;
      EXPECT_EQ(d.port, d.p.dst);
    }
    // Packet mode never interleaves two packets' cells at an egress, and a held pair's cells cross
    // as they arrive (a slot of its own per cell, 2/3 of a cell time): a frame never waits.
    if (name.find("packet") != std::string::npos) {
      EXPECT_EQ(core.underruns(), 0u) << name;
    } else {
      EXPECT_GT(core.underruns(), 0u) << name;  // (cell mode does interleave them)
    }
    EXPECT_EQ(core.next_work_cycle(), EventWheel<int>::kNone) << name;
  }
}

TEST(SwitchConfig, DatapathPackingAndBankReadsAreRefusedWithSeveralCellsAMatching) {
  // Modelled for one cell per pair and matching only: a wide crossbar (speedup 8 at 2 GHz and
  // 250 B cells: 2 cells a cycle) or packet mode with either limit is refused, not half applied.
  EXPECT_NO_THROW(config({"crossbar.speedup=8"}));
  EXPECT_THROW(config({"crossbar.speedup=8", "datapath.bytes_per_cycle=256"}), std::exception);
  EXPECT_THROW(config({"scheduler.mode=packet", "buffer.banks=4", "buffer.bank_read_cells=1"}),
               std::exception);
  EXPECT_NO_THROW(config({"scheduler.mode=packet", "buffer.banks=4", "buffer.bank_write_cells=1"}));
  EXPECT_NO_THROW(
      config({"crossbar.speedup=8", "datapath.bytes_per_cycle=256", "architecture=shared_memory"}));
}

TEST(SwitchConfig, SchedulerTimingKeysAreChecked) {
  EXPECT_EQ(config().matching_cycles(), 0);
  EXPECT_EQ(
      config({"scheduler.iterations=3", "scheduler.cycles_per_iteration=2"}).matching_cycles(), 6);
  EXPECT_THROW(config({"scheduler.mode=frame"}), std::exception);
  EXPECT_THROW(config({"scheduler.cycles_per_iteration=-1"}), std::exception);
  // Width: a cycle of 0.5 ns over a slot of 2.5 ns / speedup.
  EXPECT_EQ(config({"crossbar.speedup=5"}).crossbar_width(), 1);
  EXPECT_EQ(config({"crossbar.speedup=5.001"}).crossbar_width(), 2);
  EXPECT_EQ(config({"crossbar.speedup=20"}).crossbar_width(), 4);
}

}  // namespace
}  // namespace fabricsim::sw
