#include "rtl/crc32_rtl.h"

#include <stdexcept>
#include <string>

#include "Vcrc32.h"
#include "Vcrc32_mutant.h"
#include "Vcrc32_mutant2.h"
#include "Vcrc32_mutant3.h"
#include "rtl/verilated_block.h"

namespace fabricsim::rtl {
namespace {

// Byte b of the beat in bits [8b+7:8b] of the W-byte port.
inline void put_bytes(QData& d, const uint8_t* p, int n) {
  d = 0;
  for (int b = 0; b < n; ++b) d |= static_cast<QData>(p[b]) << (8 * b);
}
inline void put_bytes(IData& d, const uint8_t* p, int n) {
  d = 0;
  for (int b = 0; b < n; ++b) d |= static_cast<IData>(p[b]) << (8 * b);
}
template <std::size_t N>
void put_bytes(VlWide<N>& d, const uint8_t* p, int n) {
  for (std::size_t w = 0; w < N; ++w) d[w] = 0;
  for (int b = 0; b < n; ++b)
    d[static_cast<std::size_t>(b) / 4] |= static_cast<EData>(p[b]) << (8 * (b % 4));
}

template <class V>
class Crc32RtlImpl final : public VerilatedAdapter<Crc32Rtl, V> {
  using VerilatedAdapter<Crc32Rtl, V>::b_;
  using VerilatedAdapter<Crc32Rtl, V>::kBytes;

 public:
  explicit Crc32RtlImpl(bool traceable) : VerilatedAdapter<Crc32Rtl, V>(traceable) { reset(); }

  void reset() override {
    b_.top().in_valid = 0;
    b_.reset_cycle();
  }
  uint32_t state() const override { return b_.top().crc_state; }

  link::Crc32BeatOut begin(const link::Crc32BeatIn& in) override {
    auto& t = b_.top();
    t.in_valid = in.valid;
    t.in_sof = in.sof;
    t.in_eof = in.eof;
    t.in_nbytes = static_cast<CData>(in.nbytes);
    put_bytes(t.in_data, in.data, kBytes);
    b_.eval_low();
    link::Crc32BeatOut out;
    out.fcs_valid = t.fcs_valid;
    out.fcs = t.fcs;
    return out;
  }
  void finish() override { b_.edge(); }
  void set_expected(const link::Crc32BeatOut& o, uint32_t state, bool mismatch) override {
    auto& t = b_.top();
    t.exp_fcs_valid = o.fcs_valid;
    t.exp_fcs = o.fcs;
    t.exp_crc_state = state;
    t.mismatch = mismatch;
  }
};

}  // namespace

std::unique_ptr<Crc32Rtl> Crc32Rtl::create(int mutant, bool traceable) {
  switch (mutant) {
    case 0:
      return std::make_unique<Crc32RtlImpl<Vcrc32>>(traceable);
    case 1:
      return std::make_unique<Crc32RtlImpl<Vcrc32_mutant>>(traceable);
    case 2:
      return std::make_unique<Crc32RtlImpl<Vcrc32_mutant2>>(traceable);
    case 3:
      return std::make_unique<Crc32RtlImpl<Vcrc32_mutant3>>(traceable);
    default:
      throw std::invalid_argument("CRC-32 RTL: mutant " + std::to_string(mutant) +
                                  " is not in [0, 3]");
  }
}

}  // namespace fabricsim::rtl
