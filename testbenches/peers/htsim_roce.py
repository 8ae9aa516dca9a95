#!/usr/bin/env python3
"""FabricSim beside htsim's RoCE model (Broadcom/csg-htsim, sim/datacenter/htsim_roce) on the same
scenarios: go-back-N RC over a lossless (PFC) k = 4 fat tree of 400G links, no congestion control
(htsim_roce has none; FabricSim runs nic.cc=none), 4 KiB MTU, one ECMP path per flow.

  testbenches/peers/htsim_roce.py --htsim PATH/htsim_roce [--fabricsim build/fabricsim]
      [--senders 15] [--size-mib 2] [--permutations 4]

htsim is not part of this project: point --htsim at an htsim_roce you built from its repository.
The link and switch latencies are set alike (htsim: -hop_latency 0.115 us per link, FabricSim's
FEC 100 ns + 3 m of cable; -switch_latency 0.46 us, the 51.2T chip's port-to-port time).

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
import argparse
import csv
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NIC400 = os.path.join(ROOT, "configs", "nic_400g.yaml")
HOSTS = 16  # k = 4 fat tree


def htsim_fcts(htsim, tmp, name, flows, size):
    """Completion times (us) of htsim_roce's flows, all starting at t = 0."""
    cm = os.path.join(tmp, name + ".cm")
    with open(cm, "w") as f:
        f.write(f"Nodes {HOSTS}\nConnections {len(flows)}\n")
        f.writelines(f"{s}->{d} start 0.000000 size {size}\n" for s, d in flows)
    cmd = [htsim, "-tm", cm, "-nodes", str(HOSTS), "-linkspeed", "400000", "-mtu", "4096",
           "-queue_type", "lossless_input", "-end", "100000", "-hop_latency", "0.115",
           "-switch_latency", "0.46", "-seed", "1", "-strat", "ecmp_host", "-paths", "1"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    done = [float(m.group(1)) for m in re.finditer(r"finished at ([0-9.]+)", p.stdout)]
    if p.returncode != 0 or len(done) != len(flows):
        sys.exit(f"htsim_roce: exit {p.returncode}, {len(done)} of {len(flows)} flows finished:\n"
                 f"{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return sorted(done)


def fabricsim_fcts(fabricsim, tmp, name, flows, size):
    """Flow completion times (us) of FabricSim's messages, all posted at t = 0."""
    path = os.path.join(tmp, name + ".txt")
    with open(path, "w") as f:
        f.writelines(f"0 {s} {d} {size}B write tc=3\n" for s, d in flows)
    out = os.path.join(tmp, name)
    sets = ["topology.kind=fat_tree", "topology.k=4", "nic.cc=none", "traffic.pattern=messages",
            f"traffic.messages.file={path}", "sim.duration=1us", "sim.warmup=0ns",
            "stats.occupancy_interval=0ns", "sim.traffic_thread=false"]
    cmd = [fabricsim, "run", NIC400, "--out", out] + [x for s in sets for x in ("--set", s)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"fabricsim: exit {p.returncode}:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    with open(os.path.join(out, "fct.csv")) as f:
        return sorted(float(r["fct_ns"]) / 1e3 for r in csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim", required=True, help="a built htsim_roce")
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "build", "fabricsim"),
                    help="default: build/fabricsim")
    ap.add_argument("--senders", type=int, default=15, help="incast senders (default 15)")
    ap.add_argument("--size-mib", type=int, default=2, help="bytes per flow in MiB (default 2)")
    ap.add_argument("--permutations", type=int, default=4, help="random permutations (default 4)")
    ap.add_argument("--tolerance", type=float, default=0.02,
                    help="incast: the last completions' relative difference allowed (0.02)")
    a = ap.parse_args()
    for what, path in (("--htsim", a.htsim), ("--fabricsim", a.fabricsim)):
        if not os.access(path, os.X_OK):
            print(f"{what} {path}: not an executable", file=sys.stderr)
            return 2
    if not 1 <= a.senders < HOSTS:
        print(f"--senders {a.senders}: expected 1-{HOSTS - 1}", file=sys.stderr)
        return 2
    size = a.size_mib << 20
    with tempfile.TemporaryDirectory() as tmp:
        flows = [(s, 0) for s in range(1, a.senders + 1)]
        h = htsim_fcts(a.htsim, tmp, "incast", flows, size)
        f = fabricsim_fcts(a.fabricsim, tmp, "incast", flows, size)
        print(f"{a.senders}-to-1 incast of {a.size_mib} MiB, k = 4 fat tree, 400G, PFC, no CC")
        print(f"{'FCT (us)':<10}{'htsim_roce':>12}{'FabricSim':>12}{'ratio':>8}")
        for label, i in (("first", 0), ("median", len(h) // 2), ("last", -1)):
            print(f"{label:<10}{h[i]:>12.2f}{f[i]:>12.2f}{f[i] / h[i]:>8.4f}")
        ok = abs(f[-1] / h[-1] - 1) <= a.tolerance
        rng = random.Random(7)
        print(f"\nrandom permutations of {a.size_mib} MiB a pair (ECMP: the paths differ)")
        print(f"{'seed':<6}{'htsim mean':>12}{'FabricSim mean':>16}{'htsim max':>12}"
              f"{'FabricSim max':>15}")
        for k in range(a.permutations):
            while True:
                perm = list(range(HOSTS))
                rng.shuffle(perm)
                if all(perm[i] != i for i in range(HOSTS)):
                    break
            pf = list(enumerate(perm))
            h = htsim_fcts(a.htsim, tmp, f"perm{k}", pf, size)
            f = fabricsim_fcts(a.fabricsim, tmp, f"perm{k}", pf, size)
            print(f"{k:<6}{statistics.mean(h):>12.2f}{statistics.mean(f):>16.2f}{h[-1]:>12.2f}"
                  f"{f[-1]:>15.2f}")
    print(f"\nincast: last completions {'agree' if ok else 'DIFFER'} within {a.tolerance:.0%}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
