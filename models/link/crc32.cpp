#include "models/link/crc32.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace fabricsim::link {
namespace {

// table[b]: the register contribution of byte b after 8 shifts (Sarwate 1988).
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? kCrc32Poly : 0);
    t[b] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

// Slicing by 8 (Kounavis and Berry 2005): slice[k][b] is byte b's contribution after k more
// zero bytes, so eight bytes fold in with eight independent lookups instead of a chain of eight.
// The NIC's packet digests (20 B each, several per packet) made the byte loop a hot spot.
constexpr std::array<std::array<uint32_t, 256>, 8> make_slices() {
  std::array<std::array<uint32_t, 256>, 8> s{};
  s[0] = make_table();
  for (int k = 1; k < 8; ++k)
    for (uint32_t b = 0; b < 256; ++b) s[k][b] = (s[k - 1][b] >> 8) ^ s[0][s[k - 1][b] & 0xFF];
  return s;
}
constexpr std::array<std::array<uint32_t, 256>, 8> kSlice = make_slices();

}  // namespace

uint32_t crc32_update(uint32_t reg, const uint8_t* data, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    // Little-endian loads, assembled byte by byte (any host, any alignment).
    const uint32_t lo = reg ^ (uint32_t{data[i]} | uint32_t{data[i + 1]} << 8 |
                               uint32_t{data[i + 2]} << 16 | uint32_t{data[i + 3]} << 24);
    reg = kSlice[7][lo & 0xFF] ^ kSlice[6][(lo >> 8) & 0xFF] ^ kSlice[5][(lo >> 16) & 0xFF] ^
          kSlice[4][lo >> 24] ^ kSlice[3][data[i + 4]] ^ kSlice[2][data[i + 5]] ^
          kSlice[1][data[i + 6]] ^ kSlice[0][data[i + 7]];
  }
  for (; i < n; ++i) reg = (reg >> 8) ^ kTable[(reg ^ data[i]) & 0xFF];
  return reg;
}

uint32_t crc32(const uint8_t* data, size_t n) {
  return ~crc32_update(kCrc32Init, data, n);
}

Crc32Registry::Crc32Registry() {
  add(kModel, Crc32Impl{[] { return std::make_unique<Crc32Block>(8); },
                        "the C++ model (Crc32Block, 8 bytes per cycle)"});
}

Crc32Registry& Crc32Registry::global() {
  static Crc32Registry registry;
  return registry;
}

uint32_t crc32_through(Crc32BlockIf& b, const uint8_t* data, size_t n) {
  const size_t w = static_cast<size_t>(b.bytes_per_cycle());
  Crc32BeatIn in;
  for (size_t at = 0; at < n; at += w) {
    const size_t k = std::min(w, n - at);
    in.valid = true;
    in.sof = at == 0;
    in.eof = at + k == n;
    in.nbytes = static_cast<int>(in.eof ? k : w);
    std::copy(data + at, data + at + k, in.data);
    b.tick(in);
  }
  return b.tick(Crc32BeatIn{}).fcs;  // the FCS is registered: valid the clock after the eof beat
}

Crc32Block::Crc32Block(int bytes_per_cycle) : w_(bytes_per_cycle) {
  if (w_ < 1 || w_ > Crc32BeatIn::kMaxBytes)
    throw std::invalid_argument("Crc32Block: bytes_per_cycle " + std::to_string(w_) +
                                " is out of range [1, 64]");
}

void Crc32Block::reset() {
  reg_ = kCrc32Init;
  out_ = Crc32BeatOut{};
}

Crc32BeatOut Crc32Block::tick(const Crc32BeatIn& in) {
  const Crc32BeatOut out = out_;  // registered outputs, from before the edge
  out_.fcs_valid = in.valid && in.eof;
  if (in.valid) {
    // As the RTL: an eof beat with nbytes outside 1..W processes max(0, min(nbytes, W)) bytes.
    const int n = !in.eof ? w_ : in.nbytes < 0 ? 0 : in.nbytes > w_ ? w_ : in.nbytes;
    const uint32_t next = crc32_update(in.sof ? kCrc32Init : reg_, in.data, static_cast<size_t>(n));
    reg_ = in.eof ? kCrc32Init : next;
    if (in.eof) out_.fcs = ~next;
  }
  return out;
}

}  // namespace fabricsim::link
