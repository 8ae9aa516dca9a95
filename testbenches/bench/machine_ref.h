// The machine reference's throughput-bound kernel, shared by machine_ref_bench (BM_Parallel) and
// `fabricsim regress` (the reference a speed case's wall time is divided by, measured in the same
// run): eight independent add/shift/xor chains keep several execution units busy at once, as the
// simulator does, so the step slows down when other tenants share the cores
// (docs/performance.md, "Why the figures move with the hour"; docs/regressions.md).
#pragma once

#include <cstdint>

namespace fabricsim::bench {

struct ParallelChains {
  uint64_t a0 = 1, a1 = 2, a2 = 3, a3 = 4, a4 = 5, a5 = 6, a6 = 7, a7 = 8;

  // `steps` steps of all eight chains; the empty asm keeps them in registers and unvectorised.
  void run(uint64_t steps) {
    uint64_t b0 = a0, b1 = a1, b2 = a2, b3 = a3, b4 = a4, b5 = a5, b6 = a6, b7 = a7;
    for (uint64_t i = 0; i < steps; ++i) {
#define FABRICSIM_STEP(a) a = (a + (a << 3)) ^ (a >> 5)
      FABRICSIM_STEP(b0);
      FABRICSIM_STEP(b1);
      FABRICSIM_STEP(b2);
      FABRICSIM_STEP(b3);
      FABRICSIM_STEP(b4);
      FABRICSIM_STEP(b5);
      FABRICSIM_STEP(b6);
      FABRICSIM_STEP(b7);
#undef FABRICSIM_STEP
      asm volatile(""
                   : "+r"(b0), "+r"(b1), "+r"(b2), "+r"(b3), "+r"(b4), "+r"(b5), "+r"(b6),
                     "+r"(b7));
    }
    a0 = b0, a1 = b1, a2 = b2, a3 = b3, a4 = b4, a5 = b5, a6 = b6, a7 = b7;
  }
  uint64_t digest() const {
    return a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7;
  }
};

}  // namespace fabricsim::bench
