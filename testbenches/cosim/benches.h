// The per-block benches behind cosim::blocks() (one file each: cosim_<block>.cpp), and helpers
// they share.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "models/common/rng.h"
#include "testbenches/cosim/cosim.h"

namespace fabricsim::rtl {
class Crc32Rtl;
class DcqcnRpRtl;
}  // namespace fabricsim::rtl
namespace fabricsim::nic {
struct DcqcnRpParams;
}  // namespace fabricsim::nic

namespace fabricsim::cosim {

RunStats run_islip(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov);
RunStats run_cell_alloc(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov);
RunStats run_crc32(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov);
RunStats run_credit(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov);
RunStats run_dcqcn(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov);
RunStats run_psn(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov);

// The same benches on an RTL made elsewhere (a user's block, testbenches/cosim/byo.h).
using Crc32Factory = std::function<std::unique_ptr<rtl::Crc32Rtl>(bool traceable)>;
using DcqcnFactory =
    std::function<std::unique_ptr<rtl::DcqcnRpRtl>(const nic::DcqcnRpParams&, bool traceable)>;
RunStats run_crc32_on(const Crc32Factory& make, const Options& opt, const TraceSpec& trace,
                      Checker& ck, Coverage& cov);
RunStats run_dcqcn_on(const DcqcnFactory& make, const Options& opt, const TraceSpec& trace,
                      Checker& ck, Coverage& cov);

// Opens the waveform of an RTL adapter once the cycle count reaches t.from and closes it at
// t.to (call at the start of every cycle, before its inputs are applied).
class TraceWindow {
 public:
  explicit TraceWindow(const TraceSpec& t) : t_(t) {}
  bool enabled() const { return !t_.path.empty(); }
  template <class Rtl>
  void at(uint64_t cycle, Rtl& rtl) {
    if (t_.path.empty()) return;
    if (!open_ && !done_ && cycle >= t_.from && cycle < t_.to) {
      rtl.open_trace(t_.path);
      open_ = true;
    } else if (open_ && cycle >= t_.to) {
      rtl.close_trace();
      open_ = false;
      done_ = true;
    }
  }
  bool open() const { return open_; }

 private:
  TraceSpec t_;
  bool open_ = false;
  bool done_ = false;
};

// A random 64-bit word whose bits are set with probability eighths / 8 each (0..8), from three
// draws: the binary expansion of eighths / 8 applied as OR (1 bit) / AND (0 bit), LSB first.
inline uint64_t random_word(Rng& rng, int eighths) {
  if (eighths <= 0) return 0;
  if (eighths >= 8) return ~0ull;
  uint64_t w = 0;
  for (int b = 0; b < 3; ++b)
    w = ((eighths >> b) & 1) ? (w | rng.next_u64()) : (w & rng.next_u64());
  return w;
}

}  // namespace fabricsim::cosim
