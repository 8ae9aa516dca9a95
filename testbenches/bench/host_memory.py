#!/usr/bin/env python3
"""Peak memory of a run against simulated time and trace size: the hosts' queues are bounded
(host.queue_limit), so memory follows the design, not how long the run is (issue #21).

  1. The README's 63-to-1 incast under PFC (configs/switch_51t2_roce.yaml) for 1, 5, 20 and 60 ms
     (--durations): the senders are paused most of the time, and their queues used to grow by
     ~54 MB per simulated ms. Peak RSS must stay flat.
  2. A trace of --trace-mb MB with every packet due at time zero (64 hosts, 200 B packets, each
     host to the next): it used to be loaded whole into the hosts' queues; it is streamed into
     them as they drain (the baseline also stops at sim.duration + drain with most of it unsent;
     this build replays it whole).

Peak RSS is perf.json's (getrusage of the run); CPU s is the run's user + system time (both
threads: the trace is read on a second one). --baseline BIN runs an older build next to this one
(with its own defaults) for before/after figures.

  testbenches/bench/host_memory.py [build/fabricsim] [--baseline /path/to/old/fabricsim]
      [--durations 1ms,5ms,20ms,60ms] [--trace-mb 100]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROCE = os.path.join(ROOT, "configs", "switch_51t2_roce.yaml")
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")
INCAST = ["traffic.pattern=incast", "traffic.incast.sources=63", "sim.drain_limit=2ms"]


def run(binary, config, sets, out):
    cmd = [binary, "run", config, "--out", out]
    for s in sets:
        cmd += ["--set", s]
    t0 = time.monotonic()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - t0
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode not in (0, 3):
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    with open(os.path.join(out, "perf.json")) as f:
        perf = json.load(f)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return perf["peak_rss_mb"], wall, cpu, summary, p.returncode


def write_trace(path, mb, hosts=64):
    """200 B packets (one cell), all at time zero, each host to the next (a permutation: the
    switch stays nearly empty, so the memory measured is the hosts'), the hosts' lines
    interleaved, until `mb` MB."""
    target = mb * 1_000_000
    lines = []
    size = 0
    n = 0
    with open(path, "w") as f:
        while size < target:
            src = n % hosts
            dst = (src + 1) % hosts
            line = f"0 {src} {dst} 200\n"
            lines.append(line)
            size += len(line)
            n += 1
            if len(lines) == 100_000:
                f.write("".join(lines))
                lines = []
        f.write("".join(lines))
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fabricsim", nargs="?", default=os.path.join(ROOT, "build", "fabricsim"))
    ap.add_argument("--baseline", help="an older fabricsim (no host.queue_limit) to compare")
    ap.add_argument("--durations", default="1ms,5ms,20ms,60ms")
    ap.add_argument("--trace-mb", type=int, default=100)
    args = ap.parse_args()
    builds = [("this build", args.fabricsim)]
    if args.baseline:
        builds.append(("baseline", args.baseline))
    with tempfile.TemporaryDirectory() as tmp:
        print("README incast (63-to-1, PFC): peak RSS against simulated time")
        print(f"  {'build':<11} {'duration':>9} {'peak RSS MB':>12} {'wall s':>7} "
              f"{'backlog at end':>15} {'refused':>10}")
        for name, binary in builds:
            for d in filter(None, args.durations.split(",")):
                rss, wall, _, s, _ = run(binary, ROCE, INCAST + [f"sim.duration={d}"],
                                      os.path.join(tmp, "incast"))
                hq = s["host_queues"]
                print(f"  {name:<11} {d:>9} {rss:>12.1f} {wall:>7.1f} {hq['backlog_at_end']:>15} "
                      f"{hq.get('refused_packets', 0):>10}")
        trace = os.path.join(tmp, "zero.trace")
        n = write_trace(trace, args.trace_mb)
        mb = os.path.getsize(trace) / 1e6
        print(f"\nTrace of {mb:.0f} MB ({n} packets, all due at time zero, 64 hosts): peak RSS")
        print(f"  {'build':<11} {'peak RSS MB':>12} {'wall s':>7} {'CPU s':>7} {'injected':>10} "
              f"{'exit':>5}")
        for name, binary in builds:
            rss, wall, cpu, s, rc = run(binary, CHIP, ["traffic.pattern=trace",
                                                  f"traffic.trace.file={trace}",
                                                  "sim.drain_limit=1ms"],
                                   os.path.join(tmp, "trace"))
            print(f"  {name:<11} {rss:>12.1f} {wall:>7.1f} {cpu:>7.1f} "
                  f"{s['packets']['injected']:>10} {rc:>5}")


if __name__ == "__main__":
    main()
