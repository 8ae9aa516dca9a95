#!/usr/bin/env python3
"""Two fabricsim builds on one long run at the same time (a benchmark: it prints figures,
asserts nothing).

  side_by_side.py OLD_FABRICSIM NEW_FABRICSIM CONFIG [--pairs 2] [--secs 200]
      [--set key=value ...]

For runs too long to finish (the 1,024-rank all-to-all of issue #40) and a machine whose speed
drifts from minute to minute (a shared VM: alternating 150 s runs of one binary differed by 25%
on 2026-11-30), alternating runs compare minutes, not builds. Here both builds run at once, one
thread each (sim.threads=1 unless --set says otherwise), each capped at --secs of wall time:
they share the machine's noise, its last-level cache and its memory bandwidth. Each prints a
progress line a minute ("[fabricsim] workload 465us ... 120s"); the figure per build is the
simulated time per wall second between its first and its last progress line (the set-up before
the first is left out). Pairs alternate which build starts first; per pair the ratio NEW / OLD,
then the medians. Example (docs/performance.md, "tenth pass"):

  side_by_side.py /tmp/old/fabricsim build/fabricsim configs/nic_800g.yaml --pairs 2 \\
      --set sim.traffic_thread=false --set stats.occupancy_interval=0ns --set sim.duration=1us \\
      --set sim.warmup=0ns --set traffic.pattern=workload --set workload.tc=3 \\
      --set topology.kind=fat_tree --set topology.k=16 \\
      --set workload.collective=alltoall_direct --set workload.bytes=1GiB \\
      --set sim.drain_limit=100ms --set nic.rc.timeout=1073741824ns --set switch.model=packet
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINE = re.compile(r"^\[fabricsim\] \S+ ([0-9.]+)(fs|ps|ns|us|ms|s)\b.*?\s([0-9]+)s\s*$")
UNIT_US = {"fs": 1e-9, "ps": 1e-6, "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def rate(log):
    """Simulated us per wall second between the first and the last progress line (None: fewer
    than two lines)."""
    marks = []
    for line in log.splitlines():
        m = LINE.match(line)
        if m:
            marks.append((int(m.group(3)), float(m.group(1)) * UNIT_US[m.group(2)]))
    if len(marks) < 2 or marks[-1][0] <= marks[0][0]:
        return None, marks
    (w0, s0), (w1, s1) = marks[0], marks[-1]
    return (s1 - s0) / (w1 - w0), marks


def run_pair(first, second, cfg, sets, secs, tmp):
    procs = {}
    for exe in (first, second):
        out = os.path.join(tmp, f"o{len(procs)}")
        cmd = ["timeout", "-s", "TERM", str(secs), exe, "run", cfg, "--out", out, *sets]
        procs[exe] = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
    logs = {exe: p.communicate()[0] for exe, p in procs.items()}
    return {exe: rate(log) for exe, log in logs.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("config")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--secs", type=int, default=200)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    a = ap.parse_args()
    if a.secs < 130:
        ap.error("--secs must be at least 130 (two progress lines a minute apart)")
    for exe in (a.old, a.new):
        if not os.access(exe, os.X_OK):
            ap.error(f"{exe}: not an executable")
    if not os.path.isfile(a.config):
        ap.error(f"{a.config}: no such config file")
    sets = []
    for s in a.set:
        sets += ["--set", s]
    if not any(s.startswith("sim.threads=") for s in a.set):
        sets += ["--set", "sim.threads=1"]
    old, new = os.path.abspath(a.old), os.path.abspath(a.new)
    ratios, rates = [], {old: [], new: []}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.pairs):
            order = (old, new) if i % 2 == 0 else (new, old)
            r = run_pair(*order, os.path.abspath(a.config), sets, a.secs, tmp)
            for exe in order:
                rt, marks = r[exe]
                if rt is None:
                    print(f"side_by_side.py: {exe} printed fewer than two progress lines in "
                          f"{a.secs} s ({marks}): did it fail, or end before 120 s?",
                          file=sys.stderr)
                    sys.exit(1)
                rates[exe].append(rt)
            ratios.append(r[new][0] / r[old][0])
            print(f"pair {i + 1} ({'old' if order[0] == old else 'new'} started first): "
                  f"old {r[old][0]:.3f} us/s  new {r[new][0]:.3f} us/s  new/old {ratios[-1]:.3f}",
                  flush=True)
    print(f"median: old {statistics.median(rates[old]):.3f} us/s  "
          f"new {statistics.median(rates[new]):.3f} us/s  "
          f"new/old {statistics.median(ratios):.3f} over {a.pairs} pairs")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
