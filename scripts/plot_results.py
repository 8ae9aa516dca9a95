#!/usr/bin/env python3
"""Plots of one fabricsim run: buffer occupancy over time and per-port load and latency.

  plot_results.py OUT_DIR                 writes OUT_DIR/occupancy.png and OUT_DIR/ports.png
  plot_results.py OUT_DIR --out DIR       the same two files in DIR
  plot_results.py OUT_DIR --out run.png   one figure with every panel
  plot_results.py OUT_DIR --labels F.json  also the figures' texts (titles, axis labels, legend
                                          entries) as JSON, for tests and scripts

OUT_DIR is a `fabricsim run --out` directory: summary.json, ports.csv and occupancy.csv are
required, perf.json is used when present. occupancy.png: total occupancy and the --top busiest
egress ports (by mean occupancy over the measurement window) in bytes vs ns, warm-up shaded,
window start and end marked. ports.png: offered vs accepted load and mean/p99 latency per port.
qp_rates.png (NIC runs with nic.rate_trace_interval, from qp_rates.csv): the pacer rate of the
--top QPs congestion control slowed most, over time (DCQCN's saw-tooth).
Both carry the run's headline numbers from summary.json. In a run of several switches nothing
is labelled as one switch's: occupancy is the sum over the N switches (the title and the legend
say so), the port panels are by host, each at its own switch's port.

Exit status: 0 ok, 2 bad input (a missing or malformed file: the message names it and the line)
or a missing Python module (matplotlib: Debian's python3-matplotlib), 1 otherwise.
"""
import argparse
import csv
import importlib
import json
import math
import os
import sys


class InputError(Exception):
    """A missing or malformed input file: exit 2."""


# --- reading ------------------------------------------------------------------------------------

def require(out_dir, name):
    path = os.path.join(out_dir, name)
    if not os.path.isfile(path):
        raise InputError(f"{path}: missing (is {out_dir} a fabricsim run directory?)")
    return path


def require_module(prog, module, package):
    """Imports a module from outside the standard library, or exits 2 with one line naming the
    Debian package that has it (a traceback tells a user nothing about what to install)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"{prog}: error: the Python module {module} is missing for {sys.executable} "
              f"({why}): on Debian, apt install {package}", file=sys.stderr)
        raise SystemExit(2) from None


def not_utf8(path):
    """The InputError for a file that does not decode as UTF-8: where its first bad byte is."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - data.rfind(b"\n", 0, e.start)
        return InputError(f"{path}:{line}:{col}: not UTF-8 text (byte 0x{data[e.start]:02x})")
    return InputError(f"{path}: not UTF-8 text")


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply") from None


# The summary.json schema_version these scripts read (docs/results.md); the CSV files follow it.
SCHEMA_VERSION = 3
# Columns of one schema only: what tells a CSV file's schema when no summary.json is beside it.
SCHEMA_COLUMNS = {3: ("algbw_GBps", "busbw_GBps", "pause_frames_sent", "lost_frames_run"),
                  2: ("algbw_gbps", "busbw_gbps", "pause_sent", "lost_run")}


def schema_of(path, header=()):
    """The result schema of a run's folder or file: the schema_version of the summary.json in its
    folder (1 for one without the key), else what `header`'s columns tell, else None."""
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    summary = os.path.join(folder, "summary.json")
    if os.path.isfile(summary):
        s = read_json(summary)
        v = s.get("schema_version", 1) if isinstance(s, dict) else None
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    for v, cols in SCHEMA_COLUMNS.items():
        if any(c in header for c in cols):
            return v
    return None


def require_one_schema(files):
    """files: [(path, schema or None)]. Results of two schemas name and mean things differently:
    comparing them would silently match nothing, so InputError (exit 2), one line."""
    known = [(p, v) for p, v in files if v is not None]
    for p, v in known[1:]:
        if v != known[0][1]:
            raise InputError(
                f"refusing to compare results of two schemas: {known[0][0]} is of "
                f"schema_version {known[0][1]}, {p} of {v} (names and meanings differ: "
                "docs/results.md); run the older again with this build")


