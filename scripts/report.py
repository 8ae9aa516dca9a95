#!/usr/bin/env python3
"""One self-contained HTML page for a fabricsim run or a sweep: report.html.

  report.py OUT_DIR                  writes OUT_DIR/report.html
  report.py OUT_DIR --out FILE.html  writes FILE.html

OUT_DIR is either a `fabricsim run --out` directory (summary.json, ports.csv and occupancy.csv
required; perf.json and links.csv used when present) or a `sweep.py --out` directory (sweep.csv
required; its points' own folders are not opened). The page holds the verdicts (invariants,
drain, interruption; per point for a sweep), the resolved configuration, the summary figures as
tables and the plots as inline PNG images (base64): nothing outside the file is referenced, so it
opens offline, mailed or archived. Run: latency distribution (the run's percentiles and each host
port's), buffer occupancy over time (total, and per switch its --top busiest egress ports),
pause and credit-stall time per port, per priority / virtual lane. NIC runs (fct.csv; qp_rates.csv
when present) add a transport section: messages completed / failed / in flight, FCT and slowdown
distributions, retransmissions, timeouts and CNPs, per-QP rates over time. Workload runs
(collectives.csv, steps.csv) add a collectives section: each call's time, algbw and busbw.
Failed or in-flight messages and unfinished calls or steps are verdicts at the top of the page.
Sweep: the setup every point shares (base configuration, fixed overrides, varied keys and seeds:
sweep_setup.json), sweep.py's own figure (as `sweep.py --plot` draws it) and the table of every point.

Exit status: 0 ok, 2 bad input (a missing or malformed file: the message names it), 1 otherwise
(e.g. matplotlib missing).
"""
import argparse
import array
import base64
import csv
import html
import io
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_results import SCHEMA_VERSION, InputError, fmt_bytes, read_csv  # noqa: E402  (shared)

# Switches drawn with their own occupancy panel; beyond this, the busiest ones (the page says so).
MAX_SWITCH_PANELS = 12


# --- reading ------------------------------------------------------------------------------------

def read_json(path, required=True):
    if not os.path.isfile(path):
        if required:
            raise InputError(f"{path}: missing (is {os.path.dirname(path) or '.'} a fabricsim "
                             "run directory?)")
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError as e:
        raise InputError(f"{path}: not valid JSON: {e}") from None


def csv_table(path, required_cols, text=()):
    """plot_results.read_csv, with a binary or broken file named in one line, not a traceback."""
    try:
        return read_csv(path, required_cols, text=text)
    except (UnicodeDecodeError, csv.Error) as e:
        raise InputError(f"{path}: not a readable CSV file ({e})") from None


def as_dicts(path, required_cols, text=()):
    header, rows = csv_table(path, required_cols, text=text)
    return header, [dict(zip(header, r)) for r in rows]


def read_columns(path, cols, text=(), choices=None):
    """{column: values} of the columns `cols` only: floats in an array (NaN for an empty cell),
    `text` columns as interned strings. fct.csv, qp_rates.csv and steps.csv reach millions of
    rows, which a dict per row would not hold in memory. `choices` gives a text column's allowed
    values, so a malformed file is named with its line."""
    choices = choices or {}
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = [h.strip() for h in next(reader, None) or []]
            if not header:
                raise InputError(f"{path}: empty file (expected a header line)")
            for c in cols:
                if c not in header:
                    raise InputError(f"{path}:1: no column '{c}'")
            out = {c: [] if c in text else array.array("d") for c in cols}
            picks = [(c, header.index(c), out[c], c in text, choices.get(c)) for c in cols]
            for line, rec in enumerate(reader, start=2):
                if not rec:
                    continue
                if len(rec) != len(header):
                    raise InputError(f"{path}:{line}: {len(rec)} fields, header has {len(header)}")
                for c, i, dest, is_text, allowed in picks:
                    x = rec[i].strip()
                    if is_text:
                        if allowed and x not in allowed:
                            raise InputError(f"{path}:{line}: {c} '{x}' is not one of "
                                             f"{', '.join(allowed)}")
                        dest.append(sys.intern(x))
                    else:
                        try:
                            dest.append(float(x) if x else math.nan)
                        except ValueError:
                            raise InputError(f"{path}:{line}: {c} {x!r} is not a number") \
                                from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except csv.Error as e:  # a NUL byte, a field over the csv module's limit
        raise InputError(f"{path}:{reader.line_num}: {e}") from None
    return out


def section_input(out_dir, s, key, name):
    """The path of a section's CSV, or None when the run has no such section. summary.json's
    `key` says the run made the file, so then its absence is an error, not a missing section."""
    path = os.path.join(out_dir, name)
    if key not in s and not os.path.isfile(path):
        return None
    if not isinstance(s.get(key, {}), dict):
        raise InputError(f"{os.path.join(out_dir, 'summary.json')}: '{key}' is not an object")
    if not os.path.isfile(path):
        raise InputError(f"{path}: missing (summary.json has a '{key}' section, whose run "
                         "writes it)")
    return path


FCT_STATES = ("completed", "failed", "in_flight")


def load_transport(out_dir, s):
    """NIC runs: fct.csv, and qp_rates.csv when nic.rate_trace_interval made it."""
    path = section_input(out_dir, s, "transport", "fct.csv")
    if not path:
        return None
    fct = read_columns(path, ["id", "src", "dst", "bytes", "verb", "fct_ns", "slowdown", "state"],
                       text=("verb", "state"), choices={"state": FCT_STATES})
    nic = {"summary": s.get("transport", {}), "fct": fct, "rates": None,
           "counts": {k: fct["state"].count(k) for k in FCT_STATES}}
    path = os.path.join(out_dir, "qp_rates.csv")
    if os.path.isfile(path):
        cols = ["time_ns", "nic", "peer", "qp", "rate_gbps"]
        r = read_columns(path, cols)
        qps = {}
        for row, (t, n, p, q, v) in enumerate(zip(*(r[c] for c in cols)), start=2):
            if math.isnan(n + p + q + t):
                raise InputError(f"{path}:{row}: empty time_ns, nic, peer or qp")
            ts, vs = qps.setdefault((int(n), int(p), int(q)), (array.array("d"), array.array("d")))
            ts.append(t / 1e3)
            vs.append(v)
        nic["rates"] = qps
    return nic


