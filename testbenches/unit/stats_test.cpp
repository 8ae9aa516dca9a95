#include "models/common/stats.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace fabricsim::stats {
namespace {

// Exact order statistic: the rank-th smallest sample with rank = ceil(q * n) (at least 1).
uint64_t order_statistic(std::vector<uint64_t> sorted_samples, uint64_t rank) {
  std::sort(sorted_samples.begin(), sorted_samples.end());
  return sorted_samples.at(rank - 1);
}

// The reported percentile is the top of the exact value's bucket, so it is never below the exact
// order statistic and exceeds it by less than the bucket width, itself <= 2^-s of the value.
void expect_within_bound(uint64_t reported, uint64_t exact, int sub_bits) {
  EXPECT_GE(reported, exact);
  const long double bound = static_cast<long double>(exact) * std::ldexp(1.0L, -sub_bits);
  EXPECT_LE(static_cast<long double>(reported - exact), bound)
      << "reported " << reported << " exact " << exact;
}

// ------------------------------------------------------------------------------------------------
// Histogram

TEST(WindowBytes, WholeInsideOutsideAndShareAtTheEdges) {
  const Time start = Time::ns(100), end = Time::ns(200);
  EXPECT_EQ(window_bytes(1000, Time::ns(120), Time::ns(130), start, end), 1000.0);
  EXPECT_EQ(window_bytes(1000, Time::ns(100), Time::ns(200), start, end), 1000.0);  // exactly it
  EXPECT_EQ(window_bytes(1000, Time::ns(80), Time::ns(100), start, end), 0.0);      // ends at start
  EXPECT_EQ(window_bytes(1000, Time::ns(200), Time::ns(210), start, end), 0.0);     // starts at end
  EXPECT_EQ(window_bytes(1000, Time::ns(300), Time::ns(310), start, end), 0.0);
  EXPECT_DOUBLE_EQ(window_bytes(1000, Time::ns(90), Time::ns(110), start, end), 500.0);
  EXPECT_DOUBLE_EQ(window_bytes(1000, Time::ns(195), Time::ns(215), start, end), 250.0);
  EXPECT_DOUBLE_EQ(window_bytes(400, Time::ns(50), Time::ns(250), start, end), 200.0);  // spans it
  EXPECT_EQ(window_bytes(64, Time::ns(150), Time::ns(150), start, end), 64.0);  // no wire time
  EXPECT_EQ(window_bytes(64, Time::ns(250), Time::ns(250), start, end), 0.0);
  EXPECT_EQ(window_bytes(64, Time::ns(150), Time::ns(160), start, Time::max()), 64.0);
}

TEST(WindowBytes, SumsWholeFramesExactlyAndEdgesByShare) {
  const Time start = Time::ns(100), end = Time::ns(200);
  WindowBytes w;
  EXPECT_EQ(w.total(), 0.0);
  w.add(1000, Time::ns(90), Time::ns(110), start, end);   // half inside
  w.add(64, Time::ns(120), Time::ns(121), start, end);    // inside
  w.add(1000, Time::ns(10), Time::ns(20), start, end);    // warm-up
  w.add(1000, Time::ns(200), Time::ns(300), start, end);  // after
  w.add_whole(36);
  EXPECT_DOUBLE_EQ(w.total(), 500.0 + 64 + 36);
}

TEST(WindowBytes, BackToBackFramesNeverExceedLineRateInAnyWindow) {
  // 4096 B frames back to back at 800 Gb/s (40.96 ns each): counting whole frames by their last
  // bit credits a 400 ns window with 10 frames (1.024 x line rate) when it starts just before a
  // frame ends; counted by wire time it gets exactly 400 ns worth.
  const BitRate rate = BitRate::gbps(800);
  const Time frame = rate.serialization(Bytes(4096));
  for (int64_t phase_ps = 0; phase_ps < 40960; phase_ps += 1237) {
    const Time start = Time::ps(1000000 + phase_ps), end = start + Time::ns(400);
    double counted = 0;
    for (Time t = Time::ns(0); t < Time::ns(2000000 / 1000); t += frame)
      counted += window_bytes(4096, t, t + frame, start, end);
    EXPECT_NEAR(counted, 400e-9 * 800e9 / 8, 1e-6) << "phase " << phase_ps << " ps";
  }
}

TEST(Histogram, EmptyReportsZeros) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.percentile(0.0), 0u);
  EXPECT_EQ(h.percentile(0.5), 0u);
  EXPECT_EQ(h.percentile(1.0), 0u);
  EXPECT_EQ(h.bucket_memory_bytes(), 0u);
}

