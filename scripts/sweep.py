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
file and line), a failed sbatch submission, or matplotlib missing for --plot or --replot (checked
before anything runs; Debian's python3-matplotlib); 130 if interrupted (Ctrl-C: running
simulations write their partial results, queued runs are not started (Slurm: the array is
cancelled), the tables are written).
"""
import argparse
import concurrent.futures
import csv
import hashlib
import io
import itertools
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FABRICSIM = os.path.join(ROOT, "build", "fabricsim")

KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
JSON_NUMBER_RE = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
MAX_NAME_BYTES = 200  # well below the usual 255-byte file-name limit

# Result columns after the varied keys and the seed, in CSV order.
METRICS = [
    "offered_load", "accepted_load",
    "latency_mean_ns", "latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns",
    "latency_count",
    "buffer_peak_bytes", "buffer_mean_bytes",
    "injected", "delivered", "dropped", "in_flight",  # whole run, as fabricsim prints them
    "window_injected", "window_dropped",             # packets injected in the measurement window
    "invariants_ok",
    # the measured packets split at the middle of the window (steady state: see sweep_points.csv)
    "latency_first_half_mean_ns", "latency_second_half_mean_ns",
    "latency_first_half_count", "latency_second_half_count",
]
TRAILER = ["exit_code", "status", "wall_s", "error", "reused"]
# Per design point (sweep_points.csv): mean and 95% CI over its seeds of these.
STAT_METRICS = [
    "offered_load", "accepted_load",
    "latency_mean_ns", "latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns",
    "buffer_peak_bytes", "buffer_mean_bytes", "window_dropped",
    "latency_first_half_mean_ns", "latency_second_half_mean_ns",
]
POINT_HEAD = ["runs", "runs_ok", "seeds"]
POINT_TAIL = ["load_shortfall", "latency_drift", "latency_drift_ci95", "unstable",
              "unstable_reason"]
# Keys that change how fast a run goes, never its results: left out when a run's recorded
# configuration is compared with the one asked for.
SPEED_ONLY_KEYS = {("sim", "traffic_thread")}
DEFAULT_LOAD_TOLERANCE = 0.01
DEFAULT_DRIFT_TOLERANCE = 0.05


class UsageError(Exception):
    """Bad command-line input: exit 2."""


def clip(text, limit=60):
    """A value as a message quotes it: printable and cut short, so that the message stays one
    readable line whatever the input holds."""
    s = text if text.isprintable() else text.encode("unicode_escape").decode("ascii")
    return s if len(s) <= limit else f"{s[:limit]}... ({len(text)} characters)"


def read_text(path, option, limit=None):
    """A UTF-8 text file's contents (a leading BOM dropped). UsageError naming the file and the
    line and column of the first byte that is not UTF-8, or a file over `limit` bytes."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError(f"{option} {path}: not a regular file")  # a FIFO or /dev/zero would hang
    try:
        with open(path, "rb") as f:
            data = f.read() if limit is None else f.read(limit + 1)
    except OSError as e:
        raise UsageError(f"{option} {path}: cannot read: {e.strerror}") from None
    if limit is not None and len(data) > limit:
        raise UsageError(f"{option} {path}: larger than {limit >> 20} MiB")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")  # spreadsheets write a BOM
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - data.rfind(b"\n", 0, e.start)
        raise UsageError(f"{option} {path}:{line}:{col}: not UTF-8 text "
                         f"(byte 0x{data[e.start]:02x})") from None


