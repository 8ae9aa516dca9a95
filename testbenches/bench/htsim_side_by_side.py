#!/usr/bin/env python3
"""FabricSim's speed beside htsim's (Broadcom/csg-htsim, sim/datacenter/htsim_roce) on one scenario
both simulate alike (issue #40 part 3): a random permutation on a k = 8 fat tree of 400G
lossless links (128 hosts, 80 switches), S bytes a pair, all flows at t = 0, go-back-N RC and
no congestion control in both (the mapping of testbenches/peers/htsim_peer.py and
docs/peers.md), and optionally an N-to-1 incast on the same fabric.

  testbenches/bench/htsim_side_by_side.py PATH/htsim_roce [--fabricsim build/fabricsim]
      [--models packet,cycle] [--repeat 3] [--size-mib 2] [--incast 0]

Each repetition runs htsim, then FabricSim with each switch model (`--set switch.model=...`),
one after another, so that a machine shared with other work loads them alike. Per run: CPU
time (user + system of the process, from wait4) and wall time of the whole run, set-up and
output included; the flows' completion times. Reported: each model's CPU time over htsim's
(per repetition, then the median), and both simulators' FCT mean, p99 and max (us).

Issue #40's target: FabricSim with packet switches at most 0.5x htsim's CPU time. Not run by
CTest (it needs an htsim build; docs/performance.md holds the figures). Exit 0 after a
measurement, 2 on bad input, 1 if a simulator fails or a flow does not finish.
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
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testbenches", "peers"))
from htsim_peer import LOSSLESS, NIC400  # noqa: E402  (the fabric both build alike)

K = 8
HOSTS = K ** 3 // 4


class Failed(Exception):
    pass


def timed(cmd, cwd=None):
    """Run cmd; (stdout, wall s, CPU s of the child: user + system)."""
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, text=True)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        so, se = out.read(), err.read()
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise Failed(f"{os.path.basename(cmd[0])}: exit {rc}:\n{so[-1500:]}{se[-1500:]}")
    return so, wall, ru.ru_utime + ru.ru_stime


def run_htsim(htsim, tmp, name, flows, size):
    cm = os.path.join(tmp, name + ".cm")
    with open(cm, "w") as f:
        f.write(f"Nodes {HOSTS}\nConnections {len(flows)}\n")
        f.writelines(f"{s}->{d} start 0.000000 size {size}\n" for s, d in flows)
    so, wall, cpu = timed([htsim, "-tm", cm, "-nodes", str(HOSTS)] + LOSSLESS, cwd=tmp)
    done = [float(m.group(1)) for m in re.finditer(r"finished at ([0-9.]+)", so)]
    if len(done) != len(flows):
        raise Failed(f"htsim: {len(done)} of {len(flows)} flows finished")
    return sorted(done), wall, cpu


def run_fabricsim(fabricsim, tmp, name, flows, size, model):
    path = os.path.join(tmp, name + ".txt")
    with open(path, "w") as f:
        f.writelines(f"0 {s} {d} {size}B write tc=3\n" for s, d in flows)
    out = os.path.join(tmp, f"{name}-{model}")
    sets = ["topology.kind=fat_tree", f"topology.k={K}", "traffic.pattern=messages",
            f"traffic.messages.file={path}", "sim.duration=1us", "sim.warmup=0ns",
            "stats.occupancy_interval=0ns", "sim.traffic_thread=false", "nic.cc=none",
            f"switch.model={model}"]
    _, wall, cpu = timed([fabricsim, "run", NIC400, "--out", out] +
                         [x for s in sets for x in ("--set", s)])
    with open(os.path.join(out, "fct.csv")) as f:
        fcts = sorted(float(r["fct_ns"]) / 1e3 for r in csv.DictReader(f))
    if len(fcts) != len(flows):
        raise Failed(f"fabricsim ({model}): {len(fcts)} of {len(flows)} messages completed")
    return fcts, wall, cpu


def p99(xs):
    return xs[min(len(xs) - 1, int(0.99 * len(xs)))]  # xs sorted: nearest rank


def scenario(a, tmp, name, flows, title):
    size = a.size_mib << 20
    runs = {"htsim": []}
    runs.update({m: [] for m in a.models})
    for rep in range(a.repeat):
        r = run_htsim(a.htsim, tmp, name, flows, size)
        runs["htsim"].append(r)
        line = [f"htsim {r[2]:.2f} s CPU ({r[1]:.2f} wall)"]
        for m in a.models:
            r = run_fabricsim(a.fabricsim, tmp, name, flows, size, m)
            runs[m].append(r)
            line.append(f"{m} {r[2]:.2f} s CPU ({r[1]:.2f} wall)")
        print(f"  {title} rep {rep + 1}: " + ", ".join(line), flush=True)
    print(f"\n{title}: {len(flows)} flows of {a.size_mib} MiB, k = {K} fat tree, 400G, "
          f"{a.repeat} alternating repetitions")
    print(f"{'':<16}{'CPU s (median)':>15}{'wall s':>9}{'x htsim CPU':>13}"
          f"{'FCT mean':>10}{'p99':>10}{'max':>10}  (us)")
    for who, rs in runs.items():
        ratios = [r[2] / h[2] for r, h in zip(rs, runs["htsim"])]
        fct = rs[0][0]  # deterministic in FabricSim; htsim seeds roce.cpp from the clock
        ratio = "" if who == "htsim" else (f"{statistics.median(ratios):.3f}")
        print(f"{who:<16}{statistics.median(r[2] for r in rs):>15.3f}"
              f"{statistics.median(r[1] for r in rs):>9.2f}{ratio:>13}"
              f"{statistics.mean(fct):>10.2f}{p99(fct):>10.2f}{fct[-1]:>10.2f}")
        if who != "htsim":
            print(f"{'':<16}per repetition x htsim: " + ", ".join(f"{x:.3f}" for x in ratios))
    if a.repeat > 1:
        means = [statistics.mean(r[0]) for r in runs["htsim"]]
        print(f"htsim's FCT mean over its runs: {min(means):.2f}-{max(means):.2f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("htsim", help="a built htsim_roce (Broadcom/csg-htsim sim/datacenter)")
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "build", "fabricsim"))
    ap.add_argument("--models", default="packet", help="switch models, e.g. packet,cycle")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--size-mib", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7, help="the permutation's seed")
    ap.add_argument("--incast", type=int, default=0, help="also an N-to-1 incast (0: none)")
    a = ap.parse_args()
    a.models = [m for m in a.models.split(",") if m]
    for flag, path in (("htsim", a.htsim), ("--fabricsim", a.fabricsim)):
        if not os.access(path, os.X_OK):
            print(f"{flag} {path}: not an executable", file=sys.stderr)
            return 2
    bad = [m for m in a.models if m not in ("packet", "cycle")]
    if bad or not a.models or a.repeat < 1 or a.size_mib < 1 or not 0 <= a.incast < HOSTS:
        print("--models: packet and/or cycle; --repeat, --size-mib >= 1; --incast 0-"
              f"{HOSTS - 1}", file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    while True:
        perm = list(range(HOSTS))
        rng.shuffle(perm)
        if all(perm[i] != i for i in range(HOSTS)):
            break
    try:
        with tempfile.TemporaryDirectory() as tmp:
            scenario(a, tmp, "perm", list(enumerate(perm)), "permutation")
            if a.incast:
                print()
                scenario(a, tmp, "incast", [(s, 0) for s in range(1, a.incast + 1)],
                         f"{a.incast}-to-1 incast")
    except Failed as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