TEST(Histogram, RejectsBadArguments) {
  EXPECT_THROW(Histogram(-1), std::invalid_argument);
  EXPECT_THROW(Histogram(21), std::invalid_argument);
  Histogram h;
  h.record(5);
  EXPECT_THROW(h.percentile(-0.01), std::invalid_argument);
  EXPECT_THROW(h.percentile(1.01), std::invalid_argument);
  EXPECT_THROW(h.percentile(std::nan("")), std::invalid_argument);
}

TEST(Histogram, SmallValuesAreExact) {
  Histogram h(4);  // 16 sub-buckets: values < 16 exact by contract, and 16..31 too (width 1)
  for (uint64_t v = 1; v <= 15; ++v) h.record(v);
  EXPECT_EQ(h.count(), 15u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 15u);
  EXPECT_DOUBLE_EQ(h.mean(), 8.0);
  for (uint64_t k = 1; k <= 15; ++k) {
    EXPECT_EQ(h.percentile(static_cast<double>(k) / 15.0), k) << k;
  }

  // Values 1..100 once each: every percentile is an exact order statistic.
  Histogram exact(10);
  for (uint64_t v = 1; v <= 100; ++v) exact.record(v);
  EXPECT_EQ(exact.percentile(0.5), 50u);
  EXPECT_EQ(exact.percentile(0.505), 51u);  // ceil(50.5)
  EXPECT_EQ(exact.percentile(0.99), 99u);
  // 0.07 * 100 is 7.000000000000001 in binary; it still means the 7th sample, not the 8th.
  EXPECT_EQ(exact.percentile(0.07), 7u);
  EXPECT_EQ(exact.percentile(0.29), 29u);
  EXPECT_EQ(exact.percentile(0.001), 1u);
}

TEST(Histogram, ZeroIsAValue) {
  Histogram h;
  h.record(0, 3);
  h.record(7);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.percentile(0.75), 0u);
  EXPECT_EQ(h.percentile(0.76), 7u);
  EXPECT_DOUBLE_EQ(h.mean(), 7.0 / 4.0);
}

TEST(Histogram, RecordWithCountAndZeroCount) {
  Histogram h;
  h.record(1000, 0);  // no-op: must not disturb min/max
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.max(), 0u);
  h.record(10, 9);
  h.record(20, 1);
  EXPECT_EQ(h.count(), 10u);
  EXPECT_DOUBLE_EQ(h.mean(), 11.0);
  EXPECT_EQ(h.percentile(0.9), 10u);
  EXPECT_EQ(h.percentile(0.91), 20u);
}

TEST(Histogram, QZeroIsMinAndQOneIsMax) {
  // Values far above the exact range: bucket bounds must still clip to the true min and max.
  Histogram h(3);
  const uint64_t lo = 1000003, hi = 7777777;
  h.record(lo);
  h.record(hi);
  h.record(3000000);
  EXPECT_EQ(h.percentile(0.0), lo);
  // Any q > 0 reports the top of min's bucket (width 2^16 here), not min itself.
  expect_within_bound(h.percentile(1e-12), lo, 3);
  EXPECT_GT(h.percentile(1e-12), lo);
  EXPECT_EQ(h.percentile(1.0), hi);
  EXPECT_EQ(h.min(), lo);
  EXPECT_EQ(h.max(), hi);
}

TEST(Histogram, SingleValueEveryPercentileIsThatValue) {
  Histogram h;
  h.record(123456789);
  for (double q : {0.0, 0.1, 0.5, 0.99, 0.999, 1.0}) EXPECT_EQ(h.percentile(q), 123456789u) << q;
}