# The numbers of summary.json the plots print; a file without one of them is refused up front
# rather than failing halfway through a figure.
SUMMARY_NUMBERS = (
    "throughput.offered_load", "throughput.accepted_load", "latency_ns.mean", "latency_ns.p50",
    "latency_ns.p99", "latency_ns.p999", "latency_ns.max", "buffer.peak_bytes",
    "buffer.mean_bytes", "packets.injected", "packets.delivered", "packets.dropped",
    "packets.in_flight", "window.start_ns", "window.end_ns")


def read_summary(path, numbers=SUMMARY_NUMBERS):
    s = read_json(path)
    if not isinstance(s, dict):
        raise InputError(f"{path}: not a JSON object (expected fabricsim's summary.json)")
    for key in numbers:
        v = s
        for part in key.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InputError(f"{path}: no number at '{key}' (expected fabricsim's summary.json)")
    switches = s.get("switches", [])
    if not isinstance(switches, list) or \
            not all(isinstance(x, dict) and isinstance(x.get("name"), str) for x in switches):
        raise InputError(f"{path}: 'switches' is not a list of objects with a name")
    return s


def read_csv(path, required, text=(), whole=()):
    """Returns (header, rows as lists of floats); NaN for empty cells; columns in `text` stay
    strings; columns in `whole` (when present) must hold whole numbers."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            try:
                return read_records(path, reader, required, text, whole)
            except csv.Error as e:  # a NUL byte, a field over the csv module's limit, ...
                raise InputError(f"{path}:{reader.line_num}: {e}") from None
    except UnicodeDecodeError:
        raise not_utf8(path) from None


def read_records(path, reader, required, text, whole):
    header = next(reader, None)
    if header is None:
        raise InputError(f"{path}: empty file (expected a header line)")
    header = [h.strip() for h in header]
    for col in required:
        if col not in header:
            raise InputError(f"{path}:1: no column '{col}'")
    whole = [header.index(c) for c in whole if c in header]
    rows = []
    for rec in reader:
        if not rec:
            continue
        line_no = reader.line_num
        if len(rec) != len(header):
            raise InputError(f"{path}:{line_no}: {len(rec)} fields, header has {len(header)}")
        try:
            row = [x.strip() if h in text else float(x) if x.strip() else math.nan
                   for h, x in zip(header, rec)]
        except ValueError:
            raise InputError(f"{path}:{line_no}: non-numeric field") from None
        for i in whole:
            if not (math.isfinite(row[i]) and row[i].is_integer()):
                raise InputError(f"{path}:{line_no}: '{header[i]}' is not a whole number")
        rows.append(row)
    return header, rows


def load_run(out_dir):
    if not os.path.isdir(out_dir):
        raise InputError(f"{out_dir}: no such directory")
    paths = {n: require(out_dir, n) for n in ("summary.json", "ports.csv", "occupancy.csv")}
    run = {"dir": out_dir, "summary": read_summary(paths["summary.json"])}
    perf_path = os.path.join(out_dir, "perf.json")
    try:  # optional: a broken perf.json only loses the wall time
        with open(perf_path) as f:
            run["perf"] = json.load(f)
    except (OSError, ValueError, RecursionError):
        run["perf"] = None
    if not isinstance(run["perf"], dict):
        run["perf"] = None
    header, rows = read_csv(paths["ports.csv"], ["switch", "port", "host", "offered_load_in",
                                                 "accepted_load_out", "latency_count_out",
                                                 "latency_mean_ns_out", "latency_p99_ns_out"],
                            text=("switch", "peer"), whole=("port", "host"))
    # The per-port panels show the host-facing ports, by host (= port in a single-switch run).
    hi = header.index("host")
    rows = [r for r in rows if r[hi] >= 0]
    run["ports"] = {h: [r[i] for r in rows] for i, h in enumerate(header)}
    header, rows = read_csv(paths["occupancy.csv"], ["time_ns", "total_bytes"])
    # Port columns: "portN_bytes" (one switch) or "SWITCH.portN_bytes" (several).
    port_cols = [i for i, h in enumerate(header)
                 if h.endswith("_bytes") and h.rsplit(".", 1)[-1].startswith("port")]
    run["occ_time"] = [r[0] for r in rows]
    run["occ_total"] = [r[header.index("total_bytes")] for r in rows]
    run["occ_ports"] = {header[i][:-6]: [r[i] for r in rows] for i in port_cols}
    # NIC runs with nic.rate_trace_interval: each QP's pacer rate over time.
    rates_path = os.path.join(out_dir, "qp_rates.csv")
    run["rates"] = {}
    if os.path.exists(rates_path):
        header, rows = read_csv(rates_path, ["time_ns", "nic", "peer", "qp", "rate_gbps"],
                                whole=("nic", "peer", "qp"))
        col = {h: header.index(h) for h in ("time_ns", "nic", "peer", "qp", "rate_gbps")}
        for r in rows:
            key = (int(r[col["nic"]]), int(r[col["peer"]]), int(r[col["qp"]]))
            t, v = run["rates"].setdefault(key, ([], []))
            t.append(r[col["time_ns"]] / 1000)
            v.append(r[col["rate_gbps"]])
    return run


# --- text ---------------------------------------------------------------------------------------

def headline(run):
    s = run["summary"]
    tp, lat, buf, pk, win = s["throughput"], s["latency_ns"], s["buffer"], s["packets"], s["window"]
    inv = s.get("invariants", {})
    name = s.get("config_name", os.path.basename(os.path.normpath(run["dir"])))
    lines = [
        f"{name} (seed {s.get('seed', '?')})   window {win['start_ns']:.0f} .. {win['end_ns']:.0f} ns"
        f"   invariants {'ok' if inv.get('ok') else 'VIOLATED'}"
        + ("   INTERRUPTED" if s.get("interrupted") else ""),
        f"load offered {tp['offered_load']:.4f}  accepted {tp['accepted_load']:.4f}   "
        f"latency ns: mean {lat['mean']:.1f}  p50 {lat['p50']:.1f}  p99 {lat['p99']:.1f}  "
        f"p99.9 {lat['p999']:.1f}  max {lat['max']:.1f}  ({lat.get('count', 0)} pkts)",
        f"buffer peak {fmt_bytes(buf['peak_bytes'])}  mean {fmt_bytes(buf['mean_bytes'])}  "
        f"of {fmt_bytes(buf.get('capacity_bytes', math.nan))}{buffer_scope(run)}   packets injected "
        f"{pk['injected']}  delivered {pk['delivered']}  dropped {pk['dropped']}  "
        f"in flight {pk['in_flight']}",
    ]
    perf = run.get("perf")
    if perf and "wall_s" in perf:
        lines[-1] += f"   wall {perf['wall_s']:.3g} s"
    return "\n".join(lines)


def n_switches(run):
    return len(run["summary"].get("switches", []))


def buffer_scope(run):
    """Whose buffer the headline's figures are (one switch of a fabric), and its whole-run peak
    when the warm-up or the drain saw more than the window."""
    buf, n = run["summary"]["buffer"], n_switches(run)
    text = f" ({buf.get('switch', '?')}, the fullest of {n} switches)" if n > 1 else ""
    if buf.get("peak_bytes_run", 0) > buf["peak_bytes"]:
        text += f"  run peak {fmt_bytes(buf['peak_bytes_run'])}"
    return text


def fmt_bytes(n):
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "?"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


# --- panels -------------------------------------------------------------------------------------

def mark_window(ax, run):
    win = run["summary"]["window"]
    start, end = win["start_ns"], win["end_ns"]
    if start > 0:
        ax.axvspan(0, start, color="0.9", zorder=0, label="warm-up")
    ax.axvline(start, color="k", ls="--", lw=1, label=f"window start {start:g} ns")
    ax.axvline(end, color="k", ls=":", lw=1, label=f"window end {end:g} ns")


def no_samples(ax, run):
    interval = run["summary"].get("config", {}).get("stats", {}).get("occupancy_interval", "?")
    ax.text(0.5, 0.5, "no occupancy samples in occupancy.csv\n"
            f"(stats.occupancy_interval = {interval}; set it to e.g. 100ns to sample)",
            ha="center", va="center", transform=ax.transAxes, fontsize=10, color="0.3")
    ax.set_xticks([])
    ax.set_yticks([])


def byte_axis(ax):
    from matplotlib import ticker
    ax.yaxis.set_major_formatter(ticker.EngFormatter(unit="B"))


def host_axis_label(run):
    """The host axis: in a single-switch run host h is on port h; in a fabric it is not, and the
    hosts are spread over several switches."""
    n = n_switches(run)
    if n <= 1:
        return "host (= port of the switch)"
    hosts = len(run["ports"]["host"])
    with_hosts = len(set(run["ports"]["switch"]))
    return (f"host ({hosts} hosts on {with_hosts} of {n} switches, each at its own switch's "
            "port)")


def panel_total(ax, run):
    n = n_switches(run)
    label = "total" if n <= 1 else f"sum over {n} switches"
    ax.set_title(f"shared buffer occupancy ({label})")
    if not run["occ_time"]:
        return no_samples(ax, run)
    mark_window(ax, run)
    ax.plot(run["occ_time"], run["occ_total"], lw=1.2, color="C0", label=label)
    style_occupancy_axes(ax)


def style_occupancy_axes(ax):
    ax.set_xlabel("time (ns)")
    ax.set_ylabel("bytes")
    byte_axis(ax)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0)


def busiest_ports(run, k):
    win = run["summary"]["window"]
    t = run["occ_time"]
    idx = [i for i, x in enumerate(t) if win["start_ns"] <= x <= win["end_ns"]] or range(len(t))

    def mean(series):
        vals = [series[i] for i in idx if not math.isnan(series[i])]
        return sum(vals) / len(vals) if vals else 0.0

    ranked = sorted(run["occ_ports"], key=lambda p: (-mean(run["occ_ports"][p]), p))
    return ranked[:k]


def panel_top_ports(ax, run, k):
    ports = busiest_ports(run, k)
    n = n_switches(run)
    on = f" egress ports on {n} switches" if n > 1 else ""
    ax.set_title(f"egress-port occupancy: the {len(ports)} busiest of {len(run['occ_ports'])}{on} "
                 "(mean over the window)")
    if not run["occ_time"]:
        return no_samples(ax, run)
    mark_window(ax, run)
    for p in ports:
        ax.plot(run["occ_time"], run["occ_ports"][p], lw=1, label=p.replace("port", "port "))
    style_occupancy_axes(ax)


def port_x(run):
    return [int(h) for h in run["ports"]["host"]]


def panel_load(ax, run):
    x = port_x(run)
    pts = run["ports"]
    ax.set_title("per-port load (fraction of port capacity)" if n_switches(run) <= 1 else
                 "per-host load at its switch port (fraction of port capacity)")
    ax.bar(x, pts["accepted_load_out"], width=0.8, color="C2", alpha=0.75, label="accepted (egress)")
    ax.plot(x, pts["offered_load_in"], "_", color="k", ms=max(3, min(12, 400 / max(1, len(x)))),
            mew=2, label="offered (ingress)")
    tp = run["summary"]["throughput"]
    ax.axhline(tp["offered_load"], color="C3", ls="--", lw=1,
               label=f"mean offered {tp['offered_load']:.3f}")
    ax.set_xlabel(host_axis_label(run))
    ax.set_ylabel("load")
    ax.set_ylim(0, max(1.0, max((v for v in pts["offered_load_in"] + pts["accepted_load_out"]
                                 if not math.isnan(v)), default=1.0) * 1.12))
    ax.set_xlim(min(x, default=0) - 0.8, max(x, default=0) + 0.8)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0)


def panel_latency(ax, run):
    x = port_x(run)
    pts = run["ports"]
    has = [c > 0 for c in pts["latency_count_out"]]
    mean = [m if h else math.nan for m, h in zip(pts["latency_mean_ns_out"], has)]
    p99 = [m if h else math.nan for m, h in zip(pts["latency_p99_ns_out"], has)]
    ax.set_title("per-port latency (by egress port)" if n_switches(run) <= 1 else
                 "per-host latency (at the switch port that delivers to it)")
    ax.bar(x, mean, width=0.8, color="C0", alpha=0.75, label="mean")
    ax.plot(x, p99, "v", color="C3", ms=max(3, min(7, 300 / max(1, len(x)))), label="p99")
    lat = run["summary"]["latency_ns"]
    ax.axhline(lat["p99"], color="C3", ls=":", lw=1, label=f"all ports p99 {lat['p99']:.1f}")
    ax.axhline(lat["mean"], color="C0", ls=":", lw=1, label=f"all ports mean {lat['mean']:.1f}")
    ax.set_xlabel(host_axis_label(run))
    ax.set_ylabel("latency (ns)")
    ax.set_ylim(bottom=0)
    ax.set_xlim(min(x, default=0) - 0.8, max(x, default=0) + 0.8)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0)


# --- figures ------------------------------------------------------------------------------------

def new_figure(plt, rows, cols, width, height, run):
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), constrained_layout=True,
                             squeeze=False)
    fig.suptitle(headline(run), fontsize=9, family="monospace", ha="left", x=0.01,
                 bbox=dict(boxstyle="round", facecolor="0.95", edgecolor="0.6"))
    return fig, axes


def figure_texts(fig, path):
    """What a reader sees written on a figure: its title box and per panel the title, axis
    labels and legend entries."""
    axes = []
    for ax in fig.axes:
        legend = ax.get_legend()
        axes.append({"title": ax.get_title(), "xlabel": ax.get_xlabel(),
                     "ylabel": ax.get_ylabel(),
                     "legend": [t.get_text() for t in legend.get_texts()] if legend else [],
                     "texts": [t.get_text() for t in ax.texts]})
    return {"file": path, "suptitle": fig._suptitle.get_text() if fig._suptitle else "",
            "axes": axes}


def write_plots(run, out, top, labels=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written, texts = [], []

    def save(fig, path):
        fig.savefig(path, dpi=100)
        texts.append(figure_texts(fig, path))
        plt.close(fig)
        written.append(path)

    try:
        return write_figures(plt, run, out, top, save, written)
    finally:
        if labels:
            with open(labels, "w") as f:
                json.dump(texts, f, indent=1)
                f.write("\n")


def write_figures(plt, run, out, top, save, written):
    if out.lower().endswith(".png"):
        parent = os.path.dirname(out)
        if parent:
            os.makedirs(parent, exist_ok=True)
        fig, ax = new_figure(plt, 2, 2, 16, 9.5, run)
        panel_total(ax[0][0], run)
        panel_top_ports(ax[1][0], run, top)
        panel_load(ax[0][1], run)
        panel_latency(ax[1][1], run)
        save(fig, out)
        return written
    os.makedirs(out, exist_ok=True)
    fig, ax = new_figure(plt, 2, 1, 12, 8.5, run)
    panel_total(ax[0][0], run)
    panel_top_ports(ax[1][0], run, top)
    save(fig, os.path.join(out, "occupancy.png"))
    fig, ax = new_figure(plt, 2, 1, 12, 8.5, run)
    panel_load(ax[0][0], run)
    panel_latency(ax[1][0], run)
    save(fig, os.path.join(out, "ports.png"))
    if run["rates"]:
        fig, ax = new_figure(plt, 1, 1, 12, 5.5, run)
        panel_rates(ax[0][0], run, top)
        save(fig, os.path.join(out, "qp_rates.png"))
    return written


def panel_rates(ax, run, top):
    # The QPs congestion control slowed most (lowest rate reached), up to `top` of them.
    keys = sorted(run["rates"], key=lambda k: min(run["rates"][k][1]))[:top]
    for k in keys:
        t, v = run["rates"][k]
        ax.step(t, v, where="post", label=f"nic{k[0]} -> {k[1]} qp {k[2]}")
    ax.set_title(f"QP pacer rates over time (qp_rates.csv; the {len(keys)} slowed most of "
                 f"{len(run['rates'])})")
    ax.set_xlabel("time (us)")
    ax.set_ylabel("rate (Gb/s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="plot_results.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", metavar="OUT_DIR", help="a fabricsim run's output directory")
    ap.add_argument("--out", metavar="FILE.png|DIR",
                    help="one combined PNG, or a directory for occupancy.png and ports.png "
                         "(default: OUT_DIR)")
    ap.add_argument("--top", type=int, default=8, metavar="K",
                    help="how many of the busiest ports to draw (default 8)")
    ap.add_argument("--labels", metavar="FILE.json",
                    help="also write every figure's texts (title box, panel titles, axis labels, "
                         "legend entries) to this JSON file")
    args = ap.parse_args(argv)
    if args.top < 1:
        print("plot_results.py: error: --top must be >= 1", file=sys.stderr)
        return 2
    try:
        run = load_run(args.out_dir)
    except InputError as e:
        print(f"plot_results.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"plot_results.py: error: {e}", file=sys.stderr)
        return 2
    require_module("plot_results.py", "matplotlib", "python3-matplotlib")
    try:
        written = write_plots(run, args.out or args.out_dir, args.top, args.labels)
    except OSError as e:
        print(f"plot_results.py: error: cannot write: {e}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
