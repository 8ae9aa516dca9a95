// Ring collectives over the rails (NCCL's ring on rail-optimized servers): one flat ring over all
// n = G N ranks per channel, each scale-up domain's G ranks consecutive in it, and the channels'
// rings rotated so that each channel leaves every domain through a different GPU's NIC and enters
// the next domain on the same rail (rail_rings, collective.h: the rule, and the one cross-rail hop
// of G = 2 with N odd). Channel x carries its piece of every block on QP x, as allreduce_ring's
// channels do, around its own ring. Refused without scale-up domains or with domains of unequal
// sizes in the communicator (as allreduce_hierarchical).
//   allreduce_ring_rails: 2 (n - 1) steps (reduce-scatter, then all-gather), bus factor 2(n-1)/n;
//   reducescatter_ring_rails, allgather_ring_rails: n - 1 steps, bus factor (n-1)/n.
// Named after the ring they build on (allreduce_ring...) and what they add (the rail rotation).
//
// Closed form (C channels, C a multiple of G; per-GPU NIC rate B_nic and scale-up port rate B_up
// each way): a GPU is the exit of C/G channels, so its NIC carries C/G channels' streams, and it
// sends over the scale-up switch on the other C (G - 1)/G; a channel's rate is
// r = min(B_nic G/C, B_up G/(C (G - 1))) and the ring all-reduce's busbw is C r =
// G min(B_nic, B_up/(G - 1)). Pipelined in m slices of w bytes per step (workload.chunk) with the
// NIC the limit and the slack to keep it busy, its exit GPUs stream every slice back to back:
//   T = 2 (n - 1) m w/B_nic + a_nic (+ the sender's completion tail on a real NIC),
// a ring all-reduce's bytes 2(n-1)/n S/C per channel at the channel's NIC rate (exact on the
// unit test's fluid network, 0.1% on the NIC model); with the scale-up ports the limit, every
// port busy from the start: T = (G - 1)/G 2(n - 1)/n S/B_up + a_up (0.001%). Shipped presets
// (h100_nvlink4, B_up 450 GB/s, G = 8, C = 8): 400G NICs: busbw 8 min(50, 64.3) = 400 GB/s at line
// rate (the NIC bound; 394 GB/s of payload with RoCE's headers at MTU 4096); 800G NICs: 8 x 64.3 =
// 514 GB/s (the NVLink bound). docs/validation.md's scale_up_rails rows check both.
#include <string>

#include "models/workload/collective.h"

namespace fabricsim::workload {

namespace {

// `steps` steps of the ring pass over every channel's rail ring; step k at ring index i sends
// block (i - k + shift) mod n (shift -1: reduce-scatter; 0: all-gather and all-reduce).
CollectiveEntry rails(const std::string& what, bool all_reduce, int shift) {
  CollectiveEntry e;
  e.description = what +
                  " over the rails: one ring over every rank per channel, each scale-up domain's "
                  "ranks consecutive, the channels' rings rotated so that each leaves a domain "
                  "through a different GPU's NIC, on the same rail as it enters the next";
  e.bus_factor = [all_reduce](int n) { return (all_reduce ? 2.0 : 1.0) * (n - 1) / n; };
  e.refuse = [](const CollectiveCall& c) {
    std::string why;
    domain_groups(c, why);
    return why;
  };
  e.build = [all_reduce, shift](ExecGraph& g, const CollectiveCall& c, const RankNodes& start,
                                RankNodes& done) {
    std::string why;
    const std::vector<std::vector<int>> rings = rail_rings(domain_groups(c, why), c.channels);
    const auto n = static_cast<int>(c.ranks.size());
    ring_pass(
        g, c, (all_reduce ? 2 : 1) * (n - 1),
        [&](int k, int i) {
          return piece(c.bytes, static_cast<uint64_t>(n),
                       static_cast<uint64_t>(((i - k + shift) % n + n) % n));
        },
        start, done, 0, &rings);
  };
  return e;
}

}  // namespace

// The three from one file: they differ only in their steps and blocks.
FABRICSIM_REGISTER_COLLECTIVE(allreduce_ring_rails) {
  registry.add("allreduce_ring_rails", rails("ring all-reduce", true, 0));
  registry.add("reducescatter_ring_rails", rails("ring reduce-scatter", false, -1));
  registry.add("allgather_ring_rails", rails("ring all-gather", false, 0));
}

}  // namespace fabricsim::workload