def require_matplotlib(option):
    """matplotlib imported now, before any run: a sweep must not run for hours and then fail to
    draw. UsageError (exit 2) naming the Debian package otherwise."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise UsageError(f"{option}: the Python module matplotlib is missing for {sys.executable} "
                         f"({clip(str(e), 100)}): on Debian, apt install python3-matplotlib") \
            from None


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


# --- points -------------------------------------------------------------------------------------

def safe_value(value):
    """A value as it appears in a directory name: percent-encoded outside [A-Za-z0-9_.~+-], so the
    name is filesystem-safe and still unambiguous (',' and '=' inside values are encoded too)."""
    return urllib.parse.quote(value, safe="+")


def point_name(assignments, seed=None):
    """Deterministic directory name: 'traffic.load=0.5,switch.scheduler.iterations=2,seed=1'."""
    parts = [f"{k}={safe_value(v)}" for k, v in assignments]
    if seed is not None:
        parts.append(f"seed={seed}")
    name = ",".join(parts)
    if len(name.encode()) > MAX_NAME_BYTES:
        digest = hashlib.sha1(name.encode()).hexdigest()[:12]
        name = name[:MAX_NAME_BYTES - 13] + "~" + digest
    return name


def make_points(varied, seeds, point_list=None):
    """Runs in a fixed order: the product of the --vary lists (first key outermost) or the rows of
    the --points file, seeds innermost. This order is also the row order of the tables, whatever
    --jobs or the backend is."""
    points = []
    if point_list is None:
        value_lists = [values for _, values in varied]
        point_list = [[(k, v) for (k, _), v in zip(varied, combo)]
                      for combo in itertools.product(*value_lists)]
    for assignments in point_list:
        for seed in (seeds if seeds is not None else [None]):
            points.append({"assignments": assignments, "seed": seed,
                           "name": point_name(assignments, seed)})
    return points


def run_command(point, args, pdir):
    cmd = [args.fabricsim, "run", args.config]
    if args.single_thread:
        cmd += ["--set", "sim.traffic_thread=false"]
    for k, v in list(args.fixed) + list(point["assignments"]):
        cmd += ["--set", f"{k}={v}"]
    if point["seed"] is not None:
        cmd += ["--seed", str(point["seed"])]
    cmd += ["--out", pdir]
    return cmd


# --- resuming -----------------------------------------------------------------------------------

def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def strip_speed_keys(yaml_text):
    """fabricsim check's resolved configuration without the header comment and the keys of
    SPEED_ONLY_KEYS (two-level keys: 'section:' at column 0, '  key: value' below it)."""
    out, section = [], None
    for line in yaml_text.splitlines():
        if line.startswith("#"):
            continue
        if line and not line[0].isspace():
            section = line.split(":", 1)[0]
        elif section is not None and line.startswith("  ") and not line.startswith("   "):
            key = line.strip().split(":", 1)[0]
            if (section, key) in SPEED_ONLY_KEYS:
                continue
        out.append(line)
    return "\n".join(out)


def resolve(fabricsim, config, sets):
    """The resolved configuration as `fabricsim check` prints it (speed-only keys dropped), or
    None if it does not resolve."""
    cmd = [fabricsim, "check", config]
    for k, v in sets:
        cmd += ["--set", f"{k}={v}"]
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return strip_speed_keys(p.stdout) if p.returncode == 0 else None


def expected_config(point, args):
    sets = list(args.fixed) + list(point["assignments"])
    if point["seed"] is not None:
        sets.append(("sim.seed", str(point["seed"])))  # as run --seed: applied last
    return resolve(args.fabricsim, args.config, sets)


def recorded_config(pdir):
    """The resolved configuration fabricsim recorded in the run's summary.json, put through the
    same `fabricsim check` (YAML reads its JSON), if the run left a complete, uninterrupted result
    set whose invariants held; else None."""
    s = read_json(os.path.join(pdir, "summary.json"))
    if not isinstance(s, dict) or s.get("interrupted") is not False or \
            not isinstance(s.get("invariants"), dict) or s["invariants"].get("ok") is not True or \
            not isinstance(s.get("config"), dict):
        return None
    for f in ("perf.json", "ports.csv"):
        if not os.path.isfile(os.path.join(pdir, f)):
            return None
    return s["config"]


def reusable(point, args, tmpdir):
    """True if the run's directory holds results of exactly the configuration asked for."""
    pdir = os.path.join(args.out, point["name"])
    cfg = recorded_config(pdir)
    if cfg is None:
        return False
    want = expected_config(point, args)
    if want is None:
        return False  # does not resolve any more: run it and let it fail with its message
    # Beside the sweep's configuration file (YAML reads JSON): a relative traffic.trace.file is
    # read from the configuration's folder, as in the runs. Elsewhere if that folder is read-only
    # (then a run of a trace given by a relative path is run again).
    text = json.dumps(cfg)
    for folder in (os.path.dirname(args.config), tmpdir):
        try:
            fd, path = tempfile.mkstemp(prefix=".sweep-check-", suffix=".yaml", dir=folder)
        except OSError:
            continue
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            have = resolve(args.fabricsim, path, [])
        finally:
            os.remove(path)
        return have is not None and have == want
    return False


