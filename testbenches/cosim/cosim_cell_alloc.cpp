// Co-simulation of the cell allocator: sw::CellAllocator against the Verilated cell_alloc
// (CELLS = rtl::CellAllocatorRtl::kCells). Phases: directed (fill to empty list, refused
// allocations, drain, double frees, alloc + free every cycle), then random and constrained-random
// fill / drain / churn phases; frees mostly pick an allocated id (constrained), sometimes any id.
#include <memory>
#include <vector>

#include "models/switch/cell_allocator.h"
#include "rtl/cell_alloc_rtl.h"
#include "testbenches/cosim/benches.h"

namespace fabricsim::cosim {
namespace {

struct Phase {
  int alloc8, free8;  // request probabilities x 8
  double bad_free;    // probability that a free names a random id (often not allocated)
  uint64_t cycles;
  bool reset;
};

Phase directed(int i, uint32_t cells) {
  switch (i) {
    case 0:
      return {8, 0, 0.0, cells + 200, true};  // fill, then refused allocations
    case 1:
      return {0, 8, 0.0, cells + 50, false};  // drain (frees in random order)
    case 2:
      return {0, 8, 1.0, 200, false};  // double frees / bad ids: all rejected
    case 3:
      return {8, 8, 0.0, 4 * cells, true};  // alloc + free every cycle
    default:
      return {4, 4, 0.02, 4 * cells, false};
  }
}
constexpr int kDirected = 4;

Phase random_phase(Rng& rng) {
  Phase p{};
  switch (rng.below(4)) {
    case 0:
      p.alloc8 = 7, p.free8 = 1;
      break;  // fill
    case 1:
      p.alloc8 = 1, p.free8 = 7;
      break;  // drain
    case 2:
      p.alloc8 = 6, p.free8 = 6;
      break;  // churn
    default:
      p.alloc8 = static_cast<int>(rng.below(9));
      p.free8 = static_cast<int>(rng.below(9));
  }
  p.bad_free = rng.bernoulli(0.3) ? 0.05 : 0.0;
  p.cycles = 500 + rng.below(5000);
  p.reset = rng.bernoulli(0.1);
  return p;
}

}  // namespace

RunStats run_cell_alloc(const Options& opt, const TraceSpec& trace, Checker& ck, Coverage& cov) {
  Rng rng = Rng::derive(opt.seed, "cosim.cell_alloc");
  TraceWindow tw(trace);
  auto rtl = rtl::CellAllocatorRtl::create(opt.mutant, tw.enabled());
  const uint32_t cells = rtl->cells();
  sw::CellAllocator model(cells);

  const int b_alloc = cov.add("allocation granted");
  const int b_refused = cov.add("allocation refused (list empty)");
  const int b_free = cov.add("free accepted");
  const int b_bad = cov.add("free rejected (not allocated)");
  const int b_both = cov.add("allocate and free in one cycle");
  const int b_full = cov.add("all cells allocated");
  const int b_empty = cov.add("all cells free again after use");
  const int b_recycled = cov.add("recycled id allocated (from the ring)");
  const int b_wrap = cov.add("free ring wrapped");
  const int b_next = cov.add("id freed into an empty list, allocated next cycle");

  std::vector<uint32_t> held;  // allocated ids (the bench's own view, for constrained frees)
  std::vector<uint8_t> ever(cells, 0);
  uint64_t recycled = 0;
  bool used = false;
  bool freed_into_empty = false;
  RunStats st;
  int phase_index = 0;

  while (rtl->cycle() < opt.cycles) {
    const Phase ph = phase_index < kDirected ? directed(phase_index, cells) : random_phase(rng);
    ++phase_index;
    if (ph.reset) {
      tw.at(rtl->cycle(), *rtl);
      rtl->reset();
      model.reset();
      held.clear();
      std::fill(ever.begin(), ever.end(), 0);
      recycled = 0;
      used = freed_into_empty = false;
    }
    const uint64_t end = rtl->cycle() + ph.cycles;
    while (rtl->cycle() < end && rtl->cycle() < opt.cycles) {
      const uint64_t c = rtl->cycle();
      tw.at(c, *rtl);
      sw::CellAllocIn in;
      in.alloc_req = static_cast<int>(rng.below(8)) < ph.alloc8;
      in.free_req = static_cast<int>(rng.below(8)) < ph.free8;
      size_t pick = 0;
      bool constrained = false;
      if (in.free_req) {
        if (!held.empty() && !rng.bernoulli(ph.bad_free)) {
          pick = rng.below(held.size());
          in.free_id = held[pick];
          constrained = true;
        } else {
          in.free_id = static_cast<uint32_t>(rng.below(cells));
        }
      }
      const uint32_t exp_free = model.free_count();
      ck.input(c, "alloc_req", in.alloc_req);  // for the mismatch report
      ck.input(c, "free_req", in.free_req);
      ck.input(c, "free_id", in.free_id);
      const sw::CellAllocOut exp = model.tick(in);
      const sw::CellAllocOut got = rtl->begin(in);

      bool bad = false;
      bad |= !ck.check(c, "alloc_ok", -1, exp.alloc_ok, got.alloc_ok);
      if (exp.alloc_ok) bad |= !ck.check(c, "alloc_id", -1, exp.alloc_id, got.alloc_id);
      bad |= !ck.check(c, "free_err", -1, exp.free_err, got.free_err);
      bad |= !ck.check(c, "free_count", -1, exp_free, rtl->free_count());
      bad |= !ck.check(c, "occupancy", -1, cells - exp_free, rtl->occupancy());
      if (tw.open()) rtl->set_expected(exp, exp_free, bad);
      rtl->finish();

      // Coverage and the bench's view, from the model.
      if (in.alloc_req) cov.hit(exp.alloc_ok ? b_alloc : b_refused);
      if (exp.alloc_ok && freed_into_empty) cov.hit(b_next);
      freed_into_empty = in.free_req && !exp.free_err && exp_free == 0 && !exp.alloc_ok;
      if (in.free_req) cov.hit(exp.free_err ? b_bad : b_free);
      if (exp.alloc_ok && in.free_req && !exp.free_err) cov.hit(b_both);
      if (exp.alloc_ok) {
        ++st.transactions;
        used = true;
        if (ever[exp.alloc_id]) {
          cov.hit(b_recycled);
          if (++recycled % cells == 0) cov.hit(b_wrap);
        }
        ever[exp.alloc_id] = 1;
      }
      if (in.free_req && !exp.free_err) {
        ++st.transactions;
        if (constrained) {
          held[pick] = held.back();
          held.pop_back();
        } else {  // a random id that happened to be allocated
          for (auto& h : held)
            if (h == in.free_id) {
              h = held.back();
              held.pop_back();
              break;
            }
        }
      }
      if (exp.alloc_ok) held.push_back(exp.alloc_id);
      if (model.free_count() == 0) cov.hit(b_full);
      if (used && model.free_count() == cells && exp_free != cells) cov.hit(b_empty);
    }
  }
  st.cycles = rtl->cycle();
  return st;
}

}  // namespace fabricsim::cosim
