// The NIC's queue formats and WQE fetch stage without the SystemC kernel: entries survive the
// trip through memory bytes, reads stop at the ring's end and at max_batch, QPs take turns,
// doorbells out of range are refused, CQEs carry the ring pass's owner bit.
#include <vector>

#include <gtest/gtest.h>

#include "models/config/config.h"
#include "models/nic/wqe_fetcher.h"
#include "testbenches/unit/loaded_config.h"

namespace fabricsim::nic {
namespace {

WqeFetchConfig fetch_config(const std::vector<std::string>& o = {}) {
  return test::loaded<WqeFetchConfig>(o);
}

TEST(WorkQueueFormat, EntriesRoundTripThroughTheirBytesAndBadOpcodesAreRefused) {
  Wqe w;
  w.opcode = Opcode::kRdmaWriteImm;
  w.flags = 0;
  w.qpn = 0xabcdef;
  w.wr_id = 0x0123456789abcdefull;
  w.local_addr = 0xfedcba9876543210ull;
  w.length = 1u << 30;
  w.lkey = 7;
  w.remote_addr = 1ull << 63;
  w.rkey = 0xffffffffu;
  w.imm = 42;
  uint8_t b[Wqe::kBytes];
  w.encode(b);
  EXPECT_EQ(b[0], 2);     // opcode first
  EXPECT_EQ(b[8], 0xef);  // wr_id little-endian at offset 8
  Wqe r;
  ASSERT_TRUE(r.decode(b));
  EXPECT_EQ(r, w);
  b[0] = kOpcodes;
  Wqe untouched;
  EXPECT_FALSE(untouched.decode(b));
  EXPECT_EQ(untouched, Wqe{});

  Cqe c;
  c.wr_id = 99;
  c.qpn = 3;
  c.byte_len = 4096;
  c.imm = 5;
  c.opcode = Opcode::kRdmaRead;
  c.status = Cqe::kRetryExceeded;
  c.owner = 1;
  uint8_t cb[Cqe::kBytes];
  c.encode(cb);
  Cqe d;
  d.decode(cb);
  EXPECT_EQ(d, c);
}

// Writes `n` WQEs with wr_id = first index.. into `ring` (a host memory image).
void post(std::vector<uint8_t>& ring, uint32_t entries, uint32_t first, uint32_t n) {
  for (uint32_t k = first; k < first + n; ++k) {
    Wqe w;
    w.wr_id = k;
    w.length = 100 + k;
    w.encode(ring.data() + static_cast<size_t>(k % entries) * Wqe::kBytes);
  }
}

TEST(WqeFetcher, ReadsStopAtTheBatchAndAtTheRingsEndAndFetchEveryWqeOnce) {
  WqeFetcher f(fetch_config({"max_batch=4"}));
  const uint32_t qp = f.create_qp(0x10000, 8, 0x20000, 8);
  std::vector<uint8_t> ring(8 * Wqe::kBytes);
  // 6 WQEs (0-5), then 7 more (6-12) that wrap: reads of 4, 2, then 2 (to the end), 4, 1.
  post(ring, 8, 0, 6);
  ASSERT_TRUE(f.doorbell(qp, 6));
  std::vector<Wqe> got;
  std::vector<uint32_t> bad;
  std::vector<uint32_t> counts;
  const auto drain = [&] {
    while (auto r = f.next_fetch()) {
      EXPECT_EQ(r->address, 0x10000 + static_cast<uint64_t>(r->first % 8) * Wqe::kBytes);
      EXPECT_FALSE(f.next_fetch());  // one read in flight per QP
      counts.push_back(r->count);
      f.fetched(*r, ring.data() + static_cast<size_t>(r->first % 8) * Wqe::kBytes, got, bad);
    }
  };
  drain();
  post(ring, 8, 6, 7);
  ASSERT_TRUE(f.doorbell(qp, 13));
  drain();
  EXPECT_EQ(counts, (std::vector<uint32_t>{4, 2, 2, 4, 1}));
  ASSERT_EQ(got.size(), 13u);
  for (uint32_t k = 0; k < 13; ++k) {
    EXPECT_EQ(got[k].wr_id, k);
    EXPECT_EQ(got[k].length, 100 + k);
    EXPECT_EQ(got[k].qpn, qp);
  }
  EXPECT_TRUE(bad.empty());
  EXPECT_EQ(f.pending(), 0u);
  EXPECT_EQ(f.wqes_fetched(), 13u);
  EXPECT_EQ(f.outstanding(), 0);
}

TEST(WqeFetcher, QpsTakeTurnsAndOutstandingReadsAreBounded) {
  WqeFetcher f(fetch_config({"max_batch=1", "max_outstanding=2"}));
  for (int q = 0; q < 3; ++q) f.create_qp(0x1000 * (q + 1), 16, 0x100000, 16);
  for (uint32_t q = 0; q < 3; ++q) ASSERT_TRUE(f.doorbell(q, 2));
  const auto a = f.next_fetch(), b = f.next_fetch();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->qpn, 0u);
  EXPECT_EQ(b->qpn, 1u);
  EXPECT_FALSE(f.next_fetch());  // two in flight
  std::vector<uint8_t> bytes(Wqe::kBytes);
  Wqe{}.encode(bytes.data());
  std::vector<Wqe> got;
  std::vector<uint32_t> bad;
  f.fetched(*a, bytes.data(), got, bad);
  // QP 2 has waited longest; QP 0's second WQE goes behind it.
  const auto c = f.next_fetch();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->qpn, 2u);
  f.fetched(*b, bytes.data(), got, bad);
  EXPECT_EQ(f.next_fetch()->qpn, 0u);
}

