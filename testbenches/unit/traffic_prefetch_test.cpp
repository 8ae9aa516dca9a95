// Batched pulls from traffic sources, and the prefetching thread: the same packet stream whether a
// consumer takes it a packet at a time, in batches of any size, or through PrefetchSource.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "models/traffic/prefetch_source.h"
#include "models/traffic/synthetic.h"
#include "models/traffic/traffic_source.h"

namespace fabricsim::traffic {
namespace {

const BitRate kRate = BitRate::gbps(100);

TrafficConfig config(bool simple) {
  TrafficConfig c;
  c.pattern = "uniform";
  c.load = 0.7;
  c.arrival = simple ? "bernoulli" : "onoff";
  c.burst_packets = 4;
  c.size = Bytes(64);
  if (!simple) {  // the general path: several sizes and classes
    c.sizes = {64, 1500, 9000};
    c.size_weights = {5, 3, 1};
    c.tc_weights = {1, 1, 2};
  }
  c.self = true;
  return c;
}

void expect_same(const std::vector<Packet>& a, const std::vector<Packet>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].id, b[k].id) << k;
    ASSERT_EQ(a[k].src, b[k].src) << k;
    ASSERT_EQ(a[k].dst, b[k].dst) << k;
    ASSERT_EQ(a[k].tc, b[k].tc) << k;
    ASSERT_EQ(a[k].size, b[k].size) << k;
    ASSERT_EQ(a[k].inject_time, b[k].inject_time) << k;
  }
}

std::vector<Packet> by_next(TrafficSource& s, size_t n) {
  std::vector<Packet> v;
  Packet p;
  while (v.size() < n && s.next(p)) v.push_back(p);
  return v;
}

// Batches of sizes cycling through `sizes`, checking each call's count.
std::vector<Packet> by_batches(TrafficSource& s, size_t n, const std::vector<size_t>& sizes) {
  std::vector<Packet> v;
  std::vector<Packet> buf(*std::max_element(sizes.begin(), sizes.end()));
  for (size_t k = 0; v.size() < n; ++k) {
    const size_t max = sizes[k % sizes.size()];
    const size_t got = s.next_batch(buf.data(), max);
    EXPECT_GE(got, 1u);
    EXPECT_LE(got, max);
    if (got == 0) break;
    v.insert(v.end(), buf.begin(), buf.begin() + static_cast<ptrdiff_t>(got));
  }
  v.resize(std::min(v.size(), n));
  return v;
}

TEST(Batches, SyntheticBatchesAreTheStreamOfNext) {
  for (bool simple : {true, false}) {
    const TrafficConfig c = config(simple);
    SyntheticSource a(c, 16, kRate, 5), b(c, 16, kRate, 5);
    const auto one = by_next(a, 5000);
    const auto batched = by_batches(b, 5000, {1, 3, 64, 1000});
    SCOPED_TRACE(simple ? "bernoulli, one size" : "onoff, sizes and classes");
    expect_same(one, batched);
  }
}

// A source of `n` packets whose next pull after them fails, as a trace with a bad line would.
class FailingSource : public TrafficSource {
 public:
  explicit FailingSource(uint64_t n) : n_(n) {}
  bool next(Packet& p) override {
    if (k_ == n_) throw std::runtime_error("bad line");
    p = Packet{};
    p.id = k_;
    p.src = static_cast<int32_t>(k_ % 7);
    p.inject_time = Time::ns(static_cast<int64_t>(k_++));
    return true;
  }

 private:
  uint64_t n_, k_ = 0;
};

TEST(Batches, DefaultBatchIsOnePacket) {
  FailingSource s(2);
  Packet buf[4];
  EXPECT_EQ(s.next_batch(buf, 4), 1u);
  EXPECT_EQ(s.next_batch(buf, 4), 1u);
  EXPECT_EQ(buf[0].id, 1u);
  EXPECT_THROW(s.next_batch(buf, 4), std::runtime_error);
}

TEST(Prefetch, SameStreamAsTheSourceItWraps) {
  for (bool simple : {true, false}) {
    const TrafficConfig c = config(simple);
    SyntheticSource direct(c, 16, kRate, 9);
    // A small ring, so that the stream wraps it many times.
    PrefetchSource pre(std::make_unique<SyntheticSource>(c, 16, kRate, 9), 256);
    SCOPED_TRACE(simple ? "bernoulli, one size" : "onoff, sizes and classes");
    expect_same(by_next(direct, 20000), by_batches(pre, 20000, {1, 64, 7, 300}));
  }
}

TEST(Prefetch, AnErrorComesAfterEveryPacketBeforeIt) {
  // 100 is not a multiple of the producer's publishing stride: every packet before the failure
  // still reaches the consumer, then the error.
  for (size_t batch : {size_t{1}, size_t{64}}) {
    PrefetchSource pre(std::make_unique<FailingSource>(100), 4096);
    std::vector<Packet> buf(batch);
    uint64_t got = 0;
    try {
      for (;;) {
        const size_t n = pre.next_batch(buf.data(), batch);
        ASSERT_GT(n, 0u) << "the stream ended without the error";
        for (size_t k = 0; k < n; ++k) ASSERT_EQ(buf[k].id, got + k);
        got += n;
      }
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "bad line");
    }
    EXPECT_EQ(got, 100u) << "batch " << batch;
  }
}

}  // namespace
}  // namespace fabricsim::traffic
