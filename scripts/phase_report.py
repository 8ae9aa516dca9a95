#!/usr/bin/env python3
"""What the fabric went through during each collective call of a workload run: per call (a row of
collectives.csv) its time and busbw, the switches' buffer peak and mean over the call (from
occupancy.csv: which switch and port held the most), the PFC pause and XOFF spans and the drops
that overlapped it (flow_events.csv), and its messages' flow completion slowdowns (fct.csv:
a message whose id is in the call's [first_node, last_node) is one of the call's); then the
hottest links of the whole run (bytes over rate x simulated time, links.csv).

  scripts/phase_report.py OUT_DIR [--top 5] [--csv OUT_DIR/phases.csv]

Files other than collectives.csv and summary.json are used when present (a run with
stats.occupancy_interval 0 has no buffer figures). The buffer figures are occupancy.csv's total:
in a run of several switches the sum over them (a line above the table says which), printed in
MB (10^6 bytes); --csv writes them in bytes. Exit status: 0 ok, 2 bad input (a missing or
malformed file: the message names it and the line), 1 if --csv cannot be written.
"""
import argparse
import bisect
import csv
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_results import InputError, read_csv, read_summary  # noqa: E402  (shared readers)

# The table's columns: (key in a row, heading, format of a number). The buffer figures are bytes
# in the rows and --csv, MB with thousands separators on screen (never 1.23457e+06).
COLUMNS = [("name", "call", None), ("time_us", "time us", "{:,.3f}"),
           ("busbw", "busbw GB/s", "{:,.2f}"), ("buffer_peak_bytes", "buffer peak MB", "MB"),
           ("buffer_mean_bytes", "buffer mean MB", "MB"), ("fullest_port", "fullest port", None),
           ("paused_ns", "paused ns", "{:,.0f}"), ("xoff_spans", "XOFF spans", "{:,}"),
           ("drops", "drops", "{:,}"), ("messages", "messages", "{:,}"),
           ("slowdown_p50", "slowdown p50", "{:.3f}"), ("slowdown_max", "slowdown max", "{:.3f}")]


def dicts(path, required, text=(), whole=()):
    header, rows = read_csv(path, required, text=text, whole=whole)
    return header, [dict(zip(header, r)) for r in rows]


def occupancy(path):
    """(times, totals, per-port columns {name: values}) of occupancy.csv."""
    header, rows = read_csv(path, ["time_ns", "total_bytes"])
    if header[:2] != ["time_ns", "total_bytes"]:
        raise InputError(f"{path}:1: expected time_ns,total_bytes,...")
    return ([r[0] for r in rows], [r[1] for r in rows],
            {h: [r[i] for r in rows] for i, h in enumerate(header) if i >= 2})


