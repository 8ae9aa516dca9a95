// The switch core's structural limits, driven cycle by cycle without the SystemC kernel: admissions
// per cycle per ingress pipeline, the buffer memory's banks (write and read cells per cycle), the
// datapath width through the crossbar, cells written into the buffer as they arrive, and the
// shared-memory architecture.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "models/switch/buffer_banks.h"
#include "models/switch/ingress_admission.h"
#include "models/switch/switch_core.h"
#include "testbenches/unit/switch_test_support.h"

namespace fabricsim::sw {
namespace {

using test::Departure;
using test::make;
using test::Recorder;
using test::run_until_idle;

// 4 ports at 800G, 250 B cells (2.5 ns = 5 cycles at 2 GHz), speedup 1, and every structural
// limit off (explicitly); a test turns on the one it is about.
SwitchConfig config(std::vector<std::string> extra = {}) {
  return test::small_chip({"traffic_classes=1", "pipeline.ingress_cycles=3",
                           "pipeline.crossbar_cycles=2", "pipeline.egress_cycles=4"},
                          extra);
}

// Last-bit time of each packet by id.
std::vector<Time> last_bits(const Recorder& rec, size_t n) {
  std::vector<Time> t(n);
  for (const auto& d : rec.out) t.at(d.p.id) = d.last;
  return t;
}

TEST(IngressAdmission, PortsFormContiguousPipelinesEachTakingItsShareOfACycle) {
  IngressAdmission a(8, 2, 2);  // ports 0-3: pipeline 0, 4-7: pipeline 1
  EXPECT_EQ(a.pipeline_of(3), 0);
  EXPECT_EQ(a.pipeline_of(4), 1);
  EXPECT_TRUE(a.take(0, 10));
  EXPECT_TRUE(a.take(1, 10));
  EXPECT_FALSE(a.take(2, 10));  // pipeline 0 has admitted 2 in cycle 10
  EXPECT_TRUE(a.take(7, 10));   // pipeline 1 has its own
  EXPECT_TRUE(a.take(2, 11));   // a new cycle
  // Waiting packets go first in later cycles, oldest first, as many as the slots allow.
  a.wait(0, 100, 12);
  a.wait(1, 101, 12);
  a.wait(2, 102, 12);
  a.wait(5, 105, 12);
  std::vector<std::pair<uint32_t, int64_t>> got;
  a.admit_waiting(13, [&](uint32_t pkt, int64_t waited) { got.emplace_back(pkt, waited); });
  EXPECT_EQ(got, (std::vector<std::pair<uint32_t, int64_t>>{{100, 1}, {101, 1}, {105, 1}}));
  EXPECT_FALSE(a.take(3, 13));  // pipeline 0's slots went to the waiting packets
  EXPECT_TRUE(a.waiting());
  got.clear();
  a.admit_waiting(15, [&](uint32_t pkt, int64_t waited) { got.emplace_back(pkt, waited); });
  EXPECT_EQ(got, (std::vector<std::pair<uint32_t, int64_t>>{{102, 3}}));
  EXPECT_FALSE(a.waiting());
  EXPECT_EQ(a.waits(), 6u);  // cycles waited, summed
  IngressAdmission unlimited(8, 1, 0);
  for (int k = 0; k < 100; ++k) EXPECT_TRUE(unlimited.take(k % 8, 5));
}

TEST(BufferBanks, ACellLivesInItsIdModBanksAndABankTakesItsShareOfACycle) {
  BufferBanks b(4, 1, 2);
  EXPECT_EQ(b.bank_of(9), 1);
  EXPECT_EQ(b.book_write(1, 3), 3);
  EXPECT_EQ(b.book_write(5, 3), 4);   // bank 1 again in cycle 3: the next cycle
  EXPECT_EQ(b.book_write(9, 3), 5);   // and the one after (bank 1 serves its writes in order)
  EXPECT_EQ(b.book_write(2, 3), 3);   // another bank
  EXPECT_EQ(b.book_write(13, 9), 9);  // bank 1 idle again by cycle 9
  EXPECT_TRUE(b.try_read(1, 3));
  EXPECT_TRUE(b.try_read(5, 3));  // two reads per bank per cycle
  EXPECT_FALSE(b.try_read(9, 3));
  EXPECT_EQ(b.write_conflicts(), 2u);
  EXPECT_EQ(b.read_conflicts(), 1u);
  // Booked reads (shared_memory): two per cycle, in the order asked.
  BufferBanks m(2, 0, 2);
  EXPECT_EQ(m.book_read(0, 7), 7);
  EXPECT_EQ(m.book_read(2, 7), 7);
  EXPECT_EQ(m.book_read(4, 7), 8);
  EXPECT_EQ(m.book_read(1, 7), 7);  // bank 1
  EXPECT_EQ(m.book_read(6, 8), 8);
  EXPECT_EQ(m.book_read(8, 8), 9);
  EXPECT_EQ(m.read_conflicts(), 2u);  // the reads of cells 4 and 8
  BufferBanks unlimited(1, 0, 0);
  for (uint32_t k = 0; k < 100; ++k) {
    EXPECT_EQ(unlimited.book_write(k, 0), 0);
    EXPECT_TRUE(unlimited.try_read(k, 0));
  }
}

// Four single-cell packets seen in the same cycle on the four inputs, each to its own output.
std::vector<Time> four_at_once(const SwitchConfig& cfg) {
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  for (int in = 0; in < 4; ++in) core.receive(in, make(in, in, (in + 1) % 4, 64, Time()), Time());
  run_until_idle(core, rec);
  EXPECT_EQ(rec.out.size(), 4u);
  EXPECT_TRUE(core.check_invariants().empty());
  return last_bits(rec, 4);
}

TEST(SwitchLimits, AdmissionsBeyondAPipelinesShareWaitACycleEachAndAreNotDropped) {
  // Output-queued (no crossbar slots to round the delay to a matching).
  const Time P = Time::ps(500);
  const auto free = four_at_once(config({"architecture=output_queued"}));
  for (int k = 1; k < 4; ++k) EXPECT_EQ(free[k], free[0]);  // unlimited: all in one cycle
  // One pipeline admitting one packet per cycle: the k-th (in round-robin order from port 0)
  // waits k cycles, and its whole path is k cycles later.
  const auto one = four_at_once(config(
      {"architecture=output_queued", "ingress.pipelines=1", "ingress.admissions_per_cycle=1"}));
  for (int k = 0; k < 4; ++k) EXPECT_EQ((one[k] - free[k]).as_fs(), (P * k).as_fs()) << k;
  // Two pipelines of two ports, one admission each: ports 0 and 2 go first, 1 and 3 a cycle
  // later.
  const auto two = four_at_once(config(
      {"architecture=output_queued", "ingress.pipelines=2", "ingress.admissions_per_cycle=1"}));
  for (int k = 0; k < 4; ++k) EXPECT_EQ((two[k] - free[k]).as_fs(), (P * (k % 2)).as_fs()) << k;
}

TEST(SwitchLimits, ABankWritesItsShareOfCellsPerCycleAndTheOthersWait) {
  // Shared memory with unlimited reads: a write's delay is the packet's.
  const Time P = Time::ps(500);
  const auto free = four_at_once(config({"architecture=shared_memory", "buffer.banks=1"}));
  // One bank writing one cell per cycle: the four cells are written in four cycles (cells are
  // eligible only once written), so the packets leave a cycle apart.
  const auto one = four_at_once(
      config({"architecture=shared_memory", "buffer.banks=1", "buffer.bank_write_cells=1"}));
  std::vector<int64_t> lag;
  for (int k = 0; k < 4; ++k) lag.push_back((one[k] - free[k]).as_fs() / P.as_fs());
  std::sort(lag.begin(), lag.end());
  EXPECT_EQ(lag, (std::vector<int64_t>{0, 1, 2, 3}));
  // Four banks: the free list hands out ids 0..3, one per bank, so nothing waits.
  EXPECT_EQ(four_at_once(config(
                {"architecture=shared_memory", "buffer.banks=4", "buffer.bank_write_cells=1"})),
            free);
  // voq: the delayed cells miss the crossbar's next matching (a slot is 5 cycles) and take the
  // one after.
  const auto voq_free = four_at_once(config({"buffer.banks=1"}));
  const auto voq = four_at_once(config({"buffer.banks=1", "buffer.bank_write_cells=1"}));
  lag.clear();
  for (int k = 0; k < 4; ++k) lag.push_back((voq[k] - voq_free[k]).as_fs() / P.as_fs());
  std::sort(lag.begin(), lag.end());
  EXPECT_EQ(lag, (std::vector<int64_t>{0, 5, 5, 5}));
}

TEST(SwitchLimits, ABankReadsItsShareOfCellsPerCycleInSharedMemoryButNotInTheIdeal) {
  const Time P = Time::ps(500);
  for (const char* arch : {"shared_memory", "output_queued"}) {
    const auto free = four_at_once(config({std::string("architecture=") + arch, "buffer.banks=1"}));
    const auto lim = four_at_once(config(
        {std::string("architecture=") + arch, "buffer.banks=1", "buffer.bank_read_cells=2"}));
    std::vector<int64_t> lag;
    for (int k = 0; k < 4; ++k) lag.push_back((lim[k] - free[k]).as_fs() / P.as_fs());
    std::sort(lag.begin(), lag.end());
    if (std::string(arch) == "shared_memory")
      EXPECT_EQ(lag, (std::vector<int64_t>{0, 0, 1, 1}));  // two reads per cycle
    else
      EXPECT_EQ(lag, (std::vector<int64_t>{0, 0, 0, 0}));  // the ideal has no bank limits
  }
}

TEST(SwitchLimits, VoqCrossbarLosesAMatchingToABusyBank) {
  // voq: the crossbar reads each matched input's head cell; with one bank reading one cell per
  // cycle, four matched inputs move one cell per matching between them.
  const Time P = Time::ps(500);
  const auto free = four_at_once(config({"buffer.banks=1"}));
  const auto lim = four_at_once(config({"buffer.banks=1", "buffer.bank_read_cells=1"}));
  std::vector<int64_t> lag;
  for (int k = 0; k < 4; ++k) lag.push_back((lim[k] - free[k]).as_fs() / P.as_fs());
  std::sort(lag.begin(), lag.end());
  // Matchings are a slot (5 cycles) apart and each moves one cell.
  EXPECT_EQ(lag, (std::vector<int64_t>{0, 5, 10, 15}));
}

// 200 frames of `size` bytes back to back (line rate) from input 0 to output 1; the last one's
// last bit, from the first's first bit.
Time back_to_back(const SwitchConfig& cfg, uint64_t size, int n = 200) {
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  Recorder rec;
  const Time ser = cfg.port_speed.serialization(Bytes(size));
  for (int k = 0; k < n; ++k) core.receive(0, make(k, 0, 1, size, ser * k), ser * k);
  run_until_idle(core, rec);
  EXPECT_EQ(rec.out.size(), static_cast<size_t>(n));
  EXPECT_TRUE(core.check_invariants().empty());
  return last_bits(rec, n).back();
}

TEST(SwitchLimits, AWideDatapathCarriesSmallFramesAtLineRateThroughTheCrossbar) {
  const Time ser64 = Time::ps(640);  // 64 B at 800G
  // One cell per matching (a slot is a 250 B cell time, 2.5 ns): 64 B frames cross at one per
  // 2.5 ns, about a quarter of line rate, and the last of 200 leaves ~370 ns late.
  const Time narrow = back_to_back(config(), 64);
  EXPECT_GT(narrow.as_ns(), 200 * 2.5 - 10);
  // 256 B per cycle (1280 B per 5-cycle slot): up to 20 of them per matching, at line rate;
  // the last leaves at its zero-load latency after arriving.
  const Time wide = back_to_back(config({"datapath.bytes_per_cycle=256"}), 64);
  const Time zero_load = back_to_back(config({"datapath.bytes_per_cycle=256"}), 64, 1);
  EXPECT_LE((wide - ser64 * 199).as_fs(), (zero_load + Time::ns(3)).as_fs());
  // 64 B per cycle, 320 B per slot: five 64 B frames per 2.5 ns, still ahead of line rate
  // (3.9 per 2.5 ns).
  const Time just = back_to_back(config({"datapath.bytes_per_cycle=64"}), 64);
  EXPECT_LE((just - ser64 * 199).as_fs(), (zero_load + Time::ns(3)).as_fs());
  // A datapath below line rate (16 B per cycle = 80 B per slot: one 64 B frame per 2.5 ns)
  // helps nothing.
  EXPECT_EQ(back_to_back(config({"datapath.bytes_per_cycle=16"}), 64), narrow);
}

TEST(SwitchLimits, BufferOccupancyGrowsCellByCellAsThePacketArrives) {
  // One 2500 B packet (10 cells of 250 B, one per 2.5 ns), store-and-forward so that it stays
  // whole in the buffer until it is all in: sampled every 2.5 ns, the buffer holds the cells
  // arrived so far, not the whole packet from its first cell on.
  const auto cfg = config({"forwarding=store_and_forward"});
  SwitchCore core(cfg, ForwardingTable::identity(4), 1, "sw");
  core.set_occupancy_interval(Time::ps(2500));
  Recorder rec;
  core.receive(0, make(0, 0, 1, 2500, Time()), Time());
  run_until_idle(core, rec);
  core.take_occupancy_samples_before(Time::ns(26));
  ASSERT_GE(core.occupancy_pending(), 11u);
  // Sample k is at k x 2.5 ns: cell j (j = 0..9) is seen at (j + 1) x 2.5 ns, so sample k holds
  // k cells (all 10 from sample 1 on when a packet's cells all came in with its first).
  for (size_t k = 1; k <= 10; ++k)
    EXPECT_EQ(core.occupancy_row(k)[0], static_cast<int64_t>(k)) << k;
  EXPECT_TRUE(core.check_invariants().empty());
}

}  // namespace
}  // namespace fabricsim::sw
