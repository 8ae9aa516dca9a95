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
pause and credit-stall time per port, per priority / virtual lane. Sweep: latency and accepted
load against the first varied key and the table of every point.

Exit status: 0 ok, 2 bad input (a missing or malformed file: the message names it), 1 otherwise
(e.g. matplotlib missing).
"""
import argparse
import base64
import csv
import html
import io
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_results import InputError, fmt_bytes, read_csv  # noqa: E402  (shared readers)

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


def as_dicts(path, required_cols, text=()):
    header, rows = read_csv(path, required_cols, text=text)
    return header, [dict(zip(header, r)) for r in rows]


def load_run(out_dir):
    s = read_json(os.path.join(out_dir, "summary.json"))
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
    header, rows = read_csv(os.path.join(out_dir, "occupancy.csv"), ["time_ns", "total_bytes"])
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


def figure_html(fig, alt):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
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

def run_verdicts(s):
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
    return table(rows, ["check", "verdict"])


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


def run_body(run, top):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    s = run["summary"]
    parts = ["<h2>Verdicts</h2>", run_verdicts(s),
             "<h2>Summary</h2>", run_summary_tables(run),
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
    return {"dir": out_dir, "rows": rows, "header": header, "varied": varied}


def fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def plot_sweep(plt, sw):
    rows = [r for r in sw["rows"] if r["status"] == "ok"]
    if not sw["varied"] or not rows:
        return '<p class="note">Nothing to plot (no varied key or no successful point).</p>'
    xkey, others = sw["varied"][0], sw["varied"][1:]
    groups = {}
    for r in rows:
        g = groups.setdefault(tuple(r[k] for k in others), {})
        g.setdefault(r[xkey], []).append(r)
    numeric = all(not math.isnan(fnum(r[xkey])) for r in rows)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), constrained_layout=True)
    for gkey, pts in groups.items():
        xs = list(pts)
        if numeric:
            xs.sort(key=fnum)
        label = ", ".join(f"{k}={v}" for k, v in zip(others, gkey)) or "all"
        xv = [fnum(x) if numeric else i for i, x in enumerate(xs)]
        for ax, col in zip(axes, ("latency_mean_ns", "latency_p99_ns", "accepted_load")):
            ys = []
            for x in xs:
                vals = [fnum(r.get(col)) for r in pts[x] if not math.isnan(fnum(r.get(col)))]
                ys.append(sum(vals) / len(vals) if vals else math.nan)
            ax.plot(xv, ys, "o-", label=label, ms=4)
    for ax, title in zip(axes, ("mean latency (ns)", "p99 latency (ns)", "accepted load")):
        ax.set_title(f"{title}, mean over seeds")
        ax.set_xlabel(xkey)
        ax.grid(alpha=0.3)
        if not numeric:
            ax.set_xticks(range(len(xs)))
            ax.set_xticklabels(xs, rotation=30, fontsize=7)
    axes[1].set_yscale("log")
    axes[0].legend(fontsize=7)
    return figure_html(fig, f"Sweep: latency and accepted load against {xkey}")


def sweep_body(sw):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
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
                      "<h2>Plots</h2>", plot_sweep(plt, sw),
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