def find_reusable(points, args):
    """Indexes of the runs whose results are already there (none with --force)."""
    if args.force:
        return set()
    candidates = [i for i, p in enumerate(points)
                  if os.path.isfile(os.path.join(args.out, p["name"], "summary.json"))]
    if not candidates:
        return set()
    with tempfile.TemporaryDirectory(prefix="sweep-check-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            ok = list(pool.map(lambda i: reusable(points[i], args, tmp), candidates))
    return {i for i, good in zip(candidates, ok) if good}


# --- running one point (local backend, and a Slurm array task) ----------------------------------

def stderr_tail(text, lines=3, chars=400):
    tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    s = " | ".join(tail)
    return s if len(s) <= chars else "..." + s[-chars:]


# The simulations running now: an interrupt of the sweep alone (not of its whole process group, as
# a terminal's Ctrl-C is) is passed on to them, so that they stop and write partial results.
RUNNING = set()
RUNNING_LOCK = threading.Lock()


def fresh_dir(pdir):
    """An empty directory: never read a previous sweep's results for a run that failed early."""
    if os.path.isdir(pdir) and not os.path.islink(pdir):
        shutil.rmtree(pdir)
    elif os.path.lexists(pdir):
        os.remove(pdir)
    os.makedirs(pdir)


def execute(cmd, pdir, timeout):
    """Runs one simulation in an emptied pdir; writes command.txt, stdout.txt, stderr.txt and, at
    the end, outcome.json. Returns (exit_code, error text or '')."""
    fresh_dir(pdir)
    with open(os.path.join(pdir, "command.txt"), "w") as f:
        f.write(shlex.join(cmd) + "\n")
    err_path = os.path.join(pdir, "stderr.txt")
    timed_out = interrupted = False
    with open(os.path.join(pdir, "stdout.txt"), "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        with RUNNING_LOCK:
            RUNNING.add(proc)
        try:
            code = proc.wait(timeout=timeout)
        except KeyboardInterrupt:  # a Slurm task cancelled (SIGTERM); a local sweep's workers
            interrupted = True     # are threads and never see this
            proc.send_signal(signal.SIGINT)  # as a second signal: harmless to fabricsim
            code = proc.wait()
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.send_signal(signal.SIGINT)  # fabricsim writes partial results on SIGINT
            try:
                code = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
        finally:
            with RUNNING_LOCK:
                RUNNING.discard(proc)
    with open(err_path, errors="replace") as f:
        error = stderr_tail(f.read()) if code != 0 else ""
    if timed_out:
        error = f"timed out after {timeout:g} s" + (f": {error}" if error else "")
    if interrupted:
        error = "interrupted (the Slurm task was cancelled)" + (f": {error}" if error else "")
    tmp = os.path.join(pdir, ".outcome.json.part")
    with open(tmp, "w") as f:
        json.dump({"exit_code": code, "error": error}, f)
        f.write("\n")
    os.replace(tmp, os.path.join(pdir, "outcome.json"))
    return code, error


def run_point(point, args, stop):
    """Run one simulation; returns (exit_code or None if not started, error text or '')."""
    if stop.is_set():
        return None, "not run (sweep interrupted)"
    pdir = os.path.join(args.out, point["name"])
    return execute(run_command(point, args, pdir), pdir, args.timeout)


def run_local(points, pending, args):
    """Runs points[i] for i in pending, at most --jobs at a time. Returns ({i: (code, error)},
    interrupted)."""
    stop = threading.Event()
    results = {}
    interrupted = False
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_point, points[i], args, stop): i for i in pending}
        try:
            for fut in concurrent.futures.as_completed(futures):
                i = futures[fut]
                try:
                    code, error = fut.result()
                except Exception as e:  # e.g. the binary vanished, the disk is full
                    code, error = None, f"not run: {e}"
                results[i] = (code, error)
                done += 1
                if code is not None:
                    verdict = "ok" if code == 0 else f"FAILED (exit {code})"
                    print(f"[{done}/{len(pending)}] {points[i]['name']}: {verdict}",
                          file=sys.stderr, flush=True)
        except KeyboardInterrupt:
            interrupted = True
            stop.set()
            print("sweep: interrupted; waiting for the running simulations to stop",
                  file=sys.stderr, flush=True)
            with RUNNING_LOCK:
                for proc in RUNNING:
                    proc.send_signal(signal.SIGINT)  # a second one is harmless to fabricsim
            pool.shutdown(wait=True, cancel_futures=True)
            for fut, i in futures.items():
                if i not in results:
                    if fut.done() and not fut.cancelled() and fut.exception() is None:
                        results[i] = fut.result()
                    else:
                        results[i] = (None, "not run (sweep interrupted)")
    return results, interrupted