TEST(Histogram, BucketBoundariesForSmallSubBucketBits) {
  // s = 2: [8, 16) is split into 4 buckets of width 2: {8,9} {10,11} {12,13} {14,15}.
  Histogram h(2);
  h.record(8);
  h.record(15);
  EXPECT_EQ(h.percentile(0.5), 9u);  // top of the {8,9} bucket
  h.record(10);
  EXPECT_EQ(h.percentile(2.0 / 3.0), 11u);  // top of {10,11}
  // Values below 2^s (and in [2^s, 2^(s+1))) are exact.
  Histogram e(2);
  for (uint64_t v = 0; v < 8; ++v) e.record(v);
  for (uint64_t k = 1; k <= 8; ++k) EXPECT_EQ(e.percentile(k / 8.0), k - 1);
}

TEST(Histogram, ZeroSubBucketBitsIsOneBucketPerPowerOfTwo) {
  Histogram h(0);
  h.record(0);
  h.record(5);    // bucket [4, 7]
  h.record(100);  // bucket [64, 127]
  EXPECT_EQ(h.percentile(1.0 / 3.0), 0u);
  EXPECT_EQ(h.percentile(2.0 / 3.0), 7u);
  EXPECT_EQ(h.percentile(1.0), 100u);  // clipped to max
}

class HistogramRandom : public ::testing::TestWithParam<int> {};

TEST_P(HistogramRandom, PercentilesWithinRelativeErrorOfExactOrderStatistic) {
  const int sub_bits = GetParam();
  std::mt19937_64 rng(0xFAB51u + sub_bits);
  // Latency-like: lognormal around ~1 us in fs (1e9) with a heavy tail, plus an exponential mix.
  std::lognormal_distribution<double> lognormal(std::log(1e9), 1.5);
  std::exponential_distribution<double> exponential(1.0 / 5e4);
  constexpr int kN = 100000;
  std::vector<uint64_t> samples;
  samples.reserve(kN);
  Histogram h(sub_bits);
  for (int i = 0; i < kN; ++i) {
    const double d = (i % 4 == 0) ? exponential(rng) : lognormal(rng);
    const uint64_t v = static_cast<uint64_t>(std::min(d, 9e18));
    samples.push_back(v);
    h.record(v);
  }
  std::sort(samples.begin(), samples.end());
  ASSERT_EQ(h.count(), static_cast<uint64_t>(kN));
  EXPECT_EQ(h.min(), samples.front());
  EXPECT_EQ(h.max(), samples.back());
  long double sum = 0;
  for (uint64_t v : samples) sum += v;
  EXPECT_DOUBLE_EQ(h.mean(), static_cast<double>(sum / kN));

  const struct {
    double q;
    uint64_t rank;
  } cases[] = {{0.5, 50000},  {0.99, 99000}, {0.999, 99900},   {0.9999, 99990},
               {1.0, 100000}, {0.25, 25000}, {0.123456, 12346}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.q);
    expect_within_bound(h.percentile(c.q), samples[c.rank - 1], sub_bits);
  }
  EXPECT_EQ(h.percentile(1.0), samples.back());
  EXPECT_EQ(h.percentile(0.0), samples.front());
  // A dense sweep of ranks catches off-by-one-bucket errors the fixed points could miss.
  for (uint64_t rank = 1; rank <= kN; rank += 997) {
    const double q = static_cast<double>(rank) / kN;
    expect_within_bound(h.percentile(q), samples[rank - 1], sub_bits);
  }
}

INSTANTIATE_TEST_SUITE_P(SubBucketBits, HistogramRandom, ::testing::Values(3, 7, 10, 14));

