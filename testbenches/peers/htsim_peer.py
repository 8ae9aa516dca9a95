"""What the htsim peer scripts share (htsim_roce.py, htsim_hpcc.py, htsim_swift.py): the k = 4 fat tree of 400G
lossless links both simulators build alike, the flows as each takes them, and the comparison
(an N-to-1 incast judged by its last completion, random permutations reported).

htsim (Broadcom/csg-htsim, sim/datacenter) is not part of this project: the scripts run binaries
built from its repository. Link and switch latencies are set alike (htsim: -hop_latency 0.115 us
per link, FabricSim's FEC 100 ns + 3 m of cable; -switch_latency 0.46 us, the 51.2T chip's
port-to-port time).
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


# htsim_roce's and htsim_hpcc's command line: the k = 4 fat tree of 400G lossless links with
# FabricSim's latencies.
LOSSLESS = ["-linkspeed", "400000", "-mtu", "4096", "-queue_type", "lossless_input", "-end",
            "100000", "-hop_latency", "0.115", "-switch_latency", "0.46", "-seed", "1", "-strat",
            "ecmp_host", "-paths", "1"]


def htsim_fcts(htsim, tmp, name, flows, size, flags=None):
    """Completion times (us) of an htsim datacenter binary's flows (htsim_roce, htsim_hpcc,
    htsim_swift), all starting at t = 0, on a k = 4 fat tree; `flags`: the rest of its command
    line (default LOSSLESS)."""
    cm = os.path.join(tmp, name + ".cm")
    with open(cm, "w") as f:
        f.write(f"Nodes {HOSTS}\nConnections {len(flows)}\n")
        f.writelines(f"{s}->{d} start 0.000000 size {size}\n" for s, d in flows)
    cmd = [htsim, "-tm", cm, "-nodes", str(HOSTS)] + (LOSSLESS if flags is None else flags)
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    done = [float(m.group(1)) for m in re.finditer(r"finished at ([0-9.]+)", p.stdout)]
    if p.returncode != 0 or len(done) != len(flows):
        sys.exit(f"{os.path.basename(htsim)}: exit {p.returncode}, {len(done)} of {len(flows)} "
                 f"flows finished:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return sorted(done)


def fabricsim_fcts(fabricsim, tmp, name, flows, size, cc_sets):
    """Flow completion times (us) of FabricSim's messages, all posted at t = 0; `cc_sets`: the
    congestion control's --set overrides."""
    path = os.path.join(tmp, name + ".txt")
    with open(path, "w") as f:
        f.writelines(f"0 {s} {d} {size}B write tc=3\n" for s, d in flows)
    out = os.path.join(tmp, name)
    sets = ["topology.kind=fat_tree", "topology.k=4", "traffic.pattern=messages",
            f"traffic.messages.file={path}", "sim.duration=1us", "sim.warmup=0ns",
            "stats.occupancy_interval=0ns", "sim.traffic_thread=false"] + list(cc_sets)
    cmd = [fabricsim, "run", NIC400, "--out", out] + [x for s in sets for x in ("--set", s)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"fabricsim: exit {p.returncode}:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    with open(os.path.join(out, "fct.csv")) as f:
        return sorted(float(r["fct_ns"]) / 1e3 for r in csv.DictReader(f))


def arguments(doc, binary, tolerance, senders=15, size_mib=2):
    """The command line both scripts share (--htsim names the htsim binary)."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim", required=True, help=f"a built {binary}")
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "build", "fabricsim"),
                    help="default: build/fabricsim")
    ap.add_argument("--senders", type=int, default=senders,
                    help=f"incast senders (default {senders})")
    ap.add_argument("--size-mib", type=int, default=size_mib,
                    help=f"bytes per flow in MiB (default {size_mib})")
    ap.add_argument("--permutations", type=int, default=4, help="random permutations (default 4)")
    ap.add_argument("--tolerance", type=float, default=tolerance,
                    help=f"incast: the last completions' relative difference allowed ({tolerance})")
    return ap.parse_args()


def compare(a, label, cc_sets, what, htsim_flags=None):
    """The incast and the permutations of both; 0 when the last incast completions agree within
    a.tolerance, 1 when not, 2 on bad input. `label`: the htsim binary's name, `what`: the line
    naming the scenario's transport; `htsim_flags`: htsim_fcts' `flags`, `cc_sets` then also
    carrying FabricSim's fabric overrides."""
    for flag, path in (("--htsim", a.htsim), ("--fabricsim", a.fabricsim)):
        if not os.access(path, os.X_OK):
            print(f"{flag} {path}: not an executable", file=sys.stderr)
            return 2
    if not 1 <= a.senders < HOSTS:
        print(f"--senders {a.senders}: expected 1-{HOSTS - 1}", file=sys.stderr)
        return 2
    size = a.size_mib << 20
    with tempfile.TemporaryDirectory() as tmp:
        flows = [(s, 0) for s in range(1, a.senders + 1)]
        h = htsim_fcts(a.htsim, tmp, "incast", flows, size, htsim_flags)
        f = fabricsim_fcts(a.fabricsim, tmp, "incast", flows, size, cc_sets)
        print(f"{a.senders}-to-1 incast of {a.size_mib} MiB, k = 4 fat tree, 400G, {what}")
        print(f"{'FCT (us)':<10}{label:>12}{'FabricSim':>12}{'ratio':>8}")
        for row, i in (("first", 0), ("median", len(h) // 2), ("last", -1)):
            print(f"{row:<10}{h[i]:>12.2f}{f[i]:>12.2f}{f[i] / h[i]:>8.4f}")
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
            h = htsim_fcts(a.htsim, tmp, f"perm{k}", pf, size, htsim_flags)
            f = fabricsim_fcts(a.fabricsim, tmp, f"perm{k}", pf, size, cc_sets)
            print(f"{k:<6}{statistics.mean(h):>12.2f}{statistics.mean(f):>16.2f}{h[-1]:>12.2f}"
                  f"{f[-1]:>15.2f}")
    print(f"\nincast: last completions {'agree' if ok else 'DIFFER'} within {a.tolerance:.0%}")
    return 0 if ok else 1
