#!/usr/bin/env python3
"""Alternating A/B speed comparison of two fabricsim builds on one run (a benchmark: it prints
figures, asserts nothing).

  ab.py OLD_FABRICSIM NEW_FABRICSIM PAIRS CONFIG [--set key=value ...]

Runs the two binaries in turn, PAIRS times each, alternating which goes first, and prints per
build the median of perf.json's metric (METRIC environment variable, default cycles_per_s), of
wall time and of CPU time (user + system of the run), and the median of the per-pair ratios
NEW / OLD: on a shared machine only ratios taken in one session mean anything.
Example (docs/performance.md):
  ab.py /tmp/old/fabricsim build/fabricsim 20 configs/validation/slotted.yaml \\
      --set switch.ports=64 --set traffic.load=0.6 --set sim.duration=104us --set sim.warmup=4us
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    a, b, pairs, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    metric = os.environ.get("METRIC", "cycles_per_s")
    res = {a: [], b: []}
    cpu = {a: [], b: []}
    wall = {a: [], b: []}
    with tempfile.TemporaryDirectory() as d:
        for i in range(pairs):
            for exe in ((a, b) if i % 2 == 0 else (b, a)):
                out = os.path.join(d, "o")
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run([exe, "run", *args, "--out", out], check=True, capture_output=True,
                               cwd=ROOT)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                with open(os.path.join(out, "perf.json")) as f:
                    p = json.load(f)
                res[exe].append(p[metric])
                wall[exe].append(p["wall_s"])
                cpu[exe].append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
    for exe in (a, b):
        print(f"{exe}: {metric} median {statistics.median(res[exe]):,.1f} "
              f"(min {min(res[exe]):,.1f} max {max(res[exe]):,.1f}); "
              f"wall median {statistics.median(wall[exe]):.3f} s; "
              f"cpu median {statistics.median(cpu[exe]):.3f} s")
    ratios = [y / x for x, y in zip(res[a], res[b])]
    higher_better = metric != "slowdown" and metric != "wall_s"
    better = sum(1 for r in ratios if (r > 1) == higher_better)
    print(f"ratio NEW/OLD per pair: median {statistics.median(ratios):.3f}, "
          f"NEW better in {better} of {pairs}")


if __name__ == "__main__":
    main()
