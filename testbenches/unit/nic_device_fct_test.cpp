// fct.csv's rows as the run goes (NicArray::keep_fct_order, stream_fct) and the sent records
// they free (models/nic/chunked_records.h): the rows handed out while the NICs run, then the
// rest at the end, are the rows of the same run read at its end, in the same (id) order; a row
// waits for every message of a lower id (in flight, failed, a READ, or not posted yet); a record
// is dropped once its row is out, and the integrity and liveness checks say what they said.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/nic/nic_array.h"
#include "models/nic/wire_header.h"
#include "testbenches/unit/nic_wire.h"

namespace fabricsim::nic {
namespace {

bool is_data(const Packet& p) {
  return WireHeader::read(p).opcode <= static_cast<uint8_t>(BthOpcode::kWriteOnlyImm);
}

std::string text(const NicArray::Fct& r) {
  const SentMessage& s = *r.sent;
  auto ns = [](Time t) { return t == Time::max() ? std::string("-") : t.str(); };
  return fmt::format("{} {}->{} {} B out {} delivered {} done {} state {}", s.m.id, s.m.src,
                     s.m.dst, s.m.bytes, ns(s.first_out),
                     r.received ? ns(r.received->delivered) : "-", ns(s.completion),
                     static_cast<int>(s.state));
}

// Every row of a run: those stream_fct gave at each instant (if `stream`), then the rest.
struct Rows {
  std::vector<std::string> streamed, rest;
  std::vector<uint64_t> streamed_ids;
  std::vector<std::string> all() const {
    std::vector<std::string> v = streamed;
    v.insert(v.end(), rest.begin(), rest.end());
    return v;
  }
};

void collect(NicArray& nics, Wire& wire, bool stream, Rows& rows) {
  if (stream) {
    nics.keep_fct_order();
    wire.after_step = [&](Time) {
      nics.stream_fct([&](const NicArray::Fct& r) {
        rows.streamed.push_back(text(r));
        rows.streamed_ids.push_back(r.sent->m.id);
      });
    };
  }
  wire.run();
  nics.for_each_fct([&](const NicArray::Fct& r) { rows.rest.push_back(text(r)); }, false);
}

TEST(ChunkedRecords, AChunkGoesOnceAllItsRecordsAreReleased) {
  ChunkedRecords<SentMessage> r;
  for (uint64_t i = 0; i < 150; ++i) {
    SentMessage s;
    s.m.id = i;
    r.push_back(s);
  }
  EXPECT_EQ(r.size(), 150u);
  EXPECT_EQ(r[130].m.id, 130u);
  for (size_t i = 0; i < 64; ++i) r.release(i);  // the first chunk, whole
  r.release(70);
  EXPECT_FALSE(r.held(0));
  EXPECT_FALSE(r.held(70));
  EXPECT_TRUE(r.held(64));
  EXPECT_FALSE(r.held(150));
  std::vector<uint64_t> seen;
  r.for_each_held([&seen](size_t i, const SentMessage& s) {
    EXPECT_EQ(i, s.m.id);
    seen.push_back(i);
  });
  EXPECT_EQ(seen.size(), 150u - 65);
  EXPECT_EQ(seen.front(), 64u);
}

TEST(NicDeviceFct, StreamedRowsAreTheRowsOfTheRunReadAtItsEnd) {
  // Four hosts, messages of several sizes and starts, one data frame in 40 lost (go-back-N
  // resends: completions out of id order), and a READ in the middle, whose row (its requester's
  // record, not matched as it goes) holds the rows after it until the end.
  std::vector<Message> m;
  for (int i = 0; i < 60; ++i) {
    const int src = i % 4, dst = (src + 1 + i % 3) % 4;
    m.push_back(msg(src, dst, 1000 + static_cast<uint64_t>(i % 7) * 9000, Time::ns(300 * i),
                    i == 45 ? Verb::kRead : Verb::kWrite));
  }
  auto lossy = [] {
    auto n = std::make_shared<int>(0);
    return [n](Packet& p) { return !(is_data(p) && ++*n % 40 == 0); };
  };
  Rows base, streamed;
  Pair a(m, {}, 4);
  a.wire.on_frame = lossy();
  collect(a.nics, a.wire, false, base);
  Pair b(m, {}, 4);
  b.wire.on_frame = lossy();
  collect(b.nics, b.wire, true, streamed);

  EXPECT_GT(b.nics.totals().retransmitted, 0u);
  EXPECT_EQ(base.rest.size(), m.size());
  EXPECT_EQ(streamed.all(), base.rest);  // the same rows, in the same order
  // Rows went as the run went, in id order, none past the READ (id 45) before the end.
  ASSERT_FALSE(streamed.streamed_ids.empty());
  for (size_t i = 0; i < streamed.streamed_ids.size(); ++i) EXPECT_EQ(streamed.streamed_ids[i], i);
  EXPECT_EQ(b.nics.fct_streamed(), 45u);
  // Their records are gone: the NICs hold the READ's and those after it.
  size_t held = 0;
  for (int h = 0; h < 4; ++h)
    b.nics.nic(h).sent().for_each_held([&held](size_t, const SentMessage&) { ++held; });
  EXPECT_EQ(held, m.size() - 45);
  EXPECT_TRUE(b.violations().empty());
}

TEST(NicDeviceFct, AFailedMessageHoldsTheRowsAfterItAndTheChecksStillSeeIt) {
  // Host 0's data frames never arrive: its messages (ids 0, 2) fail; host 1's (ids 1, 3)
  // complete, but their rows wait behind id 0, which never completes.
  Pair s({msg(0, 1, 4096), msg(1, 0, 4096), msg(0, 1, 4096, Time::us(1)),
          msg(1, 0, 4096, Time::us(1))},
         {"rc.timeout=10us", "rc.retry_count=2"});
  s.wire.on_frame = [](Packet& p) { return p.src != 0 || !is_data(p); };
  Rows rows;
  collect(s.nics, s.wire, true, rows);
  EXPECT_EQ(s.nics.totals().failed, 2u);
  EXPECT_EQ(s.nics.totals().completed, 2u);
  EXPECT_TRUE(rows.streamed.empty());
  EXPECT_EQ(rows.rest.size(), 4u);
  std::vector<std::string> v;
  s.nics.check_done(v, "at the end");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("2 of 4 messages failed"), std::string::npos) << v[0];
  EXPECT_NE(v[0].find("ids 0, 2;"), std::string::npos) << v[0];
}

// A closed-loop workload that posts its messages at given times, in an order other than their
// ids' (as a workload's ranks reach their sends).
class TimedDriver : public MessageDriver {
 public:
  explicit TimedDriver(std::vector<Message> m) : m_(std::move(m)) {}
  void start(NicArray& nics, Time now) override {
    nics_ = &nics;
    run(now);
  }
  void completed(uint64_t, Time) override { ++done_; }
  void delivered(uint64_t, Time) override {}
  Time run(Time now) override {
    while (next_ < m_.size() && m_[next_].start <= now) nics_->post(m_[next_++], now);
    return next_ < m_.size() ? m_[next_].start : Time::max();
  }
  uint64_t total() const override { return m_.size(); }
  uint64_t left() const override { return m_.size() - done_; }
  uint64_t first_unposted() const override {
    uint64_t low = UINT64_MAX;
    for (size_t i = next_; i < m_.size(); ++i) low = std::min(low, m_[i].id);
    return low;
  }

