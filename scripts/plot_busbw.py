#!/usr/bin/env python3
"""Bus bandwidth against message size, as nccl-tests' sweeps show it, from the collectives.csv of
one or more workload runs (a size sweep in one run: workload.sweep_to; docs/results.md).

  scripts/plot_busbw.py out/ar_ring/collectives.csv out/ar_tree/collectives.csv \
      [--labels ring,tree] [--out busbw.png]

Prints, per run, a table like nccl-tests' (size, time, algbw, busbw: the mean over the calls of
each size) and draws busbw (GB/s) against size (log scale) with a line per run. matplotlib is
imported only to draw (Debian's python3-matplotlib).
"""
import argparse
import csv
import os
import statistics
import sys


def load(path):
    by_size = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["state"] != "finished":
                continue
            by_size.setdefault(int(r["bytes"]), []).append(r)
    out = []
    for size in sorted(by_size):
        rows = by_size[size]
        mean = lambda k: statistics.mean(float(x[k]) for x in rows)
        out.append((size, mean("time_ns"), mean("algbw_gbps"), mean("busbw_gbps"), len(rows)))
    return out


def human(b):
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k}{unit}"
    return f"{b}B"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="collectives.csv files")
    ap.add_argument("--labels", help="comma-separated, one per file (default: the folder names)")
    ap.add_argument("--out", default="busbw.png")
    a = ap.parse_args()
    labels = a.labels.split(",") if a.labels else [
        os.path.basename(os.path.dirname(os.path.abspath(p))) for p in a.csv]
    if len(labels) != len(a.csv):
        sys.exit("--labels: one per file")
    curves = []
    for path, label in zip(a.csv, labels):
        rows = load(path)
        if not rows:
            sys.exit(f"{path}: no finished collective")
        print(f"# {label} ({path})")
        print(f"{'size':>10} {'time (us)':>12} {'algbw (GB/s)':>13} {'busbw (GB/s)':>13} {'calls':>6}")
        for size, t, alg, bus, n in rows:
            print(f"{human(size):>10} {t / 1000:12.2f} {alg:13.2f} {bus:13.2f} {n:6d}")
        curves.append((label, rows))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, rows in curves:
        ax.plot([r[0] for r in rows], [r[3] for r in rows], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size S (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