def load_workload(out_dir, s):
    """Workload runs: collectives.csv (one row per call) and steps.csv (per call, its steps)."""
    path = section_input(out_dir, s, "workload", "collectives.csv")
    if not path:
        return None
    _, calls = as_dicts(path, ["name", "algorithm", "ranks", "bytes", "time_ns", "algbw_GBps",
                               "busbw_GBps", "slowest_rank", "state"],
                        text=("name", "algorithm", "state", "tag"))
    for i, c in enumerate(calls, start=2):
        if c["state"] not in ("finished", "unfinished"):
            raise InputError(f"{path}:{i}: state '{c['state']}' is not finished or unfinished")
    path = os.path.join(out_dir, "steps.csv")
    if not os.path.isfile(path):
        raise InputError(f"{path}: missing (a workload run writes it with collectives.csv)")
    steps = read_columns(path, ["name", "step", "time_ns", "messages", "state"],
                         text=("name", "state"), choices={"state": ("finished", "unfinished")})
    return {"summary": s.get("workload", {}), "calls": calls, "steps": steps}


def load_run(out_dir):
    s = read_json(os.path.join(out_dir, "summary.json"))
    v = s.get("schema_version") if isinstance(s, dict) else None
    if isinstance(v, int) and v != SCHEMA_VERSION:  # its columns are named as another version's
        raise InputError(f"{os.path.join(out_dir, 'summary.json')}: schema_version {v}, this "
                         f"report reads {SCHEMA_VERSION} (docs/results.md): run it again with this "
                         "build")
    for key in ("throughput", "latency_ns", "buffer", "packets", "window", "invariants"):
        if key not in s:
            raise InputError(f"{os.path.join(out_dir, 'summary.json')}: no '{key}' section")
    run = {"dir": out_dir, "summary": s,
           "perf": read_json(os.path.join(out_dir, "perf.json"), required=False)}
    for name in ("ports.csv", "occupancy.csv"):
        if not os.path.isfile(os.path.join(out_dir, name)):
            raise InputError(f"{os.path.join(out_dir, name)}: missing (is {out_dir} a fabricsim "
                             "run directory?)")
    _, run["ports"] = as_dicts(os.path.join(out_dir, "ports.csv"),
                               ["switch", "port", "host", "latency_count_out"],
                               text=("switch", "peer"))
    header, rows = csv_table(os.path.join(out_dir, "occupancy.csv"), ["time_ns", "total_bytes"])
    run["occ_time"] = [r[0] for r in rows]
    run["occ_total"] = [r[header.index("total_bytes")] for r in rows]
    # Per port: "portN_bytes" (one switch) or "SWITCH.portN_bytes" (several), grouped by switch.
    one = (s.get("switches") or [{"name": "switch0"}])[0]["name"]
    occ = {}
    for i, h in enumerate(header[2:], start=2):
        if not h.endswith("_bytes"):
            continue
        sw, _, port = h[:-len("_bytes")].rpartition(".")
        occ.setdefault(sw or one, {})[port] = [r[i] for r in rows]
    run["occ"] = occ
    links = os.path.join(out_dir, "links.csv")
    run["links"] = as_dicts(links, ["from", "to"], text=("from", "to"))[1] \
        if os.path.isfile(links) else None
    run["nic"] = load_transport(out_dir, s)
    run["wl"] = load_workload(out_dir, s)
    return run


# --- HTML helpers -------------------------------------------------------------------------------

def esc(x):
    return html.escape(str(x), quote=True)


def num(v, digits=4):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:.{digits}g}"
    return str(v)