# --- the Slurm backend --------------------------------------------------------------------------
# One array job: task k runs the k-th run of a manifest (DIR/.slurm/manifest-JOB.json) through
# `sweep.py --slurm-task MANIFEST k` on whatever node Slurm gives it, which writes the run's
# outcome.json next to its results. The sweep waits for the array to leave squeue, then reads the
# outcomes. DIR must be on a filesystem the nodes share, with fabricsim, the config and this
# script at the same paths.

SLURM_ARRAY_MAX = 1000  # Slurm's default MaxArraySize is 1001 (indexes 0..1000)


def slurm_task(manifest_path, index_text):
    """Entry point of an array task: runs one point of the manifest."""
    manifest = read_json(manifest_path)
    if not isinstance(manifest, dict):
        print(f"sweep.py --slurm-task: cannot read {manifest_path}", file=sys.stderr)
        return 2
    try:
        task = manifest["tasks"][int(index_text)]
    except (ValueError, IndexError, KeyError):
        print(f"sweep.py --slurm-task: no task {index_text} in {manifest_path}", file=sys.stderr)
        return 2
    # scancel sends SIGTERM: the simulation stops and writes its partial results as on Ctrl-C.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    code, error = execute(task["cmd"], task["dir"], manifest.get("timeout"))
    return 0 if code == 0 else 130 if error.startswith("interrupted") else 1


