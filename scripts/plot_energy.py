#!/usr/bin/env python3
"""The same job on fabrics of different cable modules (or any other design points) side by side:
latency, losses and energy in one figure, from a sweep's sweep_points.csv (scripts/sweep.py).

  scripts/sweep.py CONFIG --vary link.optics.fabric=dsp,lpo,cpo [--set ...] --out DIR
  scripts/plot_energy.py DIR [--png DIR/energy.png]

Three panels, one group of bars per design point (the sweep's points, in its order; the label is
the varied values): mean and p99 latency (ns) of the packets hosts delivered, or with NICs of the
messages' completion times (FCT); frames lost to bit errors on links and packets the
NICs sent again; the fabric's mean power over the run (W) and its energy per bit delivered
(pJ/bit, right axis). Each figure is the mean over the point's seeds, with its 95% confidence
interval as an error bar when there are several. Prints the same figures as a table.
matplotlib is imported only to draw (Debian's python3-matplotlib).

Exit status: 0 ok, 2 bad input (no sweep_points.csv, or one without the energy columns: a sweep
of an older build; the message names the file) or matplotlib missing, 1 if the figure cannot be
written.
"""
import argparse
import csv
import json
import os
import sys

NEEDED = ["latency_mean_ns_mean", "latency_p99_ns_mean", "fct_mean_ns_mean", "fct_p99_ns_mean",
          "lost_on_links_mean",
          "retransmitted_packets_mean", "mean_power_W_mean", "delivered_pJ_per_bit_mean"]


def fail(msg):
    print(f"plot_energy.py: {msg}", file=sys.stderr)
    sys.exit(2)


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def load(sweep_dir):
    """(labels, rows): a label and a row of sweep_points.csv per design point."""
    path = os.path.join(sweep_dir, "sweep_points.csv")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if not rows:
        fail(f"{path}: no design points")
    missing = [c for c in NEEDED if c not in rows[0]]
    if missing:
        fail(f"{path}: no column {missing[0]} (a sweep of a build before the energy report: "
             "run it again)")
    keys = []
    try:
        with open(os.path.join(sweep_dir, "sweep_setup.json"), encoding="utf-8") as f:
            keys = [k for k, _ in json.load(f)["varied"]]
    except (OSError, ValueError, KeyError, TypeError):
        keys = []
    keys = [k for k in keys if k in rows[0]] or [list(rows[0])[0]]
    labels = [", ".join(f"{k.split('.')[-1]}={r[k]}" for k in keys) for r in rows]
    return labels, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep_dir")
    ap.add_argument("--png", help="the figure (default: SWEEP_DIR/energy.png)")
    a = ap.parse_args()
    labels, rows = load(a.sweep_dir)
    # NIC runs time messages, not packets: their FCT.
    lat = "fct" if all(num(r["fct_mean_ns_mean"]) > 0 for r in rows) else "latency"
    print(f"{'point':<32} {lat + ' mean':>12} {lat + ' p99':>12} {'lost':>6} {'retx':>6} "
          f"{'power W':>9} {'pJ/bit':>8}")
    for lab, r in zip(labels, rows):
        print(f"{lab:<32} {num(r[lat + '_mean_ns_mean']):12.1f} "
              f"{num(r[lat + '_p99_ns_mean']):12.1f} {num(r['lost_on_links_mean']):6.0f} "
              f"{num(r['retransmitted_packets_mean']):6.0f} {num(r['mean_power_W_mean']):9.1f} "
              f"{num(r['delivered_pJ_per_bit_mean']):8.1f}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is missing (Debian: apt install python3-matplotlib)")

    def err(r, col):
        v = num(r.get(col.replace("_mean", "_ci95")))
        return 0.0 if v != v else v

    x = list(range(len(rows)))
    fig, ax = plt.subplots(1, 3, figsize=(13.86, 4.62), dpi=100)
    w = 0.38
    panels = [
        (ax[0], [(lat + "_mean_ns_mean", "mean"), (lat + "_p99_ns_mean", "p99")],
         "message completion time (ns)" if lat == "fct" else "packet latency (ns)"),
        (ax[1], [("lost_on_links_mean", "frames lost on links"),
                 ("retransmitted_packets_mean", "packets retransmitted")], "count"),
        (ax[2], [("mean_power_W_mean", "mean power over the run")], "power (W)"),
    ]
    for axis, series, ylabel in panels:
        for i, (col, name) in enumerate(series):
            off = (i - (len(series) - 1) / 2) * w
            errs = [err(r, col) for r in rows]
            axis.bar([v + off for v in x], [num(r[col]) for r in rows], w,
                     yerr=errs if any(errs) else None, label=name, capsize=3)
        axis.set_ylabel(ylabel)
        axis.set_ylim(bottom=0, top=max(1.0, axis.get_ylim()[1]))
        axis.set_xticks(x)
        axis.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
        axis.legend(fontsize=8, loc="upper left")
    right = ax[2].twinx()
    right.plot(x, [num(r["delivered_pJ_per_bit_mean"]) for r in rows], "kD--",
               label="pJ per bit delivered")
    right.set_ylabel("energy per bit delivered (pJ/bit)")
    right.set_ylim(bottom=0)
    right.legend(fontsize=8, loc="upper right")
    ax[0].set_title("latency")
    ax[1].set_title("losses")
    ax[2].set_title("energy")
    fig.tight_layout()
    png = a.png or os.path.join(a.sweep_dir, "energy.png")
    try:
        fig.savefig(png)
    except OSError as e:
        print(f"plot_energy.py: cannot write {png}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"figure: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
