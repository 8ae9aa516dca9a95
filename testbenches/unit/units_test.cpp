// Strict unit parsing and exact formatting of Time, Bytes, BitRate and Frequency.
#include "models/common/units.h"

#include <ostream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fabricsim {
// Readable gtest failure output.
void PrintTo(const Time& t, std::ostream* os) {
  *os << t.as_fs() << "fs";
}
void PrintTo(const Bytes& b, std::ostream* os) {
  *os << b.count() << "B";
}
void PrintTo(const BitRate& r, std::ostream* os) {
  *os << r.as_bps() << "bps";
}
void PrintTo(const Frequency& f, std::ostream* os) {
  *os << f.as_hz() << "Hz";
}
}  // namespace fabricsim

namespace fabricsim {
namespace {

using ::testing::HasSubstr;

int64_t time_fs(const std::string& s) {
  Time t;
  std::string err;
  EXPECT_TRUE(parse_time(s, t, err)) << s << ": " << err;
  EXPECT_EQ(err, "") << s;
  return t.as_fs();
}
uint64_t bytes(const std::string& s) {
  Bytes b;
  std::string err;
  EXPECT_TRUE(parse_bytes(s, b, err)) << s << ": " << err;
  return b.count();
}
uint64_t bps(const std::string& s) {
  BitRate r;
  std::string err;
  EXPECT_TRUE(parse_bitrate(s, r, err)) << s << ": " << err;
  return r.as_bps();
}
uint64_t hz(const std::string& s) {
  Frequency f;
  std::string err;
  EXPECT_TRUE(parse_frequency(s, f, err)) << s << ": " << err;
  return f.as_hz();
}

// Error message of a parse that must fail; the output value must be left untouched.
std::string time_err(const std::string& s) {
  Time t = Time::fs(42);
  std::string err;
  EXPECT_FALSE(parse_time(s, t, err)) << s;
  EXPECT_EQ(t, Time::fs(42)) << s;
  return err;
}
std::string bytes_err(const std::string& s) {
  Bytes b(42);
  std::string err;
  EXPECT_FALSE(parse_bytes(s, b, err)) << s;
  EXPECT_EQ(b, Bytes(42)) << s;
  return err;
}
std::string bps_err(const std::string& s) {
  BitRate r = BitRate::bps(42);
  std::string err;
  EXPECT_FALSE(parse_bitrate(s, r, err)) << s;
  EXPECT_EQ(r, BitRate::bps(42)) << s;
  return err;
}
std::string hz_err(const std::string& s) {
  Frequency f = Frequency::hz(42);
  std::string err;
  EXPECT_FALSE(parse_frequency(s, f, err)) << s;
  EXPECT_EQ(f, Frequency::hz(42)) << s;
  return err;
}

TEST(ParseTime, AllUnits) {
  EXPECT_EQ(time_fs("3fs"), 3);
  EXPECT_EQ(time_fs("10ps"), 10000);
  EXPECT_EQ(time_fs("500ns"), 500000000);
  EXPECT_EQ(time_fs("2us"), 2000000000);
  EXPECT_EQ(time_fs("1.5ms"), 1500000000000);
  EXPECT_EQ(time_fs("1s"), 1000000000000000);
  EXPECT_EQ(time_fs("2.54ns"), 2540000);
  EXPECT_EQ(time_fs("0.000001ns"), 1);
  EXPECT_EQ(time_fs("1.000000ns"), 1000000);  // trailing zeros are fine
  EXPECT_EQ(time_fs("007ns"), 7000000);
}

TEST(ParseTime, BareZeroOnly) {
  EXPECT_EQ(time_fs("0"), 0);
  EXPECT_EQ(time_fs("0.0"), 0);
  EXPECT_EQ(time_fs("0ns"), 0);
  EXPECT_EQ(time_err("5"), "5 has no unit; expected one of fs, ps, ns, us, ms, s");
}

TEST(ParseTime, LargestValue) {
  EXPECT_EQ(time_fs("9223372036854775807fs"), INT64_MAX);
  EXPECT_EQ(time_err("9223372036854775808fs"),
            "9223372036854775808fs is too large (maximum 9223372036854775807fs)");
  EXPECT_THAT(time_err("10000s"), HasSubstr("is too large"));
}

TEST(ParseTime, Rejects) {
  EXPECT_EQ(time_err("0.0000001ns"), "0.0000001ns is not a whole number of fs");
  EXPECT_EQ(time_err("1.5fs"), "1.5fs is not a whole number of fs");
  EXPECT_EQ(time_err("500NS"),
            "500NS has unknown unit 'NS'; expected one of fs, ps, ns, us, ms, s (did you mean "
            "'ns'?)");
  EXPECT_EQ(time_err("500sec"),
            "500sec has unknown unit 'sec'; expected one of fs, ps, ns, us, ms, s");
  EXPECT_EQ(time_err("-5ns"), "-5ns is negative; only non-negative values are allowed");
  EXPECT_EQ(time_err(""), "empty value; expected a time such as 500ns");
  EXPECT_EQ(time_err("5 ns"), "'5 ns' must not contain whitespace; write e.g. 500ns");
  EXPECT_THAT(time_err(" 5ns"), HasSubstr("whitespace"));
  EXPECT_THAT(time_err("5ns\n"), HasSubstr("whitespace"));
  EXPECT_EQ(time_err("ns"), "ns does not start with a number; expected a time such as 500ns");
  EXPECT_THAT(time_err(".5ns"), HasSubstr("does not start with a number"));
  EXPECT_THAT(time_err("+5ns"), HasSubstr("does not start with a number"));
  EXPECT_EQ(time_err("5.ns"), "5.ns has no digits after the decimal point");
  EXPECT_THAT(time_err("1e3ns"), HasSubstr("unknown unit 'e3ns'"));
  EXPECT_THAT(time_err("1.2.3ns"), HasSubstr("unknown unit '.3ns'"));
  EXPECT_THAT(time_err("0x10ns"), HasSubstr("unknown unit 'x10ns'"));
  EXPECT_EQ(time_err("123456789012345678901234567890123456789012345ns"),
            "123456789012345678901234567890123456789012345ns has too many digits");
  // Tiny but non-zero: must not be mistaken for zero.
  EXPECT_EQ(time_err("0.00000000000000000000000000000000000000000001s"),
            "0.00000000000000000000000000000000000000000001s is not a whole number of fs");
}

TEST(ParseBytes, DecimalAndBinaryPrefixes) {
  EXPECT_EQ(bytes("254B"), 254u);
  EXPECT_EQ(bytes("165MB"), 165000000u);
  EXPECT_EQ(bytes("165660324B"), 165660324u);
  EXPECT_EQ(bytes("1.5KB"), 1500u);
  EXPECT_EQ(bytes("1GB"), 1000000000u);
  EXPECT_EQ(bytes("2TB"), 2000000000000u);
  EXPECT_EQ(bytes("64KiB"), 65536u);
  EXPECT_EQ(bytes("2MiB"), 2097152u);
  EXPECT_EQ(bytes("1.5GiB"), 1610612736u);
  EXPECT_EQ(bytes("1TiB"), 1099511627776u);
  EXPECT_EQ(bytes("0.5KiB"), 512u);
  EXPECT_EQ(bytes("0"), 0u);
  EXPECT_EQ(bytes("18446744073709551615B"), UINT64_MAX);
}

TEST(ParseBytes, Rejects) {
  EXPECT_EQ(bytes_err("1.5B"), "1.5B is not a whole number of bytes");
  EXPECT_EQ(bytes_err("0.1KiB"), "0.1KiB is not a whole number of bytes");
  EXPECT_EQ(bytes_err("254"),
            "254 has no unit; expected one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB");
  EXPECT_THAT(bytes_err("165mb"), HasSubstr("unknown unit 'mb'"));
  EXPECT_THAT(bytes_err("165mb"), HasSubstr("(did you mean 'MB'?)"));
  EXPECT_THAT(bytes_err("165Mb"), HasSubstr("unknown unit 'Mb'"));  // megabit? ambiguous
  EXPECT_THAT(bytes_err("64kB"), HasSubstr("unknown unit 'kB'"));
  EXPECT_THAT(bytes_err("64KIB"), HasSubstr("unknown unit 'KIB'"));
  EXPECT_THAT(bytes_err("64bytes"), HasSubstr("unknown unit 'bytes'"));
  EXPECT_THAT(bytes_err("-1B"), HasSubstr("negative"));
  EXPECT_THAT(bytes_err(""), HasSubstr("empty value"));
  EXPECT_THAT(bytes_err("18446744073709551616B"), HasSubstr("is too large"));
  EXPECT_THAT(bytes_err("20000000TB"), HasSubstr("is too large"));
  EXPECT_THAT(bytes_err("1 KB"), HasSubstr("whitespace"));
}

TEST(ParseBitRate, AllUnits) {
  EXPECT_EQ(bps("800Gbps"), 800000000000u);
  EXPECT_EQ(bps("106.25Gbps"), 106250000000u);
  EXPECT_EQ(bps("1.6Tbps"), 1600000000000u);
  EXPECT_EQ(bps("100Mbps"), 100000000u);
  EXPECT_EQ(bps("10kbps"), 10000u);
  EXPECT_EQ(bps("5bps"), 5u);
  EXPECT_EQ(bps("0bps"), 0u);
}

TEST(ParseBitRate, Rejects) {
  EXPECT_EQ(bps_err("106.2500001bps"), "106.2500001bps is not a whole number of bps");
  EXPECT_EQ(bps_err("106.2500000001Gbps"), "106.2500000001Gbps is not a whole number of bps");
  EXPECT_EQ(bps_err("800"), "800 has no unit; expected one of bps, kbps, Mbps, Gbps, Tbps");
  EXPECT_THAT(bps_err("0"), HasSubstr("has no unit"));  // bare 0 only for times and sizes
  EXPECT_EQ(bps_err("800Gbs"),
            "800Gbs has unknown unit 'Gbs'; expected one of bps, kbps, Mbps, Gbps, Tbps");
  EXPECT_THAT(bps_err("800gbps"), HasSubstr("(did you mean 'Gbps'?)"));
  EXPECT_THAT(bps_err("800GBps"), HasSubstr("unknown unit 'GBps'"));
  EXPECT_THAT(bps_err("10Kbps"), HasSubstr("unknown unit 'Kbps'"));
  EXPECT_THAT(bps_err("-800Gbps"), HasSubstr("negative"));
  EXPECT_THAT(bps_err("800 Gbps"), HasSubstr("whitespace"));
  EXPECT_THAT(bps_err("20000000Tbps"), HasSubstr("too large"));
}

TEST(ParseFrequency, AllUnits) {
  EXPECT_EQ(hz("1.35GHz"), 1350000000u);
  EXPECT_EQ(hz("500MHz"), 500000000u);
  EXPECT_EQ(hz("1GHz"), 1000000000u);
  EXPECT_EQ(hz("100kHz"), 100000u);
  EXPECT_EQ(hz("10Hz"), 10u);
  Frequency f;
  std::string err;
  ASSERT_TRUE(parse_frequency("1.35GHz", f, err));
  EXPECT_EQ(f.period(), Time::fs(740741));
}

TEST(ParseFrequency, Rejects) {
  EXPECT_EQ(hz_err("1.5Hz"), "1.5Hz is not a whole number of Hz");
  EXPECT_EQ(hz_err("1350000000"), "1350000000 has no unit; expected one of Hz, kHz, MHz, GHz");
  EXPECT_THAT(hz_err("1.35Ghz"), HasSubstr("(did you mean 'GHz'?)"));
  EXPECT_THAT(hz_err("500mhz"), HasSubstr("unknown unit 'mhz'"));
  EXPECT_THAT(hz_err("100KHz"), HasSubstr("unknown unit 'KHz'"));
  EXPECT_THAT(hz_err("1THz"), HasSubstr("unknown unit 'THz'"));
  EXPECT_THAT(hz_err("-1GHz"), HasSubstr("negative"));
  EXPECT_THAT(hz_err(""), HasSubstr("empty value; expected a frequency"));
}

TEST(UnitsStr, PicksLargestShortExactUnit) {
  EXPECT_EQ(Time::ps(2540).str(), "2.54ns");
  EXPECT_EQ(Time::ns(500).str(), "500ns");
  EXPECT_EQ(Time::us(2).str(), "2us");
  EXPECT_EQ(Time::us(1500).str(), "1.5ms");
  EXPECT_EQ(Time::fs(3).str(), "3fs");
  EXPECT_EQ(Time::fs(740741).str(), "740.741ps");
  EXPECT_EQ(Time::fs(1000000000000000).str(), "1s");
  EXPECT_EQ(Time::fs(1000001).str(), "1000.001ps");  // 1.000001ns needs more than 3 decimals
  EXPECT_EQ(Time().str(), "0ns");
  EXPECT_EQ(Time::ns(-3).str(), "-3ns");
  EXPECT_EQ(Time::max().str(), "9223372036854775.807ps");

  EXPECT_EQ(Bytes(165660324).str(), "165660324B");
  EXPECT_EQ(Bytes(254).str(), "254B");
  EXPECT_EQ(Bytes(165000000).str(), "165MB");
  EXPECT_EQ(Bytes(1500).str(), "1500B");  // sizes are printed as whole numbers
  EXPECT_EQ(Bytes(65536).str(), "64KiB");
  EXPECT_EQ(Bytes(2097152).str(), "2MiB");
  EXPECT_EQ(Bytes(1000000000).str(), "1GB");
  EXPECT_EQ(Bytes(1ull << 40).str(), "1TiB");
  EXPECT_EQ(Bytes(0).str(), "0B");

  EXPECT_EQ(BitRate::gbps(800).str(), "800Gbps");
  EXPECT_EQ(BitRate::bps(106250000000).str(), "106.25Gbps");
  EXPECT_EQ(BitRate::bps(1600000000000).str(), "1.6Tbps");
  EXPECT_EQ(BitRate::bps(100000000).str(), "100Mbps");
  EXPECT_EQ(BitRate::bps(5).str(), "5bps");
  EXPECT_EQ(BitRate::bps(0).str(), "0bps");

  EXPECT_EQ(Frequency::mhz(1350).str(), "1.35GHz");
  EXPECT_EQ(Frequency::mhz(500).str(), "500MHz");
  EXPECT_EQ(Frequency::hz(100000).str(), "100kHz");
  EXPECT_EQ(Frequency::hz(10).str(), "10Hz");
}

// parse(str(x)) == x for hand-picked edge values and many random ones.
TEST(UnitsStr, RoundTrips) {
  std::mt19937_64 rng(12345);
  std::vector<uint64_t> values = {
      0,     1,         999,        1000,       1001,       1023,       1024,       1536,
      65536, 165660324, 1000000007, 1350000000, 1ull << 40, 1ull << 62, UINT64_MAX, INT64_MAX};
  for (int i = 0; i < 2000; ++i) {
    const uint64_t r = rng();
    values.push_back(r >> (r % 64));  // spread over all magnitudes
    values.push_back((r % 100000) * 1000000);
    values.push_back((r % 100000) * 1024);
  }
  for (uint64_t v : values) {
    std::string err;
    const Time t = Time::fs(static_cast<int64_t>(v & INT64_MAX));
    Time t2;
    ASSERT_TRUE(parse_time(t.str(), t2, err)) << t.str() << ": " << err;
    EXPECT_EQ(t2, t) << t.str();

    Bytes b2;
    ASSERT_TRUE(parse_bytes(Bytes(v).str(), b2, err)) << Bytes(v).str() << ": " << err;
    EXPECT_EQ(b2, Bytes(v)) << Bytes(v).str();

    BitRate r2;
    ASSERT_TRUE(parse_bitrate(BitRate::bps(v).str(), r2, err)) << err;
    EXPECT_EQ(r2, BitRate::bps(v)) << BitRate::bps(v).str();

    Frequency f2;
    ASSERT_TRUE(parse_frequency(Frequency::hz(v).str(), f2, err)) << err;
    EXPECT_EQ(f2, Frequency::hz(v)) << Frequency::hz(v).str();
  }
}

}  // namespace
}  // namespace fabricsim
