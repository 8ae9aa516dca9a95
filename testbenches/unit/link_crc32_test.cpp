// CRC-32 (Ethernet FCS): the byte-wise model against published check values, an ARP frame whose
// FCS was computed with Python's zlib.crc32 (an independent implementation of the same CRC), the
// 802.3 receiver residue, and the W-bytes-per-cycle block model against the byte-wise one for
// every beat width, frame length and alignment.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "models/common/rng.h"
#include "models/link/crc32.h"

namespace fabricsim::link {
namespace {

uint32_t crc_of(const std::string& s) {
  return crc32(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// A broadcast ARP request (who-has 192.168.1.1 tell 192.168.1.100), padded to 60 bytes.
std::vector<uint8_t> arp_frame() {
  const char* hex =
      "ffffffffffff001b213a4f5c08060001080006040001001b213a4f5cc0a80164000000000000c0a80101";
  std::vector<uint8_t> f;
  for (size_t i = 0; hex[i]; i += 2)
    f.push_back(static_cast<uint8_t>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  f.resize(60, 0);
  return f;
}

TEST(Crc32, PublishedCheckValues) {
  EXPECT_EQ(crc_of("123456789"), 0xCBF43926u);  // the CRC catalogue's check value for CRC-32
  EXPECT_EQ(crc_of("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
  EXPECT_EQ(crc_of(""), 0u);
}

// crc32_update folds eight bytes at a time (slicing by 8): it must equal the bit-serial
// definition for every length around the 8-byte steps, any start register and any alignment.
TEST(Crc32, SlicedUpdateEqualsBitSerial) {
  Rng rng(7);
  std::vector<uint8_t> buf(64 + 8);
  for (auto& b : buf) b = static_cast<uint8_t>(rng.next_u64());
  for (size_t off = 0; off < 8; ++off) {
    for (size_t n = 0; n <= 64; ++n) {
      const auto reg = static_cast<uint32_t>(rng.next_u64());
      uint32_t ref = reg;
      for (size_t i = 0; i < n; ++i) {
        ref ^= buf[off + i];
        for (int k = 0; k < 8; ++k) ref = (ref >> 1) ^ ((ref & 1) ? kCrc32Poly : 0);
      }
      ASSERT_EQ(crc32_update(reg, buf.data() + off, n), ref) << "offset " << off << " length " << n;
    }
  }
}

TEST(Crc32, EthernetFrameFcs) {
  const auto f = arp_frame();
  ASSERT_EQ(f.size(), 60u);
  EXPECT_EQ(crc32(f.data(), f.size()), 0xADC414C7u);  // zlib.crc32 of the same 60 bytes
}

TEST(Crc32, ReceiverResidueOverFrameAndFcs) {
  // The FCS goes on the wire least significant byte first; a receiver running the same register
  // over frame + FCS always ends at the 802.3 residue.
  Rng rng(7);
  for (int t = 0; t < 200; ++t) {
    std::vector<uint8_t> f(1 + rng.below(1600));
    for (auto& b : f) b = static_cast<uint8_t>(rng.next_u64());
    const uint32_t fcs = crc32(f.data(), f.size());
    for (int k = 0; k < 4; ++k) f.push_back(static_cast<uint8_t>(fcs >> (8 * k)));
    EXPECT_EQ(crc32_update(kCrc32Init, f.data(), f.size()), kCrc32Residue);
    f[rng.below(f.size())] ^= static_cast<uint8_t>(1u << rng.below(8));  // any 1-bit error shows
    EXPECT_NE(crc32_update(kCrc32Init, f.data(), f.size()), kCrc32Residue);
  }
}

// Feeds `frame` to a W-byte block, with idle cycles between beats when gap is set; returns the FCS
// reported one cycle after eof.
uint32_t block_fcs(Crc32Block& blk, const std::vector<uint8_t>& frame, bool gap) {
  const int w = blk.bytes_per_cycle();
  size_t pos = 0;
  bool first = true;
  while (pos < frame.size()) {
    Crc32BeatIn in;
    in.valid = true;
    in.sof = first;
    first = false;
    const size_t n = std::min(frame.size() - pos, static_cast<size_t>(w));
    std::memcpy(in.data, frame.data() + pos, n);
    for (size_t b = n; b < static_cast<size_t>(w); ++b) in.data[b] = 0xA5;  // junk past nbytes
    pos += n;
    in.eof = pos == frame.size();
    in.nbytes = static_cast<int>(n);
    EXPECT_FALSE(blk.tick(in).fcs_valid);
    if (gap && !in.eof) {
      EXPECT_FALSE(blk.tick(Crc32BeatIn{}).fcs_valid);
    }
  }
  const Crc32BeatOut out = blk.tick(Crc32BeatIn{});
  EXPECT_TRUE(out.fcs_valid);
  EXPECT_EQ(blk.state(), kCrc32Init);  // ready for the next frame
  return out.fcs;
}

TEST(Crc32Block, MatchesBytewiseForEveryWidthAndLength) {
  Rng rng(3);
  for (int w : {1, 2, 3, 4, 8, 16, 64})
    for (size_t len = 1; len <= 3 * static_cast<size_t>(w) + 1; ++len) {
      std::vector<uint8_t> f(len);
      for (auto& b : f) b = static_cast<uint8_t>(rng.next_u64());
      Crc32Block blk(w);
      EXPECT_EQ(block_fcs(blk, f, len % 2 == 0), crc32(f.data(), f.size()))
          << "W " << w << " len " << len;
    }
}

TEST(Crc32Block, CheckValueAndBackToBackFrames) {
  Crc32Block blk(8);
  const std::string s = "123456789";
  const std::vector<uint8_t> f(s.begin(), s.end());
  EXPECT_EQ(block_fcs(blk, f, false), 0xCBF43926u);
  const auto arp = arp_frame();
  EXPECT_EQ(block_fcs(blk, arp, true), 0xADC414C7u);
}

TEST(Crc32Block, SofRestartsAndTimingIsOneCycle) {
  Crc32Block blk(4);
  Crc32BeatIn in;
  in.valid = in.sof = true;
  in.nbytes = 4;
  std::memcpy(in.data, "abcd", 4);
  blk.tick(in);  // aborted frame: no eof
  const std::string s = "123456789";
  Crc32BeatIn a;
  a.valid = a.sof = true;
  a.nbytes = 4;
  std::memcpy(a.data, s.data(), 4);
  EXPECT_FALSE(blk.tick(a).fcs_valid);
  Crc32BeatIn b;
  b.valid = true;
  b.nbytes = 4;
  std::memcpy(b.data, s.data() + 4, 4);
  blk.tick(b);
  Crc32BeatIn c;
  c.valid = c.eof = true;
  c.nbytes = 1;
  c.data[0] = '9';
  EXPECT_FALSE(blk.tick(c).fcs_valid);  // registered: not in the eof cycle
  const Crc32BeatOut out = blk.tick(Crc32BeatIn{});
  EXPECT_TRUE(out.fcs_valid);
  EXPECT_EQ(out.fcs, 0xCBF43926u);
  EXPECT_FALSE(blk.tick(Crc32BeatIn{}).fcs_valid);  // one cycle only
}

TEST(Crc32Block, RejectsBadWidth) {
  EXPECT_THROW(Crc32Block(0), std::invalid_argument);
  EXPECT_THROW(Crc32Block(65), std::invalid_argument);
}

}  // namespace
}  // namespace fabricsim::link
