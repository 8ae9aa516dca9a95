#!/usr/bin/env python3
"""FabricSim's HPCC beside htsim's (Broadcom/csg-htsim, sim/datacenter/htsim_hpcc) on the same
scenarios: RC over a lossless (PFC) k = 4 fat tree of 400G links whose switches stamp INT, 4 KiB
MTU, one ECMP path per flow (htsim_peer.py builds both alike).

  testbenches/peers/htsim_hpcc.py --htsim PATH/htsim_hpcc [--fabricsim build/fabricsim]
      [--senders 4] [--size-mib 4] [--permutations 4] [--tolerance 0.05]

FabricSim runs nic.cc=hpcc with htsim's parameters (hpcc.cpp: eta 0.95, max stage 5, W_AI one
packet, no rate floor, T fixed at 12 us): profile custom with base_rtt 12us, the one parameter
htsim fixes where FabricSim's profiles derive it from the fabric. htsim's switch queues
(-queue_type lossless_input) are the ones that stamp INT.

1. N-to-1 incast of S each at t = 0 to host 0: first, median and last flow completion of both;
   the last must agree within --tolerance (default 5%).
2. Random permutations of S per pair: mean and max FCT of both (reported, not judged).

Where they differ, and why (docs/peers.md): htsim keeps the INT stack of a flow's first ACK as
its reference for good (hpcc.cpp never updates _link_info after it), so its txRate is the
average since the flow began and its queue term min(q, the first ACK's q); the paper (and
FabricSim) compare each ACK with the previous one. Its first flows finish earlier and its last
at about the same time.

Exit 0 when the incast agrees, 1 when not, 2 on bad input (a missing binary).
"""
import sys

from htsim_peer import arguments, compare

HTSIM_PARAMETERS = ["nic.cc=hpcc", "nic.hpcc.profile=custom", "nic.hpcc.max_stage=5",
                    "nic.hpcc.ai_bytes=4096B", "nic.hpcc.min_rate=0bps", "nic.hpcc.base_rtt=12us"]


def main():
    a = arguments(__doc__, "htsim_hpcc", 0.05, senders=4, size_mib=4)
    return compare(a, "htsim_hpcc", HTSIM_PARAMETERS, "PFC, HPCC")


if __name__ == "__main__":
    sys.exit(main())
