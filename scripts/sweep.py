#!/usr/bin/env python3
"""Parameter sweeps over fabricsim runs: latency-vs-load curves and friends, on local cores or Slurm.

  sweep.py CONFIG.yaml (--vary KEY=V1,V2,... [--vary ...] | --points FILE.csv)
           [--set KEY=VALUE]... [--seeds S1,S2,... | --nseeds K] [--jobs N] [--timeout S]
           [--backend local|slurm [--slurm-partition P] [--slurm-time T] [--slurm-max-running N]
            [--sbatch-arg ARG]... [--poll S]] [--force] [--load-tolerance F]
           [--drift-tolerance F] --out DIR [--fabricsim PATH] [--plot]
  sweep.py --replot DIR|CSV [--png PATH] [--load-tolerance F] [--drift-tolerance F]

Runs the cartesian product of the --vary lists (or the rows of a --points CSV) x the seeds as
`fabricsim run CONFIG --set ... [--seed S] --out DIR/<point>`: on the local backend N at a time
(with `--set sim.traffic_thread=false` first when 2N exceeds the CPUs, unless the sweep sets that
key: runs sharing the CPUs are faster without the simulator's helper threads); on the slurm backend
as one `sbatch --array` job, one array task per run, gathered when the array has ended. Then
writes DIR/sweep.csv and DIR/sweep.json (one row per run, in the order of the points, seeds last),
DIR/sweep_points.csv (one row per design point: mean and 95% Student-t confidence interval of each
metric over its seeds, and the steady-state verdict `unstable`), DIR/sweep_setup.json (the base
configuration, the fixed overrides, the varied keys and the seeds, which the plot states) and,
with --plot, DIR/sweep.png (1386 x 924 px: mean and p99 latency on log axes and accepted load
against the first varied key, a line per combination of the others, each its own colour, marker
and dashes; 95% CI error bars; unstable points ringed). Each run directory holds the run's usual
result files plus command.txt, stdout.txt, stderr.txt and outcome.json.

Resumable: a run whose directory already holds a complete result set (summary.json, not
interrupted, invariants holding) recorded for the same resolved configuration and seed is not run
again (column `reused`); an interrupted sweep run again continues where it stopped. --force reruns
everything. The configurations are compared as `fabricsim check` resolves them, ignoring
sim.traffic_thread (a speed setting: the results are the same either way).

A value list is split on commas outside brackets, so list values work:
`--vary traffic.sizes=[64,1500],[256,9000]`. Without --seeds/--nseeds every run uses the
configuration's seed (sim.seed) and run names carry no seed.

Exit status: 0 if every run succeeded; 1 if any run failed (all runs are still made and recorded,
the failed runs are listed at the end); 2 for bad arguments or input files (the message names the
file and line), runs of two result schemas (summary.json schema_version: a reused run of an older
build; no table is written), a failed sbatch submission, or matplotlib missing for --plot or
--replot (checked before anything runs; Debian's python3-matplotlib); 130 if interrupted (Ctrl-C: running
simulations write their partial results, queued runs are not started (Slurm: the array is
cancelled), the tables are written).
"""
import argparse
import csv
import os
import re
import shutil
import signal
import sys
import time

# This file is the command (arguments, main); its parts live beside it: sweep_common.py (what they
# share), sweep_runs.py (points, resuming, running, gathering), sweep_slurm.py (the Slurm backend),
# sweep_stats.py (statistics over seeds, verdicts, tables), sweep_plot.py (the figure, --replot).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_common import ROOT, UsageError, clip, read_text, require_matplotlib  # noqa: E402
from sweep_plot import describe, plot_or_explain, replot  # noqa: E402
from sweep_runs import collect, find_reusable, make_points, mixed_schemas, run_local  # noqa: E402
from sweep_slurm import run_slurm, slurm_task  # noqa: E402
from sweep_stats import (DEFAULT_DRIFT_TOLERANCE, DEFAULT_LOAD_TOLERANCE,  # noqa: E402
                         point_stats, setup_record, write_tables)

DEFAULT_FABRICSIM = os.path.join(ROOT, "build", "fabricsim")

KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


