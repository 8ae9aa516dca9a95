#!/usr/bin/env python3
"""What moved between two fabricsim runs, and by how much.

  compare.py A B                    A, B: `fabricsim run --out` directories
  compare.py A B --top 20 --threshold 0.01 --json diff.json

Reads each directory's summary.json (required) and, when both have them, collectives.csv (workload
runs) and ports.csv; nothing is rerun. Prints:

- the headline figures side by side (a workload run's step: end time, iteration time, exposed
  communication, and per communicator tag its exposed part and the critical path's parts; else
  throughput and latency), B - A and B / A;
- every other number of summary.json that moved by more than --threshold (relative; default
  0.001), largest relative change first, at most --top (default 15) rows: keys present in one run
  only are listed as added or removed;
- collectives.csv: the calls of both runs matched by name: their total time per group (the
  call's tag and algorithm, e.g. `tp allreduce_ring`, when the workload tags its communicators;
  else its algorithm), then the --top calls whose time moved most.

--json FILE writes all of it as JSON. Exit status: 0 ok (whatever moved), 2 bad input (a missing
or malformed directory, file or option: the message names it).
"""
import argparse
import csv
import json
import math
import os
import sys

HEADLINES = [
    ("workload.end_ns", "workload: last node finished (ns)"),
    ("workload.iteration_time_ns.mean", "step time, mean (ns)"),
    ("workload.compute_ns.mean", "compute per rank, mean (ns)"),
    ("workload.exposed_comm_ns.mean", "exposed communication per rank, mean (ns)"),
    ("workload.exposed_comm_ns.max", "exposed communication per rank, max (ns)"),
    ("workload.busbw_GBps.mean", "collective busbw, mean (GB/s)"),
    ("accepted_load", "accepted load"),
    ("latency.mean_ns", "latency mean (ns)"),
    ("latency.p99_ns", "latency p99 (ns)"),
]


class InputError(Exception):
    pass


def flatten(x, prefix="", out=None):
    """Every number of a JSON document by its dotted path (list items by index)."""
    out = {} if out is None else out
    if isinstance(x, dict):
        for k, v in x.items():
            flatten(v, f"{prefix}{k}.", out)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            flatten(v, f"{prefix}{i}.", out)
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        out[prefix[:-1]] = float(x)
    return out


def load_summary(d):
    if not os.path.isdir(d):
        raise InputError(f"{d}: not a directory (a `fabricsim run --out` directory)")
    path = os.path.join(d, "summary.json")
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON: {e}")


def load_collectives(d):
    path = os.path.join(d, "collectives.csv")
    if not os.path.isfile(path):
        return None
    out = {}
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        need = ("name", "algorithm", "time_ns")
        if not r.fieldnames or any(c not in r.fieldnames for c in need):
            raise InputError(f"{path}:1: expected the columns {', '.join(need)}")
        for row in r:
            try:
                t = float(row["time_ns"]) if row["time_ns"] else math.nan
            except ValueError:
                raise InputError(f"{path}:{r.line_num}: time_ns '{row['time_ns']}' is "
                                 "not a number")
            group = f"{row['tag']} {row['algorithm']}" if row.get("tag") else row["algorithm"]
            out[row["name"]] = (t, group)
    return out


def ratio(a, b):
    if a == 0:
        return None if b != 0 else 1.0
    return b / a


def tag_rows(sa, sb):
    """The workload's by_tag figures (exposed per tag, critical path), as headline rows."""
    rows = []
    ta = (sa.get("workload") or {}).get("by_tag") or {}
    tb = (sb.get("workload") or {}).get("by_tag") or {}
    tags = sorted(set(ta.get("exposed", {})) | set(tb.get("exposed", {})))
    for t in tags:
        rows.append((f"workload.by_tag.exposed.{t}.exposed_mean_ns",
                     f"exposed {t}, mean per rank (ns)"))
    for k in ("length_ns", "compute_ns", "gap_ns"):
        rows.append((f"workload.by_tag.critical_path.{k}", f"critical path {k[:-3]} (ns)"))
    for t in sorted(set(ta.get("critical_path", {}).get("comm_ns", {}))
                    | set(tb.get("critical_path", {}).get("comm_ns", {}))):
        rows.append((f"workload.by_tag.critical_path.comm_ns.{t}", f"critical path {t} (ns)"))
    return rows