def squeue_active(job_ids):
    """True while any of the array jobs has tasks pending, running or completing."""
    p = subprocess.run(["squeue", "-h", "-o", "%F %T", "-j", ",".join(job_ids)],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        if "Invalid job id" in p.stderr:
            return False  # ended so long ago that the controller forgot them
        raise RuntimeError(f"squeue failed: {p.stderr.strip()}")
    return bool(p.stdout.strip())


def submit_array(chunk, points, args, sdir, tag):
    """Writes the manifest and job script of one array and submits it; returns the job id."""
    manifest = os.path.join(sdir, f"manifest-{tag}.json")
    tasks = []
    for i in chunk:
        pdir = os.path.join(args.out, points[i]["name"])
        tasks.append({"name": points[i]["name"], "dir": pdir,
                      "cmd": run_command(points[i], args, pdir)})
    with open(manifest, "w") as f:
        json.dump({"timeout": args.timeout, "tasks": tasks}, f, indent=1)
    script = os.path.join(sdir, f"manifest-{tag}.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n# One run of a fabricsim sweep per array task (scripts/sweep.py)\n"
                f"exec {shlex.quote(sys.executable)} {shlex.quote(os.path.abspath(__file__))} "
                f"--slurm-task {shlex.quote(manifest)} \"$SLURM_ARRAY_TASK_ID\"\n")
    os.chmod(script, 0o755)
    array = f"0-{len(chunk) - 1}"
    if args.slurm_max_running:
        array += f"%{args.slurm_max_running}"
    cmd = ["sbatch", "--parsable", f"--array={array}",
           f"--job-name=sweep-{os.path.basename(args.out)}",
           f"--output={os.path.join(sdir, '%A_%a.out')}"]
    if args.slurm_partition:
        cmd.append(f"--partition={args.slurm_partition}")
    if args.slurm_time:
        cmd.append(f"--time={args.slurm_time}")
    cmd += args.sbatch_arg + [script]
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    job = p.stdout.strip().split(";")[0]
    if p.returncode != 0 or not job.isdigit():
        raise UsageError(f"sbatch failed (exit {p.returncode}): "
                         f"{stderr_tail(p.stderr + p.stdout) or 'no job id printed'}; "
                         f"command: {shlex.join(cmd)}")
    return job


SQUEUE_PATIENCE = 300  # seconds of squeue failing in a row (the controller restarting) tolerated


def run_slurm(points, pending, args):
    """Runs points[i] for i in pending as Slurm array tasks. Returns ({i: (code, error)},
    interrupted)."""
    sdir = os.path.join(args.out, ".slurm")
    os.makedirs(sdir, exist_ok=True)
    order = sorted(pending)
    for i in order:  # a run that never starts must not be mistaken for a finished earlier one
        fresh_dir(os.path.join(args.out, points[i]["name"]))
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    job_ids, chunks = [], []

    def outcomes_done():
        return sum(os.path.isfile(os.path.join(args.out, points[i]["name"], "outcome.json"))
                   for i in order)

    interrupted = False
    reported = -1
    try:
        try:
            for c in range(0, len(order), SLURM_ARRAY_MAX):
                chunk = order[c:c + SLURM_ARRAY_MAX]
                job = submit_array(chunk, points, args, sdir, f"{stamp}-{c // SLURM_ARRAY_MAX}")
                job_ids.append(job)
                chunks.append(chunk)
                print(f"sweep: submitted Slurm array job {job} ({len(chunk)} runs)",
                      file=sys.stderr, flush=True)
        except UsageError:
            if job_ids:  # the arrays already submitted go too: the sweep failed as a whole
                subprocess.run(["scancel"] + job_ids, capture_output=True)
            raise
        failing_since = None
        while True:
            try:
                active = squeue_active(job_ids)
                failing_since = None
            except RuntimeError as e:
                failing_since = failing_since or time.monotonic()
                if time.monotonic() - failing_since > SQUEUE_PATIENCE:
                    raise RuntimeError(f"{e} (for {SQUEUE_PATIENCE} s; Slurm job(s) "
                                       f"{','.join(job_ids)} left running: run the sweep again "
                                       "once they have ended to gather their results)") from None
                active = True
            done = outcomes_done()
            if done != reported:
                print(f"[{done}/{len(order)}] runs finished on Slurm", file=sys.stderr, flush=True)
                reported = done
            if not active:
                break
            time.sleep(args.poll)
    except KeyboardInterrupt:
        interrupted = True
        if job_ids:
            print(f"sweep: interrupted; cancelling Slurm job(s) {','.join(job_ids)}",
                  file=sys.stderr, flush=True)
            subprocess.run(["scancel"] + job_ids, capture_output=True)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if not squeue_active(job_ids):
                        break
                except RuntimeError:
                    break
                time.sleep(min(args.poll, 1.0))
    results = {}
    for job, chunk in zip(job_ids, chunks):
        for k, i in enumerate(chunk):
            outcome = read_json(os.path.join(args.out, points[i]["name"], "outcome.json"))
            if isinstance(outcome, dict) and "exit_code" in outcome:
                results[i] = (outcome["exit_code"], outcome.get("error", ""))
            elif interrupted:
                results[i] = (None, "not run (sweep interrupted)")
            else:
                log = os.path.join(sdir, f"{job}_{k}.out")
                tail = ""
                try:
                    with open(log, errors="replace") as f:
                        tail = stderr_tail(f.read())
                except OSError:
                    pass
                results[i] = (None, f"Slurm task {job}_{k} left no result (see {log})"
                              + (f": {tail}" if tail else ""))
    return results, interrupted


# --- gathering ----------------------------------------------------------------------------------

def as_int_if_integral(x):
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def collect(point, code, error, args, reused=False):
    """One table row: varied values, seed, metrics from summary.json/perf.json, outcome."""
    row = {k: v for k, v in point["assignments"]}
    row["seed"] = point["seed"]
    for m in METRICS:
        row[m] = None
    pdir = os.path.join(args.out, point["name"])
    summary = read_json(os.path.join(pdir, "summary.json")) if code is not None else None
    perf = read_json(os.path.join(pdir, "perf.json")) if code is not None else None
    if summary is not None:
        try:
            if row["seed"] is None:
                row["seed"] = summary.get("seed")
            tp, lat, buf, pk = (summary["throughput"], summary["latency_ns"], summary["buffer"],
                                summary["packets"])
            row.update({
                "offered_load": tp["offered_load"], "accepted_load": tp["accepted_load"],
                "latency_mean_ns": lat["mean"], "latency_p50_ns": lat["p50"],
                "latency_p99_ns": lat["p99"], "latency_p999_ns": lat["p999"],
                "latency_max_ns": lat["max"], "latency_count": lat["count"],
                "buffer_peak_bytes": as_int_if_integral(buf["peak_bytes"]),
                "buffer_mean_bytes": buf["mean_bytes"],
                "injected": pk["injected"], "delivered": pk["delivered"],
                "dropped": pk["dropped"], "in_flight": pk["in_flight"],
                "window_injected": pk.get("window", {}).get("injected"),
                "window_dropped": pk.get("window", {}).get("dropped"),
                "invariants_ok": bool(summary["invariants"]["ok"]),
                # absent from the summaries of simulators before these keys
                "latency_first_half_mean_ns": lat.get("first_half_mean"),
                "latency_second_half_mean_ns": lat.get("second_half_mean"),
                "latency_first_half_count": lat.get("first_half_count"),
                "latency_second_half_count": lat.get("second_half_count"),
            })
        except (KeyError, TypeError) as e:
            summary = None
            error = (error + "; " if error else "") + f"summary.json lacks {e}"
    elif code == 0:
        error = "exit 0 but no readable summary.json"
    row["exit_code"] = code
    row["status"] = "ok" if code == 0 and summary is not None else "failed"
    row["wall_s"] = perf.get("wall_s") if isinstance(perf, dict) else None
    row["error"] = error
    row["reused"] = reused
    row["point"] = point["name"]
    return row


# --- statistics over seeds ----------------------------------------------------------------------

def _t_pdf(x, nu):
    c = math.exp(math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)) / math.sqrt(nu * math.pi)
    return c * (1 + x * x / nu) ** (-(nu + 1) / 2)


