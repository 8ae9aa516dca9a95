"""scripts/sweep.py's figure (sweep.png: latency and accepted load against the first varied key,
the sweep stated in a panel) and --replot, which redraws it from an earlier sweep's tables."""
import csv
import io
import math
import os
import sys

from sweep_common import ROOT, UsageError, clip, read_json, read_text, require_matplotlib
from sweep_stats import num, point_stats


# --- plot ---------------------------------------------------------------------------------------

# 12.6 x 8.4 in at 110 dpi: 1386 x 924 px, within a 1,400 px screen or page.
FIG_INCHES, FIG_DPI = (12.6, 8.4), 110
# A line per series differs from the others in colour, marker and dashes, and each one drawn
# later is thinner with smaller (alternately hollow) markers: lines on top of each other stay apart.
MARKERS = "osD^vP*Xh<>p"
DASHES = ["-", "--", "-.", (0, (3, 1, 1, 1, 1, 1))]


def series_style(i, colors):
    color = colors[i % len(colors)]
    return {"color": color, "marker": MARKERS[i % len(MARKERS)], "linestyle": DASHES[i % 4],
            "ms": (10, 7, 4.5)[i % 3], "lw": (2.6, 1.7, 1.0)[i % 3],
            "mfc": "none" if i % 2 else color, "mew": 1.5}


def log_ticks(lo, hi):
    """Tick values for a log axis from lo to hi, at least 3: powers of ten, else 1-2-5 per
    decade, else every digit, else linear steps when the data span less than one of those
    (matplotlib's own labels only powers of ten: one or two on a latency curve)."""
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for subs in ((1,), (1, 2, 5), range(1, 10)):
        ticks = [m * 10.0 ** e for e in decades for m in subs if lo <= m * 10.0 ** e <= hi]
        if len(ticks) >= 3:
            return ticks
    from matplotlib import ticker
    return [t for t in ticker.MaxNLocator(5).tick_values(lo, hi) if lo <= t <= hi]