TEST(Histogram, LargeValuesNear1e13AndTopOfRange) {
  Histogram h(10);
  const uint64_t a = 10'000'000'000'000ull;  // 10 ms in fs
  h.record(a);
  h.record(a + 1);
  h.record(a + 12345);
  expect_within_bound(h.percentile(0.5), order_statistic({a, a + 1, a + 12345}, 2), 10);
  EXPECT_EQ(h.percentile(1.0), a + 12345);
  EXPECT_DOUBLE_EQ(h.mean(), static_cast<double>(a) + 12346.0 / 3.0);

  Histogram top(10);
  const uint64_t big = (uint64_t{1} << 63) + 12345;
  const uint64_t biggest = UINT64_MAX;
  top.record(uint64_t{1} << 63);
  top.record(big);
  top.record(biggest);
  top.record(biggest);
  EXPECT_EQ(top.max(), biggest);
  EXPECT_EQ(top.percentile(1.0), biggest);
  EXPECT_EQ(top.percentile(0.0), uint64_t{1} << 63);
  // 2^63 and 2^63 + 12345 share a bucket of width 2^53; its top, not overflowing to 0.
  const uint64_t p50 = top.percentile(0.5);
  expect_within_bound(p50, big, 10);
  EXPECT_EQ(p50, (uint64_t{1} << 63) + (uint64_t{1} << 53) - 1);
  // The sum (4 values ~2^63..2^64) exceeds uint64; the mean must still be exact-ish.
  const long double expected_mean =
      (static_cast<long double>(uint64_t{1} << 63) + big + 2.0L * biggest) / 4.0L;
  EXPECT_DOUBLE_EQ(top.mean(), static_cast<double>(expected_mean));
}

TEST(Histogram, AllocatesOnlyTheMagnitudesItSees) {
  constexpr int kBits = 10;
  constexpr size_t kArray = (size_t{1} << kBits) * sizeof(uint64_t);
  Histogram h(kBits);
  EXPECT_EQ(h.bucket_memory_bytes(), 0u);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint64_t> around_1e6(1'100'000, 2'000'000);  // within [2^20, 2^21)
  for (int i = 0; i < 10000; ++i) h.record(around_1e6(rng));
  EXPECT_EQ(h.bucket_memory_bytes(), kArray);
  h.record(1'000'000);  // [2^19, 2^20): one more array
  EXPECT_EQ(h.bucket_memory_bytes(), 2 * kArray);
  // A dense allocation would be 55 arrays; a port's histogram must stay far below that.
  h.record(3);
  h.record(uint64_t{1} << 62);
  EXPECT_EQ(h.bucket_memory_bytes(), 4 * kArray);
}

TEST(Histogram, MergeEqualsRecordingAll) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(std::log(2e6), 2.0);
  Histogram all(8), a(8), b(8);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t v = static_cast<uint64_t>(dist(rng));
    all.record(v);
    (i % 3 == 0 ? a : b).record(v);
  }
  Histogram merged = a;
  merged.merge(b);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_EQ(merged.mean(), all.mean());
  EXPECT_EQ(merged.bucket_memory_bytes(), all.bucket_memory_bytes());
  for (int i = 0; i <= 2000; ++i) {
    const double q = i / 2000.0;
    ASSERT_EQ(merged.percentile(q), all.percentile(q)) << q;
  }
  // The copy made above is deep: `a` is unchanged by the merge.
  EXPECT_EQ(a.count() + b.count(), merged.count());
  EXPECT_LT(a.count(), merged.count());
}

TEST(Histogram, MergeEmptyAndIntoEmpty) {
  Histogram h, empty;
  h.record(50);
  h.merge(empty);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.min(), 50u);
  EXPECT_EQ(h.max(), 50u);
  Histogram into;
  into.merge(h);
  EXPECT_EQ(into.count(), 1u);
  EXPECT_EQ(into.min(), 50u);
  EXPECT_EQ(into.percentile(0.5), 50u);
}

TEST(Histogram, MergeRejectsDifferentResolution) {
  Histogram a(10), b(9);
  b.record(1);
  EXPECT_THROW(a.merge(b), std::invalid_argument);
  EXPECT_EQ(a.count(), 0u);
}