def _t_cdf_from_0(x, nu, steps=400):
    """P(0 <= T <= x) for Student's t with nu degrees of freedom (Simpson's rule)."""
    h = x / steps
    s = _t_pdf(0, nu) + _t_pdf(x, nu)
    for k in range(1, steps):
        s += (4 if k % 2 else 2) * _t_pdf(k * h, nu)
    return s * h / 3


_T975 = {}


def t_quantile_975(nu):
    """The 0.975 quantile of Student's t with nu degrees of freedom: a 95% two-sided interval."""
    if nu not in _T975:
        lo, hi = 0.0, 1.0
        while _t_cdf_from_0(hi, nu) < 0.475:
            hi *= 2
        for _ in range(60):
            mid = (lo + hi) / 2
            if _t_cdf_from_0(mid, nu) < 0.475:
                lo = mid
            else:
                hi = mid
        _T975[nu] = (lo + hi) / 2
    return _T975[nu]


def mean_ci95(values):
    """(mean, half-width of the 95% Student-t confidence interval of the mean); the half-width is
    None for fewer than two values. (None, None) for none."""
    n = len(values)
    if n == 0:
        return None, None
    m = sum(values) / n
    if n < 2:
        return m, None
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    return m, t_quantile_975(n - 1) * math.sqrt(var / n)