# --- argument parsing ---------------------------------------------------------------------------

def split_values(text):
    """Split on commas that are not inside [] or {} (so YAML list values survive)."""
    items, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced brackets")
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise ValueError("unbalanced brackets")
    items.append("".join(cur))
    return [v.strip() for v in items]


def check_key(key, spec, option):
    if not KEY_RE.match(key):
        raise UsageError(f"{option} {clip(spec)}: '{clip(key)}' is not a configuration key "
                         "(expected dotted names like traffic.load)")


def parse_vary(spec):
    """'key=v1,v2,...' -> (key, [v1, v2, ...])."""
    shown = clip(spec)
    if "=" not in spec:
        raise UsageError(f"--vary {shown}: expected KEY=V1,V2,... (e.g. traffic.load=0.1,0.5,0.9)")
    key, _, text = spec.partition("=")
    key = key.strip()
    check_key(key, spec, "--vary")
    try:
        values = split_values(text)
    except ValueError as e:
        raise UsageError(f"--vary {shown}: {e}") from None
    if any(v == "" for v in values):
        raise UsageError(f"--vary {shown}: empty value in the list (expected KEY=V1,V2,...)")
    dups = sorted({v for v in values if values.count(v) > 1})
    if dups:
        raise UsageError(f"--vary {shown}: value {clip(dups[0])} is listed twice")
    return key, values


def parse_set(spec):
    if "=" not in spec:
        raise UsageError(f"--set {clip(spec)}: expected KEY=VALUE (e.g. sim.duration=50us)")
    key, _, value = spec.partition("=")
    key = key.strip()
    check_key(key, spec, "--set")
    return key, value.strip()


def parse_seeds(text):
    try:
        seeds = [int(s) for s in split_values(text)]
    except ValueError:
        raise UsageError(f"--seeds {clip(text)}: expected a comma-separated list of integers "
                         "(e.g. 1,2,3)") from None
    if any(s < 0 for s in seeds):
        raise UsageError(f"--seeds {clip(text)}: seeds must be >= 0")
    if len(set(seeds)) != len(seeds):
        raise UsageError(f"--seeds {clip(text)}: a seed is listed twice")
    return seeds


MAX_POINTS_BYTES = 16 << 20  # a points file is a few rows: this refuses a wrong file at once