TEST(Histogram, ClearResetsButKeepsArrays) {
  Histogram h;
  h.record(5000);
  h.record(7);
  const size_t mem = h.bucket_memory_bytes();
  h.clear();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.percentile(0.5), 0u);
  EXPECT_EQ(h.bucket_memory_bytes(), mem);
  h.record(9);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.min(), 9u);
  EXPECT_EQ(h.percentile(0.01), 9u);  // old counts really are gone
}

TEST(Histogram, CopyAssignmentIsDeep) {
  Histogram a;
  a.record(100);
  Histogram b(5);
  b.record(1);
  b = a;
  EXPECT_EQ(b.sub_bucket_bits(), 10);
  b.record(200);
  EXPECT_EQ(a.count(), 1u);
  EXPECT_EQ(a.percentile(1.0), 100u);
  EXPECT_EQ(b.count(), 2u);
  EXPECT_EQ(b.percentile(0.5), 100u);
}

// ------------------------------------------------------------------------------------------------
// Occupancy

TEST(Occupancy, HandComputedIntegral) {
  Occupancy t;
  t.start(Time::ns(10), 4);
  EXPECT_EQ(t.mean(Time::ns(10)), 4.0);  // empty window: the current value
  t.update(Time::ns(12), 10);            // 4 for 2 ns
  t.update(Time::ns(15), 0);             // 10 for 3 ns
  t.update(Time::ns(15), 7);             // zero-width: contributes nothing
  // At 20 ns: 4*2 + 10*3 + 0*0 + 7*5 = 73 over 10 ns.
  EXPECT_DOUBLE_EQ(t.mean(Time::ns(20)), 7.3);
  EXPECT_DOUBLE_EQ(t.mean(Time::ns(15)), 38.0 / 5.0);
  EXPECT_EQ(t.peak(), 10);
  EXPECT_EQ(t.current(), 7);
}

TEST(Occupancy, ExactForLargeValuesOverLongRuns) {
  // 165 MB buffer occupancy held for 1 s (1e15 fs): value * dt ~ 1.6e23 overflows int64 and loses
  // bits in double; the average of two alternating levels must still be exact.
  Occupancy t;
  t.start(Time::fs(0), 165'000'001);
  const int64_t second = 1'000'000'000'000'000;
  t.update(Time::fs(second), 165'000'000);
  EXPECT_EQ(t.mean(Time::fs(2 * second)), 165'000'000.5);
}

TEST(Occupancy, ExactWhenLargeAreasCancel) {
  // A signed signal (e.g. a credit balance): +2^40 for 2^40 fs puts 2^80 in the integral, then
  // 1 for 1000 fs, then -2^40 for 2^40 fs. A double or long double accumulator loses the 1000
  // (ulp of 2^80 is 2^28 / 2^17) and reports 0.
  const int64_t big = int64_t{1} << 40;
  Occupancy t;
  t.start(Time::fs(0), big);
  t.update(Time::fs(big), 1);
  t.update(Time::fs(big + 1000), -big);
  const Time end = Time::fs(2 * big + 1000);
  EXPECT_DOUBLE_EQ(t.mean(end), 1000.0 / static_cast<double>(2 * big + 1000));
}

TEST(Occupancy, PeakIncludesStartValueAndNegativeSignals) {
  Occupancy t;
  t.start(Time::ns(0), -3);
  t.update(Time::ns(1), -5);
  EXPECT_EQ(t.peak(), -3);
  EXPECT_DOUBLE_EQ(t.mean(Time::ns(2)), -4.0);
}

TEST(Occupancy, RestartClearsHistory) {
  Occupancy t;
  t.start(Time::ns(0), 100);
  t.update(Time::ns(5), 200);
  t.start(Time::ns(10), 1);  // e.g. end of warm-up
  t.update(Time::ns(12), 3);
  EXPECT_EQ(t.peak(), 3);
  EXPECT_DOUBLE_EQ(t.mean(Time::ns(14)), (1 * 2 + 3 * 2) / 4.0);
}