def report(out_dir, top):
    """(per-call rows, hottest links, number of switches, the busbw column's name)."""
    if not os.path.isdir(out_dir):
        raise InputError(f"{out_dir}: no such directory")
    path = {n: os.path.join(out_dir, n) for n in ("collectives.csv", "summary.json",
                                                   "occupancy.csv", "flow_events.csv", "fct.csv",
                                                   "links.csv")}
    for n in ("collectives.csv", "summary.json"):
        if not os.path.isfile(path[n]):
            raise InputError(f"{path[n]}: missing (is it a workload run's folder? "
                             "traffic.pattern workload writes collectives.csv)")
    s = read_summary(path["summary.json"], ("window.sim_end_ns",))
    header, calls = dicts(path["collectives.csv"], ["name", "start_ns", "end_ns", "first_node",
                                                    "last_node"],
                          text=("name", "algorithm", "state", "tag"), whole=("first_node", "last_node"))
    # busbw is in GB/s whatever the column is called (busbw_gbps before its units were named).
    busbw = next((h for h in header if h.startswith("busbw")), None)
    if busbw is None:
        raise InputError(f"{path['collectives.csv']}:1: no busbw column")
    present = {n: os.path.isfile(p) for n, p in path.items()}
    occ = occupancy(path["occupancy.csv"]) if present["occupancy.csv"] else None
    flow = dicts(path["flow_events.csv"], ["kind", "start_ns", "end_ns"],
                 text=("kind", "device"))[1] if present["flow_events.csv"] else []
    fct = sorted(dicts(path["fct.csv"], ["id", "slowdown"], text=("verb", "state"),
                       whole=("id",))[1] if present["fct.csv"] else [], key=lambda m: m["id"])
    ids = [m["id"] for m in fct]
    sim_end = s["window"]["sim_end_ns"]
    out = []
    for c in calls:
        a = c["start_ns"]
        b = sim_end if math.isnan(c["end_ns"]) else c["end_ns"]
        row = {"name": c["name"], "time_us": (b - a) / 1e3, "busbw": c[busbw]}
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
            s0, s1 = e["start_ns"], e["end_ns"]
            if s1 < a or s0 > b:
                continue
            if e["kind"] == "paused":
                paused += min(s1, b) - max(s0, a)
            elif e["kind"] == "xoff":
                xoff += 1
            elif e["kind"] == "drop":
                drops += 1
        row.update(paused_ns=paused, xoff_spans=xoff, drops=drops)
        # the call's messages: ids in [first_node, last_node)
        mine = fct[bisect.bisect_left(ids, c["first_node"]):bisect.bisect_left(ids, c["last_node"])]
        row["messages"] = len(mine)
        sd = sorted(m["slowdown"] for m in mine if not math.isnan(m["slowdown"]))
        if sd:
            row["slowdown_p50"] = sd[len(sd) // 2]
            row["slowdown_max"] = sd[-1]
        out.append(row)
    hot = []
    if present["links.csv"] and sim_end > 0:
        for l in dicts(path["links.csv"], ["from", "from_port", "to", "to_port", "bytes_run",
                                           "rate_gbps", "paused_ns"],
                       text=("from", "to"), whole=("from_port", "to_port"))[1]:
            util = l["bytes_run"] * 8 / (l["rate_gbps"] * sim_end) if l["rate_gbps"] > 0 else 0
            hot.append((util, f"{l['from']}:{int(l['from_port'])} -> {l['to']}:"
                              f"{int(l['to_port'])}", l["paused_ns"]))
        hot.sort(reverse=True)
    return out, hot[:top], len(s.get("switches", [])), busbw


def cell(value, fmt):
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return ""
    if fmt == "MB":
        return f"{value / 1e6:,.3f}"
    return fmt.format(value) if fmt else str(value)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="phase_report.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", metavar="OUT_DIR", help="a workload run's output folder")
    ap.add_argument("--top", type=int, default=5, metavar="K",
                    help="hottest links to list (default 5)")
    ap.add_argument("--csv", metavar="FILE",
                    help="also write the per-call table here, buffer figures in bytes "
                         "(default: none)")
    a = ap.parse_args(argv)
    try:
        if a.top < 0:
            raise InputError(f"--top {a.top}: must be >= 0")
        calls, hot, switches, busbw = report(a.out_dir, a.top)
    except (InputError, OSError) as e:
        print(f"phase_report.py: error: {e}", file=sys.stderr)
        return 2
    whose = "the switch's" if switches <= 1 else f"the sum over the {switches} switches of their"
    print(f"buffer: {whose} shared-buffer occupancy (occupancy.csv), peak and mean over each "
          "call, in MB (10^6 bytes)")
    table = [[h for _, h, _ in COLUMNS]] + [[cell(r.get(k), f) for k, _, f in COLUMNS]
                                             for r in calls]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    for row in table:  # the call's name on the left, numbers right-aligned
        print("  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                        for i, (v, w) in enumerate(zip(row, widths))).rstrip())
    if hot:
        print("\nhottest links over the run (utilisation, paused ns):")
        for util, name, paused in hot:
            print(f"  {name}: {util:.3f}, {paused:,.0f}")
    if a.csv:
        cols = [busbw if k == "busbw" else k for k, _, _ in COLUMNS]  # as collectives.csv names it
        try:
            with open(a.csv, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(cols)
                for r in calls:
                    w.writerow([csv_value(r.get(k)) for k, _, _ in COLUMNS])
        except OSError as e:
            print(f"phase_report.py: error: cannot write {a.csv}: {e.strerror}", file=sys.stderr)
            return 1
    return 0


def csv_value(v):
    if isinstance(v, float):
        return "" if math.isnan(v) else int(v) if v.is_integer() else repr(v)
    return "" if v is None else v


if __name__ == "__main__":
    sys.exit(main())
