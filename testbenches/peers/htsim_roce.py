#!/usr/bin/env python3
"""FabricSim beside htsim's RoCE model (Broadcom/csg-htsim, sim/datacenter/htsim_roce) on the same
scenarios: go-back-N RC over a lossless (PFC) k = 4 fat tree of 400G links, no congestion control
(htsim_roce has none; FabricSim runs nic.cc=none), 4 KiB MTU, one ECMP path per flow.

  testbenches/peers/htsim_roce.py --htsim PATH/htsim_roce [--fabricsim build/fabricsim]
      [--senders 15] [--size-mib 2] [--permutations 4]

htsim is not part of this project: point --htsim at an htsim_roce you built from its repository
(the fat tree and latencies both build alike: htsim_peer.py).

1. N-to-1 incast of S each at t = 0 to host 0: first, median and last flow completion of both,
   and their ratio; the last must agree within --tolerance (default 2%: htsim counts a flow
   finished at its last ACK, FabricSim at its send completion, a CQE written over PCIe later).
   htsim's roce.cpp seeds its random numbers from the clock (srand(time(NULL))), so the order in
   which its flows finish, and so its median, changes from run to run; the first and the last
   do not (the bottleneck is work-conserving).
2. Random permutations of S per pair: mean and max FCT of both (reported, not judged: the two
   simulators hash flows onto paths differently, so collisions differ run by run).

Exit 0 when the incast agrees, 1 when not, 2 on bad input (a missing binary).
"""
import sys

from htsim_peer import arguments, compare


def main():
    a = arguments(__doc__, "htsim_roce", 0.02)
    return compare(a, "htsim_roce", ["nic.cc=none"], "PFC, no CC")


if __name__ == "__main__":
    sys.exit(main())
