#include "rtl/psn_tracker_rtl.h"

#include <stdexcept>
#include <string>

#include "Vpsn_tracker.h"
#include "Vpsn_tracker_mutant.h"
#include "Vpsn_tracker_mutant2.h"
#include "Vpsn_tracker_mutant3.h"
#include "Vpsn_tracker_mutant4.h"
#include "rtl/verilated_block.h"

namespace fabricsim::rtl {
namespace {

template <class V>
class PsnTrackerRtlImpl final : public VerilatedAdapter<PsnTrackerRtl, V> {
  using VerilatedAdapter<PsnTrackerRtl, V>::b_;

 public:
  PsnTrackerRtlImpl(const nic::PsnTrackerParams& p, bool traceable)
      : VerilatedAdapter<PsnTrackerRtl, V>(traceable) {
    reset(p);
  }

  void reset(const nic::PsnTrackerParams& p) override {
    nic::check_psn_tracker_params(p);
    auto& t = b_.top();
    t.mode = static_cast<CData>(p.mode);
    t.range = static_cast<SData>(p.range);
    t.ack_every = p.ack_every;
    t.first_psn = p.first_psn & 0xFFFFFF;
    t.in_valid = 0;
    t.in_read = 0;
    t.in_psn = 0;
    t.in_flag = 0;
    t.in_psns = 1;
    b_.reset_cycle();
  }

  uint32_t expected() const override { return b_.top().epsn; }
  uint64_t ahead(int w) const override {
    if (w < 0 || w >= kWords) return 0;
    const auto& a = b_.top().ahead;  // VlWide<8>: 32-bit words, least significant first
    return uint64_t{a[2 * w]} | (uint64_t{a[2 * w + 1]} << 32);
  }
  uint32_t unacked() const override { return b_.top().unacked; }
  bool nak_sent() const override { return b_.top().nak_sent; }

  nic::PsnTrackerOut begin(const nic::PsnTrackerIn& in) override {
    auto& t = b_.top();
    t.in_valid = in.valid;
    t.in_read = in.read;
    t.in_psn = in.psn & 0xFFFFFF;
    t.in_flag = in.flag;
    t.in_psns = in.psns & 0xFFFFFF;
    b_.eval_low();
    nic::PsnTrackerOut o;
    o.reply = t.reply;
    o.psn = t.out_psn;
    o.placed = t.placed;
    o.read = t.read_taken;
    o.duplicate = t.duplicate;
    o.beyond = t.beyond;
    o.out_of_order = t.out_of_order;
    o.trimmed = t.trimmed;
    o.delivered = t.delivered;
    o.cum = t.cum;
    o.bitmap = t.bitmap;
    o.block = t.block;
    return o;
  }
  void finish() override { b_.edge(); }

  void set_expected(const nic::PsnTrackerOut& o, uint32_t epsn, const uint64_t* ahead,
                    uint32_t unacked, bool nak_sent, bool mismatch) override {
    auto& t = b_.top();
    t.exp_reply = o.reply;
    t.exp_out_psn = o.psn;
    t.exp_placed = o.placed;
    t.exp_read_taken = o.read;
    t.exp_duplicate = o.duplicate;
    t.exp_beyond = o.beyond;
    t.exp_out_of_order = o.out_of_order;
    t.exp_trimmed = o.trimmed;
    t.exp_delivered = static_cast<SData>(o.delivered);
    t.exp_cum = o.cum;
    t.exp_bitmap = o.bitmap;
    t.exp_block = static_cast<CData>(o.block);
    t.exp_epsn = epsn;
    for (int w = 0; w < kWords; ++w) {
      t.exp_ahead[2 * w] = static_cast<uint32_t>(ahead[w]);
      t.exp_ahead[2 * w + 1] = static_cast<uint32_t>(ahead[w] >> 32);
    }
    t.exp_unacked = unacked;
    t.exp_nak_sent = nak_sent;
    t.mismatch = mismatch;
  }

 private:
  using nic::PsnTrackerIf::kWords;
};

}  // namespace

std::unique_ptr<PsnTrackerRtl> PsnTrackerRtl::create(const nic::PsnTrackerParams& p, int mutant,
                                                     bool traceable) {
  nic::check_psn_tracker_params(p);
  switch (mutant) {
    case 0:
      return std::make_unique<PsnTrackerRtlImpl<Vpsn_tracker>>(p, traceable);
    case 1:
      return std::make_unique<PsnTrackerRtlImpl<Vpsn_tracker_mutant>>(p, traceable);
    case 2:
      return std::make_unique<PsnTrackerRtlImpl<Vpsn_tracker_mutant2>>(p, traceable);
    case 3:
      return std::make_unique<PsnTrackerRtlImpl<Vpsn_tracker_mutant3>>(p, traceable);
    case 4:
      return std::make_unique<PsnTrackerRtlImpl<Vpsn_tracker_mutant4>>(p, traceable);
    default:
      throw std::invalid_argument("receive tracker RTL: mutant " + std::to_string(mutant) +
                                  " is not in [0, " + std::to_string(kMutants) + "]");
  }
}

}  // namespace fabricsim::rtl