def parse_points_file(path):
    """A CSV of design points: a header of configuration keys, one row of values per point
    (values as --set takes them; '#' lines are comments). -> (keys, [[v, ...], ...]). Every
    error names the file and its line."""
    rows = []  # (line number, values)
    for n, line in enumerate(read_text(path, "--points", MAX_POINTS_BYTES).split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:  # a line at a time, so that every message has the file's own line number
            row, = csv.reader([line], skipinitialspace=True, strict=True)
        except csv.Error as e:  # a bad quote, a field over csv's limit of 131,072 characters, ...
            raise UsageError(f"--points {path}:{n}: {e}") from None
        row = [v.strip() for v in row]
        bad = next((c for v in row for c in v if ord(c) < 32 or ord(c) == 127), None)
        if bad is not None:  # a NUL cannot even reach the simulator's command line
            raise UsageError(f"--points {path}:{n}: control character {bad!r} in a value")
        rows.append((n, row))
    if len(rows) < 2:
        raise UsageError(f"--points {path}: expected a header of configuration keys and at least "
                         "one row of values")
    first, keys = rows[0]
    for k in keys:
        check_key(k, f"{path}:{first}", "--points")
    if len(set(keys)) != len(keys):
        raise UsageError(f"--points {path}:{first}: a key is listed twice")
    seen = {}
    for n, row in rows[1:]:
        if len(row) != len(keys) or any(v == "" for v in row):
            raise UsageError(f"--points {path}:{n}: {len(row)} value(s), some empty or missing; "
                             f"expected {len(keys)} ({clip(', '.join(keys))})")
        if tuple(row) in seen:
            raise UsageError(f"--points {path}:{n}: repeats the point of line {seen[tuple(row)]}")
        seen[tuple(row)] = n
    return keys, [row for _, row in rows[1:]]


def parse_tolerances(args):
    if not (0 <= args.load_tolerance < 1):
        raise UsageError(f"--load-tolerance {args.load_tolerance}: expected a fraction in [0, 1)")
    if not args.drift_tolerance >= 0:
        raise UsageError(f"--drift-tolerance {args.drift_tolerance}: must be >= 0")


def build_parser():
    ap = argparse.ArgumentParser(prog="sweep.py", description=__doc__, epilog="See docs/sweeps.md.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", nargs="?", help="configuration file (YAML)")
    ap.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2,...",
                    help="a key and the values to sweep it over (repeatable: cartesian product)")
    ap.add_argument("--points", metavar="FILE.csv",
                    help="a list of design points instead of a grid: header = keys, a row each")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets",
                    help="a fixed override for every run (repeatable)")
    ap.add_argument("--seeds", metavar="S1,S2,...",
                    help="run every point with each of these seeds (default: the config's seed)")
    ap.add_argument("--nseeds", type=int, metavar="K",
                    help="run every point with seeds 1..K (same as --seeds 1,2,...,K)")
    ap.add_argument("--jobs", "-j", type=int, metavar="N",
                    help="local backend: parallel runs (default: number of CPUs)")
    ap.add_argument("--timeout", type=float, metavar="SECONDS",
                    help="interrupt a run after this long (it is recorded as failed; default: "
                         "no limit)")
    ap.add_argument("--out", metavar="DIR", help="sweep output directory (required)")
    ap.add_argument("--fabricsim", default=DEFAULT_FABRICSIM, metavar="PATH",
                    help="simulator binary (default: build/fabricsim in the repository)")
    ap.add_argument("--plot", action="store_true",
                    help="also write DIR/sweep.png (needs matplotlib)")
    ap.add_argument("--force", action="store_true",
                    help="rerun every run, even those whose results are already there "
                         "(default: reuse them)")
    ap.add_argument("--backend", choices=("local", "slurm"), default="local",
                    help="where the runs go: local processes (default) or a Slurm job array")
    ap.add_argument("--slurm-partition", metavar="P",
                    help="slurm: sbatch --partition (default: the cluster's)")
    ap.add_argument("--slurm-time", metavar="T",
                    help="slurm: sbatch --time, per run (e.g. 1:00:00; default: the partition's)")
    ap.add_argument("--slurm-max-running", type=int, metavar="N",
                    help="slurm: at most N array tasks at once (--array=...%%N; default: no "
                         "limit)")
    ap.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                    help="slurm: one more sbatch argument, e.g. --sbatch-arg=--account=chip "
                         "(repeatable)")
    ap.add_argument("--poll", type=float, default=2.0, metavar="SECONDS",
                    help="slurm: how often squeue is asked whether the array has ended (default 2)")
    ap.add_argument("--load-tolerance", type=float, default=DEFAULT_LOAD_TOLERANCE, metavar="F",
                    help="steady state: accepted load may fall short of offered by this fraction "
                         f"of it (default {DEFAULT_LOAD_TOLERANCE})")
    ap.add_argument("--drift-tolerance", type=float, default=DEFAULT_DRIFT_TOLERANCE, metavar="F",
                    help="steady state: the second half's mean latency may differ from the "
                         "first half's by this fraction of it, or by its 95%% CI over the seeds "
                         f"if larger (default {DEFAULT_DRIFT_TOLERANCE})")
    ap.add_argument("--replot", metavar="DIR|CSV",
                    help="redraw the plot of an earlier sweep from its tables; runs nothing")
    ap.add_argument("--png", metavar="PATH",
                    help="--replot: where to write the plot (default: sweep.png beside the CSV)")
    ap.add_argument("--slurm-task", nargs=2, metavar=("MANIFEST", "INDEX"), help=argparse.SUPPRESS)
    return ap