 private:
  std::vector<Message> m_;
  NicArray* nics_ = nullptr;
  size_t next_ = 0;
  uint64_t done_ = 0;
};

TEST(NicDeviceFct, ARowWaitsForEveryLowerIdToBePosted) {
  // Ids 2..5 are posted at once; id 1 at 20 us and id 0 at 40 us: no row may go before id 0's.
  std::vector<Message> m;
  for (uint64_t id : {2, 3, 4, 5, 1, 0}) {
    Message x = msg(static_cast<int>(id % 2), static_cast<int>(1 - id % 2), 5000,
                    id < 2 ? Time::us(40 - 20 * id) : Time());
    x.id = id;
    m.push_back(x);
  }
  const auto cfg = test::loaded<NicConfig>(std::vector<std::string>{});
  NicArray nics(cfg, std::vector<BitRate>(2, BitRate::gbps(400)), false,
                std::make_unique<TimedDriver>(m));
  Wire wire(nics, BitRate::gbps(400), Time::ns(500));
  Rows rows;
  std::vector<Time> when;
  nics.keep_fct_order();
  wire.after_step = [&](Time now) {
    nics.stream_fct([&](const NicArray::Fct& r) {
      rows.streamed_ids.push_back(r.sent->m.id);
      when.push_back(now);
    });
  };
  wire.run();
  EXPECT_EQ(nics.totals().completed, 6u);
  ASSERT_EQ(rows.streamed_ids.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(rows.streamed_ids[i], i);
  EXPECT_GT(when.front(), Time::us(40));  // id 0's row: once it completed
  std::vector<std::string> v;
  nics.check(v);
  EXPECT_TRUE(v.empty());
}

}  // namespace
}  // namespace fabricsim::nic