def compare(a_dir, b_dir, top=15, threshold=0.001):
    sa, sb = load_summary(a_dir), load_summary(b_dir)
    fa, fb = flatten(sa), flatten(sb)
    head = []
    shown = set()
    for key, what in HEADLINES + tag_rows(sa, sb):
        if key in fa or key in fb:
            va, vb = fa.get(key), fb.get(key)
            head.append({"key": key, "what": what, "a": va, "b": vb,
                         "delta": None if va is None or vb is None else vb - va,
                         "ratio": None if va is None or vb is None else ratio(va, vb)})
            shown.add(key)
    moved = []
    for key in sorted(set(fa) | set(fb)):
        if key in shown or key.startswith(("config.", "speed.", "host.", "run.")):
            continue
        va, vb = fa.get(key), fb.get(key)
        if va is None or vb is None:
            moved.append({"key": key, "a": va, "b": vb, "rel": math.inf,
                          "change": "added" if va is None else "removed"})
            continue
        rel = abs(vb - va) / max(abs(va), 1e-300) if va != vb else 0.0
        if rel > threshold:
            moved.append({"key": key, "a": va, "b": vb, "rel": rel, "change": "moved"})
    moved.sort(key=lambda m: (-m["rel"], m["key"]))
    result = {"a": a_dir, "b": b_dir, "headline": head, "moved": moved[:top],
              "moved_total": len(moved)}
    ca, cb = load_collectives(a_dir), load_collectives(b_dir)
    if ca is not None and cb is not None:
        common = [n for n in ca if n in cb]
        by_group = {}
        for n in common:
            x = by_group.setdefault(ca[n][1], {"calls": 0, "a_ns": 0.0, "b_ns": 0.0})
            x["calls"] += 1
            x["a_ns"] += ca[n][0]
            x["b_ns"] += cb[n][0]
        calls = sorted(({"name": n, "a_ns": ca[n][0], "b_ns": cb[n][0],
                         "delta_ns": cb[n][0] - ca[n][0]}
                        for n in common if not (math.isnan(ca[n][0]) or math.isnan(cb[n][0]))),
                       key=lambda c: (-abs(c["delta_ns"]), c["name"]))
        result["collectives"] = {"matched": len(common), "only_a": len(ca) - len(common),
                                 "only_b": len(cb) - len(common),
                                 "by_group": dict(sorted(by_group.items())),
                                 "top_calls": calls[:top]}
    return result


def num(v):
    if v is None:
        return "-"
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return str(v)
    return f"{v:,.6g}" if abs(v) < 1e6 else f"{v:,.0f}"


def render(r):
    lines = [f"A: {r['a']}", f"B: {r['b']}", "", "| figure | A | B | B - A | B / A |",
             "|---|---|---|---|---|"]
    for h in r["headline"]:
        rt = "-" if h["ratio"] is None else f"{h['ratio']:.4f}"
        lines.append(f"| {h['what']} | {num(h['a'])} | {num(h['b'])} | {num(h['delta'])} | {rt} |")
    lines += ["", f"Other summary.json figures that moved: {r['moved_total']}"
              + (f" (the {len(r['moved'])} largest)" if r["moved_total"] > len(r["moved"]) else "")]
    if r["moved"]:
        lines += ["| key | A | B | change |", "|---|---|---|---|"]
        for m in r["moved"]:
            ch = m["change"] if m["change"] != "moved" else f"{m['rel'] * 100:+.2f}%".replace(
                "+", "+" if m["b"] >= m["a"] else "-")
            lines.append(f"| {m['key']} | {num(m['a'])} | {num(m['b'])} | {ch} |")
    c = r.get("collectives")
    if c:
        lines += ["", f"collectives.csv: {c['matched']} calls in both, {c['only_a']} in A only, "
                  f"{c['only_b']} in B only", "| group | calls | A total (ns) | B total (ns) | "
                  "B / A |", "|---|---|---|---|---|"]
        for name, x in c["by_group"].items():
            rt = ratio(x["a_ns"], x["b_ns"])
            lines.append(f"| {name} | {x['calls']} | {num(x['a_ns'])} | {num(x['b_ns'])} | "
                         f"{'-' if rt is None else f'{rt:.4f}'} |")
        if c["top_calls"]:
            lines += ["", "| call | A (ns) | B (ns) | B - A (ns) |", "|---|---|---|---|"]
            for x in c["top_calls"]:
                lines.append(f"| {x['name']} | {num(x['a_ns'])} | {num(x['b_ns'])} | "
                             f"{num(x['delta_ns'])} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="compare.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", metavar="A", help="the first run's output directory")
    ap.add_argument("b", metavar="B", help="the second run's output directory")
    ap.add_argument("--top", default="15", metavar="N", help="rows per list (default 15)")
    ap.add_argument("--threshold", default="0.001", metavar="REL",
                    help="smallest relative change listed (default 0.001)")
    ap.add_argument("--json", metavar="FILE", help="also write the comparison as JSON")
    args = ap.parse_args(argv)
    try:
        try:
            top = int(args.top)
        except ValueError:
            top = -1
        if top < 1:
            raise InputError(f"--top '{args.top}': expected a whole number >= 1")
        try:
            thr = float(args.threshold)
        except ValueError:
            thr = math.nan
        if not (thr >= 0 and math.isfinite(thr)):
            raise InputError(f"--threshold '{args.threshold}': expected a number >= 0")
        r = compare(args.a, args.b, top, thr)
    except InputError as e:
        print(f"compare.py: error: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(render(r))
    if args.json:
        try:
            with open(args.json, "w") as f:
                json.dump(r, f, indent=1, default=str)
        except OSError as e:
            print(f"compare.py: error: cannot write {args.json}: {e.strerror}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