TEST(Occupancy, TimeGoingBackwardsIsALogicError) {
  Occupancy t;
  t.start(Time::ns(5), 1);
  t.update(Time::ns(8), 2);
  EXPECT_THROW(t.update(Time::ns(7), 3), std::logic_error);
  EXPECT_THROW(t.mean(Time::ns(7)), std::logic_error);
  EXPECT_THROW(t.mean(Time::ns(4)), std::logic_error);
  EXPECT_EQ(t.current(), 2);  // the rejected update left no trace
  EXPECT_DOUBLE_EQ(t.mean(Time::ns(8)), 1.0);
}

// ------------------------------------------------------------------------------------------------
// Registry

TEST(Registry, NestsDottedNamesAndReadsLiveValues) {
  uint64_t drops = 3, rx = 10;
  double util = 0.25;
  Registry r;
  r.counter("switch.port3.drops", &drops, "packets");
  r.counter("switch.port3.rx", &rx);
  r.value("switch.util", &util, "fraction");
  drops = 7;  // read at to_json() time, not at registration
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j, nlohmann::json::parse(R"({"switch":{"port3":{"drops":7,"rx":10},"util":0.25}})"));
  EXPECT_TRUE(j["switch"]["port3"]["drops"].is_number_unsigned());
  EXPECT_EQ(r.units(),
            nlohmann::json::parse(R"({"switch.port3.drops":"packets","switch.util":"fraction"})"));
}

TEST(Registry, DeterministicOrderRegardlessOfRegistrationOrder) {
  uint64_t x = 1;
  Registry a, b;
  a.counter("z.b", &x);
  a.counter("a.c", &x);
  a.counter("m", &x);
  b.counter("m", &x);
  b.counter("a.c", &x);
  b.counter("z.b", &x);
  EXPECT_EQ(a.to_json().dump(), b.to_json().dump());
  EXPECT_EQ(a.to_json().dump(), R"({"a":{"c":1},"m":1,"z":{"b":1}})");
}

TEST(Registry, DuplicateNamesThrow) {
  uint64_t c = 0;
  double v = 0;
  Histogram h;
  Registry r;
  r.counter("a.b", &c);
  EXPECT_THROW(r.counter("a.b", &c), std::logic_error);
  EXPECT_THROW(r.value("a.b", &v), std::logic_error);
  EXPECT_THROW(r.histogram("a.b", &h), std::logic_error);
}

TEST(Registry, LeafThatIsAlsoAPrefixThrowsInEitherOrder) {
  uint64_t c = 0;
  Registry r;
  r.counter("a.b", &c);
  EXPECT_THROW(r.counter("a.b.c", &c), std::logic_error);
  EXPECT_THROW(r.counter("a.b.c.d", &c), std::logic_error);
  r.counter("x.y.z", &c);
  EXPECT_THROW(r.counter("x.y", &c), std::logic_error);
  EXPECT_THROW(r.counter("x", &c), std::logic_error);
  // Sharing a prefix is fine; so is a name that merely starts with the same characters.
  r.counter("a.bc", &c);
  r.counter("a.b_", &c);
  r.counter("x.y2", &c);
  r.counter("x.y.w", &c);
  EXPECT_EQ(r.to_json()["x"]["y"].size(), 2u);
}

TEST(Registry, MalformedNamesAndNullPointersThrow) {
  uint64_t c = 0;
  Registry r;
  for (const char* bad : {"", ".a", "a.", "a..b", "."}) {
    EXPECT_THROW(r.counter(bad, &c), std::invalid_argument) << bad;
  }
  EXPECT_THROW(r.counter("n", nullptr), std::invalid_argument);
  EXPECT_THROW(r.value("n", nullptr), std::invalid_argument);
  EXPECT_THROW(r.histogram("n", nullptr), std::invalid_argument);
  EXPECT_EQ(r.to_json(), nlohmann::json::object());
}