def figure(points, keys, info):
    """sweep.png's figure: mean latency, p99 latency (log axes) and accepted load against the
    first key, one line per combination of the other keys, with 95% CI error bars; unstable points
    ringed in red. The fourth panel states the sweep (`info`: its lines) and holds the legend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    xkey, others = keys[0], keys[1:]
    xvalues = list(dict.fromkeys(p[xkey] for p in points))
    xnum = [num(v) for v in xvalues]
    numeric = all(x is not None for x in xnum)
    xpos = dict(zip(xvalues, xnum if numeric else range(len(xvalues))))
    series = {}
    for p in points:
        series.setdefault(tuple(p[k] for k in others), []).append(p)

    fig, ((ax_mean, ax_p99), (ax_load, ax_info)) = plt.subplots(
        2, 2, figsize=FIG_INCHES, dpi=FIG_DPI, constrained_layout=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    unstable_labelled = False
    for i, (combo, pts) in enumerate(series.items()):
        if len(others) == 1:
            label = clip(combo[0], 40)  # the legend title names the key
        else:
            label = clip(", ".join(f"{k}={v}" for k, v in zip(others, combo)), 80) or \
                "mean over seeds"
        style = series_style(i, colors)
        pts = sorted(pts, key=lambda p: xpos[p[xkey]])
        for ax, m, log in ((ax_mean, "latency_mean_ns", True), (ax_p99, "latency_p99_ns", True),
                           (ax_load, "accepted_load", False)):
            xs, ys, lo, hi, bad = [], [], [], [], []
            for p in pts:
                y, e = num(p.get(m + "_mean")), num(p.get(m + "_ci95")) or 0.0
                if y is None or (log and y <= 0):
                    continue
                xs.append(xpos[p[xkey]])
                ys.append(y)
                hi.append(e)
                # On a log axis an interval reaching 0 or below is drawn down to y/10: it says
                # "below" without stretching the axis over decades.
                lo.append(min(e, y * 0.9) if log else e)
                if str(p.get("unstable")).lower() == "true":
                    bad.append((xs[-1], y))
            ax.errorbar(xs, ys, yerr=[lo, hi], capsize=3, label=label if ax is ax_load else None,
                        **style)
            if bad:
                ax.plot(*zip(*bad), "o", ms=15, mfc="none", mec="red", mew=1.8,
                        label=None if unstable_labelled or ax is not ax_load
                        else "unstable (not in steady state)")
                if ax is ax_load:
                    unstable_labelled = True
        offered = [(xpos[p[xkey]], num(p.get("offered_load_mean"))) for p in pts
                   if num(p.get("offered_load_mean")) is not None]
        if offered:
            ax_load.plot(*zip(*offered), ":", color=style["color"], alpha=0.6, lw=1)
    ax_mean.set_title("mean latency (95% CI over seeds)")
    ax_p99.set_title("p99 latency (95% CI over seeds)")
    ax_load.set_title("accepted load (dotted: offered)")
    for ax in (ax_mean, ax_p99):
        ax.set_yscale("log")
        ax.set_yticks(log_ticks(*ax.get_ylim()))
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:,.10g}"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_ylabel("latency (ns)")
    ax_load.set_ylabel("fraction of capacity")
    for ax in (ax_mean, ax_p99, ax_load):
        ax.set_xlabel(xkey)
        ax.grid(True, which="both", alpha=0.3)
        if not numeric or len(xvalues) <= 12:  # a tick at each value, written as given
            ax.set_xticks([xpos[v] for v in xvalues])
            ax.set_xticklabels([clip(v, 20) for v in xvalues])
    # the title: the base configuration (info's first line) and the x axis
    fig.suptitle(f"{info[0]}   x axis: {clip(xkey)}", fontsize=10)
    ax_info.axis("off")
    ax_info.text(0, 1, "\n".join(info), transform=ax_info.transAxes, va="top", ha="left",
                 fontsize=8, family="monospace")
    handles, labels = ax_load.get_legend_handles_labels()
    if handles:
        ax_info.legend(handles, labels, loc="lower left", fontsize=8, ncol=1 + len(handles) // 10,
                       title=clip(", ".join(others), 80) if others else None, title_fontsize=8)
    return fig


def describe(setup, points, keys, runs=None, source=None):
    """The info panel's lines: the base configuration, the fixed overrides, the axes, the seeds
    and what was left out or flagged (setup: sweep_setup.json's contents, or None)."""
    import textwrap
    width = 88  # monospace characters from the panel's left edge to the figure's right edge
    if setup is None:
        lines = ["base config and fixed overrides: not recorded (no sweep_setup.json)"]
    else:
        lines = [f"base config: {display_path(setup['config'])}"]
        fixed = [clip(x, 80) for x in setup["fixed"]] or ["none"]
        wrapped = textwrap.wrap("fixed overrides (--set): " + "  ".join(fixed), width,
                                subsequent_indent="  ", break_on_hyphens=False)
        lines += wrapped if len(wrapped) <= 12 else \
            wrapped[:11] + ["  ... (every one in sweep_setup.json)"]
        if setup.get("speed_only"):
            lines.append(f"and {', '.join(setup['speed_only'])} (speed only: same results)")
        seeds = setup.get("seeds")
        lines.append(f"seeds {', '.join(map(str, seeds))}: the mean over them" if seeds
                     else "seed: the configuration's (sim.seed)")
    lines.append(f"x axis: {clip(keys[0])}" +
                 (f"; a line per {clip(', '.join(keys[1:]), 70)}" if keys[1:] else ""))
    if runs is not None:
        failed = sum(r.get("status") != "ok" for r in runs)
        lines.append(f"{len(runs)} runs" + (f", {failed} failed (left out)" if failed else ""))
    unstable = sum(str(p.get("unstable")).lower() == "true" for p in points)
    lines.append(f"{len(points)} points" + (f", {unstable} unstable (ringed): run longer "
                                            "(docs/sweeps.md)" if unstable else ""))
    if source:
        lines.append(f"redrawn from {display_path(source)}")
    return lines


def display_path(path):
    """A path as the plot shows it: relative to the repository when inside it."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    return path if rel.startswith("..") else rel


def plot_or_explain(points, keys, path, info):
    try:
        fig = figure(points, keys, info)
    except ImportError as e:  # matplotlib was checked: it is there but broken
        print(f"sweep.py: error: cannot plot: {clip(str(e), 100)} (the tables are written; on "
              "Debian: apt install python3-matplotlib)", file=sys.stderr)
        return 2
    import matplotlib.pyplot as plt
    try:
        fig.savefig(path, dpi=FIG_DPI)
    except OSError as e:
        print(f"sweep.py: error: cannot write {path}: {e.strerror}", file=sys.stderr)
        return 1
    finally:
        plt.close(fig)
    print(f"sweep: plot in {path}")
    return 0


# --- replot -------------------------------------------------------------------------------------

def read_setup(folder):
    """sweep_setup.json of a sweep's folder, or None if missing or not one."""
    setup = read_json(os.path.join(folder, "sweep_setup.json"))
    ok = isinstance(setup, dict) and isinstance(setup.get("config"), str) and \
        isinstance(setup.get("fixed"), list) and all(isinstance(x, str) for x in setup["fixed"])
    return setup if ok else None


def read_table(path):
    """(header, rows as dicts) of a CSV table; UsageError naming the file and line otherwise."""
    reader = csv.reader(io.StringIO(read_text(path, "--replot"), newline=""))
    rows = []
    try:
        header = next(reader, [])
        for rec in reader:
            if rec and len(rec) != len(header):
                raise UsageError(f"--replot {path}:{reader.line_num}: {len(rec)} fields, the "
                                 f"header has {len(header)}")
            if rec:
                rows.append(dict(zip(header, rec)))
    except csv.Error as e:
        raise UsageError(f"--replot {path}:{reader.line_num}: {e}") from None
    return header, rows


def replot_inputs(args):
    """(points, keys, PNG path, info lines) of --replot: from sweep.csv (statistics and verdicts
    recomputed with this call's tolerances) or sweep_points.csv (drawn as written)."""
    path = args.replot
    if os.path.isdir(path):
        for name in ("sweep.csv", "sweep_points.csv"):
            if os.path.isfile(os.path.join(path, name)):
                path = os.path.join(path, name)
                break
        else:
            raise UsageError(f"--replot {args.replot}: no sweep.csv or sweep_points.csv in it")
    header, rows = read_table(path)
    runs = None
    if "point" in header and "status" in header and "seed" in header:
        keys = header[:header.index("seed")]
        points = point_stats(rows, keys, args.load_tolerance, args.drift_tolerance)
        runs = rows
    elif "runs" in header and "latency_mean_ns_mean" in header:
        keys = header[:header.index("runs")]
        points = rows
    else:
        raise UsageError(f"--replot {path}:1: neither a sweep.csv (columns seed, point, status) "
                         "nor a sweep_points.csv (columns runs, latency_mean_ns_mean) table")
    if not keys:
        raise UsageError(f"--replot {path}: the sweep varied no key: nothing to draw against")
    if not rows:
        raise UsageError(f"--replot {path}: no rows")
    folder = os.path.dirname(os.path.abspath(path))
    out = args.png or os.path.join(folder, "sweep.png")
    return points, keys, out, describe(read_setup(folder), points, keys, runs, source=path)


def replot(args):
    """Redraws the plot of an earlier sweep from its tables. Runs nothing."""
    points, keys, out, info = replot_inputs(args)
    require_matplotlib("--replot")
    return plot_or_explain(points, keys, out, info)
