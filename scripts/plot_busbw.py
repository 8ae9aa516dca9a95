#!/usr/bin/env python3
"""Bus bandwidth against message size, as nccl-tests' sweeps show it, from the collectives.csv of
one or more workload runs (a size sweep in one run: workload.sweep_to; docs/results.md).

  scripts/plot_busbw.py out/ar_ring/collectives.csv out/ar_tree/collectives.csv \\
      [--labels ring,tree] [--out busbw.png]

Prints, per run, a table like nccl-tests' (size, time, algbw, busbw: the mean over the calls of
each size) and draws busbw (GB/s) against size (log scale) with a line per run. matplotlib is
imported only to draw (Debian's python3-matplotlib).

Runs of two result schemas (summary.json schema_version, docs/results.md; the summary.json beside
each file, else its columns tell) are not compared: exit 2, naming both.

Exit status: 0 ok, 2 bad input (a missing or malformed file: the message names it and the line;
files of two schemas) or matplotlib missing, 1 if the plot cannot be written.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_results import (InputError, read_csv, require_module, require_one_schema,  # noqa: E402
                          schema_of)  # (shared readers)


def load(path):
    """([(size, mean time ns, mean algbw, mean busbw, calls)] over the finished calls, by size;
    the file's result schema)."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    header, rows = read_csv(path, ["bytes", "time_ns", "state"],
                            text=("name", "algorithm", "state", "tag"), whole=("bytes",))
    # Bandwidths in GB/s whatever the columns are called (algbw_gbps, busbw_gbps in schema 2,
    # before their units were named); files of two schemas are not compared (main).
    bw = [next((i for i, h in enumerate(header) if h.startswith(p)), None)
          for p in ("algbw", "busbw")]
    if None in bw:
        raise InputError(f"{path}:1: no algbw or busbw column (is it a collectives.csv?)")
    b, t, state = (header.index(h) for h in ("bytes", "time_ns", "state"))
    by_size = {}
    for r in rows:
        if r[state] == "finished":
            by_size.setdefault(int(r[b]), []).append(r)
    return [(size, statistics.mean(x[t] for x in v), statistics.mean(x[bw[0]] for x in v),
             statistics.mean(x[bw[1]] for x in v), len(v))
            for size, v in sorted(by_size.items())], schema_of(path, header)


def human(b):
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k}{unit}"
    return f"{b}B"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="plot_busbw.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+", metavar="COLLECTIVES.csv",
                    help="collectives.csv files of workload runs, a curve each")
    ap.add_argument("--labels", metavar="L1,L2,...",
                    help="comma-separated, one per file (default: the files' folder names)")
    ap.add_argument("--out", default="busbw.png", metavar="FILE.png",
                    help="where to draw the plot (default: busbw.png)")
    a = ap.parse_args(argv)
    labels = a.labels.split(",") if a.labels else [
        os.path.basename(os.path.dirname(os.path.abspath(p))) for p in a.csv]
    try:
        if len(labels) != len(a.csv):
            raise InputError(f"--labels: {len(labels)} label(s) for {len(a.csv)} file(s)")
        curves, schemas = [], []
        for path, label in zip(a.csv, labels):
            rows, schema = load(path)
            if not rows:
                raise InputError(f"{path}: no finished collective")
            curves.append((label, path, rows))
            schemas.append((path, schema))
        require_one_schema(schemas)
    except (InputError, OSError) as e:
        print(f"plot_busbw.py: error: {e}", file=sys.stderr)
        return 2
    for label, path, rows in curves:
        print(f"# {label} ({path})")
        print(f"{'size':>10} {'time (us)':>12} {'algbw (GB/s)':>13} {'busbw (GB/s)':>13} {'calls':>6}")
        for size, t, alg, bus, n in rows:
            print(f"{human(size):>10} {t / 1000:12.2f} {alg:13.2f} {bus:13.2f} {n:6d}")
    require_module("plot_busbw.py", "matplotlib", "python3-matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, _, rows in curves:
        ax.plot([r[0] for r in rows], [r[3] for r in rows], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size S (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(a.out, dpi=120)
    except OSError as e:
        print(f"plot_busbw.py: error: cannot write {a.out}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