TEST(Registry, HistogramsAreScaledSummaries) {
  Histogram lat;  // femtoseconds
  for (uint64_t ns = 1; ns <= 1000; ++ns) lat.record(ns * 1'000'000);
  Histogram empty;
  Registry r;
  r.histogram("port0.latency", &lat, 1e-6, "ns");
  r.histogram("port1.latency", &empty, 1e-6);
  const nlohmann::json j = r.to_json();
  const nlohmann::json& l = j["port0"]["latency"];
  EXPECT_EQ(l["count"].get<uint64_t>(), 1000u);
  EXPECT_DOUBLE_EQ(l["mean"].get<double>(), 500.5);
  EXPECT_DOUBLE_EQ(l["min"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(l["max"].get<double>(), 1000.0);
  // Bucketed above 2^10 fs: within 0.1% above the exact order statistic.
  const struct {
    const char* key;
    double q;
    double exact_ns;
  } cases[] = {{"p50", 0.5, 500.0}, {"p99", 0.99, 990.0}, {"p999", 0.999, 999.0}};
  for (const auto& c : cases) {
    const double got = l[c.key].get<double>();
    EXPECT_GE(got, c.exact_ns) << c.key;
    EXPECT_LE(got, c.exact_ns * (1 + 1.0 / 1024)) << c.key;
    EXPECT_DOUBLE_EQ(got, static_cast<double>(lat.percentile(c.q)) * 1e-6) << c.key;
  }
  EXPECT_EQ(l.size(), 7u);
  for (const char* key : {"count", "mean", "min", "p50", "p99", "p999", "max"}) {
    EXPECT_TRUE(l.contains(key)) << key;
    EXPECT_TRUE(l[key].is_number()) << key;
  }
  EXPECT_EQ(j["port1"]["latency"]["count"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["port1"]["latency"]["p99"].get<double>(), 0.0);
  EXPECT_EQ(r.units(), nlohmann::json::parse(R"({"port0.latency":"ns"})"));
}

TEST(Registry, CallbacksAreReadWhenWrittenNotWhenRegistered) {
  uint64_t a = 1, b = 2;
  double t = 0.5;
  Registry r;
  r.counter_fn(
      "sw.port0.sum", [&] { return a + b; }, "packets");
  r.value_fn("sw.port0.time_ns", [&] { return t * 2; });
  a = 10;  // the callbacks see the values of the moment the registry is written
  t = 4.0;
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j, nlohmann::json::parse(R"({"sw":{"port0":{"sum":12,"time_ns":8.0}}})"));
  EXPECT_TRUE(j["sw"]["port0"]["sum"].is_number_unsigned());
  EXPECT_TRUE(j["sw"]["port0"]["time_ns"].is_number_float());
  EXPECT_EQ(r.units(), nlohmann::json::parse(R"({"sw.port0.sum":"packets"})"));
}

TEST(Registry, CallbacksShareTheNameRulesOfPointers) {
  uint64_t c = 0;
  Registry r;
  r.counter("a.b", &c);
  EXPECT_THROW(r.counter_fn("a.b", [] { return uint64_t{1}; }), std::logic_error);
  EXPECT_THROW(r.value_fn("a.b.c", [] { return 1.0; }), std::logic_error);
  r.value_fn("x.y", [] { return 1.0; });
  EXPECT_THROW(r.counter("x", &c), std::logic_error);
  EXPECT_THROW(r.counter_fn("x..z", [] { return uint64_t{1}; }), std::invalid_argument);
  EXPECT_THROW(r.counter_fn("e", std::function<uint64_t()>()), std::invalid_argument);
  EXPECT_THROW(r.value_fn("e", std::function<double()>()), std::invalid_argument);
  EXPECT_EQ(r.to_json().dump(), R"({"a":{"b":0},"x":{"y":1.0}})");
}

TEST(Registry, CarriesTheReadTimeAndThePerPortChoice) {
  const Registry defaults;
  EXPECT_EQ(defaults.read_at(), Time());
  EXPECT_TRUE(defaults.per_port());
  const Registry r(Time::ns(1500), false);
  EXPECT_EQ(r.read_at(), Time::ns(1500));
  EXPECT_FALSE(r.per_port());
}

TEST(Registry, EmptyRegistry) {
  Registry r;
  EXPECT_EQ(r.to_json().dump(), "{}");
  EXPECT_EQ(r.units().dump(), "{}");
}

}  // namespace
}  // namespace fabricsim::stats
