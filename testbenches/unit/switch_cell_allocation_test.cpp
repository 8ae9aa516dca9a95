// switch.buffer.allocation, driven cycle by cycle without the SystemC kernel: with `packet` a
// packet takes all its cell ids when its first cell arrives; with `cell` each cell takes its id as
// it arrives, the start-of-packet admission sees only the cells held then, and a later cell that
// finds no room drops its packet mid-way (freed at once before it joined its ingress queue, or
// sent on as a stomped frame that is never delivered once it has).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/switch/shared_buffer.h"
#include "models/switch/switch_core.h"
#include "testbenches/unit/switch_test_support.h"

namespace fabricsim::sw {
namespace {

using test::Departure;
using test::make;
using test::Recorder;
using test::run_until_idle;

// 4 ports at 800G, 250 B cells (2.5 ns = 5 cycles at 2 GHz), speedup 1, structural limits off.
SwitchConfig config(std::vector<std::string> extra = {}) {
  return test::small_chip({"traffic_classes=1", "pipeline.ingress_cycles=3",
                           "pipeline.crossbar_cycles=2", "pipeline.egress_cycles=4"},
                          extra);
}

TEST(SharedBufferCells,
     ACellComesFromTheReservationThenTheSharedPoolAndOnlyTheFirstMeetsTheThreshold) {
  SharedBuffer b(40, 2, 2, 2, 0.25);  // 4 reserved (2 per port), 36 shared
  SharedBuffer::Allocation a;
  uint32_t tail = SharedBuffer::kNoCell;
  for (int k = 0; k < 12; ++k) ASSERT_TRUE(b.take_cell(0, 0, a, tail, false)) << k;
  EXPECT_EQ(a.reserve_cells, 2);
  EXPECT_EQ(b.shared_used(), 10);
  EXPECT_EQ(b.queue_cells(0), 12);
  // The list links the cells in the order taken, from the first.
  uint32_t c = a.first_cell;
  for (int k = 0; k < 11; ++k) c = b.next_cell(c);
  EXPECT_EQ(c, tail);
  EXPECT_EQ(b.next_cell(tail), SharedBuffer::kNoCell);
  // A new packet to the same queue, from a port with no reservation left: its first cell meets
  // the threshold (10 + 1 > 0.25 x 26 free shared), its later cells would not have to.
  SharedBuffer::Allocation p;
  uint32_t pt = SharedBuffer::kNoCell;
  SharedBuffer::Allocation r;
  uint32_t rt = SharedBuffer::kNoCell;
  ASSERT_TRUE(b.take_cell(1, 1, r, rt, true));  // port 1's reservation: no threshold
  ASSERT_TRUE(b.take_cell(1, 1, r, rt, true));
  EXPECT_FALSE(b.take_cell(0, 0, p, pt, true));
  EXPECT_FALSE(p.ok);
  EXPECT_TRUE(b.take_cell(0, 0, a, tail, false));  // the admitted packet's next cell goes in
  // Its cells run out only with the shared pool.
  int more = 0;
  while (b.take_cell(0, 0, a, tail, false)) ++more;
  EXPECT_EQ(more, 36 - 11);
  EXPECT_EQ(b.used_cells(), 40);
  std::vector<std::string> v;
  b.check_invariants(v);
  EXPECT_TRUE(v.empty());
  b.release(0, 0, a, 12 + 1 + more);
  b.release(1, 1, r, 2);
  EXPECT_EQ(b.used_cells(), 0);
  EXPECT_EQ(b.shared_used(), 0);
  EXPECT_EQ(b.queue_cells(0), 0);
  b.check_invariants(v);
  EXPECT_TRUE(v.empty());
}

// The buffer's cells in use after each cycle that changed them, while one 4096 B frame (17 cells
// of 250 B, one per 2.5 ns) arrives, store-and-forward so that none leaves before all are in.
std::vector<int64_t> used_while_arriving(const std::string& allocation) {
  const auto cfg = config({"forwarding=store_and_forward", "buffer.allocation=" + allocation});
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  core.receive(0, make(0, 0, 1, 4096, Time()), Time());
  std::vector<int64_t> used;
  for (int64_t c = core.next_work_cycle(); c != EventWheel<int>::kNone;
       c = core.next_work_cycle()) {
    core.run_cycle(c, rec);
    const int64_t u = core.buffer().used_cells();
    if (used.empty() || used.back() != u) used.push_back(u);
    // With cell allocation the buffer's accounts are the cells written, cell by cell.
    if (allocation == "cell") {
      EXPECT_EQ(u, core.cells_held()) << "cycle " << c;
    }
  }
  EXPECT_EQ(rec.out.size(), 1u);
  EXPECT_TRUE(core.check_invariants().empty());
  return used;
}

TEST(SwitchCellAllocation, AFramesCellsTakeTheirIdsOneByOneAsTheyArrive) {
  // packet: all 17 ids at the first cell, all back when the frame has left.
  EXPECT_EQ(used_while_arriving("packet"), (std::vector<int64_t>{17, 0}));
  // cell: one id per arriving cell.
  std::vector<int64_t> one_by_one;
  for (int64_t k = 1; k <= 17; ++k) one_by_one.push_back(k);
  one_by_one.push_back(0);
  EXPECT_EQ(used_while_arriving("cell"), one_by_one);
}

// Two 4096 B frames to output 2, the second's first bit a cell time after the first's, under a
// dynamic threshold of 1/128: the queue may hold 1/128 of the 4000 free cells, 31.
struct Pair {
  size_t delivered;
  uint64_t dropped, mid;
  bool invariants_ok;
};
Pair two_frames_one_queue(const std::string& allocation) {
  const auto cfg = config({"forwarding=store_and_forward", "buffer.alpha=0.0078125",
                           "buffer.allocation=" + allocation});
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  core.receive(0, make(0, 0, 2, 4096, Time()), Time());
  core.receive(1, make(1, 1, 2, 4096, Time::ps(2500)), Time::ps(2500));
  run_until_idle(core, rec);
  return {rec.out.size(), core.dropped(), core.mid_packet_drops(), core.check_invariants().empty()};
}

TEST(SwitchCellAllocation, TheThresholdSeesOnlyTheCellsHeldSoATrailingPacketIsAdmitted) {
  // packet: the first frame holds its 17 cells from its first, so the second's 17 + 17 > 31.
  const Pair p = two_frames_one_queue("packet");
  EXPECT_EQ(p.delivered, 1u);
  EXPECT_EQ(p.dropped, 1u);
  EXPECT_EQ(p.mid, 0u);
  EXPECT_TRUE(p.invariants_ok);
  // cell: when the second's first cell arrives the first holds 2 cells: 2 + 1 <= 31. Its later
  // cells go in while the memory has room (the threshold is a start-of-packet check).
  const Pair c = two_frames_one_queue("cell");
  EXPECT_EQ(c.delivered, 2u);
  EXPECT_EQ(c.dropped, 0u);
  EXPECT_EQ(c.mid, 0u);
  EXPECT_TRUE(c.invariants_ok);
}

// A 4096 B frame A (17 cells) from port 0 to port 2 at t = 0 in a 20-cell buffer, while ports 1
// and 3 send 250 B frames back to back to output 1 (two cells in, one out per cell time): with cell
// allocation the buffer runs out before A's last cell arrives.
struct Squeeze {
  std::vector<Departure> out;
  uint64_t received = 0, departed = 0, dropped = 0, mid = 0, in_flight = 0;
  uint64_t port0_drops = 0, port2_tx = 0, cells_switched = 0;
  int64_t used_at_end = -1, peak_used = 0;
  bool a_delivered = false;
  std::vector<std::string> violations;
};
Squeeze squeeze(const SwitchConfig& cfg) {
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  Squeeze s;
  const Time cell = Time::ps(2500);
  core.receive(0, make(0, 0, 2, 4096, Time()), Time());
  uint64_t id = 1;
  for (int k = 0; k < 20; ++k)
    for (int port : {1, 3}) core.receive(port, make(id++, port, 1, 250, cell * k), cell * k);
  for (int64_t c = core.next_work_cycle(); c != EventWheel<int>::kNone;
       c = core.next_work_cycle()) {
    core.run_cycle(c, rec);
    s.peak_used = std::max(s.peak_used, core.buffer().used_cells());
  }
  s.out = rec.out;
  for (const auto& d : rec.out) s.a_delivered |= d.p.id == 0;
  s.received = core.received();
  s.departed = core.departed();
  s.dropped = core.dropped();
  s.mid = core.mid_packet_drops();
  s.in_flight = core.in_flight();
  s.port0_drops = core.port_counters(0).drops;
  s.port2_tx = core.port_counters(2).tx_packets;
  s.cells_switched = core.cells_switched();
  s.used_at_end = core.buffer().used_cells();
  s.violations = core.check_invariants();
  return s;
}

void expect_a_dropped_mid_way(const Squeeze& s, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_FALSE(s.a_delivered);
  EXPECT_EQ(s.mid, 1u);          // A, the only frame of several cells
  EXPECT_EQ(s.port0_drops, 1u);  // counted once, at its ingress port
  EXPECT_EQ(s.port2_tx, 0u);     // nothing of it counted as sent
  EXPECT_EQ(s.departed, s.out.size());
  EXPECT_EQ(s.received, s.departed + s.dropped);
  EXPECT_EQ(s.in_flight, 0u);
  EXPECT_EQ(s.used_at_end, 0);  // every cell back on the free list
  // The buffer ran out (seen at cycle ends: a frame that left in the cycle it did may have freed
  // a cell by then).
  EXPECT_GE(s.peak_used, 19);
  EXPECT_TRUE(s.violations.empty()) << (s.violations.empty() ? "" : s.violations[0]);
}

TEST(SwitchCellAllocation, AStoreAndForwardPacketIsDroppedMidWayWhenTheBufferRunsOut) {
  // packet: A takes its 17 cells at its first and goes through; the 250 B frames that find no
  // room are refused at admission.
  const Squeeze p =
      squeeze(config({"forwarding=store_and_forward", "buffer.size=5000B", "buffer.alpha=64"}));
  EXPECT_TRUE(p.a_delivered);
  EXPECT_EQ(p.mid, 0u);
  EXPECT_TRUE(p.violations.empty());
  // cell: A was admitted with one cell; a later one finds none, and A is dropped before it
  // joined its ingress queue: its cells return at once and none of them ever crossed.
  const Squeeze c = squeeze(config({"forwarding=store_and_forward", "buffer.size=5000B",
                                    "buffer.alpha=64", "buffer.allocation=cell"}));
  expect_a_dropped_mid_way(c, "store_and_forward");
  EXPECT_EQ(c.cells_switched, c.out.size());  // one cell each, all of 250 B frames
}

TEST(SwitchCellAllocation, ACutThroughFrameDroppedMidWayLeavesAsAStompedFrame) {
  // Cut-through: A's first cells have crossed and its frame is on port 2's wire when a cell finds
  // no room. It is cut after the cells it has (a stomped FCS), never delivered, counted once.
  const Squeeze c =
      squeeze(config({"buffer.size=5000B", "buffer.alpha=64", "buffer.allocation=cell"}));
  expect_a_dropped_mid_way(c, "cut_through");
  EXPECT_GT(c.cells_switched, c.out.size());  // A's cells crossed before it was cut
}

TEST(SwitchCellAllocation, APortSendingOnlyStompedFramesIsNotStalled) {
  // Two 800G inputs send 8-cell frames back to back to a 100G output through a buffer of 6
  // cells, cut-through: each admitted frame gets a few cells before one finds no room, so every
  // frame is cut, and the slow wire always has a cut frame waiting. The port delivers nothing,
  // but its frames do leave: the liveness check must not call it stalled.
  const auto cfg = config({"buffer.size=1500B", "buffer.alpha=64", "buffer.allocation=cell"});
  MacConfig mac;
  mac.port_rates = {cfg.port_speed, cfg.port_speed, BitRate::gbps(100), cfg.port_speed};
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw", mac);
  Recorder rec;
  const Time frame = Time::ns(20);  // 2000 B at 800 Gb/s
  const Time limit = Time::ns(100), every = Time::ns(10);
  core.sample_progress(Time(), limit);
  uint64_t id = 0;
  for (int64_t k = 0; k < 40; ++k)
    for (int port : {0, 1}) core.receive(port, make(id++, port, 2, 2000, frame * k), frame * k);
  test::run_sampled(core, rec, frame * 60, every, limit);
  EXPECT_TRUE(rec.out.empty());  // every frame cut
  EXPECT_GT(core.mid_packet_drops(), 10u);
  EXPECT_EQ(core.port_counters(2).tx_packets, 0u);
  EXPECT_TRUE(core.check_invariants().empty());
  EXPECT_EQ(core.check_progress(), std::vector<std::string>{});
}

TEST(SwitchCellAllocation, AMidPacketDropKeepsEveryArchitectureAndEgressStartConsistent) {
  // The drop lands at every stage the frame may be in (not yet queued; in its queue with cells
  // still to cross; its last cell across but not at the egress; all of them at the egress, the
  // frame on the wire waiting for the next): the run must drain with every account balanced.
  // The pipelines (ingress, crossbar, egress cycles; a cell time is 5) decide the stage.
  const std::vector<std::vector<const char*>> pipelines = {
      {"0", "0", "0"}, {"3", "2", "4"}, {"8", "2", "4"}};
  for (const char* arch : {"voq", "input_fifo", "shared_memory", "output_queued"})
    for (const char* start : {"first_cell", "all_cells", "no_underrun"})
      for (const auto& pipe : pipelines)
        for (const char* fwd : {"cut_through", "store_and_forward"})
          for (const bool banks : {false, true}) {
            const std::string ingress = pipe[0];
            std::vector<std::string> o = {std::string("architecture=") + arch,
                                          std::string("egress.start=") + start,
                                          std::string("pipeline.ingress_cycles=") + pipe[0],
                                          std::string("pipeline.crossbar_cycles=") + pipe[1],
                                          std::string("pipeline.egress_cycles=") + pipe[2],
                                          std::string("forwarding=") + fwd,
                                          "buffer.size=5000B",
                                          "buffer.alpha=64",
                                          "buffer.allocation=cell"};
            if (banks) {
              o.push_back("buffer.banks=4");
              o.push_back("buffer.bank_write_cells=1");
              o.push_back("buffer.bank_read_cells=1");
            }
            const std::string what = std::string(arch) + " " + start + " ingress " + ingress + " " +
                                     fwd + (banks ? " banks" : "");
            expect_a_dropped_mid_way(squeeze(config(o)), what);
          }
  // Packet mode holds the pair for A's cells: released when A is cut after its last crossed.
  for (const char* ingress : {"0", "3", "8"})
    expect_a_dropped_mid_way(
        squeeze(config({"scheduler.mode=packet", std::string("pipeline.ingress_cycles=") + ingress,
                        "buffer.size=5000B", "buffer.alpha=64", "buffer.allocation=cell"})),
        std::string("packet mode, ingress ") + ingress);
}

TEST(SwitchCellAllocation, UnknownAllocationIsRefusedNamingTheKey) {
  SwitchConfig cfg;
  try {
    config::load(cfg, "", {"buffer.allocation=cells"});
    FAIL() << "accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("buffer.allocation"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabricsim::sw
