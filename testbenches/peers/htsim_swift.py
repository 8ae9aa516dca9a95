#!/usr/bin/env python3
"""FabricSim's Swift beside htsim's (Broadcom/csg-htsim, sim/datacenter/htsim_swift) on the same
scenarios: a k = 4 fat tree of 400G links, 4 KiB MTU, one ECMP path per flow.

  testbenches/peers/htsim_swift.py --htsim PATH/htsim_swift [--fabricsim build/fabricsim]
      [--senders 15] [--size-mib 2] [--permutations 4] [--tolerance 0.05]

htsim_swift's fabric is fixed by its main_swift.cpp: 1 us per link, no switch latency, drop-tail
queues of -q packets (RANDOM: a 10% drop chance near the top). Here -q 1000 (4 MB a port, far
above what Swift queues), so nothing drops and the two fabrics, htsim's lossy one and FabricSim's
lossless one, carry the same traffic. FabricSim's links are set to 124 m and no FEC latency
(0.62 us) so that a path through five switches (0.46 us each, port to port) takes what htsim's
six 1 us links take; paths through one or three switches are 0.3 and 0.14 us shorter.

FabricSim runs nic.cc=swift with what htsim's swift.cpp does (profile htsim's values) less the
hop scaling: profile custom, the target from zero (20 us + flow scaling) and hop_scale 0, since
htsim's routes are cloned with a hop count of 0 (route.cpp: Route::clone()), so its h x hops
term is always 0. Both start at 15 packets (-cwnd).

1. N-to-1 incast of S each at t = 0 to host 0: first, median and last flow completion of both;
   the last must agree within --tolerance (default 5%).
2. Random permutations of S per pair: mean and max FCT of both (reported, not judged).

Where they differ, and why (docs/peers.md): htsim counts cwnd in whole bytes and its flow
scaling in whole packets (below one packet the full 100 us range); its ACKs are TCP-like (with
fast recovery on three duplicates); FabricSim's RC ACKs every packet and recovers by go-back-N.

Exit 0 when the incast agrees, 1 when not, 2 on bad input (a missing binary).
"""
import sys

from htsim_peer import arguments, compare

# (htsim_swift takes a flow's size from -flowsize, in packets, not from the connection matrix.)
HTSIM_FLAGS = ["-linkspeed", "400000", "-mtu", "4096", "-q", "1000", "-end", "100000",
               "-cwnd", "15", "-flowsize"]
FABRIC = ["link.length_m=124", "link.phy.fec_latency=0ns"]
HTSIM_PARAMETERS = FABRIC + ["nic.cc=swift", "nic.swift.profile=custom",
                             "nic.swift.target_from=zero", "nic.swift.hop_scale=0ns"]


def main():
    a = arguments(__doc__, "htsim_swift", 0.05)
    flags = HTSIM_FLAGS + [str((a.size_mib << 20) // 4096)]
    return compare(a, "htsim_swift", HTSIM_PARAMETERS,
                   "1 us links (FabricSim: 0.62 us + 0.46 us switches), Swift", flags)


if __name__ == "__main__":
    sys.exit(main())