def parse_args(argv):
    ap = build_parser()
    args = ap.parse_args(argv)
    parse_tolerances(args)
    if args.replot is not None:
        sweep_opts = [("config", args.config), ("--vary", args.vary), ("--points", args.points),
                      ("--set", args.sets), ("--seeds", args.seeds), ("--nseeds", args.nseeds),
                      ("--out", args.out), ("--plot", args.plot), ("--force", args.force)]
        given = [name for name, v in sweep_opts if v not in (None, [], False)]
        if given:
            raise UsageError(f"--replot draws an earlier sweep and runs nothing: {given[0]} "
                             "does not go with it")
        return args
    if args.png is not None:
        raise UsageError("--png goes with --replot (a sweep's own plot is DIR/sweep.png)")
    if args.config is None:
        raise UsageError("the configuration file is missing (sweep.py CONFIG.yaml --vary ... "
                         "--out DIR)")
    if args.out is None:
        raise UsageError("--out DIR is required")

    args.varied = []  # [(key, [values])]
    for spec in args.vary:
        key, values = parse_vary(spec)
        if any(k == key for k, _ in args.varied):
            raise UsageError(f"--vary {clip(spec)}: {clip(key)} is already varied")
        args.varied.append((key, values))
    args.point_list = None  # [[(key, value), ...]] from --points
    if args.points is not None:
        if args.varied:
            raise UsageError("--points and --vary: give the design points one way (a --points "
                             "file lists every combination itself)")
        keys, rows = parse_points_file(args.points)
        args.varied = [(k, list(dict.fromkeys(r[i] for r in rows))) for i, k in enumerate(keys)]
        args.point_list = [list(zip(keys, r)) for r in rows]
    args.fixed = [parse_set(s) for s in args.sets]
    varied_keys = {k for k, _ in args.varied}
    for key, value in args.fixed:
        if key in varied_keys:
            raise UsageError(f"--set {key}={value}: {key} is also given to "
                             f"{'--points' if args.points else '--vary'}")
    if args.seeds is not None and args.nseeds is not None:
        raise UsageError("--seeds and --nseeds: give the seeds one way")
    if args.nseeds is not None and args.nseeds < 1:
        raise UsageError(f"--nseeds {args.nseeds}: must be >= 1")
    args.seed_list = (parse_seeds(args.seeds) if args.seeds is not None
                      else list(range(1, args.nseeds + 1)) if args.nseeds is not None else None)
    if args.seed_list is not None and ("sim.seed" in varied_keys
                                       or any(k == "sim.seed" for k, _ in args.fixed)):
        raise UsageError("--seeds conflicts with --vary/--set sim.seed: use one of them")
    if not args.varied and args.seed_list is None:
        raise UsageError("nothing to sweep: give at least one --vary KEY=V1,V2,... or --seeds")
    if args.plot and not args.varied:
        raise UsageError("--plot needs at least one --vary (its first key is the x axis)")
    if args.plot:
        require_matplotlib("--plot")
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if args.jobs is None:
        args.jobs = cpus
    elif args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: must be >= 1")
    if args.backend != "slurm":
        for opt, v in (("--slurm-partition", args.slurm_partition),
                       ("--slurm-time", args.slurm_time),
                       ("--slurm-max-running", args.slurm_max_running),
                       ("--sbatch-arg", args.sbatch_arg)):
            if v not in (None, []):
                raise UsageError(f"{opt} goes with --backend slurm")
    if args.slurm_max_running is not None and args.slurm_max_running < 1:
        raise UsageError(f"--slurm-max-running {args.slurm_max_running}: must be >= 1")
    if not args.poll > 0:
        raise UsageError(f"--poll {args.poll}: must be > 0")
    # A run with its helper threads (sim.traffic_thread) keeps about 1.4 CPUs busy; runs that have
    # to share the CPUs are faster without them (2 runs on 2 CPUs: ~1.4x), and the results are
    # the same either way. Unless the sweep sets the key itself. A Slurm task gets one CPU unless
    # --sbatch-arg asks for more: there too, a run goes without them.
    own_key = "sim.traffic_thread" in varied_keys or \
        any(k == "sim.traffic_thread" for k, _ in args.fixed)
    args.single_thread = not own_key and (args.backend == "slurm" or args.jobs * 2 > cpus)
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError(f"--timeout {args.timeout}: must be > 0")
    if not os.path.isfile(args.config):
        raise UsageError(f"{args.config}: no such configuration file")
    if not (os.path.isfile(args.fabricsim) and os.access(args.fabricsim, os.X_OK)):
        raise UsageError(f"{args.fabricsim}: simulator not found or not executable "
                         "(build it, or pass --fabricsim PATH)")
    if args.backend == "slurm":
        for tool in ("sbatch", "squeue", "scancel"):
            if shutil.which(tool) is None:
                raise UsageError(f"--backend slurm: '{tool}' is not on PATH (install Slurm's "
                                 "client commands, on Debian: apt install slurm-client)")
    # Runs on other machines (Slurm) must find these by the same names.
    args.config = os.path.abspath(args.config)
    args.fabricsim = os.path.abspath(args.fabricsim)
    args.out = os.path.abspath(args.out)
    return args