def table(rows, header=None, cls=""):
    out = [f'<table class="{cls}">' if cls else "<table>"]
    if header:
        out.append("<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def verdict(ok, text):
    return f'<span class="{"ok" if ok else "bad"}">{esc(text)}</span>'


def figure_html(fig, alt, dpi=90):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    import matplotlib.pyplot as plt
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (f'<figure><img class="plot" alt="{esc(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{esc(alt)}</figcaption></figure>")


def flatten(obj, prefix=""):
    """Nested config -> [(dotted key, value)], lists kept whole."""
    if isinstance(obj, dict):
        out = []
        for k in sorted(obj):
            out += flatten(obj[k], f"{prefix}.{k}" if prefix else k)
        return out
    return [(prefix, json.dumps(obj) if isinstance(obj, (list, bool)) or obj is None else obj)]


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1300px; }}
h1 {{ font-size: 1.4em; }} h2 {{ font-size: 1.15em; border-bottom: 1px solid #ccc; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1em 0; font-size: 0.85em; }}
td, th {{ border: 1px solid #ccc; padding: 2px 6px; text-align: right; }}
th {{ background: #eee; }} td:first-child, th:first-child {{ text-align: left; }}
.ok {{ color: #07630a; font-weight: bold; }} .bad {{ color: #b00; font-weight: bold; }}
.note {{ color: #555; font-size: 0.9em; }}
.alert {{ background: #fde8e8; border: 2px solid #b00; color: #b00; font-weight: bold;
          padding: 0.4em 0.7em; }}
img.plot {{ max-width: 100%; border: 1px solid #ddd; }}
figure {{ margin: 0.5em 0 1.2em 0; }} figcaption {{ font-size: 0.8em; color: #555; }}
pre {{ background: #f5f5f5; padding: 0.5em; overflow-x: auto; font-size: 0.8em; }}
</style></head>
<body>
<h1>{title}</h1>
{body}
<p class="note">Written by scripts/report.py from {source}. Self-contained: no external files.</p>
<script>
// For the browser check: how many plots decoded (a broken image has naturalWidth 0).
window.addEventListener("load", function () {{
  var imgs = document.querySelectorAll("img.plot"), ok = 0;
  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  document.body.setAttribute("data-plots-decoded", ok + "/" + imgs.length);
}});
</script>
</body></html>
"""


# --- one run ------------------------------------------------------------------------------------

def run_verdicts(run):
    s = run["summary"]
    inv = s["invariants"]
    win = s["window"]
    rows = [["invariants (conservation, progress, liveness)",
             verdict(inv.get("ok", False), "ok" if inv.get("ok") else "VIOLATED")]]
    for v in inv.get("violations", []):
        rows.append(["violation", f'<span class="bad">{esc(v)}</span>'])
    drained = win.get("drained", True)
    rows.append(["window drained", verdict(drained, "yes" if drained else
                                           f"NOT drained ({s['packets']['window'].get('in_flight', '?')}"
                                           " measured packets still inside)")])
    rows.append(["run complete", verdict(not s.get("interrupted"),
                                         "interrupted: partial results" if s.get("interrupted")
                                         else "yes")])
    return table(rows + work_verdicts(run), ["check", "verdict"], cls="verdicts")


def run_summary_tables(run):
    s = run["summary"]
    tp, lat, buf, pk, win = s["throughput"], s["latency_ns"], s["buffer"], s["packets"], s["window"]
    rows = [
        ["configuration", esc(s.get("config_name", "?")), ""],
        ["seed", num(s.get("seed")), ""],
        ["fabricsim version", esc(s.get("fabricsim_version", "?")), ""],
        ["topology", esc((s.get("topology") or s.get("config", {}).get("topology") or {})
                          .get("kind", "?")),
         f"{len(s.get('switches', []))} switch(es), {num(s.get('hosts'))} hosts"],
        ["measurement window (ns)", f"{num(win['start_ns'])} .. {num(win['end_ns'])}",
         f"simulated to {num(win.get('sim_end_ns'))} ns"],
        ["offered load", num(tp["offered_load"]), "fraction of capacity, window"],
        ["accepted load", num(tp["accepted_load"]), "fraction of capacity, window"],
    ]
    for k in ("mean", "min", "p50", "p99", "p999", "max"):
        if k in lat:
            rows.append([f"latency {k} (ns)", num(lat[k], 6), "measured packets"])
    rows.append(["latency count", num(lat.get("count")), "packets"])
    rows += [
        ["buffer peak", fmt_bytes(buf["peak_bytes"]), f"switch {esc(buf.get('switch', '?'))}"],
        ["buffer mean", fmt_bytes(buf["mean_bytes"]), f"of {fmt_bytes(buf.get('capacity_bytes'))}"],
    ]
    for k in ("injected", "delivered", "dropped", "lost_on_links", "in_flight", "reordered",
              "ce_marked_delivered"):
        if k in pk:
            rows.append([f"packets {k}", num(pk[k]), "run" if k != "in_flight" else "at end"])
    hq = s.get("host_queues")
    if hq:
        for k in sorted(hq):
            rows.append([f"host queues {k}", num(hq[k]), ""])
    perf = run.get("perf")
    if perf:
        for k in ("wall_s", "cycles_per_s", "slowdown", "peak_rss_mb"):
            if k in perf:
                rows.append([f"perf {k}", num(perf[k]), "perf.json (wall clock)"])
    out = [table(rows, ["figure", "value", "note"])]
    sw = s.get("switches", [])
    if sw:
        out.append("<h3>Per switch</h3>")
        out.append(table([[esc(x["name"]), fmt_bytes(x["buffer"]["peak_bytes"]),
                           fmt_bytes(x["buffer"]["mean_bytes"]),
                           num(x["packets"]["received"]), num(x["packets"]["departed"]),
                           num(x["packets"]["dropped"]), num(x["packets"]["in_flight"])]
                          for x in sw],
                         ["switch", "buffer peak", "buffer mean", "received", "departed",
                          "dropped", "in flight"]))
    fc = s.get("flow_control")
    if fc and fc.get("mode", "none") != "none":
        out.append(f"<h3>Flow control ({esc(fc['mode'])})</h3>")
        keys = ["pause_frames_sent", "pause_frames_received", "paused_ns", "lossless_drops",
                "fc_packets_sent", "credit_stall_ns", "headroom_peak_bytes"]
        rows = []
        for name, v in list((fc.get("switches") or {}).items()) + [("hosts", fc.get("hosts", {}))]:
            rows.append([esc(name)] + [num(v.get(k)) for k in keys])
        out.append(table(rows, ["device"] + keys))
    return "\n".join(out)


def plot_latency(plt, run):
    s = run["summary"]
    lat = s["latency_ns"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4.2), constrained_layout=True)
    # The run's distribution as its known quantiles (the summary keeps percentiles, not samples).
    qs = [(q, lat[k]) for q, k in ((0.0, "min"), (0.5, "p50"), (0.99, "p99"), (0.999, "p999"),
                                   (1.0, "max")) if k in lat and lat.get("count", 0) > 0]
    a.set_title("latency distribution (all measured packets)")
    if qs:
        # x: the tail in "nines" so p50, p99, p99.9 are evenly spaced; max at the right edge.
        def nines(q):
            return -math.log10(max(1e-4, 1.0 - q))
        a.plot([nines(q) for q, _ in qs], [v for _, v in qs], "o-", color="C0")
        for q, v in qs:
            a.annotate(f"{v:.0f}", (nines(q), v), textcoords="offset points", xytext=(4, 4),
                       fontsize=8)
        a.axhline(lat["mean"], color="C3", ls=":", label=f"mean {lat['mean']:.1f} ns")
        a.set_xticks([nines(q) for q, _ in qs])
        a.set_xticklabels(["min" if q == 0 else "max" if q == 1 else f"p{q * 100:g}"
                           for q, _ in qs])
        a.legend(fontsize=8)
    else:
        a.text(0.5, 0.5, "no measured packets", ha="center", transform=a.transAxes)
    a.set_ylabel("latency (ns)")
    a.set_ylim(bottom=0)
    a.grid(alpha=0.3)
    # Per host port: p50 .. p99 .. max, sorted by p99, so a slow port stands out.
    pts = [p for p in run["ports"] if p["host"] >= 0 and p["latency_count_out"] > 0]
    pts.sort(key=lambda p: p.get("latency_p99_ns_out", 0))
    b.set_title(f"latency per host port ({len(pts)} ports, sorted by p99)")
    if pts:
        x = list(range(len(pts)))
        for col, lab, c in (("latency_max_ns_out", "max", "0.6"), ("latency_p99_ns_out", "p99", "C3"),
                            ("latency_p50_ns_out", "p50", "C0")):
            if col in pts[0]:
                b.plot(x, [p[col] for p in pts], ".", color=c, label=lab, ms=4)
        b.set_xlabel("host ports, sorted")
        b.legend(fontsize=8)
    b.set_ylabel("latency (ns)")
    b.set_ylim(bottom=0)
    b.grid(alpha=0.3)
    return figure_html(fig, "Latency: the run's quantiles, and p50/p99/max per host port")


def mark_window(ax, s):
    win = s["window"]
    if win["start_ns"] > 0:
        ax.axvspan(0, win["start_ns"], color="0.92", zorder=0, label="warm-up")
    ax.axvline(win["end_ns"], color="k", ls=":", lw=1, label="window end")


def mean_in_window(series, t, s):
    win = s["window"]
    vals = [v for x, v in zip(t, series) if win["start_ns"] <= x <= win["end_ns"]
            and not math.isnan(v)] or [v for v in series if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else 0.0


def plot_occupancy(plt, run, top):
    s = run["summary"]
    t = run["occ_time"]
    if not t:
        interval = s.get("config", {}).get("stats", {}).get("occupancy_interval", "?")
        return (f'<p class="note">No occupancy samples in occupancy.csv (stats.occupancy_interval '
                f"= {esc(interval)}); rerun with e.g. --set stats.occupancy_interval=100ns.</p>")
    switches = sorted(run["occ"], key=lambda sw: -max(
        (mean_in_window(v, t, s) for v in run["occ"][sw].values()), default=0))
    note = ""
    if len(switches) > MAX_SWITCH_PANELS:
        note = (f'<p class="note">{len(switches)} switches: the {MAX_SWITCH_PANELS} with the busiest '
                "egress port (mean occupancy over the window) are drawn.</p>")
        switches = switches[:MAX_SWITCH_PANELS]
    order = [sw for sw in run["occ"] if sw in switches]  # topology order
    rows = 1 + len(order)
    fig, axes = plt.subplots(rows, 1, figsize=(13, 2.6 * rows), constrained_layout=True,
                             squeeze=False)
    from matplotlib import ticker
    ax = axes[0][0]
    ax.set_title("shared buffer occupancy, total over all switches")
    mark_window(ax, s)
    ax.plot(t, run["occ_total"], lw=1.2, color="C0", label="total")
    for i, sw in enumerate(order, start=1):
        ax = axes[i][0]
        ports = run["occ"][sw]
        ranked = sorted(ports, key=lambda p: (-mean_in_window(ports[p], t, s), p))[:top]
        ax.set_title(f"{sw}: egress-port occupancy, the {len(ranked)} busiest of {len(ports)}")
        mark_window(ax, s)
        for p in ranked:
            ax.plot(t, ports[p], lw=1, label=p)
    for row in axes:
        a = row[0]
        a.yaxis.set_major_formatter(ticker.EngFormatter(unit="B"))
        a.set_xlim(left=0)
        a.set_ylim(bottom=0)
        a.grid(alpha=0.3)
        a.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0)
    axes[-1][0].set_xlabel("time (ns)")
    return note + figure_html(fig, "Buffer occupancy over time (occupancy.csv): total, and per "
                                   "switch its busiest egress ports")


def plot_flow_control(plt, run):
    s = run["summary"]
    fc = s.get("flow_control") or {}
    mode = fc.get("mode", "none")
    ports = run["ports"]
    cols = [c for c in ("paused_ns", "credit_stall_ns") if ports and c in ports[0]
            and any(p[c] > 0 for p in ports)]
    classes = []
    for key, label in (("paused_ns_by_priority", "paused ns, by priority"),
                       ("credit_stall_ns_by_vl", "credit stall ns, by VL")):
        per = [0.0] * 0
        for dev in list((fc.get("switches") or {}).values()) + [fc.get("hosts") or {}]:
            v = dev.get(key) or []
            per = [a + b for a, b in zip(per + [0.0] * (len(v) - len(per)),
                                         v + [0.0] * (len(per) - len(v)))]
        if any(x > 0 for x in per):
            classes.append((label, per))
    if not cols and not classes:
        return (f'<p class="note">No pause or credit-stall time in this run (flow_control.mode = '
                f"{esc(mode)}).</p>")
    n = len(cols) + (1 if classes else 0)
    fig, axes = plt.subplots(n, 1, figsize=(13, 3.0 * n), constrained_layout=True, squeeze=False)
    i = 0
    for c in cols:
        ax = axes[i][0]
        i += 1
        busy = [p for p in ports if p[c] > 0]
        busy.sort(key=lambda p: -p[c])
        busy = busy[:60]
        ax.set_title(f"{c} per switch port (window start to end; the {len(busy)} highest)")
        ax.bar(range(len(busy)), [p[c] for p in busy], color="C1" if c == "paused_ns" else "C4")
        ax.set_xticks(range(len(busy)))
        ax.set_xticklabels([f"{p['switch']}.p{int(p['port'])}" for p in busy], rotation=90,
                           fontsize=6)
        ax.set_ylabel("ns")
        ax.grid(axis="y", alpha=0.3)
    if classes:
        ax = axes[i][0]
        ax.set_title("per class, all switches and hosts (window start to end)")
        width = 0.8 / len(classes)
        for j, (label, per) in enumerate(classes):
            ax.bar([k + j * width for k in range(len(per))], per, width=width, label=label)
        ax.set_xlabel("priority / virtual lane")
        ax.set_ylabel("ns")
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    return figure_html(fig, "Pause and credit-stall time (ports.csv, summary.json flow_control)")


# --- NIC transport and collectives --------------------------------------------------------------

# QPs drawn one line each in the rate plot; the others are in the grey band of all QPs.
MAX_QP_LINES = 12
# Rows of the per-call and not-done tables; the page says how many more there are.
MAX_TABLE_ROWS = 200
MAX_NOT_DONE_ROWS = 20


def alert(text):
    return f'<p class="alert">{esc(text)}</p>'


def nearest_rank(v, q):
    """The summary's slowdown percentiles (models/sim/report.cpp): nearest rank of sorted v."""
    return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]


def distribution_row(label, v):
    """count, mean, min, p50, p95, p99, max of sorted v."""
    if not v:
        return [label, "0"] + ["-"] * 6
    return [label, num(len(v)), num(sum(v) / len(v), 5), num(v[0], 5)] + \
        [num(nearest_rank(v, q), 5) for q in (0.5, 0.95, 0.99)] + [num(v[-1], 5)]


def messages_text(c):
    total = sum(c.values())
    if c["failed"] == 0 and c["in_flight"] == 0:
        return f"all {total:,} completed"
    return (f"WORK NOT DONE: {c['completed']:,} of {total:,} completed, {c['failed']:,} failed, "
            f"{c['in_flight']:,} in flight at the end")


def calls_text(wl):
    calls = wl["calls"]
    left = sum(1 for c in calls if c["state"] != "finished")
    steps_left = wl["steps"]["state"].count("unfinished")
    nodes_left = wl["summary"].get("nodes_unfinished", 0)
    if not left and not steps_left and not nodes_left:
        return True, f"all {len(calls):,} finished"
    return False, (f"WORK NOT DONE: {len(calls) - left:,} of {len(calls):,} calls finished, "
                   f"{steps_left:,} steps and {num(nodes_left)} graph nodes unfinished")


COUNT_KEYS = (("completed", "messages_completed"), ("failed", "messages_failed"),
              ("in_flight", "messages_in_flight"))


def counts_disagree(nic):
    """States whose fct.csv count differs from summary.json's (files of two runs, a cut file)."""
    return [k for k, key in COUNT_KEYS
            if key in nic["summary"] and nic["summary"][key] != nic["counts"][k]]


def work_verdicts(run):
    """Verdict rows for the top of the page: work the run was given and did not do (issue #37:
    a run that did not complete its work must look like it before any figure is read)."""
    rows = []
    if run["nic"]:
        c, off = run["nic"]["counts"], counts_disagree(run["nic"])
        text = messages_text(c) + (f"; fct.csv disagrees with summary.json on {', '.join(off)}"
                                   if off else "")
        rows.append(["NIC messages (fct.csv)",
                     verdict(not c["failed"] and not c["in_flight"] and not off, text)])
    if run["wl"]:
        rows.append(["collective calls (collectives.csv, steps.csv)",
                     verdict(*calls_text(run["wl"]))])
    return rows


def message_counts(nic):
    """Counts from fct.csv, next to summary.json's: a disagreement says the files are not one
    run's (or a bug), so it is flagged rather than one of them trusted."""
    c, t = nic["counts"], nic["summary"]
    rows = []
    for state, key in COUNT_KEYS + (("posted", "messages_posted"),):
        label, n = state.replace("_", " "), c.get(state, sum(c.values()))
        cell = num(n)
        if label in ("failed", "in flight") and n:
            cell = f'<span class="bad">{cell}</span>'
        theirs = t.get(key)
        other = "-" if theirs is None else num(theirs) if theirs == n else \
            f'<span class="bad">{num(theirs)} (differs from fct.csv)</span>'
        rows.append([label, cell, other])
    return table(rows, ["messages", "fct.csv", "summary.json transport"], cls="msg-counts")


def not_done_messages(nic):
    f = nic["fct"]
    idx = [i for i, st in enumerate(f["state"]) if st != "completed"]
    if not idx:
        return ""
    rows = [[num(f["id"][i]), num(f["src"][i]), num(f["dst"][i]), num(f["bytes"][i]),
             esc(f["verb"][i]), f'<span class="bad">{esc(f["state"][i])}</span>']
            for i in idx[:MAX_NOT_DONE_ROWS]]
    more = len(idx) - len(rows)
    more = f'<p class="note">{more:,} more not listed (fct.csv has them all).</p>' if more else ""
    return ("<h3>Messages not completed</h3>" + more +
            table(rows, ["id", "src", "dst", "bytes", "verb", "state"], cls="msg-not-done"))


def plot_cdfs(plt, fct_us, slow):
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.2), constrained_layout=True)
    for ax, v, title, xlabel in ((axes[0], fct_us, "flow completion time", "FCT (us)"),
                                 (axes[1], slow, "slowdown", "slowdown: FCT / FCT alone on the "
                                  "idle fabric")):
        ax.set_title(f"{title}: CDF of {len(v):,} completed messages")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("fraction of messages")
        ax.grid(alpha=0.3)
        if not v:
            ax.text(0.5, 0.5, "no completed messages", ha="center", transform=ax.transAxes)
            continue
        # At most ~2000 points: the curve looks the same and the PNG stays small.
        step = max(1, len(v) // 2000)
        ix = list(range(0, len(v), step)) + ([len(v) - 1] if (len(v) - 1) % step else [])
        ax.step([v[i] for i in ix], [(i + 1) / len(v) for i in ix], where="post", color="C0")
        for q, c in ((0.5, "C2"), (0.99, "C3")):
            x = nearest_rank(v, q)
            ax.axvline(x, color=c, ls=":", label=f"p{q * 100:g} {x:.4g}")
        if v[0] > 0 and v[-1] / v[0] > 20:  # a long tail: log x keeps the body readable
            ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=8, loc="lower right")
    return figure_html(fig, "FCT and slowdown distributions (fct.csv, completed messages)")


def plot_qp_rates(plt, nic):
    qps = nic["rates"]
    if not qps:
        return '<p class="note">qp_rates.csv has no rows (no QP with a congestion control).</p>'
    # The QPs whose rate fell lowest are the ones congestion control acted on: draw those.
    shown = sorted(qps, key=lambda k: (min(qps[k][1]), k))[:MAX_QP_LINES]
    fig, ax = plt.subplots(figsize=(13, 4.2), constrained_layout=True)
    if len(shown) < len(qps):
        # The omitted QPs still show: the band spans every QP's rate at each sample time.
        band = {}
        for ts, vs in qps.values():
            for t, v in zip(ts, vs):
                lo, hi = band.get(t, (v, v))
                band[t] = (min(lo, v), max(hi, v))
        times = sorted(band)
        ax.fill_between(times, [band[t][0] for t in times], [band[t][1] for t in times],
                        step="post", color="0.85", label=f"all {len(qps)} QPs: min..max")
    for k in shown:
        ax.step(qps[k][0], qps[k][1], where="post", lw=1, label=f"nic{k[0]}->{k[1]} qp{k[2]}")
    ax.set_title(f"QP pacer rates over time: {len(shown)} of {len(qps)} QPs drawn")
    ax.set_xlabel("time (us)")
    ax.set_ylabel("rate (Gb/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0)
    omitted = len(qps) - len(shown)
    note = (f'<p class="note">{len(qps):,} QPs in qp_rates.csv; drawn: the {len(shown)} whose '
            f"rate fell lowest, {omitted:,} omitted (inside the grey band).</p>" if omitted else "")
    lost = nic["summary"].get("rate_rows_not_recorded", 0)
    if lost:
        note += alert(f"qp_rates.csv is truncated: {num(lost)} rows not recorded "
                      "(nic.rate_trace_interval too short for the run).")
    return note + figure_html(fig, "Per-QP pacer rate (qp_rates.csv)")


def transport_section(plt, nic, wl):
    f, t = nic["fct"], nic["summary"]
    c = nic["counts"]
    parts = []
    if c["failed"] or c["in_flight"]:
        parts.append(alert(messages_text(c) + ": the figures below cover the completed "
                           "messages only."))
    if wl and wl["summary"].get("nodes_unfinished"):
        # A workload posts a message when its rank reaches it: the rest are in no file's rows.
        parts.append(alert(f"The workload has {num(wl['summary']['nodes_unfinished'])} unfinished "
                           "graph nodes: messages it never posted are not in fct.csv nor counted "
                           "here."))
    parts += [message_counts(nic), not_done_messages(nic)]
    done = [i for i, st in enumerate(f["state"]) if st == "completed"]
    fct_us = sorted(f["fct_ns"][i] / 1e3 for i in done if not math.isnan(f["fct_ns"][i]))
    slow = sorted(f["slowdown"][i] for i in done if not math.isnan(f["slowdown"][i]))
    # Exact, from fct.csv: summary.json's fct_ns percentiles are a histogram's (within 2^-10).
    parts.append("<h3>Flow completion time and slowdown (fct.csv, completed messages)</h3>")
    parts.append(table([distribution_row("FCT (us)", fct_us), distribution_row("slowdown", slow)],
                       ["figure", "count", "mean", "min", "p50", "p95", "p99", "max"],
                       cls="fct-dist"))
    if (t.get("slowdown") or {}).get("exact") is False:
        parts.append('<p class="note">Slowdowns are estimates: a chip on the way has no exact '
                     "zero-load closed form (summary.json transport.slowdown.exact).</p>")
    if len(slow) < len(fct_us):
        parts.append(f'<p class="note">{len(fct_us) - len(slow):,} completed messages have no '
                     "slowdown in fct.csv (no idle-fabric replay for them).</p>")
    parts.append(plot_cdfs(plt, fct_us, slow))
    # Loss recovery and congestion signals first; every other scalar the summary has after.
    first = ["retransmitted_packets", "timeouts", "naks_sent", "cnps_sent", "cnps_received",
             "data_packets_sent", "acks_sent", "out_of_order_packets", "duplicate_packets"]
    keys = [k for k in first if k in t] + sorted(
        k for k in t if k not in first and not k.startswith("messages_")
        and not isinstance(t[k], (dict, list)))
    if keys:
        parts += ["<h3>Transport counters (summary.json transport, whole run)</h3>",
                  table([[esc(k), num(t[k])] for k in keys], ["counter", "value"],
                        cls="transport-counters")]
    if nic["rates"] is not None:
        parts += ["<h3>Per-QP rates</h3>", plot_qp_rates(plt, nic)]
    else:
        parts.append('<p class="note">No qp_rates.csv: per-QP rates need '
                     "nic.rate_trace_interval (e.g. --set nic.rate_trace_interval=1us).</p>")
    return "\n".join(parts)


def steps_by_call(steps):
    """Per call name: [steps, unfinished, slowest finished step's time in ns]."""
    per = {}
    for name, tm, st in zip(steps["name"], steps["time_ns"], steps["state"]):
        p = per.setdefault(name, [0, 0, math.nan])
        p[0] += 1
        if st != "finished":
            p[1] += 1
        elif not math.isnan(tm) and not tm <= p[2]:
            p[2] = tm
    return per


def plot_busbw(plt, calls):
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4.2), constrained_layout=True)
    x = list(range(len(calls)))
    done = [i for i in x if calls[i]["state"] == "finished"]
    left = [i for i in x if i not in set(done)]
    for ax, col, ylabel, scale in ((a, "busbw_GBps", "busbw (GB/s)", 1.0),
                                   (b, "time_ns", "time (us)", 1e-3)):
        y = [calls[i][col] * scale for i in done]
        if len(calls) <= 64:
            bars = ax.bar(done, y, color="C0")
            ax.set_xlim(-1, max(len(calls), 6))  # a lone call: a bar, not the whole panel
            if len(calls) <= 24:
                ax.bar_label(bars, fmt="%.4g", fontsize=7)
        else:
            ax.plot(done, y, ".-", color="C0", ms=3, lw=0.8)
        if not done:
            ax.text(0.5, 0.5, "no call finished", ha="center", transform=ax.transAxes)
        if left:  # an unfinished call has no time: a red cross on the axis, not a missing bar
            ax.plot(left, [0] * len(left), "x", color="#b00", ms=8, mew=2, clip_on=False,
                    label=f"{len(left)} unfinished")
            ax.legend(fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_xlabel("call (collectives.csv order)")
        ax.set_ylim(bottom=0)
        ax.grid(axis="y", alpha=0.3)
        if len(calls) <= 24:
            ax.set_xticks(x)
            ax.set_xticklabels([c["name"] for c in calls], rotation=30, ha="right", fontsize=7)
    a.set_title("bus bandwidth per call (nccl-tests busbw)")
    b.set_title("time per call")
    return figure_html(fig, "Collective calls: busbw and time per call (collectives.csv)")


def workload_summary(w):
    """summary.json's workload section, every key: scalars as they are, {count, mean, min, max}
    objects on one line, lists by their length (iterations: the per-call table has the calls)."""
    rows = []
    for k in sorted(w):
        v = w[k]
        if isinstance(v, dict):
            v = ", ".join(f"{sk} {num(sv, 6)}" for sk, sv in v.items())
        elif isinstance(v, list):
            v = f"{len(v):,} entries"
        else:
            v = num(v, 6)
        rows.append([esc(k), esc(v)])
    return table(rows, ["workload (summary.json)", "value"], cls="workload-summary")


def collectives_section(plt, wl):
    calls, steps = wl["calls"], wl["steps"]
    ok, text = calls_text(wl)
    parts = [] if ok else [alert(text + ": an unfinished call has no time nor bandwidth.")]
    parts.append(workload_summary(wl["summary"]))
    if calls:
        parts.append(plot_busbw(plt, calls))
    per = steps_by_call(steps)
    # The first calls, then every unfinished one past them: those are what a reader looks for.
    show = [i for i, c in enumerate(calls) if i < MAX_TABLE_ROWS or c["state"] != "finished"]
    rows = []
    for i in show:
        c = calls[i]
        n, n_left, slowest = per.get(c["name"], [0, 0, math.nan])
        fin = c["state"] == "finished"
        rows.append([esc(c["name"]), esc(c["algorithm"]), num(c["ranks"]), num(c["bytes"]),
                     num(c["time_ns"] / 1e3, 6) if fin else "-",
                     f"{c['algbw_GBps']:.3f}" if fin else "-",
                     f"{c['busbw_GBps']:.3f}" if fin else "-",
                     f"{n - n_left:,} of {n:,}" if not n_left else
                     f'<span class="bad">{n - n_left:,} of {n:,}</span>',
                     num(slowest / 1e3, 6), num(c["slowest_rank"]),
                     verdict(fin, c["state"])])
    parts.append(table(rows, ["call", "algorithm", "ranks", "bytes", "time (us)", "algbw (GB/s)",
                              "busbw (GB/s)", "steps finished", "slowest step (us)",
                              "slowest rank", "state"], cls="coll-calls"))
    if len(show) < len(calls):
        parts.append(f'<p class="note">{len(calls) - len(show):,} finished calls past the first '
                     f"{MAX_TABLE_ROWS} not listed (collectives.csv has them all).</p>")
    left = [i for i, st in enumerate(steps["state"]) if st != "finished"]
    if left:
        rows = [[esc(steps["name"][i]), num(steps["step"][i]), num(steps["messages"][i])]
                for i in left[:MAX_NOT_DONE_ROWS]]
        parts += ["<h3>Steps not finished</h3>",
                  table(rows, ["call", "step", "messages"], cls="steps-not-done")]
        if len(left) > len(rows):
            parts.append(f'<p class="note">{len(left) - len(rows):,} more not listed '
                         "(steps.csv has them all).</p>")
    return "\n".join(parts)


def run_body(run, top):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    s = run["summary"]
    parts = ["<h2>Verdicts</h2>", run_verdicts(run),
             "<h2>Summary</h2>", run_summary_tables(run)]
    # Present only for the runs that have them (a switch-only run has neither).
    if run["nic"]:
        parts += ['<h2 id="transport">Transport: NIC messages</h2>',
                  transport_section(plt, run["nic"], run["wl"])]
    if run["wl"]:
        parts += ['<h2 id="collectives">Collectives</h2>', collectives_section(plt, run["wl"])]
    parts += [
             "<h2>Latency</h2>", plot_latency(plt, run),
             "<h2>Buffer occupancy over time</h2>", plot_occupancy(plt, run, top),
             "<h2>Flow control: pause and credit stalls</h2>", plot_flow_control(plt, run),
             "<h2>Per-class throughput</h2>",
             '<p class="note">Not in the result files: fabricsim reports throughput per port and '
             "for the whole run, not per traffic class (see the per-class pause and credit-stall "
             "times above).</p>"]
    cfg = s.get("config")
    if cfg:
        parts += ["<h2>Configuration (resolved)</h2>",
                  table([[esc(k), esc(v)] for k, v in flatten(cfg)], ["key", "value"])]
    return "\n".join(parts)


# --- a sweep ------------------------------------------------------------------------------------

def load_sweep(out_dir):
    path = os.path.join(out_dir, "sweep.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise InputError(f"{path}: no rows")
    header = list(rows[0].keys())
    if "point" not in header or "status" not in header:
        raise InputError(f"{path}:1: no column 'point' or 'status' (is it a sweep.py table?)")
    varied = [h for h in header[:header.index("point")] if h != "seed"]
    import sweep_plot
    return {"dir": out_dir, "rows": rows, "header": header, "varied": varied,
            "setup": sweep_plot.read_setup(out_dir)}


def fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def plot_sweep(sw):
    """sweep.py's own figure (the one `sweep.py --plot` writes: 1386 x 924 px, a style per line,
    readable log ticks, 95% CI bars, unstable points ringed, the setup stated in its panel),
    from the runs' table with the tolerances the sweep recorded."""
    import sweep_plot
    import sweep_stats
    header, rows = sw["header"], sw["rows"]
    if "seed" not in header or not sw["varied"]:
        return '<p class="note">Nothing to plot (the sweep varied no key).</p>'
    if not any(r["status"] == "ok" for r in rows):
        return '<p class="note">Nothing to plot (no successful point).</p>'
    keys = header[:header.index("seed")]
    setup = sw["setup"] or {}

    def tolerance(name, default):
        v = setup.get(name)
        return v if isinstance(v, (int, float)) and 0 <= v < 1 else default
    points = sweep_stats.point_stats(
        rows, keys, tolerance("load_tolerance", sweep_stats.DEFAULT_LOAD_TOLERANCE),
        tolerance("drift_tolerance", sweep_stats.DEFAULT_DRIFT_TOLERANCE))
    info = sweep_plot.describe(sw["setup"], points, keys, rows)
    fig = sweep_plot.figure(points, keys, info)
    return figure_html(fig, f"Sweep: latency and accepted load against {keys[0]}",
                       dpi=sweep_plot.FIG_DPI)


def setup_table(sw):
    """What every point shares and what varies: the base configuration, the fixed overrides, the
    varied keys with their values and the seeds (sweep_setup.json)."""
    s = sw["setup"]
    if s is None:
        return ('<p class="note">sweep_setup.json is missing or not sweep.py\'s: the base '
                "configuration and the fixed overrides are not recorded.</p>")
    rows = [["base configuration", esc(s["config"])],
            ["fixed overrides (--set)", "<br>".join(esc(x) for x in s["fixed"]) or "none"]]
    rows += [["speed setting (same results)", esc(x)] for x in s.get("speed_only") or []]
    for kv in s.get("varied") or []:
        if isinstance(kv, list) and len(kv) == 2 and isinstance(kv[1], list):
            rows.append([f"varied: {esc(kv[0])}", esc(", ".join(map(str, kv[1])))])
    seeds = s.get("seeds")
    rows.append(["seeds", esc(", ".join(map(str, seeds))) if seeds
                 else "the configuration's (sim.seed)"])
    return table(rows, ["setting", "value"])


def sweep_body(sw):
    rows = sw["rows"]
    failed = [r for r in rows if r["status"] != "ok"]
    bad_inv = [r for r in rows if r.get("invariants_ok") not in ("true", "True", "1")]
    verdicts = table([
        ["points", num(len(rows))],
        ["points that ran", verdict(not failed, f"{len(rows) - len(failed)} of {len(rows)}")],
        ["invariants hold", verdict(not bad_inv, f"{len(rows) - len(bad_inv)} of {len(rows)}")],
    ] + [["failed point", f'<span class="bad">{esc(r["point"])}: {esc(r.get("error", ""))}</span>']
         for r in failed], ["check", "verdict"])
    show = sw["varied"] + [h for h in ("seed", "offered_load", "accepted_load", "latency_mean_ns",
                                       "latency_p99_ns", "latency_max_ns", "buffer_peak_bytes",
                                       "dropped", "invariants_ok", "status", "wall_s")
                           if h in sw["header"]]
    points = table([[esc(r[h]) if h in sw["varied"] or h in ("status", "invariants_ok")
                     else num(fnum(r[h])) if r[h] != "" else "-" for h in show] for r in rows],
                   show)
    return "\n".join(["<h2>Verdicts</h2>", verdicts,
                      "<h2>Setup</h2>", setup_table(sw),
                      "<h2>Plots</h2>", plot_sweep(sw),
                      "<h2>Points</h2>",
                      '<p class="note">Each point\'s own files are in its folder; '
                      "report.py POINT_DIR draws one.</p>", points])


# --- main ---------------------------------------------------------------------------------------

def build(out_dir, top):
    if not os.path.isdir(out_dir):
        raise InputError(f"{out_dir}: no such directory")
    if not os.path.isfile(os.path.join(out_dir, "summary.json")) and \
            os.path.isfile(os.path.join(out_dir, "sweep.csv")):
        sw = load_sweep(out_dir)
        title = f"FabricSim sweep: {os.path.basename(os.path.normpath(out_dir))}"
        return PAGE.format(title=esc(title), body=sweep_body(sw), source=esc(out_dir))
    run = load_run(out_dir)
    s = run["summary"]
    title = f"FabricSim run: {s.get('config_name', '?')} (seed {s.get('seed', '?')})"
    return PAGE.format(title=esc(title), body=run_body(run, top), source=esc(out_dir))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="report.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", metavar="OUT_DIR", help="a fabricsim run or sweep.py output folder")
    ap.add_argument("--out", metavar="FILE.html", help="default OUT_DIR/report.html")
    ap.add_argument("--top", type=int, default=8, metavar="K",
                    help="busiest egress ports drawn per switch (default 8)")
    args = ap.parse_args(argv)
    if args.top < 1:
        print("report.py: error: --top must be >= 1", file=sys.stderr)
        return 2
    try:
        page = build(args.out_dir, args.top)
    except InputError as e:
        print(f"report.py: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(f"report.py: error: {e}: install matplotlib for {sys.executable} "
              "(Debian: apt install python3-matplotlib)", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"report.py: error: {e}", file=sys.stderr)
        return 2
    out = args.out or os.path.join(args.out_dir, "report.html")
    try:
        with open(out + ".part", "w", encoding="utf-8") as f:
            f.write(page)
        os.replace(out + ".part", out)
    except OSError as e:
        print(f"report.py: error: cannot write {out}: {e}", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
