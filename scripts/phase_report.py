#!/usr/bin/env python3
"""What the fabric went through during each collective call of a workload run: per call (a row of
collectives.csv) its time and busbw, the switches' buffer peak and mean over the call (from
occupancy.csv: which switch and port held the most), the PFC pause and XOFF spans and the drops
that overlapped it (flow_events.csv), and its messages' flow completion slowdowns (fct.csv:
a message whose id is in the call's [first_node, last_node) is one of the call's); then the
hottest links of the whole run (bytes over rate x simulated time, links.csv).

  scripts/phase_report.py OUT_DIR [--top 5] [--csv OUT_DIR/phases.csv]

Files other than collectives.csv and summary.json are used when present (a run with
stats.occupancy_interval 0 has no buffer figures). Exit status: 0 ok, 2 bad input.
"""
import argparse
import bisect
import csv
import json
import os
import statistics
import sys


class InputError(Exception):
    pass


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def occupancy(path):
    """(times, totals, per-port columns {name: values}) of occupancy.csv."""
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r, None)
        if not header or header[:2] != ["time_ns", "total_bytes"]:
            raise InputError(f"{path}:1: expected time_ns,total_bytes,...")
        times, total, cols = [], [], {h: [] for h in header[2:]}
        for n, rec in enumerate(r, start=2):
            if len(rec) != len(header):
                raise InputError(f"{path}:{n}: {len(rec)} fields, header has {len(header)}")
            times.append(float(rec[0]))
            total.append(float(rec[1]))
            for h, v in zip(header[2:], rec[2:]):
                cols[h].append(float(v))
    return times, total, cols


def report(out_dir, top):
    for n in ("collectives.csv", "summary.json"):
        if not os.path.isfile(os.path.join(out_dir, n)):
            raise InputError(f"{os.path.join(out_dir, n)}: missing (is it a workload run's "
                             "folder? traffic.pattern workload writes collectives.csv)")
    with open(os.path.join(out_dir, "summary.json")) as f:
        s = json.load(f)
    calls = rows(os.path.join(out_dir, "collectives.csv"))
    occ = (occupancy(os.path.join(out_dir, "occupancy.csv"))
           if os.path.isfile(os.path.join(out_dir, "occupancy.csv")) else None)
    flow = (rows(os.path.join(out_dir, "flow_events.csv"))
            if os.path.isfile(os.path.join(out_dir, "flow_events.csv")) else [])
    fct = (rows(os.path.join(out_dir, "fct.csv"))
           if os.path.isfile(os.path.join(out_dir, "fct.csv")) else [])
    sim_end = float(s["window"]["sim_end_ns"])
    out = []
    for c in calls:
        a = float(c["start_ns"])
        b = float(c["end_ns"]) if c["end_ns"] else sim_end
        row = {"name": c["name"], "time_us": (b - a) / 1e3, "busbw_gbps": c["busbw_gbps"]}
        if occ and occ[0]:
            times, total, cols = occ
            i, j = bisect.bisect_left(times, a), bisect.bisect_right(times, b)
            if j > i:
                row["buffer_peak_bytes"] = max(total[i:j])
                row["buffer_mean_bytes"] = statistics.mean(total[i:j])
                port, peak = max(((h, max(v[i:j])) for h, v in cols.items()),
                                 key=lambda x: x[1], default=("", 0))
                row["fullest_port"] = port[:-len("_bytes")] if peak > 0 else ""
        paused = xoff = drops = 0
        for e in flow:
            s0, s1 = float(e["start_ns"]), float(e["end_ns"])
            if s1 < a or s0 > b:
                continue
            if e["kind"] == "paused":
                paused += min(s1, b) - max(s0, a)
            elif e["kind"] == "xoff":
                xoff += 1
            elif e["kind"] == "drop":
                drops += 1
        row.update(paused_ns=paused, xoff_spans=xoff, drops=drops)
        lo, hi = int(c["first_node"]), int(c["last_node"])
        sd = sorted(float(m["slowdown"]) for m in fct
                    if lo <= int(m["id"]) < hi and m["slowdown"])
        row["messages"] = sum(1 for m in fct if lo <= int(m["id"]) < hi)
        if sd:
            row["slowdown_p50"] = sd[len(sd) // 2]
            row["slowdown_max"] = sd[-1]
        out.append(row)
    hot = []
    lpath = os.path.join(out_dir, "links.csv")
    if os.path.isfile(lpath) and sim_end > 0:
        for l in rows(lpath):
            util = float(l["bytes_run"]) * 8 / (float(l["rate_gbps"]) * sim_end)
            hot.append((util, f"{l['from']}:{l['from_port']} -> {l['to']}:{l['to_port']}",
                        float(l["paused_ns"])))
        hot.sort(reverse=True)
    return out, hot[:top]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--top", type=int, default=5, help="hottest links to list (default 5)")
    ap.add_argument("--csv", help="also write the per-call table here")
    a = ap.parse_args(argv)
    try:
        calls, hot = report(a.out_dir, a.top)
    except (InputError, KeyError, ValueError, OSError) as e:
        print(f"phase_report.py: {e}", file=sys.stderr)
        return 2
    cols = ["name", "time_us", "busbw_gbps", "buffer_peak_bytes", "buffer_mean_bytes",
            "fullest_port", "paused_ns", "xoff_spans", "drops", "messages", "slowdown_p50",
            "slowdown_max"]
    print(" ".join(f"{c:>18}" for c in cols))
    for r in calls:
        cells = []
        for c in cols:
            v = r.get(c, "")
            cells.append(f"{v:>18.6g}" if isinstance(v, float) else f"{str(v):>18}")
        print(" ".join(cells))
    if hot:
        print(f"\nhottest links over the run (utilisation, paused ns):")
        for util, name, paused in hot:
            print(f"  {name}: {util:.3f}, {paused:.0f}")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols)
            w.writeheader()
            for r in calls:
                w.writerow({c: r.get(c, "") for c in cols})
    return 0


if __name__ == "__main__":
    sys.exit(main())
