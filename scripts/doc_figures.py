#!/usr/bin/env python3
"""The figures of README.md and docs/ that come from runs, regenerated from those runs.

  doc_figures.py --fabricsim build/fabricsim --check     rerun, compare with the files (CI)
  doc_figures.py --fabricsim build/fabricsim --write     rerun, rewrite the blocks
  doc_figures.py --list                                  the figures, their files and commands

A figure is a block of a Markdown file between two HTML comments (invisible once rendered):

  <!-- figure NAME: written by scripts/doc_figures.py -->
  ...
  <!-- end figure NAME -->

Each NAME is a function below: it runs the simulator (deterministic: same build, same numbers)
and returns the block's text. --write replaces every block with what its function returns now;
--check fails naming each block that differs and showing the difference, so that a change of
the model or of a default that moves a figure cannot land without the figure moving with it.
Prose outside the blocks is not checked: keep numbers in the blocks.

Exit status: 0 every block matches (--check) or was written (--write); 1 some block differs or a
run failed; 2 bad arguments or a file whose blocks are malformed (unknown or unbalanced names,
the message names the file and line).
"""
import argparse
import csv
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (Indented inside a list item, as the block's lines are.)
BEGIN = re.compile(r"^ *<!-- figure ([a-z0-9_]+): written by scripts/doc_figures\.py -->$")
END = re.compile(r"^ *<!-- end figure ([a-z0-9_]+) -->$")

FIGURES = {}  # name -> (function, the files holding its block, what it runs)


def figure(name, files, runs):
    def register(fn):
        FIGURES[name] = (fn, files, runs)
        return fn
    return register


class RunError(Exception):
    pass


class Runner:
    """Runs `fabricsim run` once per distinct command (figures share runs) in a temporary
    folder; gives the console output and summary.json."""

    def __init__(self, fabricsim, tmp):
        self.fabricsim, self.tmp, self.cache = fabricsim, tmp, {}

    def run(self, config, *args):
        key = (config,) + args
        if key not in self.cache:
            out = os.path.join(self.tmp, f"run{len(self.cache)}")
            cmd = [self.fabricsim, "run", os.path.join(ROOT, config), *args, "--out", out]
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            if p.returncode != 0:
                raise RunError(f"`{' '.join(cmd)}` exited {p.returncode}: "
                               f"{p.stderr.strip()[-400:]}")
            with open(os.path.join(out, "summary.json")) as f:
                summary = json.load(f)
            self.cache[key] = (p.stdout, summary, out)
        return self.cache[key]

    def sweep(self, config, *args):
        out = os.path.join(self.tmp, f"sweep{len(self.cache)}")
        cmd = [sys.executable, os.path.join(ROOT, "scripts", "sweep.py"), os.path.join(ROOT, config),
               *args, "--jobs", "2", "--out", out, "--fabricsim", self.fabricsim]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if p.returncode != 0:
            raise RunError(f"`{' '.join(cmd)}` exited {p.returncode}: {p.stderr.strip()[-400:]}")
        self.cache[(config, "sweep") + args] = None
        with open(os.path.join(out, "sweep_points.csv"), newline="") as f:
            return list(csv.DictReader(f))


def ports_rows(out):
    with open(os.path.join(out, "ports.csv"), newline="") as f:
        return list(csv.DictReader(f))


# --- README.md ----------------------------------------------------------------------------------

@figure("first_run", ["README.md"], "run configs/switch_51t2.yaml")
def first_run(r):
    console, _, out = r.run("configs/switch_51t2.yaml")
    console = console.replace(out + "/", "out/switch_51t2/")
    return "```\n" + console.rstrip("\n") + "\n```"


# iSLIP-1 on the 51.2T chip as a crossbar near saturation (it accepts ~0.955 of 0.96): the
# queues take a few hundred microseconds to settle there.
ISLIP1 = ("--set", "switch.architecture=voq", "--set", "switch.scheduler.iterations=1",
          "--set", "traffic.load=0.96")


def islip_point(r, duration):
    _, s, _ = r.run("configs/switch_51t2.yaml", *ISLIP1, "--set", f"sim.duration={duration}")
    return s["throughput"]["offered_load"], s["throughput"]["accepted_load"], \
        s["latency_ns"]["mean"]


@figure("islip_duration", ["README.md"],
        "run configs/switch_51t2.yaml as voq, iSLIP-1, load 0.96, 20 us and 1 ms")
def islip_duration(r):
    off20, acc20, lat20 = islip_point(r, "20us")
    _, acc1m, lat1m = islip_point(r, "1ms")
    return (f"Near saturation the queues take longer to settle: on the 51.2T chip as voq at load "
            f"0.96, iSLIP\nwith one iteration accepts {acc20:.4f} of the {off20:.4f} offered in a "
            f"20 us run and {acc1m:.4f} in a 1 ms run\n(mean latency {lat20:.0f} and {lat1m:.0f} "
            f"ns, seed 1).")


# --- docs/sweeps.md -----------------------------------------------------------------------------

DURATIONS = ["20us", "100us", "200us", "500us", "1ms"]


def duration_label(d):
    return d.replace("us", " us").replace("ms", " ms")


@figure("steady_state_table", ["docs/sweeps.md"],
        "sweep.py configs/switch_51t2.yaml as voq, iSLIP-1, load 0.96, sim.duration 20 us..1 ms, "
        "3 seeds")
def steady_state_table(r):
    pts = r.sweep("configs/switch_51t2.yaml", *ISLIP1, "--vary",
                  "sim.duration=" + ",".join(DURATIONS), "--nseeds", "3")
    offered = sum(float(p["offered_load_mean"]) for p in pts) / len(pts)
    lines = [f"| sim.duration | accepted (offered {offered:.3f}) | mean latency (ns, 95% CI) | "
             "drift (2nd half vs 1st) | verdict |", "|---|---|---|---|---|"]
    for p in pts:
        verdict = f"unstable ({p['unstable_reason'].replace('+', ', ')})" \
            if p["unstable"] == "true" else "stable"
        lines.append(f"| {duration_label(p['sim.duration'])} | {float(p['accepted_load_mean']):.4f} | "
                     f"{float(p['latency_mean_ns_mean']):.0f} ± "
                     f"{float(p['latency_mean_ns_ci95']):.0f} | "
                     f"{float(p['latency_drift']) * 100:+.1f}% ± "
                     f"{float(p['latency_drift_ci95']) * 100:.1f}% | {verdict} |")
    return "\n".join(lines)


# --- docs/sweeps-and-plots.md ---------------------------------------------------------------------

BUSBW = ("--set", "traffic.pattern=workload", "--set", "workload.ranks=16", "--set",
         "workload.tc=3", "--set", "workload.bytes=1KiB", "--set", "workload.sweep_to=64MiB",
         "--set", "workload.sweep_factor=4")
IDEAL = ("--set", "link.model=ideal", "--set", "flow_control.mode=none", "--set",
         "flow_control.ecn.enabled=false", "--set", "nic.cc=none")


def busbw_by_size(r, *args):
    """{bytes: (mean time ns, mean busbw GB/s)} over the calls of each size of a sweep run."""
    _, _, out = r.run("configs/nic_400g.yaml", *BUSBW, *args)
    by = {}
    with open(os.path.join(out, "collectives.csv"), newline="") as f:
        for row in csv.DictReader(f):
            by.setdefault(int(row["bytes"]), []).append((float(row["time_ns"]),
                                                         float(row["busbw_GBps"])))
    return {b: (sum(t for t, _ in v) / len(v), sum(g for _, g in v) / len(v))
            for b, v in by.items()}


@figure("busbw_sizes", ["docs/sweeps-and-plots.md"],
        "run configs/nic_400g.yaml: ring and tree all-reduce, 16 ranks, 1 KiB..64 MiB by 4; the "
        "tree over ideal links and unpipelined")
def busbw_sizes(r):
    ring = busbw_by_size(r, "--set", "workload.collective=allreduce_ring")
    tree = busbw_by_size(r, "--set", "workload.collective=allreduce_tree")
    ideal = busbw_by_size(r, "--set", "workload.collective=allreduce_tree", *IDEAL)
    flat = busbw_by_size(r, "--set", "workload.collective=allreduce_tree",
                         "--set", "workload.chunk=0")
    k, m4, m16, m64 = 1 << 10, 4 << 20, 16 << 20, 64 << 20
    peak = max(flat, key=lambda b: flat[b][1])
    return (f"Measured (1 KiB..64 MiB by 4, 16 ranks on the 400G NIC as shipped, PFC + DCQCN): the "
            f"ring rises\nfrom {ring[k][1]:.2f} GB/s at 1 KiB ({ring[k][0] / 1e3:.0f} us: 30 "
            f"steps of the per-step latency) to {ring[m64][1]:.1f} GB/s at 64 MiB; the\ndouble "
            f"binary tree finishes small messages {ring[k][0] / tree[k][0]:.1f}x sooner "
            f"({tree[k][0] / 1e3:.0f} us at 1 KiB: log2 depth) but reaches\nonly "
            f"{tree[m4][1]:.1f} GB/s at 4 MiB and {tree[m64][1]:.1f} GB/s at 64 MiB: its inner "
            f"ranks take two children at once, the 2:1\nfan-in marks ECN and DCQCN cuts the "
            f"senders' rates (without flow and congestion control, over ideal\nlinks, it gives "
            f"{ideal[m16][1]:.1f} GB/s at 16 MiB). Unpipelined (`workload.chunk=0`) the tree "
            f"peaks at {flat[peak][1]:.1f} GB/s\nat {peak >> 20} MiB.")


# --- docs/architecture.md ------------------------------------------------------------------------

LEAF_SPINE = ("--set", "switch.ports=8", "--set", "topology.kind=leaf_spine",
              "--set", "topology.leaves=4", "--set", "topology.spines=4",
              "--set", "topology.hosts_per_leaf=4", "--set", "traffic.pattern=permutation",
              "--seed", "4")
ROUTING_MODES = [("`ecmp`", ("--set", "switch.routing.mode=ecmp")),
                 ("`spray`", ("--set", "switch.routing.mode=spray")),
                 ("`flowlet` (2 us)", ("--set", "switch.routing.mode=flowlet")),
                 ("`flowlet` (50 ns)", ("--set", "switch.routing.mode=flowlet",
                                        "--set", "switch.routing.flowlet_gap=50ns")),
                 ("`adaptive`", ("--set", "switch.routing.mode=adaptive"))]


@figure("routing_table", ["docs/architecture.md"],
        "run configs/switch_51t2.yaml as a 4 x 4 leaf-spine, permutation, seed 4, per routing mode")
def routing_table(r):
    lines = ["| mode | uplink max / mean | max uplink | accepted load | latency mean / p99 (ns) | "
             "reordered / delivered |", "|---|---|---|---|---|---|"]
    for label, args in ROUTING_MODES:
        _, s, out = r.run("configs/switch_51t2.yaml", *LEAF_SPINE, *args)
        # uplinks: the leaves' ports without a host
        up = [float(p["accepted_load_out"]) for p in ports_rows(out)
              if p["switch"].startswith("leaf") and p["host"] == "-1"]
        lat, pk = s["latency_ns"], s["packets"]
        lines.append(f"| {label} | {max(up) / (sum(up) / len(up)):.2f} | {max(up):.3f} | "
                     f"{s['throughput']['accepted_load']:.3f} | {lat['mean']:.0f} / "
                     f"{lat['p99']:.0f} | {pk['reordered']} / {pk['delivered']} |")
    return "\n".join(lines)


SMALL = ("--set", "switch.architecture=voq", "--set", "traffic.load=1", "--set",
         "traffic.size=64B", "--set", "traffic.pattern=permutation")


@figure("small_packets", ["docs/architecture.md"],
        "run configs/switch_51t2.yaml as voq, 64 B frames, permutation at line rate: cell-wide "
        "datapath, the chip's, 128 banks")
def small_packets(r):
    _, cell, _ = r.run("configs/switch_51t2.yaml", *SMALL,
                       "--set", "switch.datapath.bytes_per_cycle=0")
    _, wide, _ = r.run("configs/switch_51t2.yaml", *SMALL)
    _, banks, _ = r.run("configs/switch_51t2.yaml", *SMALL, "--set", "switch.buffer.banks=128")
    acc = lambda s: s["throughput"]["accepted_load"]  # noqa: E731
    return (f"Measured (`--set switch.architecture=voq traffic.load=1 traffic.size=64B\n"
            f"traffic.pattern=permutation`, 20 us): offered {cell['throughput']['offered_load']:.3f} "
            f"of capacity; accepted {acc(cell):.3f} with\n`switch.datapath.bytes_per_cycle: 0` "
            f"(64 / 169.3 of line rate), {acc(wide):.3f} with the chip's 256 B/cycle, and "
            f"{acc(banks):.3f} with\n`switch.buffer.banks: 128` instead of 256.")


@figure("underruns", ["docs/architecture.md"],
        "run configs/switch_51t2.yaml as voq, load 0.7, 4096 B, per switch.egress.start")
def underruns(r):
    parts = []
    for start in ("no_underrun", "first_cell", "all_cells"):
        _, s, _ = r.run("configs/switch_51t2.yaml", "--set", "switch.architecture=voq",
                        "--set", f"switch.egress.start={start}")
        sw = s["switches"][0]
        parts.append(f"`{start}` {sw['egress_underruns']:,} underruns for "
                     f"{s['packets']['delivered']:,} frames, mean latency {s['latency_ns']['mean']:.1f} ns")
    return ("   Measured on `switch_51t2.yaml` as a crossbar (`switch.architecture=voq`; load 0.7, "
            "4096 B,\n   20 us): " + "; ".join(parts[:2]) + ";\n   " + parts[2] + ".")


# --- the command line ---------------------------------------------------------------------------

def parse_blocks(path, root):
    """[(name, first line index, end line index)] of a file's blocks; ValueError naming the
    line when they are malformed."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, open_name, start = [], None, 0
    rel = os.path.relpath(path, root)
    for i, line in enumerate(lines):
        b, e = BEGIN.match(line), END.match(line)
        if b:
            if open_name:
                raise ValueError(f"{rel}:{i + 1}: figure {b.group(1)} begins inside figure "
                                 f"{open_name}")
            if b.group(1) not in FIGURES:
                raise ValueError(f"{rel}:{i + 1}: no figure named {b.group(1)} in "
                                 "scripts/doc_figures.py")
            open_name, start = b.group(1), i
        elif e:
            if e.group(1) != open_name:
                raise ValueError(f"{rel}:{i + 1}: end of figure {e.group(1)} without its "
                                 "beginning")
            blocks.append((open_name, start, i))
            open_name = None
    if open_name:
        raise ValueError(f"{rel}:{start + 1}: figure {open_name} has no end line")
    return lines, blocks


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="rerun and compare (nothing written)")
    mode.add_argument("--write", action="store_true", help="rerun and rewrite the blocks")
    mode.add_argument("--list", action="store_true", help="list the figures and what they run")
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "build", "fabricsim"),
                    help="the simulator to run (default: build/fabricsim)")
    ap.add_argument("--docs-root", default=ROOT, metavar="DIR",
                    help="where README.md and docs/ are (default: this repository; the runs' "
                         "configurations always come from this repository)")
    ap.add_argument("--only", action="append", default=[], metavar="NAME",
                    help="only this figure (repeatable; default: all)")
    args = ap.parse_args(argv)
    for name in args.only:
        if name not in FIGURES:
            ap.error(f"--only {name}: no such figure (--list names them)")
    if args.list:
        for name, (_, files, runs) in FIGURES.items():
            print(f"{name:20} {', '.join(files)}: {runs}")
        return 0
    if not os.access(args.fabricsim, os.X_OK):
        ap.error(f"--fabricsim {args.fabricsim}: not an executable")
    wanted = args.only or list(FIGURES)
    files = sorted({f for n in wanted for f in FIGURES[n][1]})
    parsed = {}
    try:
        for f in files:
            parsed[f] = parse_blocks(os.path.join(args.docs_root, f), args.docs_root)
    except (OSError, ValueError) as e:
        print(f"doc_figures.py: error: {e}", file=sys.stderr)
        return 2
    for n in wanted:
        for f in FIGURES[n][1]:
            if n not in [b[0] for b in parsed[f][1]]:
                print(f"doc_figures.py: error: {f}: no block for figure {n}", file=sys.stderr)
                return 2
    texts, differ = {}, []
    with tempfile.TemporaryDirectory(prefix="doc-figures-") as tmp:
        runner = Runner(os.path.abspath(args.fabricsim), tmp)
        for n in wanted:
            try:
                texts[n] = FIGURES[n][0](runner)
            except RunError as e:
                print(f"doc_figures.py: figure {n}: {e}", file=sys.stderr)
                return 1
    for f in files:
        lines, blocks = parsed[f]
        for name, start, end in reversed(blocks):
            if name not in texts:
                continue
            old, new = lines[start + 1:end], texts[name].split("\n")
            if old != new:
                differ.append(name)
                if args.check:
                    print(f"{f}: figure {name} differs from its runs:")
                    sys.stdout.writelines(
                        x + "\n" for x in difflib.unified_diff(old, new, "committed", "runs now",
                                                               lineterm="", n=1))
                lines[start + 1:end] = new
        if args.write:
            with open(os.path.join(args.docs_root, f), "w", encoding="utf-8") as out:
                out.write("\n".join(lines))
    if args.check:
        if differ:
            print(f"{len(differ)} of {len(texts)} figures differ; rewrite them with\n"
                  f"  scripts/doc_figures.py --fabricsim build/fabricsim --write")
            return 1
        print(f"{len(texts)} figures match their runs")
        return 0
    print(f"{len(texts)} figures written, {len(set(differ))} changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