TEST(WqeFetcher, DoorbellsOutOfRangeAreRefusedAndCounted) {
  WqeFetcher f(fetch_config());
  const uint32_t qp = f.create_qp(0, 16, 0x1000, 16);
  EXPECT_FALSE(f.doorbell(qp + 1, 1));  // no such QP
  EXPECT_FALSE(f.doorbell(qp, 17));     // more than a ring ahead
  EXPECT_TRUE(f.doorbell(qp, 16));
  EXPECT_FALSE(f.doorbell(qp, 15));  // backwards
  EXPECT_EQ(f.bad_doorbells(), 3u);
  EXPECT_EQ(f.doorbells(), 4u);
  EXPECT_EQ(f.pending(), 16u);
  EXPECT_THROW(f.create_qp(0, 12, 0, 16), std::invalid_argument);
}

TEST(WqeFetcher, AnUndecodableSlotIsReportedByItsRingIndex) {
  WqeFetcher f(fetch_config());
  const uint32_t qp = f.create_qp(0, 4, 0x1000, 4);
  std::vector<uint8_t> ring(4 * Wqe::kBytes);
  post(ring, 4, 0, 3);
  ring[Wqe::kBytes] = 200;  // slot 1: not an opcode
  ASSERT_TRUE(f.doorbell(qp, 3));
  std::vector<Wqe> got;
  std::vector<uint32_t> bad;
  f.fetched(*f.next_fetch(), ring.data(), got, bad);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].wr_id, 2u);
  EXPECT_EQ(bad, (std::vector<uint32_t>{1}));
  EXPECT_EQ(f.bad_wqes(), 1u);
}

TEST(WqeFetcher, CqeSlotsWalkTheRingAndFlipTheOwnerBitEachPass) {
  WqeFetcher f(fetch_config());
  const uint32_t qp = f.create_qp(0, 4, 0x8000, 4);
  for (uint32_t k = 0; k < 10; ++k) {
    const auto s = f.next_cqe(qp);
    EXPECT_EQ(s.address, 0x8000 + (k % 4) * Cqe::kBytes) << k;
    EXPECT_EQ(s.owner, (k / 4) % 2) << k;
  }
  EXPECT_EQ(f.cqes(), 10u);
}

}  // namespace
}  // namespace fabricsim::nic
