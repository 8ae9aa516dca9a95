#include "rtl/cell_alloc_rtl.h"

#include <stdexcept>
#include <string>
#include <type_traits>

#include "Vcell_alloc.h"
#include "Vcell_alloc_mutant.h"
#include "rtl/verilated_block.h"

namespace fabricsim::rtl {
namespace {

template <class V>
class CellAllocatorRtlImpl final : public VerilatedAdapter<CellAllocatorRtl, V> {
  using VerilatedAdapter<CellAllocatorRtl, V>::b_;
  using VerilatedAdapter<CellAllocatorRtl, V>::kCells;

 public:
  explicit CellAllocatorRtlImpl(bool traceable) : VerilatedAdapter<CellAllocatorRtl, V>(traceable) {
    reset();
  }

  void reset() override {
    auto& t = b_.top();
    t.alloc_req = 0;
    t.free_req = 0;
    b_.reset_cycle();
  }
  uint32_t free_count() const override { return b_.top().free_count; }

  sw::CellAllocOut begin(const sw::CellAllocIn& in) override {
    if (in.free_req && in.free_id >= kCells)  // not expressible on the IDW-bit port
      throw std::out_of_range("RTL cell allocator: free_id " + std::to_string(in.free_id) +
                              " >= " + std::to_string(kCells));
    auto& t = b_.top();
    t.alloc_req = in.alloc_req;
    t.free_req = in.free_req;
    t.free_id = static_cast<std::remove_reference_t<decltype(t.free_id)>>(in.free_id);
    b_.eval_low();
    sw::CellAllocOut out;
    out.alloc_ok = t.alloc_ok;
    out.alloc_id = t.alloc_id;
    out.free_err = t.free_err;
    return out;
  }
  void finish() override { b_.edge(); }
  void set_expected(const sw::CellAllocOut& o, uint32_t free_count, bool mismatch) override {
    auto& t = b_.top();
    t.exp_alloc_ok = o.alloc_ok;
    t.exp_alloc_id = static_cast<std::remove_reference_t<decltype(t.exp_alloc_id)>>(o.alloc_id);
    t.exp_free_err = o.free_err;
    t.exp_free_count = static_cast<std::remove_reference_t<decltype(t.exp_free_count)>>(free_count);
    t.exp_occupancy =
        static_cast<std::remove_reference_t<decltype(t.exp_occupancy)>>(kCells - free_count);
    t.mismatch = mismatch;
  }
};

}  // namespace

std::unique_ptr<CellAllocatorRtl> CellAllocatorRtl::create(bool mutant, bool traceable) {
  if (mutant) return std::make_unique<CellAllocatorRtlImpl<Vcell_alloc_mutant>>(traceable);
  return std::make_unique<CellAllocatorRtlImpl<Vcell_alloc>>(traceable);
}

}  // namespace fabricsim::rtl