def num(v):
    """A table value as a float, or None (empty, missing, not a number)."""
    if v is None or isinstance(v, bool):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def point_stats(rows, keys, load_tol, drift_tol):
    """One row per design point (the runs of equal varied values, in order of first appearance):
    mean and 95% CI over its successful runs of each STAT_METRICS, and the steady-state verdict.

    Unstable when (a) the mean accepted load falls short of the mean offered load by more than
    load_tol of it (the fabric does not carry what is offered: saturated, or dropping), or (b) the
    mean over the runs of the relative latency drift (second half's mean latency minus the first
    half's, over the first half's) exceeds drift_tol in size and, with two seeds or more, its 95%
    CI too (beyond noise): the queues were still filling (or draining) when the window ended."""
    groups = {}
    for r in rows:
        groups.setdefault(tuple(str(r.get(k)) for k in keys), []).append(r)
    out = []
    for values, runs in groups.items():
        ok = [r for r in runs if r.get("status") == "ok"]
        p = dict(zip(keys, values))
        p["runs"] = len(runs)
        p["runs_ok"] = len(ok)
        p["seeds"] = " ".join(str(r.get("seed")) for r in ok if r.get("seed") not in (None, ""))
        for m in STAT_METRICS:
            vals = [x for x in (num(r.get(m)) for r in ok) if x is not None]
            p[m + "_mean"], p[m + "_ci95"] = mean_ci95(vals)
        offered, accepted = p["offered_load_mean"], p["accepted_load_mean"]
        p["load_shortfall"] = ((offered - accepted) / offered
                               if offered is not None and accepted is not None and offered > 0
                               else None)
        drifts = []
        for r in ok:
            first, second = num(r.get("latency_first_half_mean_ns")), \
                num(r.get("latency_second_half_mean_ns"))
            n1, n2 = num(r.get("latency_first_half_count")), num(r.get("latency_second_half_count"))
            if first and second is not None and n1 and n2:
                drifts.append((second - first) / first)
        p["latency_drift"], p["latency_drift_ci95"] = mean_ci95(drifts)
        reasons = []
        if p["load_shortfall"] is not None and p["load_shortfall"] > load_tol:
            reasons.append("load")
        d, ci = p["latency_drift"], p["latency_drift_ci95"]
        if d is not None and abs(d) > drift_tol and (ci is None or abs(d) > ci):
            reasons.append("latency")
        if not ok:
            p["unstable"], p["unstable_reason"] = None, "no successful run"
        else:
            p["unstable"] = bool(reasons)
            p["unstable_reason"] = "+".join(reasons)
        out.append(p)
    return out


# --- tables -------------------------------------------------------------------------------------

def columns(args):
    return [k for k, _ in args.varied] + ["seed", "point"] + METRICS + TRAILER


def point_columns(keys):
    return list(keys) + POINT_HEAD + [m + suffix for m in STAT_METRICS
                                      for suffix in ("_mean", "_ci95")] + POINT_TAIL


def csv_cell(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ""
    return str(v)


def json_value(key, v, varied_keys):
    if key in varied_keys and isinstance(v, str) and JSON_NUMBER_RE.match(v):
        return json.loads(v)  # '0.5' -> 0.5 so JSON readers get numbers
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def write_csv(path, cols, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        w.writerow([csv_cell(row.get(c)) for c in cols])
    tmp = path + ".part"
    with open(tmp, "w", newline="") as f:
        f.write(buf.getvalue())
    os.replace(tmp, path)


def write_tables(rows, points, args):
    write_csv(os.path.join(args.out, "sweep.csv"), columns(args), rows)
    varied_keys = {k for k, _ in args.varied}
    cols = columns(args)
    objs = [{c: json_value(c, row.get(c), varied_keys) for c in cols} for row in rows]
    with open(os.path.join(args.out, "sweep.json"), "w") as f:
        json.dump(objs, f, indent=2)
        f.write("\n")
    keys = [k for k, _ in args.varied]
    write_csv(os.path.join(args.out, "sweep_points.csv"), point_columns(keys), points)
    with open(os.path.join(args.out, "sweep_setup.json"), "w") as f:
        json.dump(setup_record(args), f, indent=2)
        f.write("\n")


def setup_record(args):
    """What every run shares and what varies (sweep_setup.json): the plot states it, and
    --replot finds it beside the tables."""
    return {"config": args.config, "fixed": [f"{k}={v}" for k, v in args.fixed],
            "speed_only": ["sim.traffic_thread=false"] if args.single_thread else [],
            "varied": [[k, vs] for k, vs in args.varied], "seeds": args.seed_list,
            "load_tolerance": args.load_tolerance, "drift_tolerance": args.drift_tolerance}


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