# --- main ---------------------------------------------------------------------------------------

def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--slurm-task"] and len(argv) == 3:
        return slurm_task(argv[1], argv[2])
    try:
        args = parse_args(argv)
        if args.replot is not None:
            return replot(args)
    except UsageError as e:
        print(f"sweep.py: error: {e}", file=sys.stderr)
        return 2
    try:  # before any run: a bad --out fails at once
        os.makedirs(args.out, exist_ok=True)
        probe = os.path.join(args.out, ".sweep-write-test")
        with open(probe, "w"):
            pass
        os.remove(probe)
    except OSError as e:
        print(f"sweep.py: error: --out {args.out}: cannot write there: {e.strerror}",
              file=sys.stderr)
        return 2
    # `kill` and a closed terminal stop the sweep as Ctrl-C does.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    points = make_points(args.varied, args.seed_list, args.point_list)
    t0 = time.monotonic()
    interrupted = False
    results = {}
    try:
        reused = find_reusable(points, args)
        pending = [i for i in range(len(points)) if i not in reused]
        if reused:
            print(f"sweep: {len(reused)} of {len(points)} runs already done (results there for "
                  f"the same configuration), {len(pending)} to run", file=sys.stderr, flush=True)
        if pending:
            run = run_slurm if args.backend == "slurm" else run_local
            results, interrupted = run(points, pending, args)
    except KeyboardInterrupt:
        interrupted = True
        reused = set()
    except UsageError as e:
        print(f"sweep.py: error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"sweep.py: error: {e}", file=sys.stderr)
        return 1
    rows = []
    for i, p in enumerate(points):
        if i in reused:
            rows.append(collect(p, 0, "", args, reused=True))
        else:
            code, error = results.get(i, (None, "not run (sweep interrupted)"))
            rows.append(collect(p, code, error, args))
    mixed = mixed_schemas(rows)
    if mixed:
        print(f"sweep.py: error: {mixed}", file=sys.stderr)
        return 2
    where = "on Slurm" if args.backend == "slurm" else f"with {args.jobs} jobs"
    print(f"sweep: {len(results)} runs in {time.monotonic() - t0:.1f} s {where}"
          + (f", {len(reused)} reused" if reused else ""), file=sys.stderr)
    keys = [k for k, _ in args.varied]
    stats = point_stats(rows, keys, args.load_tolerance, args.drift_tolerance)
    write_tables(rows, stats, args)
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"sweep: {len(rows) - len(failed)}/{len(rows)} runs ok; "
          f"results in {os.path.join(args.out, 'sweep.csv')}")
    unstable = [p for p in stats if p["unstable"] is True]
    if unstable:
        print(f"sweep: {len(unstable)} of {len(stats)} point(s) not in steady state (unstable in "
              f"{os.path.join(args.out, 'sweep_points.csv')}): see docs/sweeps.md#steady-state",
              file=sys.stderr)
    status = 0
    if failed:
        print(f"sweep: {len(failed)} run(s) failed:", file=sys.stderr)
        for r in failed:
            code = "not run" if r["exit_code"] is None else f"exit {r['exit_code']}"
            print(f"  {r['point']} ({code}): {r['error']}", file=sys.stderr)
        status = 1
    if args.plot:
        info = describe(setup_record(args), stats, keys, rows)
        status = plot_or_explain(stats, keys, os.path.join(args.out, "sweep.png"), info) or status
    if interrupted:
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
